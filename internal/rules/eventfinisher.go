package rules

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// EventFinisher finishes events once they end.
type EventFinisher struct{ s *Service }

// EventFinisher is the finisher of the service's events; its final runs use the event
// workers of the service's scheduler, never the submissions'.
func (s *Service) EventFinisher() *EventFinisher { return &EventFinisher{s: s} }

// Run checks for ended events every interval until ctx is done. Every
// replica runs one: the store lets exactly one finish each event, and a
// replica that dies while finishing leaves it to the next check of
// another.
func (f *EventFinisher) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := f.s.finishDue(ctx); err != nil && ctx.Err() == nil {
			f.s.log.WarnContext(ctx, "looking for ended events failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ErrNotEnded is Finish's answer before an event's end (by the server's
// clock): try again then.
var ErrNotEnded = errors.New("the event has not ended")

// Finish finishes one event (see finishEvent): done reports that this call
// froze the results, false if the event was already finished; ErrNotEnded
// before its end, wrapped with the time to wait.
func (f *EventFinisher) Finish(ctx context.Context, id uuid.UUID) (done bool, err error) {
	e, err := f.s.store.Event(ctx, id)
	if err != nil {
		return false, err
	}
	if wait := e.EndsAt.Sub(f.s.DeadlineClock(ctx)); e.FinishedAt == nil && wait > 0 {
		return false, &NotEndedError{Wait: wait}
	}
	return f.s.finishEvent(ctx, id)
}

// NotEndedError says how long until the event ends.
type NotEndedError struct{ Wait time.Duration }

func (e *NotEndedError) Error() string { return fmt.Sprintf("the event ends in %s", e.Wait) }
func (e *NotEndedError) Unwrap() error { return ErrNotEnded }

// Unfinished lists the events not yet finished, with their ends, so that a
// scheduler can (re)arrange their finish.
func (f *EventFinisher) Unfinished(ctx context.Context) ([]game.Event, error) {
	return eventsIn(ctx, f.s.store, f.s.now(), game.PhaseUpcoming, game.PhaseLive, game.PhaseFinishing)
}

// FinishDue finishes every ended event now (tests and operators).
func (f *EventFinisher) FinishDue(ctx context.Context) error { return f.s.finishDue(ctx) }

// Recompute runs every entrant's final design of an event again, from
// nothing stored, and returns the results in final order (as the standings
// rank them): for checking that stored results are what the event's
// designs give. It stores nothing.
func (f *EventFinisher) Recompute(ctx context.Context, id uuid.UUID) ([]game.EventResult, error) {
	e, err := f.s.store.Event(ctx, id)
	if err != nil {
		return nil, err
	}
	results, err := f.s.finalRuns(ctx, e, nil, nil)
	if err != nil {
		return nil, err
	}
	finals, err := f.s.store.EventFinals(ctx, id)
	if err != nil {
		return nil, err
	}
	at := make(map[uuid.UUID]time.Time, len(finals))
	for _, s := range finals {
		at[s.ID] = s.CreatedAt
	}
	return game.RankResults(results, func(r game.EventResult) (time.Time, bool) {
		t, ok := at[r.SubmissionID]
		return t, ok
	})
}
