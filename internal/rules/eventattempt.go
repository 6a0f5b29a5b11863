package rules

import (
	"context"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/sim"
)

// EventAttempt is a design entered in a live event.
type EventAttempt struct {
	Player game.Player
	// Who pays for the run from their simulation budget.
	Who     string
	EventID uuid.UUID
	Design  sim.Design
	// Raw is the design as stored (compact JSON).
	Raw []byte
}

// SubmitToEvent runs a design on the event's level as published (the
// hidden chaos waits for the end) and stores it as an attempt, returning it
// and the player's attempts so far. The rules are checked before the
// simulation, to spare it, and again by the store, which decides.
func (s *Service) SubmitToEvent(ctx context.Context, in EventAttempt) (game.EventSubmission, int, error) {
	e, err := s.store.Event(ctx, in.EventID)
	if err != nil {
		return game.EventSubmission{}, 0, err
	}
	if err := e.CheckEntrant(in.Player); err != nil {
		return game.EventSubmission{}, 0, err
	}
	// The attempt is stamped when accepted, by the clock that decides
	// deadlines: a run that queues behind the crowd does not push it past
	// the end.
	accepted := s.DeadlineClock(ctx)
	switch now := accepted; {
	case now.Before(e.StartsAt):
		return game.EventSubmission{}, 0, game.Errorf(game.EEVENTNOTSTARTED, "the event starts at %s", e.StartsAt.Format(time.RFC3339))
	case e.FinishedAt != nil || !now.Before(e.EndsAt):
		return game.EventSubmission{}, 0, game.Errorf(game.EEVENTENDED, "the event ended at %s", e.EndsAt.Format(time.RFC3339))
	}
	_, l, err := s.Level(ctx, e.Slug, e.Version)
	if err != nil {
		return game.EventSubmission{}, 0, err
	}
	ev, verdict, id, err := s.score(ctx, in.Who, l, in.Design)
	if err != nil {
		return game.EventSubmission{}, 0, err
	}
	sub := game.EventSubmission{ID: id, EventID: e.ID, PlayerID: in.Player.ID, Design: in.Raw, Result: verdict,
		Passed: ev.Passed, Score: challenges.Score(ev), CreatedAt: accepted}
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	attempts, err := s.store.CreateEventSubmission(storeCtx, sub)
	return sub, attempts, err
}
