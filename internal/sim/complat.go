package sim

import "math"

// Each component reports its own latency: the mean and p99 of a request's time in it, over
// its pools (a database's primary and replicas, a queue's broker and consumers) weighted by
// what each pool takes in. The mean is exact every tick. The p99 is recomputed when the
// component's own inputs move, by the rule of latcache.go applied to the component alone
// (a pool's stage by more than latencyTolerance of the component's mean, a pool's share of
// the input by that share of itself, any change once they settle); in between it follows
// the exact mean, scaled.
type compLatency struct {
	stageAt  []Stage   // per pool, at its component's last p99 computation
	inAt     []float64 // per pool
	prev     []Stage   // per pool, in the previous tick
	prevIn   []float64 // per pool
	p99At    []float64 // per component, seconds
	meanAt   []float64
	computed []bool
}

func (cl *compLatency) init(m *model) {
	np, nc := len(m.pools), len(m.comps)
	cl.stageAt, cl.prev = make([]Stage, np), make([]Stage, np)
	cl.inAt, cl.prevIn = make([]float64, np), make([]float64, np)
	cl.p99At, cl.meanAt, cl.computed = make([]float64, nc), make([]float64, nc), make([]bool, nc)
}

// componentLatency returns component i's mean and p99 latency this tick, in seconds; 0, 0
// when none of its pools is serving.
func (m *model) componentLatency(i int, st *runState) (mean, p99 float64) {
	cl := &st.lat.comps
	c := &m.comps[i]
	if len(c.pools) == 1 {
		return m.onePoolLatency(i, c.pools[0], st)
	}
	var in, sum, inAt float64
	settled := true
	// The per-pool records resliced to the pools' length: a pool's index that passed one
	// bounds check needs no other.
	pools := m.pools
	prevs, prevIns, inAts := cl.prev[:len(pools)], cl.prevIn[:len(pools)], cl.inAt[:len(pools)]
	for _, p := range c.pools {
		pl := &pools[p]
		w := servingInput(pl)
		prev, prevIn := &prevs[p], &prevIns[p]
		settled = settled && sameStage(&pl.stage, prev) && w == *prevIn
		*prev, *prevIn = pl.stage, w
		in += w
		sum += w * pl.meanSec
		inAt += inAts[p]
	}
	if in <= 0 {
		cl.computed[i] = false
		return 0, 0
	}
	mean = sum / in
	if cl.stale(m, c, i, in, inAt, settled) {
		return mean, m.computeP99(i, st, mean)
	}
	return mean, cl.scaledP99(m, i, mean)
}

// onePoolLatency is componentLatency for a component of one pool p: the same sums and
// checks, over one pool, without the loops (most components have one pool).
func (m *model) onePoolLatency(i, p int, st *runState) (mean, p99 float64) {
	cl := &st.lat.comps
	pl := &m.pools[p]
	w := servingInput(pl)
	prev, prevIn := &cl.prev[p], &cl.prevIn[p] // each indexed once: one bounds check each
	settled := sameStage(&pl.stage, prev) && w == *prevIn
	*prev, *prevIn = pl.stage, w
	if w <= 0 {
		cl.computed[i] = false
		return 0, 0
	}
	// 0 + as componentLatency's sum starts: a mean of −0 reads 0, the same bits.
	mean = (0 + w*pl.meanSec) / w
	if cl.computed[i] {
		// stale for one pool, which holds all of the input: no share to compare. An equal
		// stage moves by nothing at a scale of 0 or more.
		scale := 0.0
		if !settled {
			scale = latencyTolerance * cl.meanAt[i]
		}
		if at := &cl.stageAt[p]; (sameStage(at, &pl.stage) && !(scale < 0)) || !stageMoved(at, &pl.stage, scale) {
			return mean, cl.scaledP99(m, i, mean)
		}
	}
	return mean, m.computeP99(i, st, mean)
}

// computeP99 computes component i's p99 afresh from its pools, and records them.
func (m *model) computeP99(i int, st *runState, mean float64) float64 {
	cl := &st.lat.comps
	st.compMix.Reset()
	for _, p := range m.comps[i].pools {
		pl := &m.pools[p]
		cl.stageAt[p], cl.inAt[p] = pl.stage, servingInput(pl)
		if w := cl.inAt[p]; w > 0 {
			st.compMix.BeginPath(w)
			st.compMix.AddStage(pl.stage)
		}
	}
	// Over the requests answered within the client timeout, like the system's.
	p := p99Only[0]
	if to := m.timeoutSec; to > 0 {
		p *= 1 - st.compMix.Tail(to)
	}
	var q [1]float64
	ps := [1]float64{p}
	st.compMix.Quantiles(ps[:], q[:])
	cl.p99At[i], cl.meanAt[i], cl.computed[i] = q[0], mean, true
	return m.belowTimeout(q[0])
}

// scaledP99 is component i's last p99 carried to this tick's mean.
func (cl *compLatency) scaledP99(m *model, i int, mean float64) float64 {
	p99 := cl.p99At[i]
	if cl.meanAt[i] > 0 {
		p99 *= mean / cl.meanAt[i]
	}
	return m.belowTimeout(p99)
}

// belowTimeout caps a successful latency at the client timeout: nothing slower is a success.
func (m *model) belowTimeout(sec float64) float64 {
	if m.timeoutSec > 0 {
		return min(sec, m.timeoutSec)
	}
	return sec
}

// servingInput is what a pool takes in, counted for its component's latency: nothing while
// it is down.
func servingInput(pl *pool) float64 {
	if pl.failed || !(pl.in > 0) {
		return 0
	}
	return pl.in
}

// stale reports whether component c's p99 must be recomputed: in is what its pools take in
// this tick, inAt what they took in at the last computation, settled whether they are
// exactly as in the previous tick. (A component of one pool is checked by onePoolLatency.)
func (cl *compLatency) stale(m *model, c *component, i int, in, inAt float64, settled bool) bool {
	if !cl.computed[i] {
		return true
	}
	tol, scale := latencyTolerance, latencyTolerance*cl.meanAt[i]
	if settled {
		tol, scale = 0, 0
	}
	// An equal stage moves by nothing at a scale of 0 or more: it is passed without the call.
	// The per-pool records resliced to the pools' length: a pool's index that passed one
	// bounds check needs no other.
	pools := m.pools
	stageAt, prevIn, inAts := cl.stageAt[:len(pools)], cl.prevIn[:len(pools)], cl.inAt[:len(pools)]
	for _, p := range c.pools {
		s := &pools[p].stage
		if a := &stageAt[p]; (!sameStage(a, s) || scale < 0) && stageMoved(a, s, scale) {
			return true
		}
		w, w0 := prevIn[p]/in, inAts[p]/inAt // prevIn: what it takes in this tick, recorded
		if math.Abs(w-w0) > tol*max(w, w0) || (tol == 0 && w != w0) {
			return true
		}
	}
	return false
}

// sameStage is a == b, field by field as == compares them, without the call the compiler
// makes for a struct's equality.
func sameStage(a, b *Stage) bool {
	return a.Fixed == b.Fixed && a.ServiceRate == b.ServiceRate && a.WaitProb == b.WaitProb &&
		a.WaitRate == b.WaitRate && a.SpreadRate == b.SpreadRate
}
