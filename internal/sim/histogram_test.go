package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bins are the bins of [lo, hi], in order, as the histogram found them for each range.
func bins(lo, hi float64) [2]int {
	return binRange(histBin(lo), histBin(hi))
}

// The histogram finds each of a tick's points' bins once: the ranges between them are the
// bins each range's own ends give, over latencies from below the first bin to beyond the
// last, equal points and a tail cut at the timeout.
func TestHistogramRangesShareTheirEnds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for k := range 20000 {
		q := [3]float64{math.Exp(r.Float64()*30 - 18), 0, 0}
		q[1] = q[0] * (1 + r.Float64()*float64(k%4))
		q[2] = q[1] * (1 + r.Float64()*float64(k%3))
		timeout := 0.0
		if k%2 == 0 {
			timeout = q[2] * (0.5 + r.Float64())
		}
		var h latencyHistogram
		h.add(1, q, timeout)
		top := q[2] + 2*(q[2]-q[1])
		if timeout > 0 {
			top = max(q[2], min(top, timeout))
		}
		want := [4][2]int{bins(q[0]/4, q[0]), bins(q[0], q[1]), bins(q[1], q[2]), bins(q[2], top)}
		if h.lastBins != want {
			t.Fatalf("quantiles %v, timeout %v: bins %v, want %v", q, timeout, h.lastBins, want)
		}
	}
}

// refHistogram adds a tick as the histogram did before it looked at the window once for
// the four ranges: each range made part of the window as it was spread.
type refHistogram struct{ latencyHistogram }

func (h *refHistogram) add(weight float64, q [3]float64, timeout float64) {
	if weight <= 0 || !(q[2] > 0) {
		return
	}
	top := q[2] + 2*(q[2]-q[1])
	if timeout > 0 {
		top = max(q[2], min(top, timeout))
	}
	h.total += weight
	ranges := [4][2]int{bins(q[0]/4, q[0]), bins(q[0], q[1]), bins(q[1], q[2]), bins(q[2], top)}
	for k, mass := range [4]float64{0.5 * weight, 0.45 * weight, 0.04 * weight, 0.01 * weight} {
		if mass <= 0 {
			continue
		}
		a, b := ranges[k][0], ranges[k][1]
		per := mass / float64(b-a+1)
		h.hold(a, b+1)
		h.density[a-h.lo] += per
		h.density[b+1-h.lo] -= per
	}
}

// binMass is the histogram's difference array at bin b (0 outside its window).
func binMass(h *latencyHistogram, b int) float64 {
	if i := b - h.lo; h.density != nil && i >= 0 && i < len(h.density) {
		return h.density[i]
	}
	return 0
}

// TestHistogramWindowAsBefore adds runs of ticks whose latencies wander over decades
// (the window grows both ways), repeat (the ranges are kept) or carry weights so small
// that a range's share is 0, and wants the same window, bins and run quantiles, bit for
// bit, as the reference.
func TestHistogramWindowAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for run := range 200 {
		var got latencyHistogram
		var want refHistogram
		level := math.Exp(r.Float64()*20 - 12)
		for k := range 300 {
			if r.IntN(8) == 0 {
				level *= math.Exp(r.NormFloat64() * 3)
			}
			q := [3]float64{level * (1 + 0.1*r.Float64()), 0, 0}
			q[1] = q[0] * (1 + 3*r.Float64())
			q[2] = q[1] * (1 + r.Float64())
			weight := 100 * r.Float64()
			switch r.IntN(10) {
			case 0:
				weight = 5e-324
			case 1:
				q = want.lastQ // a tick repeated
			}
			timeout := 0.0
			if run%2 == 0 {
				timeout = q[2] * (0.8 + r.Float64())
			}
			got.add(weight, q, timeout)
			want.add(weight, q, timeout)
			want.lastQ = q
			if k%50 == 0 || k == 299 {
				ps := []float64{0.1, 0.5, 0.9, 0.95, 0.99, 0.999}
				g, w := make([]float64, len(ps)), make([]float64, len(ps))
				got.quantiles(ps, g)
				want.quantiles(ps, w)
				if !sameFloats(g, w) || math.Float64bits(got.total) != math.Float64bits(want.total) {
					t.Fatalf("run %d tick %d: quantiles %v of %v, want %v of %v", run, k, g, got.total, w, want.total)
				}
			}
		}
		if got.lo != want.lo || len(got.density) != len(want.density) {
			t.Fatalf("run %d: window of %d bins from %d, want %d from %d", run, len(got.density), got.lo, len(want.density), want.lo)
		}
		for b := 0; b <= histBins; b++ {
			if g, w := binMass(&got, b), binMass(&want.latencyHistogram, b); math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("run %d: bin %d holds %v, want %v", run, b, g, w)
			}
		}
	}
}
