package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

// fullLevel is l with the hidden chaos appended to its own (and, if given,
// the hidden resilience rule in place of the level's), checked as a whole
// by the level format (problem paths name run.chaos of the result).
func (s *Service) fullLevel(ctx context.Context, l *challenges.Level, hidden, resilience json.RawMessage) (*challenges.Level, error) {
	var extra []sim.ChaosEvent
	if err := strictJSON(hidden, &extra); err != nil {
		return nil, game.Invalid("invalid event", []game.FieldError{{Field: "hidden_chaos", Reason: "must be a list of chaos events, as in a level's run.chaos"}})
	}
	var rule *challenges.Resilience
	if resilience != nil {
		if err := strictJSON(resilience, &rule); err != nil {
			return nil, game.Invalid("invalid event", []game.FieldError{{Field: "resilience", Reason: "must be a resilience rule, as in a level's resilience"}})
		}
	}
	var full *challenges.Level
	parseCtx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	err := s.sched.Background(parseCtx, scheduler.KindEvent, func(context.Context) error {
		var err error
		full, err = challenges.WithHidden(l, extra, rule)
		return err
	})
	if ps, ok := challenges.AsProblems(err); ok {
		return nil, ProblemsError(fmt.Sprintf("the hidden chaos does not fit the level (it follows the level's %d chaos events in run.chaos)", len(l.Run.Chaos)), "hidden_chaos", ps)
	}
	return full, err
}

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
	if s.now().Before(e.EndsAt) {
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
		finished, err := s.store.FinishEvent(ctx, id, results, s.now())
		// An attempt stamped before the end committed after the final
		// designs were read (the store refuses the results): run what
		// is missing and finish again. Such attempts are at most a
		// store timeout late, so a few rounds settle it.
		if game.ErrorCode(err) != game.ECONFLICT || attempt == maxFinishRounds {
			return finished, err
		}
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
		if ev, err = s.evaluateBackground(ctx, full.Verdict, d); err == nil {
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
	events, err := s.store.Events(ctx)
	if err != nil {
		return err
	}
	for _, e := range events {
		if e.FinishedAt != nil || s.now().Before(e.EndsAt) {
			continue
		}
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
	if wait := e.EndsAt.Sub(f.s.now()); e.FinishedAt == nil && wait > 0 {
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
	events, err := f.s.store.Events(ctx)
	if err != nil {
		return nil, err
	}
	var out []game.Event
	for _, e := range events {
		if e.FinishedAt == nil {
			out = append(out, e)
		}
	}
	return out, nil
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

// strictJSON decodes exactly one JSON value into v, refusing unknown fields, as a level's
// own decoder does.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
