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
// explain a score: a cheaper design scoring lower has spent its saving in another part.
type ScorePart struct {
	Condition string  `json:"condition"`
	Headroom  float64 `json:"headroom"`
	Weight    float64 `json:"weight"`
	// Points is ScoreSpan × Weight × Headroom, to one decimal; ScoreBase plus the parts'
	// sum, rounded, is the score.
	Points float64 `json:"points"`
}

// scoreParts breaks a passing evaluation's score into its conditions' parts, in the order
// of its conditions; nil for a failing one.
func scoreParts(ev *Evaluation) []ScorePart {
	if ev == nil || !ev.Passed {
		return nil
	}
	parts := make([]ScorePart, 0, len(ev.Conditions))
	for _, c := range ev.Conditions {
		w := weightOf(c.Name)
		if w == 0 {
			continue
		}
		h := headroom(c.Measured, c.Target)
		parts = append(parts, ScorePart{Condition: c.Name, Headroom: math.Round(h*1e4) / 1e4, Weight: w,
			Points: math.Round(ScoreSpan*w*h*10) / 10})
	}
	return parts
}

func weightOf(condition string) float64 {
	switch condition {
	case CondCost:
		return weightCost
	case CondLatency:
		return weightLatency
	case CondErrors:
		return weightErrors
	case CondResilience:
		return weightResilience
	}
	return 0
}
