package rules

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// LevelStars is what a player holds on one level: the stars of their best
// passing score, by the thresholds of the version it was scored on. Stars
// earned on a version stay when the level gets a new one: a player holds the
// most any of their versions' bests earns (the later version on a tie).
type LevelStars struct {
	Slug string `json:"slug"`
	// Version and Score are the best that earns the stars.
	Version int   `json:"version"`
	Score   int64 `json:"score"`
	Stars   int   `json:"stars"`
}

// StarTotal is stars earned out of the most a set of levels gives.
type StarTotal struct {
	Earned int `json:"earned"`
	Max    int `json:"max"`
}

// PlayerStars is a player's stars on every level they have passed, by slug,
// and their total over the built-in campaign.
type PlayerStars struct {
	Levels   []LevelStars `json:"levels"`
	Campaign StarTotal    `json:"campaign"`
}

// Of is the player's stars on the level with the given slug (zero: none).
func (ps PlayerStars) Of(slug string) LevelStars {
	i, ok := slices.BinarySearchFunc(ps.Levels, slug, func(l LevelStars, s string) int { return cmp.Compare(l.Slug, s) })
	if !ok {
		return LevelStars{Slug: slug}
	}
	return ps.Levels[i]
}

// Stars turns a player's bests (one per level version passed) into their
// stars: each best by its own version's thresholds (challenges.StarsForScore),
// the most per level, and the campaign's total over its current levels.
func (s *Service) Stars(ctx context.Context, bests []game.LevelBest) (PlayerStars, error) {
	best := map[string]LevelStars{}
	for _, b := range bests {
		_, l, err := s.Level(ctx, b.Slug, b.Version)
		if err != nil {
			return PlayerStars{}, err
		}
		got := LevelStars{Slug: b.Slug, Version: b.Version, Score: b.Score, Stars: l.StarsForScore(b.Score)}
		if cur, ok := best[b.Slug]; !ok || got.Stars > cur.Stars || got.Stars == cur.Stars && got.Version > cur.Version {
			best[b.Slug] = got
		}
	}
	out := PlayerStars{Levels: slices.SortedFunc(maps.Values(best), func(a, b LevelStars) int { return cmp.Compare(a.Slug, b.Slug) })}
	if out.Levels == nil {
		out.Levels = []LevelStars{}
	}
	campaign, err := challenges.Campaign()
	if err != nil {
		return PlayerStars{}, err
	}
	for _, l := range campaign {
		out.Campaign.Max += challenges.MaxStars
		out.Campaign.Earned += out.Of(l.Slug).Stars
	}
	return out, nil
}
