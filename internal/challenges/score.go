package challenges

import (
	"math"
	"slices"
)

// Score weights: cheaper counts most, then faster, then fewer errors, then resilience.
const (
	weightCost       = 0.40
	weightLatency    = 0.25
	weightErrors     = 0.20
	weightResilience = 0.15
	// ScoreBase is what any passing run scores; ScoreSpan is shared among the headrooms.
	ScoreBase = 1000
	ScoreSpan = 9000
	// MaxScore is the score of a free, instant, error-free, unshakeable system.
	MaxScore = ScoreBase + ScoreSpan
)

// Score is the score of a passing evaluation (0 for a failing one):
//
//	headroom(c) = clamp(1 − measured(c) ÷ target(c), 0, 1)   for each condition c
//	score = 1000 + round(9000 × (0.40·headroom(cost) + 0.25·headroom(latency)
//	                            + 0.20·headroom(errors) + 0.15·headroom(resilience)))
//
// so a passing run scores between 1000 and 10000. Resilience is measured as the worst chaos
// event's usage of its allowance with a target of 1. A level without chaos gives resilience
// nothing to measure (the condition is NotApplicable): its weight is shared among the other
// three in proportion (cost 0.40 ÷ 0.85, and so on), so that no run earns points for
// surviving chaos that never came, and the score still spans 1000 to 10000. Each headroom
// only falls as its measurement rises, the weights are positive and rounding never
// reorders, so a cheaper, faster, more reliable or more resilient run never scores lower.
// The score is a function of the measurements alone, which the server computes by running
// the design: a client never supplies it.
func Score(ev *Evaluation) int64 {
	if ev == nil || !ev.Passed {
		return 0
	}
	w := scoreWeights(ev)
	var h [4]float64
	for _, c := range ev.Conditions {
		if i := slices.Index(scoreOrder, c.Name); i >= 0 {
			h[i] = headroom(c.Measured, c.Target)
		}
	}
	// Summed in scoreOrder, whatever the conditions' order: float addition is not
	// associative, and a score on a rounding edge must not move with it.
	sum := 0.0
	for i := range h {
		sum += w[i] * h[i]
	}
	return ScoreBase + int64(math.Round(ScoreSpan*sum))
}

// scoreOrder is the order of scoreWeights.
var scoreOrder = []string{CondCost, CondLatency, CondErrors, CondResilience}

// scoreWeights is the weight of each condition of scoreOrder in ev's score: the fixed
// weights, or, where a condition of ev is not applicable, 0 for it and the others scaled
// to make up its share.
func scoreWeights(ev *Evaluation) [4]float64 {
	w := [4]float64{weightCost, weightLatency, weightErrors, weightResilience}
	missing := 0.0
	for _, c := range ev.Conditions {
		if i := slices.Index(scoreOrder, c.Name); i >= 0 && c.NotApplicable {
			missing += w[i]
			w[i] = 0
		}
	}
	// Scaled only when a share is missing: dividing by the fixed weights' float sum
	// (1 ± an ulp) could move a score on a rounding edge.
	if missing > 0 && missing < 1 {
		for i := range w {
			w[i] /= 1 - missing
		}
	}
	return w
}

func headroom(measured, target float64) float64 {
	if !(target > 0) || math.IsNaN(measured) {
		return 0
	}
	return math.Min(1, math.Max(0, 1-measured/target))
}

// Stars are a level's par. A passing run earns one star, a score of at least Two a second
// and of at least Three a third. The campaign sets them from its reference solutions: Two
// at what a sound design scores, Three above what the obvious design scores, so that a
// third star needs a better idea than the first one that passes.
type Stars struct {
	Two   int64 `json:"two"`
	Three int64 `json:"three"`
}

// MaxStars is the most stars a level gives.
const MaxStars = 3

// StarsFor is how many stars a run earns: 0 for a failing run; for a passing one, 1, or
// more by the level's thresholds (a level without them gives 1).
func (l *Level) StarsFor(ev *Evaluation) int {
	if ev == nil || !ev.Passed || ev.Score == nil {
		return 0
	}
	return l.StarsForScore(*ev.Score)
}

// StarsForScore is the stars a passing run with score s earns on the level: the one rule
// every screen's stars come from (a player's stars are their best passing score's).
func (l *Level) StarsForScore(s int64) int {
	switch st := l.Stars; {
	case st == nil:
		return 1
	case s >= st.Three:
		return 3
	case s >= st.Two:
		return 2
	}
	return 1
}

// validateStars: the thresholds are scores a pass can reach, the third above the second.
func (l *Level) validateStars(ps *Problems) {
	st := l.Stars
	if st == nil {
		return
	}
	if st.Two <= ScoreBase || st.Two > MaxScore {
		ps.addf("stars.two", "must be a score above %d (what any pass earns) and at most %d, not %d", ScoreBase, MaxScore, st.Two)
	}
	if st.Three <= st.Two || st.Three > MaxScore {
		ps.addf("stars.three", "must be above stars.two (%d) and at most %d, not %d", st.Two, MaxScore, st.Three)
	}
}

// ScorePart is what one condition adds to a passing run's score: its headroom (the share
// of the allowance left unused) times its weight, in points out of ScoreSpan. The parts
// explain a score: a cheaper design scoring lower has spent its saving in another part. A
// condition that is not applicable has no part, and the others' weights make up its share.
type ScorePart struct {
	Condition string  `json:"condition"`
	Headroom  float64 `json:"headroom"`
	Weight    float64 `json:"weight"`
	// Points is ScoreSpan × Weight × Headroom, to one decimal; ScoreBase plus the parts'
	// sum, rounded, is the score.
	Points float64 `json:"points"`
}

// scoreParts breaks a passing evaluation's score into its scored conditions' parts, in the
// order of its conditions; nil for a failing one.
func scoreParts(ev *Evaluation) []ScorePart {
	if ev == nil || !ev.Passed {
		return nil
	}
	weights := scoreWeights(ev)
	parts := make([]ScorePart, 0, len(ev.Conditions))
	for _, c := range ev.Conditions {
		i := slices.Index(scoreOrder, c.Name)
		if i < 0 || weights[i] == 0 {
			continue
		}
		w, h := weights[i], headroom(c.Measured, c.Target)
		parts = append(parts, ScorePart{Condition: c.Name, Headroom: math.Round(h*1e4) / 1e4, Weight: math.Round(w*1e4) / 1e4,
			Points: math.Round(ScoreSpan*w*h*10) / 10})
	}
	return parts
}
