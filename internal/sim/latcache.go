package sim

import "math"

// Latency distributions are the costliest part of a tick: a mixture over every path a
// request can take. They are recomputed only when an input has moved by more than
// latencyTolerance since the last computation (any hop's fixed time, service rate, wait
// rate or wait probability, any injected latency, any path's share of the answers);
// otherwise the tick reuses the last quantiles and timeout shares, for at most
// latencyRefreshTicks ticks, after which any change at all triggers a recomputation, so
// that a steady state reports its exact values. Means are exact every tick. The tolerance
// bounds the staleness of a quantile to about the same relative amount.
const (
	latencyTolerance    = 0.01
	latencyRefreshTicks = 10
)

type latencyCache struct {
	valid     bool
	age       int       // ticks since the last computation
	stages    []Stage   // per pool, at the last computation
	extra     []float64 // per edge
	weights   []float64 // per node: share of the answers
	late      []float64 // per node: share of its answers slower than the client timeout
	quantiles [3]float64
	compP99   []float64 // per component, seconds
	compMean  []float64
	groups    pathGroups
}

func (lc *latencyCache) init(m *model) {
	lc.stages = make([]Stage, len(m.pools))
	lc.extra = make([]float64, len(m.edgeTo))
	lc.weights = make([]float64, len(m.nodes))
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
// or at all once the last computation is latencyRefreshTicks old.
func (lc *latencyCache) stale(m *model, st *runState, answered float64) bool {
	if !lc.valid {
		return true
	}
	lc.age++
	tol := latencyTolerance
	if lc.age >= latencyRefreshTicks {
		tol = 0
	}
	for p := range m.pools {
		if stageMoved(lc.stages[p], m.pools[p].stage, tol) {
			return true
		}
	}
	for e, x := range st.extraSec {
		if moved(lc.extra[e], x, tol) {
			return true
		}
	}
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.background {
			continue
		}
		w := 0.0
		if answered > 0 {
			w = nd.terminal / answered
		}
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
	lc.valid, lc.age = true, 0
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
		hops := lc.groups.stages[grp.start:grp.end]
		st.mix.BeginPath(grp.weight)
		st.pathMix.Reset()
		st.pathMix.BeginPath(1)
		for _, s := range hops {
			st.mix.AddStage(s)
			st.pathMix.AddStage(s)
		}
		grp.late = 0
		if timeout > 0 {
			grp.late = st.pathMix.Tail(timeout)
		}
	}
	for i, g := range lc.groups.ofNode {
		if g >= 0 {
			lc.late[i] = lc.groups.list[g].late
		}
	}
	st.mix.Quantiles(tickQuantiles, lc.quantiles[:])
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
