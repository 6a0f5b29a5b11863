package rules

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
