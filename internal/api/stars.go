package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// Bests reads each player's best passing score on every level version they
// passed: the stores' level boards.
type Bests interface {
	PlayerBests(ctx context.Context, playerID uuid.UUID) ([]game.LevelBest, error)
}

// playerStars is a player's stars, computed by the rules from their stored
// bests and each version's thresholds; only on the levels named in only
// when only is not nil (its campaign total then counts those levels
// alone), so that the levels decoded are those asked about, whatever the
// player passed.
func (s *server) playerStars(ctx context.Context, playerID uuid.UUID, only []string) (rules.PlayerStars, error) {
	bests, err := s.store.PlayerBests(ctx, playerID)
	if err != nil {
		return rules.PlayerStars{}, err
	}
	if only != nil {
		bests = slices.DeleteFunc(bests, func(b game.LevelBest) bool { return !slices.Contains(only, b.Slug) })
	}
	return s.rules.Stars(ctx, bests)
}

// signedInStars is the stars of the player who sent r, if one did (the
// configured admin is no player: none), as playerStars; ok is false
// for an anonymous reader.
func (s *server) signedInStars(r *http.Request, only []string) (stars rules.PlayerStars, ok bool, err error) {
	p, signedIn := playerFrom(r.Context())
	if !signedIn || p.ID == uuid.Nil {
		return rules.PlayerStars{}, false, nil
	}
	stars, err = s.playerStars(r.Context(), p.ID, only)
	return stars, err == nil, err
}
