package sim

import "math"

// Latency distributions are the costliest part of a tick: a mixture over every path a
// request can take. They are recomputed only when an input has moved by more than
// latencyTolerance since the last computation (any hop's fixed time, service rate, wait
// rate or wait probability, any injected latency, any path's share of the answers);
// otherwise the tick reuses the last quantiles and timeout shares. Once the inputs stop
// moving (a tick's inputs equal the previous tick's), any difference at all from the last
// computation triggers one, so that a steady state reports its exact values. Means are
// exact every tick, and between computations the quantiles follow the exact mean (scaled).
const latencyTolerance = 0.01

type latencyCache struct {
	valid     bool
	stages    []Stage   // per pool, at the last computation
	extra     []float64 // per edge
	weights   []float64 // per node: share of the answers
	prev      []Stage   // per pool, in the previous tick
	prevExtra []float64
	prevW     []float64
	late      []float64 // per node: share of its answers slower than the client timeout
	quantiles [3]float64
	meanAt    float64   // the mix's mean latency when the quantiles were computed
	compP99   []float64 // per component, seconds
	compMean  []float64
	groups    pathGroups
}

func (lc *latencyCache) init(m *model) {
	lc.stages = make([]Stage, len(m.pools))
	lc.extra = make([]float64, len(m.edgeTo))
	lc.weights = make([]float64, len(m.nodes))
	lc.prev = make([]Stage, len(m.pools))
	lc.prevExtra = make([]float64, len(m.edgeTo))
	lc.prevW = make([]float64, len(m.nodes))
	lc.late = make([]float64, len(m.nodes))
	lc.compP99 = make([]float64, len(m.comps))
	lc.compMean = make([]float64, len(m.comps))
	lc.groups.init(len(m.nodes))
}

// pathGroups gathers paths whose hops are identical, without allocating once grown.
type pathGroups struct {
	stages []Stage // hops of each group's first path, back to back
	list   []pathGroup
	ofNode []int // group of each node, -1 if none
	table  []int // open addressing: hash slot → group index + 1
}

type pathGroup struct {
	hash         uint64
	start, end   int
	weight, late float64
}

func (pg *pathGroups) init(nodes int) {
	pg.ofNode = make([]int, nodes)
	size := 1
	for size < 2*nodes {
		size <<= 1
	}
	pg.table = make([]int, size)
}

func (pg *pathGroups) reset() {
	pg.stages, pg.list = pg.stages[:0], pg.list[:0]
	for i := range pg.ofNode {
		pg.ofNode[i] = -1
	}
	clear(pg.table)
}

// add files node's path, whose hops were just appended from start, under its group.
func (pg *pathGroups) add(node, start int, weight float64) {
	hops := pg.stages[start:]
	h := uint64(14695981039346656037)
	for _, s := range hops {
		for _, x := range [4]float64{s.Fixed, s.ServiceRate, s.WaitProb, s.WaitRate} {
			h ^= math.Float64bits(x)
			h *= 1099511628211
		}
	}
	mask := uint64(len(pg.table) - 1)
	for slot := h & mask; ; slot = (slot + 1) & mask {
		g := pg.table[slot] - 1
		if g < 0 {
			pg.list = append(pg.list, pathGroup{hash: h, start: start, end: len(pg.stages), weight: weight})
			pg.table[slot] = len(pg.list)
			pg.ofNode[node] = len(pg.list) - 1
			return
		}
		grp := &pg.list[g]
		if grp.hash == h && equalStages(pg.stages[grp.start:grp.end], hops) {
			grp.weight += weight
			pg.ofNode[node] = g
			pg.stages = pg.stages[:start] // the group keeps its own copy
			return
		}
	}
}

func equalStages(a, b []Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func moved(a, b, tol float64) bool {
	return math.Abs(a-b) > tol*math.Max(math.Abs(a), math.Abs(b))
}

// stageMoved compares two versions of a hop by what they add to latency: its fixed part,
// its mean service time and its mean wait, each against the hop's whole mean. A change
// in a wait probability of one in a million moves nothing a player could see.
func stageMoved(a, b Stage, tol float64) bool {
	if tol == 0 {
		return a != b
	}
	scale := tol * math.Max(stageMean(a), stageMean(b))
	svc := func(s Stage) float64 {
		if s.ServiceRate > 0 {
			return 1 / s.ServiceRate
		}
		return 0
	}
	wait := func(s Stage) float64 {
		if s.WaitProb > 0 && s.WaitRate > 0 {
			return s.WaitProb / s.WaitRate
		}
		return 0
	}
	return math.Abs(a.Fixed-b.Fixed) > scale || math.Abs(svc(a)-svc(b)) > scale || math.Abs(wait(a)-wait(b)) > scale
}

// stale reports whether the inputs moved beyond the tolerance since the last computation,
// or at all once they have settled.
func (lc *latencyCache) stale(m *model, st *runState, answered float64) bool {
	settled := true
	for p := range m.pools {
		s := m.pools[p].stage
		settled = settled && s == lc.prev[p]
		lc.prev[p] = s
	}
	for e, x := range st.extraSec {
		settled = settled && x == lc.prevExtra[e]
		lc.prevExtra[e] = x
	}
	for i := range m.nodes {
		w := 0.0
		if nd := &m.nodes[i]; !nd.background && answered > 0 {
			w = nd.terminal / answered
		}
		settled = settled && w == lc.prevW[i]
		lc.prevW[i] = w
	}
	if !lc.valid {
		return true
	}
	tol := latencyTolerance
	if settled {
		tol = 0
	}
	for p := range m.pools {
		if stageMoved(lc.stages[p], lc.prev[p], tol) {
			return true
		}
	}
	for e, x := range lc.prevExtra {
		if moved(lc.extra[e], x, tol) {
			return true
		}
	}
	for i, w := range lc.prevW {
		if math.Abs(w-lc.weights[i]) > tol*math.Max(math.Max(w, lc.weights[i]), 0.001) || (tol == 0 && w != lc.weights[i]) {
			return true
		}
	}
	return false
}

// latencies brings st.lat up to date for this tick: quantiles of the request mix, each
// path's timeout share and each component's own latency.
func (m *model) latencies(st *runState, answered float64) {
	lc := &st.lat
	if !lc.stale(m, st, answered) {
		return
	}
	lc.valid = true
	for p := range m.pools {
		lc.stages[p] = m.pools[p].stage
	}
	copy(lc.extra, st.extraSec)
	timeout := m.v.cfg.Client.TimeoutMs / 1000
	// Paths with identical hops (identical replicas behind a balancer, say) have identical
	// distributions: each distinct one is computed once.
	lc.groups.reset()
	for i := range m.nodes {
		nd := &m.nodes[i]
		lc.weights[i], lc.late[i] = 0, 0
		if nd.background || nd.terminal <= 0 {
			continue
		}
		lc.weights[i] = nd.terminal / answered
		start := len(lc.groups.stages)
		for _, pn := range m.paths[nd.pathStart : nd.pathStart+nd.pathLen] {
			if s := m.stageOf(pn, st); s != (Stage{}) {
				lc.groups.stages = append(lc.groups.stages, s)
			}
		}
		lc.groups.add(i, start, nd.terminal)
	}
	st.mix.Reset()
	for g := range lc.groups.list {
		grp := &lc.groups.list[g]
		st.mix.BeginPath(grp.weight)
		for _, s := range lc.groups.stages[grp.start:grp.end] {
			st.mix.AddStage(s)
		}
	}
	for g := range lc.groups.list {
		grp := &lc.groups.list[g]
		grp.late = 0
		if timeout > 0 {
			grp.late = st.mix.PathTail(g, timeout)
		}
	}
	for i, g := range lc.groups.ofNode {
		if g >= 0 {
			lc.late[i] = lc.groups.list[g].late
		}
	}
	st.mix.Quantiles(tickQuantiles, lc.quantiles[:])
	lc.meanAt = st.mix.Mean()
	for i := range m.comps {
		c := &m.comps[i]
		st.compMix.Reset()
		for _, p := range c.pools {
			if pl := &m.pools[p]; pl.in > 0 && !pl.failed {
				st.compMix.BeginPath(pl.in)
				st.compMix.AddStage(pl.stage)
			}
		}
		lc.compP99[i], lc.compMean[i] = 0, 0
		if st.compMix.Len() > 0 {
			var q [1]float64
			st.compMix.Quantiles(p99Only, q[:])
			lc.compP99[i], lc.compMean[i] = q[0], st.compMix.Mean()
		}
	}
}

// scaled returns the quantiles carried to this tick's exact mean: between computations the
// shape of the distribution is kept and its scale follows the mean, so a stale quantile is
// off only by how much the shape changed.
func (lc *latencyCache) scaled(mean float64) [3]float64 {
	q := lc.quantiles
	if lc.meanAt > 0 && mean > 0 {
		k := mean / lc.meanAt
		q[0], q[1], q[2] = q[0]*k, q[1]*k, q[2]*k
	}
	return q
}
