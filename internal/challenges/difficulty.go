package challenges

import (
	"context"
	"math"

	"backpressure/internal/sim"
)

// Curve measures where a level sits on the campaign's curve, by the level's own
// rules: how many single changes to the starting design pass (the hint's candidates; fewer
// is harder, none means the level needs two ideas at once), how many designs the hint tries
// on the starting design, and the reference solution's margin (its tightest condition's
// margin as a share of its target: a small margin is a narrow window).
type Curve struct {
	Slug        string   `json:"slug"`
	Difficulty  string   `json:"difficulty"`
	Mechanics   []string `json:"mechanics"`
	SingleFixes int      `json:"single_fixes"`
	Candidates  int      `json:"candidates"`
	HintTried   int      `json:"hint_tried"`
	// MarginShare is the reference's tightest margin ÷ target over latency, errors and cost.
	MarginShare float64 `json:"margin_share"`
}

// MeasureDifficulty measures the level with its reference solution.
func (l *Level) MeasureDifficulty(ctx context.Context, reference sim.Design) (Curve, error) {
	out := Curve{Slug: l.Slug, Difficulty: string(l.Difficulty)}
	if l.Lesson != nil {
		out.Mechanics = l.Lesson.Mechanics
	}
	start, err := l.Evaluate(ctx, l.StartingDesign)
	if err != nil {
		return out, err
	}
	for _, cd := range l.candidates(l.StartingDesign, start) {
		ev, err := l.Verdict(ctx, cd.design)
		if err != nil {
			if ctx.Err() != nil {
				return out, err
			}
			continue // a change the level refuses
		}
		out.Candidates++
		if ev.Passed {
			out.SingleFixes++
		}
	}
	h, err := l.HintWithin(ctx, l.StartingDesign, HintLimits{Parallelism: 1})
	if err != nil {
		return out, err
	}
	out.HintTried = h.Tried
	ref, err := l.Verdict(ctx, reference)
	if err != nil {
		return out, err
	}
	out.MarginShare = math.Inf(1)
	for _, c := range ref.Conditions {
		if c.Name != CondResilience && c.Target > 0 {
			out.MarginShare = math.Min(out.MarginShare, c.Margin/c.Target)
		}
	}
	out.MarginShare = math.Round(out.MarginShare*1000) / 1000
	return out, nil
}
