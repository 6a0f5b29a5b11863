package rules

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

// ParseDesign decodes a design from a request body's design field. Every
// problem is an EINVALID error whose field is the JSON path from the body's
// root ("design.components[2].params.replicas"). It returns the design and
// its compact JSON, as stored.
func ParseDesign(raw json.RawMessage) (sim.Design, []byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return sim.Design{}, nil, game.Invalid("the request is invalid", []game.FieldError{{Field: "design", Reason: "is required"}})
	}
	d, err := challenges.ParseDesign(raw)
	if ps, ok := challenges.AsProblems(err); ok {
		return sim.Design{}, nil, ProblemsError("the design is invalid", "design", ps)
	}
	if err != nil {
		return sim.Design{}, nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return sim.Design{}, nil, err
	}
	return d, compact.Bytes(), nil
}

// ProblemsError turns challenges' (or the engine's) problems into an
// EINVALID error, each path prefixed with prefix ("design" for a design
// inside a request body).
func ProblemsError(message, prefix string, ps challenges.Problems) error {
	return &game.Error{Code: game.EINVALID, Message: message, Fields: problemFields(prefix, ps)}
}

// problemFields is ProblemsError's field list.
func problemFields(prefix string, ps challenges.Problems) []game.FieldError {
	fields := make([]game.FieldError, 0, len(ps))
	for _, p := range ps {
		field := p.Path
		switch {
		case prefix == "":
		case field == "":
			field = prefix
		case field[0] == '[':
			field = prefix + field
		default:
			field = prefix + "." + field
		}
		fields = append(fields, game.FieldError{Field: field, Reason: p.Reason})
	}
	return fields
}

// DesignProblems names the design as the field at fault when the level refuses it.
func DesignProblems(err error) error {
	if ps, ok := challenges.AsProblems(err); ok {
		return ProblemsError("the design is invalid for this level", "design", ps)
	}
	return err
}

// Evaluate runs a design on a level on the kind's workers, within the simulation deadline
// and ctx, paid for from who's simulation budget (its cost is known before it runs). A
// scored submission keeps only its verdict (no ticks).
func (s *Service) Evaluate(ctx context.Context, who, kind string, l *challenges.Level, d sim.Design) (*challenges.Evaluation, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	var ev *challenges.Evaluation
	costOf := func() (int64, error) { return l.RunCost(d) }
	run := l.Evaluate
	if kind == scheduler.KindSubmission {
		run = l.Verdict // its stored verdict holds no ticks
	}
	err := s.sched.Run(ctx, who, kind, costOf, func(ctx context.Context) error {
		var err error
		ev, err = run(ctx, d)
		return err
	})
	return ev, DesignProblems(err)
}

// evaluateBackground is Evaluate for the server's own work (an event's final runs, a duel's):
// on the event workers (bg: at once, or deferred), under the simulation timeout, paid by
// nobody. run is the level's Evaluate, or its Verdict where only the verdict is kept.
func (s *Service) evaluateBackground(ctx context.Context, bg backgroundRunner, run func(context.Context, sim.Design) (*challenges.Evaluation, error), d sim.Design) (*challenges.Evaluation, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	var ev *challenges.Evaluation
	err := bg(ctx, scheduler.KindEvent, func(ctx context.Context) error {
		var err error
		ev, err = run(ctx, d)
		return err
	})
	return ev, DesignProblems(err)
}

// score runs d on l as a scored submission (on the submissions' workers, paid from who's
// budget) and returns the verdict, its stored form and the new submission's id.
func (s *Service) score(ctx context.Context, who string, l *challenges.Level, d sim.Design) (*challenges.Evaluation, []byte, uuid.UUID, error) {
	ev, err := s.Evaluate(ctx, who, scheduler.KindSubmission, l, d)
	if err != nil {
		return nil, nil, uuid.Nil, err
	}
	verdict, err := json.Marshal(ev)
	if err != nil {
		return nil, nil, uuid.Nil, err
	}
	id, err := uuid.NewV7()
	return ev, verdict, id, err
}

// Downsample keeps every k-th tick (and the last) so that at most
// maxPoints remain; maxPoints 0 keeps everything. It returns the result
// to send and k.
func Downsample(res *sim.Result, maxPoints int) (*sim.Result, int) {
	n := len(res.Ticks)
	if maxPoints <= 0 || n <= maxPoints {
		return res, 1
	}
	every := (n + maxPoints - 1) / maxPoints
	out := *res
	out.Ticks = make([]sim.Tick, 0, maxPoints)
	for i := every - 1; i < n; i += every {
		out.Ticks = append(out.Ticks, res.Ticks[i])
	}
	if last := res.Ticks[n-1]; out.Ticks[len(out.Ticks)-1].T != last.T {
		if len(out.Ticks) < maxPoints {
			out.Ticks = append(out.Ticks, last)
		} else {
			out.Ticks[len(out.Ticks)-1] = last
		}
	}
	return &out, every
}
