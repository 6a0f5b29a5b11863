package rules

import (
	"context"
	"strconv"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// EventRerunLevel is the level a finished event's final runs used: the
// event's level version with its hidden chaos and resilience rule added. A
// dry run with "event" (POST /v1/simulations) runs a design against it, so
// that anyone can re-run an entrant's final design and get the stored
// evaluation. The level and version asked for must be the event's; the
// event must be finished (until then its chaos is hidden).
func (s *Service) EventRerunLevel(ctx context.Context, eventID string, stored game.Level, l *challenges.Level) (*challenges.Level, error) {
	id, err := uuid.Parse(eventID)
	if err != nil {
		return nil, game.Invalid("the request is invalid", []game.FieldError{{Field: "event", Reason: "must be an event id"}})
	}
	e, err := s.store.Event(ctx, id)
	if game.ErrorCode(err) == game.ENOTFOUND {
		return nil, game.Invalid("the request is invalid", []game.FieldError{{Field: "event", Reason: "names no event"}})
	}
	if err != nil {
		return nil, err
	}
	if e.FinishedAt == nil {
		return nil, game.Errorf(game.ECONFLICT, "the event's hidden chaos is published once it is finished; re-run final designs then")
	}
	if stored.Slug != e.Slug || stored.Version != e.Version {
		return nil, game.Invalid("the request is invalid", []game.FieldError{{Field: "level",
			Reason: "must be the event's level and version (" + e.Slug + " version " + strconv.Itoa(e.Version) + ")"}})
	}
	return s.fullLevel(ctx, l, e.HiddenChaos, e.HiddenResilience)
}
