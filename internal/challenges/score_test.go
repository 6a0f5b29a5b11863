package challenges

import (
	"math"
	"math/rand/v2"
	"testing"
)

// evaluation builds a passing evaluation from measurements (latency ms, error rate, cost per
// hour, resilience usage) against fixed targets.
func evaluation(lat, errs, cost, usage float64) *Evaluation {
	ev := &Evaluation{Passed: true, Conditions: []Condition{
		condition(CondLatency, lat, 200, "ms", ""),
		condition(CondErrors, errs, 0.01, "ratio", ""),
		condition(CondCost, cost, 1, "$/h", ""),
		condition(CondResilience, usage, 1, "usage", ""),
	}}
	for _, c := range ev.Conditions {
		ev.Passed = ev.Passed && c.Passed
	}
	return ev
}

func TestScoreFormula(t *testing.T) {
	tests := []struct {
		name                   string
		lat, errs, cost, usage float64
		want                   int64
	}{
		{"everything at its limit", 200, 0.01, 1, 1, 1000},
		{"perfect", 0, 0, 0, 0, 10000},
		{"half of everything", 100, 0.005, 0.5, 0.5, 5500},
		{"only free", 200, 0.01, 0, 1, 1000 + 3600},
		{"only instant", 0, 0.01, 1, 1, 1000 + 2250},
		{"only error-free", 200, 0, 1, 1, 1000 + 1800},
		{"only unshakeable", 200, 0.01, 1, 0, 1000 + 1350},
	}
	for _, tt := range tests {
		ev := evaluation(tt.lat, tt.errs, tt.cost, tt.usage)
		if got := Score(ev); got != tt.want {
			t.Errorf("%s: Score = %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := Score(evaluation(201, 0, 0, 0)); got != 0 {
		t.Errorf("failing run scores %d, want 0", got)
	}
	if got := Score(nil); got != 0 {
		t.Errorf("Score(nil) = %d", got)
	}
}

// Property: improving any one measurement (cheaper, faster, fewer errors, more resilient)
// never lowers the score, and every passing score lies in [ScoreBase, MaxScore].
func TestScoreMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	targets := [4]float64{200, 0.01, 1, 1}
	for range 20000 {
		var m [4]float64
		for i := range m {
			m[i] = rng.Float64() * targets[i]
		}
		base := Score(evaluation(m[0], m[1], m[2], m[3]))
		if base < ScoreBase || base > MaxScore {
			t.Fatalf("score %d out of [%d, %d] for %v", base, ScoreBase, MaxScore, m)
		}
		for i := range m {
			better := m
			better[i] *= rng.Float64() // any improvement of one measurement, down to zero
			if got := Score(evaluation(better[0], better[1], better[2], better[3])); got < base {
				t.Fatalf("improving measurement %d from %g to %g lowered the score from %d to %d (%v)",
					i, m[i], better[i], base, got, m)
			}
		}
	}
}

// Tiny improvements (one float step) never lower the score either: rounding is monotone.
func TestScoreMonotoneAtRoundingEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		cost := rng.Float64()
		lower := math.Nextafter(cost, 0)
		a := Score(evaluation(100, 0.005, cost, 0.5))
		b := Score(evaluation(100, 0.005, lower, 0.5))
		if b < a {
			t.Fatalf("cost %v → %v lowered the score %d → %d", cost, lower, a, b)
		}
	}
}

// A score's parts say what it is made of: each condition's headroom times its weight, and
// the base plus their sum is the score.
func TestScorePartsAddUpToTheScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 500 {
		ev := evaluation(rng.Float64()*200, rng.Float64()*0.01, rng.Float64(), rng.Float64())
		parts := scoreParts(ev)
		if len(parts) != 4 {
			t.Fatalf("%d parts, want one per condition", len(parts))
		}
		sum := float64(ScoreBase)
		for _, p := range parts {
			sum += p.Points
		}
		if got := int64(math.Round(sum)); math.Abs(float64(got-Score(ev))) > 1 {
			t.Errorf("base + parts = %v, score %d: parts %+v", sum, Score(ev), parts)
		}
	}
	if parts := scoreParts(evaluation(100, 0.005, 0.5, 0.5)); parts[2].Condition != CondCost || parts[2].Points != 1800 || parts[2].Headroom != 0.5 {
		t.Errorf("cost part at half the budget = %+v, want headroom 0.5 and 1800 points (0.40 × 9000 × 0.5)", parts[2])
	}
	if parts := scoreParts(&Evaluation{Passed: false}); parts != nil {
		t.Errorf("a failing run's parts = %+v, want none", parts)
	}
}

// Without chaos, resilience has nothing to measure: the score leaves it out and shares its
// weight among cost, latency and errors in proportion, so the score still spans 1000 to
// 10000, resilience adds no free points, and the parts still add up.
func TestScoreWithoutChaos(t *testing.T) {
	noChaos := func(lat, errs, cost float64) *Evaluation {
		ev := evaluation(lat, errs, cost, 0)
		ev.Conditions[3].NotApplicable = true
		return ev
	}
	tests := []struct {
		name            string
		lat, errs, cost float64
		want            int64
	}{
		{"everything at its limit", 200, 0.01, 1, 1000},
		{"perfect", 0, 0, 0, 10000},
		{"half of everything", 100, 0.005, 0.5, 5500},
		{"only free", 200, 0.01, 0, 1000 + 4235},    // 9000 × 0.40 ÷ 0.85
		{"only instant", 0, 0.01, 1, 1000 + 2647},   // 9000 × 0.25 ÷ 0.85
		{"only error-free", 200, 0, 1, 1000 + 2118}, // 9000 × 0.20 ÷ 0.85
	}
	for _, tt := range tests {
		ev := noChaos(tt.lat, tt.errs, tt.cost)
		if got := Score(ev); got != tt.want {
			t.Errorf("%s: Score = %d, want %d", tt.name, got, tt.want)
		}
		parts := scoreParts(ev)
		sum := float64(ScoreBase)
		for _, p := range parts {
			if p.Condition == CondResilience {
				t.Errorf("%s: resilience has a part without chaos: %+v", tt.name, p)
			}
			sum += p.Points
		}
		if len(parts) != 3 || math.Abs(sum-float64(Score(ev))) > 1 {
			t.Errorf("%s: parts %+v add up to %v, score %d", tt.name, parts, sum, Score(ev))
		}
	}
}

func TestStarsFollowThePar(t *testing.T) {
	l := &Level{Stars: &Stars{Two: 4000, Three: 6000}}
	score := func(s int64) *Evaluation { return &Evaluation{Passed: true, Score: &s} }
	tests := []struct {
		ev   *Evaluation
		want int
	}{
		{&Evaluation{Passed: false}, 0},
		{score(1000), 1},
		{score(3999), 1},
		{score(4000), 2},
		{score(5999), 2},
		{score(6000), 3},
		{score(10000), 3},
	}
	for _, tt := range tests {
		if got := l.StarsFor(tt.ev); got != tt.want {
			t.Errorf("StarsFor(%+v) = %d, want %d", tt.ev.Score, got, tt.want)
		}
	}
	if got := (&Level{}).StarsFor(score(9000)); got != 1 {
		t.Errorf("a level without par gives %d stars to a pass, want 1", got)
	}
}
