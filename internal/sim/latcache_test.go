package sim

import (
	"math"
	"testing"
)

// stageMovedReference is stageMoved as it read before its equal-stage shortcut and its
// reordered wait test: the shortcut must decide exactly as this did, for every scale.
func stageMovedReference(a, b *Stage, scale float64) bool {
	if scale == 0 {
		return *a != *b
	}
	if a.SpreadRate > 0 {
		scale = min(scale, spreadTolerance*math.Sqrt(spreadStages)/a.SpreadRate)
	}
	if math.Abs(a.Fixed-b.Fixed) > scale {
		return true
	}
	switch ra, rb := a.ServiceRate, b.ServiceRate; {
	case ra > 0 && rb > 0:
		if math.Abs(rb-ra) > scale*ra*rb {
			return true
		}
	case ra > 0 || rb > 0:
		return true
	}
	switch ra, rb := a.SpreadRate, b.SpreadRate; {
	case ra > 0 && rb > 0:
		if 2*spreadStages*math.Abs(rb-ra) > scale*ra*rb {
			return true
		}
	case ra > 0:
		return spreadStages > scale*ra
	case rb > 0:
		return spreadStages > scale*rb
	}
	aWaits, bWaits := a.WaitProb > 0 && a.WaitRate > 0, b.WaitProb > 0 && b.WaitRate > 0
	switch {
	case aWaits && bWaits:
		if math.Abs(a.WaitProb*b.WaitRate-b.WaitProb*a.WaitRate) > scale*a.WaitRate*b.WaitRate {
			return true
		}
		return math.Abs(a.WaitProb-b.WaitProb) > scale*a.WaitRate ||
			a.WaitProb*math.Abs(a.WaitRate-b.WaitRate) > scale*a.WaitRate*a.WaitRate
	case aWaits:
		return a.WaitProb > scale*a.WaitRate
	case bWaits:
		return b.WaitProb > scale*b.WaitRate
	}
	return false
}

// TestStageMovedDecidesAsBefore compares stageMoved with the reference over stages built
// from edge values (signed zeros, infinities, NaN, near-equal rates), equal and unequal
// pairs, and scales of every sign.
func TestStageMovedDecidesAsBefore(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	vals := []float64{0, math.Copysign(0, -1), 1e-300, 0.004, 0.0041, 0.5, 1, 1.00001, 250, inf, -1, nan}
	scales := []float64{0, math.Copysign(0, -1), 1e-9, 0.001, 0.05, 3, inf, -0.01, -inf, nan}
	var stages []Stage
	for i, x := range vals {
		y, z := vals[(i*5+3)%len(vals)], vals[(i*7+1)%len(vals)]
		stages = append(stages,
			Stage{Fixed: x, ServiceRate: y},
			Stage{Fixed: z, ServiceRate: x, WaitProb: y, WaitRate: z},
			Stage{Fixed: y, ServiceRate: z, WaitProb: x, WaitRate: y, SpreadRate: x},
			Stage{ServiceRate: 100, WaitProb: 0.2, WaitRate: x, SpreadRate: y},
			Stage{Fixed: 0.01, ServiceRate: 100, WaitProb: x, WaitRate: 50},
		)
	}
	checked := 0
	for i := range stages {
		for j := range stages {
			for _, scale := range scales {
				a, b := stages[i], stages[j]
				if got, want := stageMoved(&a, &b, scale), stageMovedReference(&a, &b, scale); got != want {
					t.Fatalf("stageMoved(%+v, %+v, %g) = %v, want %v", a, b, scale, got, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no case checked")
	}
}

// TestEqualStagePassedAsStageMoved holds the checks that pass over a stage equal to its
// record without calling stageMoved (the system's latencies with a pool's scale
// latencyTolerance·h, a component's with scale itself) to stageMoved's decisions.
func TestEqualStagePassedAsStageMoved(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	vals := []float64{0, math.Copysign(0, -1), 5e-324, 0.004, 1, 250, inf, -1, -5e-324, nan}
	var stages []Stage
	for i, x := range vals {
		y := vals[(i*3+1)%len(vals)]
		stages = append(stages, Stage{Fixed: x, ServiceRate: y}, Stage{Fixed: 0.01, ServiceRate: 100, WaitProb: x, WaitRate: y, SpreadRate: x})
	}
	for i := range stages {
		for j := range stages {
			a, b := &stages[i], &stages[j]
			for _, h := range vals {
				scale := latencyTolerance * h
				want := stageMoved(a, b, scale)
				if got := (!sameStage(a, b) || h < 0) && stageMoved(a, b, scale); got != want {
					t.Fatalf("pool scale %g: %+v against %+v moved %v, stageMoved says %v", h, *b, *a, got, want)
				}
				if got := (!sameStage(a, b) || h < 0) && stageMoved(a, b, h); got != stageMoved(a, b, h) {
					t.Fatalf("scale %g: %+v against %+v moved %v, stageMoved says %v", h, *b, *a, got, !got)
				}
			}
		}
	}
}
