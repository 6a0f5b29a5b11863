package challenges

import (
	"context"
	"math"
	"slices"

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

// Chapter is one chapter of the campaign on its curve. The campaign's chapters are its
// difficulties, in campaign order (the level list groups and unlocks them so).
type Chapter struct {
	Difficulty string `json:"difficulty"`
	Levels     int    `json:"levels"`
	// MedianSingleFixes is the median over the chapter's levels of the single changes to
	// the starting design that pass: the curve rises when it never grows from one chapter
	// to the next.
	MedianSingleFixes float64 `json:"median_single_fixes"`
}

// Chapters groups measured levels by difficulty, in the order the difficulties first appear.
func Chapters(rows []Curve) []Chapter {
	var out []Chapter
	var fixes [][]int
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Difficulty != r.Difficulty {
			out = append(out, Chapter{Difficulty: r.Difficulty})
			fixes = append(fixes, nil)
		}
		out[len(out)-1].Levels++
		fixes[len(fixes)-1] = append(fixes[len(fixes)-1], r.SingleFixes)
	}
	for i, xs := range fixes {
		slices.Sort(xs)
		n := len(xs)
		out[i].MedianSingleFixes = float64(xs[(n-1)/2]+xs[n/2]) / 2
	}
	return out
}
