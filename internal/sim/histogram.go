package sim

import "math"

// latencyHistogram accumulates the latency distribution of a whole run from each tick's
// quantiles, so that run-level quantiles need no per-request record. Within a tick the
// distribution is taken as log-uniform between its known points: a quarter of the median
// (probability 0), the median (0.5), p95 (0.95) and p99 (0.99), and an exponential-like tail
// ending at p99 + 2·(p99 − p95) (1). A run of identical ticks therefore gives back exactly
// that tick's quantiles, to the histogram's 1% resolution.
type latencyHistogram struct {
	// density is the difference array of mass per bin from bin lo on, prefix-summed at the
	// end; the bins outside it hold nothing. A run's latencies span a few hundred of the
	// bins, so it holds those, not all of them.
	density []float64
	lo      int
	total   float64

	// The bins of the last tick added, kept for the next: steady ticks repeat their
	// quantiles, and the bins are what costs (a logarithm each).
	lastQ    [3]float64
	lastTop  float64
	lastBins [4][2]int
	lastSpan [2]int // the first and the last of lastBins' bins
	haveLast bool
}

const (
	histMinSec = 1e-6
	histMaxSec = 1e5
	histRatio  = 1.01
)

var (
	histLogRatio = math.Log(histRatio)
	histBins     = int(math.Ceil(math.Log(histMaxSec/histMinSec)/histLogRatio)) + 2
)

// histPad is how many bins the window takes beyond what it must hold when it grows: room
// for the latencies to move by a factor of 10 (232 bins) before it grows again.
const histPad = 256

// hold makes bins a..b (of 0..histBins) part of the window.
func (h *latencyHistogram) hold(a, b int) {
	hi := h.lo + len(h.density) // one past the window's last bin
	if h.density != nil && a >= h.lo && b < hi {
		return
	}
	if h.density == nil {
		h.lo, hi = a, a
	}
	lo, end := max(0, min(a, h.lo)-histPad), min(histBins+1, max(b+1, hi)+histPad)
	d := make([]float64, end-lo)
	copy(d[h.lo-lo:], h.density)
	h.density, h.lo = d, lo
}

func histBin(x float64) int {
	if x <= histMinSec {
		return 0
	}
	b := int(math.Log(x/histMinSec) / histLogRatio)
	return min(b, histBins-1)
}

// binRange is bins a to b, in order.
func binRange(a, b int) [2]int {
	if b < a {
		a, b = b, a
	}
	return [2]int{a, b}
}

// spread adds mass uniformly (in log space) over the bins ab (bins of [lo, hi]), which the
// window holds, with the bin after them.
func (h *latencyHistogram) spread(ab [2]int, mass float64) {
	a, b := ab[0], ab[1]
	per := mass / float64(b-a+1)
	h.density[a-h.lo] += per
	h.density[b+1-h.lo] -= per
}

// add records weight requests whose tick had quantiles q = {p50, p95, p99} in seconds. They
// were answered within the client timeout (0: none), so the tail ends there at the latest.
func (h *latencyHistogram) add(weight float64, q [3]float64, timeout float64) {
	if weight <= 0 || !(q[2] > 0) {
		return
	}
	top := q[2] + 2*(q[2]-q[1])
	if timeout > 0 {
		top = max(q[2], min(top, timeout))
	}
	h.total += weight
	if !h.haveLast || q != h.lastQ || top != h.lastTop {
		h.lastQ, h.lastTop, h.haveLast = q, top, true
		// The ranges share their ends: each point's bin (a logarithm) is found once.
		b0, b1, b2, b3, b4 := histBin(q[0]/4), histBin(q[0]), histBin(q[1]), histBin(q[2]), histBin(top)
		h.lastBins = [4][2]int{binRange(b0, b1), binRange(b1, b2), binRange(b2, b3), binRange(b3, b4)}
		h.lastSpan = [2]int{min(b0, b1, b2, b3, b4), max(b0, b1, b2, b3, b4)}
	}
	mass := [4]float64{0.5 * weight, 0.45 * weight, 0.04 * weight, 0.01 * weight}
	if hi := h.lo + len(h.density); h.density == nil || h.lastSpan[0] < h.lo || h.lastSpan[1]+1 >= hi {
		// The window may have to grow: each range with mass is made part of it in turn.
		// (Where a window ends depends on the windows before it, not on what they hold,
		// so growing it before the masses are added makes the same window.) Once the
		// window holds them all, as it mostly does, none of these would change it.
		for k := range mass {
			if !(mass[k] <= 0) {
				h.hold(h.lastBins[k][0], h.lastBins[k][1]+1)
			}
		}
	}
	for k := range mass {
		if !(mass[k] <= 0) {
			h.spread(h.lastBins[k], mass[k])
		}
	}
}

// quantiles fills out with the run's quantiles (seconds) for ps, ascending.
func (h *latencyHistogram) quantiles(ps []float64, out []float64) {
	for i := range out {
		out[i] = 0
	}
	if h.total <= 0 {
		return
	}
	// Below the window every bin is empty and the sums are 0; above it they carry on,
	// with what rounding left of the running mass.
	run, cum, k := 0.0, 0.0, 0
	for b := h.lo; b < histBins && k < len(ps); b++ {
		if i := b - h.lo; i < len(h.density) {
			run += h.density[i]
		}
		cum += run
		for k < len(ps) && cum >= ps[k]*h.total*(1-1e-12) {
			// Upper edge of the bin: quantiles are reported on the safe side.
			out[k] = histMinSec * math.Pow(histRatio, float64(b+1))
			k++
		}
	}
	for ; k < len(ps); k++ {
		out[k] = histMaxSec
	}
}
