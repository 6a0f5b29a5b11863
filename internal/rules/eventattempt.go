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
	// The attempt is stamped when it arrives, by the clock that decides
	// deadlines: a run that queues behind the crowd does not push it past
	// the end. From then on it has attemptLifetime to be stored, or is
	// given up (EUNAVAILABLE): the event's finish waits longer than that,
	// so it never refuses an attempt that arrived in time.
	accepted := s.DeadlineClock(ctx)
	ctx, cancel := context.WithTimeout(ctx, attemptLifetime)
	defer cancel()
	e, err := s.store.Event(ctx, in.EventID)
	if err != nil {
		return game.EventSubmission{}, 0, err
	}
	if err := e.CheckEntrant(in.Player); err != nil {
		return game.EventSubmission{}, 0, err
	}
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
	// The write is not abandoned with the client, only at the lifetime's end.
	deadline, _ := ctx.Deadline()
	storeCtx, cancelStore := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancelStore()
	attempts, err := s.store.CreateEventSubmission(storeCtx, sub)
	return sub, attempts, err
}

// attemptLifetime bounds an event attempt from its arrival to its write
// (its run queued behind a last-minute crowd, the run, the write): one that
// takes longer is given up, unstored. The event's finish waits finishGrace,
// longer than this, after the end.
const attemptLifetime = 8 * time.Second
