package rules

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// finishEvent runs every entrant's final design against the event's level
// with the hidden chaos and freezes the results. Safe to call any number of
// times, from any replica, at once: the store finishes an event exactly
// once (and the runs are deterministic, so any finisher computes the same
// results). On the way it stores the runs, finalRunBatch at a time, and
// runs only those not stored yet: a finisher that dies mid-way leaves its
// work to the next one.
func (s *Service) finishEvent(ctx context.Context, id uuid.UUID) (bool, error) {
	e, err := s.store.Event(ctx, id)
	if err != nil || e.FinishedAt != nil {
		return false, err
	}
	if s.DeadlineClock(ctx).Before(e.EndsAt) {
		return false, nil
	}
	for attempt := 1; ; attempt++ {
		stored, err := s.store.EventFinalRuns(ctx, id)
		if err != nil {
			return false, err
		}
		done := make(map[uuid.UUID]game.EventResult, len(stored))
		for _, r := range stored {
			done[r.PlayerID] = r
		}
		results, err := s.finalRuns(ctx, e, done, func(batch []game.EventResult) error {
			return s.store.SaveEventFinalRuns(ctx, id, batch)
		})
		if err != nil {
			return false, err
		}
		// Attempts accepted before the end may still be committing: the
		// results are frozen no sooner than finishGrace after it by the
		// clock that decides deadlines (the runs above overlap the wait).
		deadlineNow := s.DeadlineClock(ctx)
		if err := sleepUntil(ctx, s.now, s.now().Add(e.EndsAt.Add(finishGrace).Sub(deadlineNow))); err != nil {
			return false, err
		}
		finished, err := s.store.FinishEvent(ctx, id, results, s.DeadlineClock(ctx))
		// An attempt stamped before the end committed after the final
		// designs were read (the store refuses the results): run what
		// is missing and finish again. Such attempts are at most a
		// store timeout late, so a few rounds settle it.
		if game.ErrorCode(err) != game.ECONFLICT || attempt == maxFinishRounds {
			return finished, err
		}
	}
}

// finishGrace is how long after an event's end its results wait for the
// attempts that arrived before the end (stamped on arrival) to be stored:
// longer than an attempt's lifetime (attemptLifetime), after which it is
// stored or given up, so the finish never refuses one.
const finishGrace = attemptLifetime + 2*time.Second

// sleepUntil waits until t by clock now, or ctx's end.
func sleepUntil(ctx context.Context, now func() time.Time, t time.Time) error {
	wait := t.Sub(now())
	if wait <= 0 {
		return nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxFinishRounds bounds the rounds of finishEvent.
const maxFinishRounds = 5

// finalRunBatch final runs are stored at a time while an event finishes.
const finalRunBatch = 25

// finalRuns returns the final run of every entrant with a final design:
// the one in done if it ran the same design, else a new run, handed to
// save in batches (save nil: not stored).
func (s *Service) finalRuns(ctx context.Context, e game.Event, done map[uuid.UUID]game.EventResult, save func([]game.EventResult) error) ([]game.EventResult, error) {
	_, l, err := s.Level(ctx, e.Slug, e.Version)
	if err != nil {
		return nil, err
	}
	full, err := s.fullLevel(ctx, l, e.HiddenChaos, e.HiddenResilience)
	if err != nil {
		return nil, err
	}
	finals, err := s.store.EventFinals(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	results := make([]game.EventResult, 0, len(finals))
	var batch []game.EventResult
	for _, f := range finals {
		if r, ok := done[f.PlayerID]; ok && r.SubmissionID == f.ID {
			results = append(results, r)
			continue
		}
		r, err := s.finalRun(ctx, full, f)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
		if batch = append(batch, r); save != nil && len(batch) == finalRunBatch {
			if err := save(batch); err != nil {
				return nil, err
			}
			batch = nil
		}
	}
	if save != nil && len(batch) > 0 {
		if err := save(batch); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// finalRun runs one final design; a design the full level refuses scores
// nothing.
func (s *Service) finalRun(ctx context.Context, full *challenges.Level, f game.EventSubmission) (game.EventResult, error) {
	r := game.EventResult{PlayerID: f.PlayerID, SubmissionID: f.ID}
	d, _, err := ParseDesign(f.Design)
	if err == nil {
		var ev *challenges.Evaluation
		if ev, err = s.evaluateBackground(ctx, s.sched.Background, full.Verdict, d); err == nil {
			r.Passed, r.Score = ev.Passed, challenges.Score(ev)
			r.Result, err = json.Marshal(ev)
			return r, err
		}
	}
	if game.ErrorCode(err) != game.EINVALID {
		return r, err
	}
	r.Result, err = json.Marshal(map[string]any{"passed": false, "error": game.ErrorMessage(err), "errors": game.ErrorFields(err)})
	return r, err
}

// finishDue finishes every ended, unfinished event.
func (s *Service) finishDue(ctx context.Context) error {
	events, err := eventsIn(ctx, s.store, s.DeadlineClock(ctx), game.PhaseFinishing)
	if err != nil {
		return err
	}
	for _, e := range events {
		done, err := s.finishEvent(ctx, e.ID)
		if err != nil {
			s.log.WarnContext(ctx, "finishing an event failed; it is retried", "event_id", e.ID.String(), "err", err)
			continue
		}
		if done {
			s.log.InfoContext(ctx, "event finished", "event_id", e.ID.String())
		}
	}
	return nil
}
