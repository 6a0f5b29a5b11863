package challenges

import "math"

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
// event's usage of its allowance with a target of 1; a level without chaos gives every run
// the full resilience headroom. Each headroom only falls as its measurement rises, the
// weights are positive and rounding never reorders, so a cheaper, faster, more reliable or
// more resilient run never scores lower. The score is a function of the measurements alone,
// which the server computes by running the design: a client never supplies it.
func Score(ev *Evaluation) int64 {
	if ev == nil || !ev.Passed {
		return 0
	}
	var h [4]float64
	for _, c := range ev.Conditions {
		switch c.Name {
		case CondCost:
			h[0] = headroom(c.Measured, c.Target)
		case CondLatency:
			h[1] = headroom(c.Measured, c.Target)
		case CondErrors:
			h[2] = headroom(c.Measured, c.Target)
		case CondResilience:
			h[3] = headroom(c.Measured, c.Target)
		}
	}
	return scoreOf(h)
}

// scoreOf combines headrooms (cost, latency, errors, resilience), each in [0, 1].
func scoreOf(h [4]float64) int64 {
	sum := weightCost*h[0] + weightLatency*h[1] + weightErrors*h[2] + weightResilience*h[3]
	return ScoreBase + int64(math.Round(ScoreSpan*sum))
}

func headroom(measured, target float64) float64 {
	if !(target > 0) || math.IsNaN(measured) {
		return 0
	}
	return math.Min(1, math.Max(0, 1-measured/target))
}
