package rules

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// levelCache keeps decoded levels by content hash. A content hash
// names immutable content, so replicas cannot disagree about what is cached
// (unlike a cache of ranks or of "the current version", which this is not:
// the current version is read from the store on every request).
type levelCache struct {
	mu     sync.Mutex
	byHash map[string]*challenges.Level
}

// maxCachedLevels bounds the cache; past it an arbitrary entry is dropped.
const maxCachedLevels = 1024

func newLevelCache() *levelCache {
	return &levelCache{byHash: map[string]*challenges.Level{}}
}

func (c *levelCache) add(hash string, l *challenges.Level) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byHash) >= maxCachedLevels {
		for k := range c.byHash {
			delete(c.byHash, k)
			break
		}
	}
	c.byHash[hash] = l
}

func (c *levelCache) get(hash string) (*challenges.Level, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.byHash[hash]
	return l, ok
}

// Level returns the stored level version (version 0: current) and its
// parsed form.
func (s *Service) Level(ctx context.Context, slug string, version int) (game.Level, *challenges.Level, error) {
	stored, err := s.store.Level(ctx, slug, version)
	if err != nil {
		return game.Level{}, nil, err
	}
	if l, ok := s.levels.get(stored.ContentHash); ok {
		return stored, l, nil
	}
	// A stored version was parsed in full, its starting design run, when it
	// was stored; reading it back only decodes it (no simulation on a read
	// path), and concurrent misses of one version share one decode.
	v, err, _ := s.loads.Do(stored.ContentHash, func() (any, error) {
		if l, ok := s.levels.get(stored.ContentHash); ok {
			return l, nil
		}
		s.levelLoads.Inc()
		parsed, err := challenges.Decode(stored.Definition)
		if err != nil {
			return nil, err
		}
		// Cached under the stored hash, which is what lookups use, even if
		// the canonical form has changed since (a new field with a default).
		s.levels.add(stored.ContentHash, parsed)
		return parsed, nil
	})
	if err != nil {
		if _, ok := challenges.AsProblems(err); ok {
			// A stored level was valid when it was stored; an engine
			// change has made it invalid. That is our bug, not the
			// client's.
			return game.Level{}, nil, fmt.Errorf("stored level %s v%d no longer decodes: %w", slug, stored.Version, err)
		}
		return game.Level{}, nil, err
	}
	return stored, v.(*challenges.Level), nil
}

// LevelRecord is how a parsed level is stored: its canonical JSON (what
// Parse reads back), identified by its content hash.
func LevelRecord(l *challenges.Level, builtin bool, now time.Time) (game.Level, error) {
	def, err := json.Marshal(l)
	if err != nil {
		return game.Level{}, fmt.Errorf("encode level %s: %w", l.Slug, err)
	}
	return game.Level{
		Slug: l.Slug,
		// The level's own number: what its file, the CLI and the web show.
		Version:     l.Version,
		Title:       l.Title,
		Difficulty:  string(l.Difficulty),
		Definition:  def,
		ContentHash: l.ContentHash(),
		CreatedAt:   now,
		Builtin:     builtin,
		// Kept with the version: what storing it found.
		WorstCaseCost: l.WorstCaseCost(),
	}, nil
}

// LoadCampaign stores the built-in campaign. It is idempotent (a level whose
// content is already current is left alone) and safe for several replicas
// starting at once (the store serialises writers per slug). A built-in
// level whose content changed in a new release becomes a new version if the
// old one has scores.
func LoadCampaign(ctx context.Context, store Levels, logger *slog.Logger, now time.Time) error {
	levels, err := challenges.Campaign()
	if err != nil {
		return fmt.Errorf("load the built-in campaign: %w", err)
	}
	for _, l := range levels {
		rec, err := LevelRecord(l, true, now)
		if err != nil {
			return err
		}
		stored, written, err := store.PutLevel(ctx, rec)
		if err != nil {
			return fmt.Errorf("store built-in level %s: %w", l.Slug, err)
		}
		if written {
			logger.InfoContext(ctx, "built-in level stored", "slug", stored.Slug, "version", stored.Version)
		}
	}
	logger.InfoContext(ctx, "built-in campaign loaded", "levels", len(levels))
	return nil
}
