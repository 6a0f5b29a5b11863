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
