package sim

import "math"

// Health checks. A balancer probes each backend every interval I, at a phase of its own
// that nothing in the design fixes (it depends on when the balancer and the backend
// started), and takes a backend out after k failed probes in a row; it lets it back in
// after one passing probe. The engine has no randomness, so it splits requests by the
// expectation over a uniformly random phase (the split is exact; what queues make of it is
// the run of the expected split, not the mean of the runs over phases, since queues are
// not linear in what they receive):
//
//   - A backend that fails at f is first probed at f + U, U uniform on (0, I], and taken
//     out at f + U + (k−1)·I: never before (k−1)·I, always by k·I. The share still sent to
//     it falls linearly from all of it at f + (k−1)·I to none at f + k·I (5 to 10 s with
//     the defaults), and fails.
//   - A backend repaired at r (down for D) had been taken out if D > (k−1)·I + U, that is
//     with probability a/I, a = min(I, D − (k−1)·I). It comes back at its next probe: for
//     the phases that took it out that is r + U + I − a, so the share kept from it stays
//     a/I for I − a and then returns linearly, all of it by r + I.
//
// A cut link is probed the same way. The expectation over the phase, not one phase: the
// worst phase (noticed a fixed k·I after the failure) would cost a failure more requests
// than it costs on average, and the best (a repaired backend back at once) would let a
// repair help sooner than it does.

// outage is one backend's (or link's) failures as its balancer's health checks see them.
type outage struct {
	since   float64 // when the current failure began; +Inf while up
	end     float64 // the scheduled end of the current failure (scratch of apply)
	upAt    float64 // when the latest failure ended; -Inf if none has
	downFor float64 // how long that failure lasted
}

func noOutage() outage {
	return outage{since: math.Inf(1), end: math.Inf(-1), upAt: math.Inf(-1)}
}

// update records the state of the tick: down (since start, until end) or up.
func (o *outage) update(down bool, start, end float64) {
	switch {
	case down:
		if math.IsInf(o.since, 1) {
			o.since = start
		}
		o.end = end
	case !math.IsInf(o.since, 1):
		o.upAt, o.downFor = o.end, o.end-o.since
		o.since, o.end = math.Inf(1), math.Inf(-1)
	}
}

// matters reports whether checks probing at most probeSec apart may keep the backend out
// in a tick starting at t0: it is down, or came back less than probeSec ago.
func (o *outage) matters(t0, probeSec float64) bool {
	return !math.IsInf(o.since, 1) || t0 < o.upAt+probeSec
}

// out is the expected share of the tick [t0, t1) during which checks every interval,
// taking a backend out after threshold failures in a row, keep it out of the rotation.
func (o *outage) out(t0, t1, interval float64, threshold int) float64 {
	before := float64(threshold-1) * interval // failed probes before the one that may notice
	if !math.IsInf(o.since, 1) {
		return rampMean(t0, t1, o.since+before, o.since+before+interval)
	}
	if t0 >= o.upAt+interval {
		return 0 // every phase has probed it since it came back
	}
	a := min(interval, o.downFor-before)
	if a <= 0 {
		return 0 // it was back before any phase could notice
	}
	return a / interval * (1 - rampMean(t0, t1, o.upAt+interval-a, o.upAt+interval))
}

// rampMean is the mean over [t0, t1) of the ramp that is 0 before lo, 1 after hi and
// linear in between (a step at lo when hi = lo).
func rampMean(t0, t1, lo, hi float64) float64 {
	if t1 <= lo {
		return 0
	}
	if t0 >= hi {
		return 1
	}
	w := hi - lo
	// g is the integral of the ramp from lo to x.
	g := func(x float64) float64 {
		switch {
		case x <= lo:
			return 0
		case x >= hi:
			return w/2 + (x - hi)
		}
		return (x - lo) * (x - lo) / (2 * w)
	}
	if t1 <= t0 {
		return 0
	}
	return (g(t1) - g(t0)) / (t1 - t0)
}

// outShare is the expected share of the current tick during which balancer lb's health
// checks keep the backend of node c out of the rotation: the backend itself or the link to
// it, whichever the checks see failing longer.
func (m *model) outShare(lb int, c *node, st *runState) float64 {
	b := &m.comps[lb]
	t0, t1 := st.tickStart, st.tickStart+m.dt
	o := m.comps[c.comp].down.out(t0, t1, b.checkIntervalSec, b.unhealthyThreshold)
	if c.edge >= 0 {
		o = max(o, st.events.cuts[c.edge].out(t0, t1, b.checkIntervalSec, b.unhealthyThreshold))
	}
	return o
}

// maxPartialBackends bounds the backends whose checks are undecided at once for which the
// split is enumerated exactly (2^n phase combinations); beyond it each such backend's
// weight is scaled by the share of phases that keep it in, which slightly overstates what
// the undecided backends receive.
const maxPartialBackends = 6

// prepareSplit clears the split scratch for n children.
func (m *model) prepareSplit(n int) {
	if cap(m.splitOut) < n {
		m.splitOut, m.splitW = make([]float64, n), make([]float64, n)
	}
	m.splitOut, m.splitW = m.splitOut[:n], m.splitW[:n]
	clear(m.splitOut)
}

// expectedShares turns node nd's children's weights (c.share, 0 for a backend every phase
// has taken out) and m.splitOut (the share of phases that have taken a backend out, where
// it is neither 0 nor 1) into the expected split over the checks' phases, which are
// independent per backend: in each combination of undecided backends in or out, the ones
// in share by weight (those of weight +Inf, if any is in, share everything evenly). It returns the total of the shares (with the shares as fractions)
// and nowhere, the chance that none is in.
func (m *model) expectedShares(nd *node) (total, nowhere float64) {
	var undecided [maxPartialBackends]int
	u := 0
	for k, ch := range nd.children {
		m.splitW[k] = m.nodes[ch].share
		if m.splitOut[k] > 0 {
			if u == maxPartialBackends {
				// Too many to enumerate: scale each weight instead.
				for k, ch := range nd.children {
					c := &m.nodes[ch]
					c.share = m.splitW[k] * (1 - m.splitOut[k])
					total += c.share
				}
				return total, 0
			}
			undecided[u] = k
			u++
		}
	}
	for _, ch := range nd.children {
		m.nodes[ch].share = 0
	}
	for mask := 0; mask < 1<<u; mask++ {
		p, sum, atOnce := 1.0, 0.0, 0
		for i := 0; i < u; i++ {
			if o := m.splitOut[undecided[i]]; mask&(1<<i) != 0 {
				p *= o // taken out in these phases
			} else {
				p *= 1 - o
			}
		}
		for k := range nd.children {
			if m.splitOut[k] == 0 || !taken(mask, undecided[:u], k) {
				if math.IsInf(m.splitW[k], 1) {
					atOnce++
				}
				sum += m.splitW[k]
			}
		}
		if sum <= 0 {
			nowhere += p
			continue
		}
		for k, ch := range nd.children {
			if m.splitOut[k] == 0 || !taken(mask, undecided[:u], k) {
				switch w := m.splitW[k]; {
				case atOnce == 0:
					m.nodes[ch].share += p * w / sum
				case math.IsInf(w, 1): // least-connections: it draws everything (outstanding.go)
					m.nodes[ch].share += p / float64(atOnce)
				}
			}
		}
	}
	return 1, nowhere
}

// taken reports whether child k is one of the undecided backends mask takes out.
func taken(mask int, undecided []int, k int) bool {
	for i, j := range undecided {
		if j == k {
			return mask&(1<<i) != 0
		}
	}
	return false
}
