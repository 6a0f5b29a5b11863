package sim

import (
	"math"
	"slices"
)

// Latency distributions are the costliest part of a tick: a mixture over every path a
// request can take. They are recomputed only when an input has moved by more than
// latencyTolerance since the last computation: a hop's fixed time, mean service time or
// mean wait (or what its wait probability or wait rate alone would do to that mean) by
// more than that share of the mean of the fastest path through it (a hop that adds
// microseconds to requests that take tens of milliseconds moves nothing while its own wait
// doubles), an injected latency by that share of itself, or a path's share of the answers
// by that share of itself. Otherwise the tick reuses the last quantiles and timeout shares.
// Once the inputs stop moving (a tick's inputs equal the previous tick's), any difference
// at all from the last computation triggers one, so that a steady state reports its exact
// values. Means are exact every tick, and between computations the quantiles follow the
// exact mean (scaled). Each component's own p99 follows the same rule on its own pools
// (complat.go). TestSystemLatencyTracksExact measures what this costs in accuracy.
const latencyTolerance = 0.01

// spreadTolerance is how far, in standard deviations of a backlog's spread, its stage may
// move before the latencies are recomputed (stageMoved).
const spreadTolerance = 0.1

type latencyCache struct {
	valid     bool
	stages    []Stage   // per pool, at the last computation
	extra     []float64 // per edge
	hopScale  []float64 // per pool: mean of the fastest answered path through it (+Inf if none)
	termAt    []float64 // per node: answers at the last computation
	prev      []Stage   // per pool, in the previous tick
	prevExtra []float64
	prevTerm  []float64

	answeredAt, prevAnswered float64

	late      []float64  // per node: share of its answers slower than the client timeout
	lateAll   float64    // share of all the tick's answers slower than the client timeout
	quantiles [3]float64 // of the answers within the client timeout
	meanAt    float64    // the mix's mean latency when the quantiles were computed
	groups    pathGroups
	comps     compLatency
}

func (lc *latencyCache) init(m *model) {
	lc.stages = make([]Stage, len(m.pools))
	lc.extra = make([]float64, len(m.edgeTo))
	lc.hopScale = make([]float64, len(m.pools))
	lc.termAt = make([]float64, len(m.nodes))
	lc.prev = make([]Stage, len(m.pools))
	lc.prevExtra = make([]float64, len(m.edgeTo))
	lc.prevTerm = make([]float64, len(m.nodes))
	lc.late = make([]float64, len(m.nodes))
	lc.groups.init(len(m.nodes))
	lc.comps.init(m)
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
	for i := range hops {
		s := &hops[i]
		h = fnvMix(h, s.Fixed)
		h = fnvMix(h, s.ServiceRate)
		h = fnvMix(h, s.WaitProb)
		h = fnvMix(h, s.WaitRate)
		h = fnvMix(h, s.SpreadRate)
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

// fnvMix folds x into the FNV-1a-style hash h.
func fnvMix(h uint64, x float64) uint64 { return (h ^ math.Float64bits(x)) * 1099511628211 }

func equalStages(a, b []Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameStage(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// stageMoved reports whether hop b differs from a, the hop at the last computation, by
// more than scale in any of what it adds to latency: its fixed part, its mean service time
// or its mean wait, or in what its wait probability or wait rate alone would do to that
// mean. (A change in a wait probability of one in a million moves nothing a player could
// see.) The comparisons are cross-multiplied so that the check, which runs
// for every pool every tick, divides nothing. scale 0 means any change at all.
func stageMoved(a, b *Stage, scale float64) bool {
	if sameStage(a, b) {
		// Most hops are as they were (a stage with no wait does not move with the load):
		// an equal stage differs by nothing, which no scale of 0 or more exceeds.
		return scale < 0 && stageMovedBy(a, b, scale)
	}
	return scale == 0 || stageMovedBy(a, b, scale)
}

// stageMovedBy is stageMoved for a, b that differ, or for any a, b once scale is not 0.
func stageMovedBy(a, b *Stage, scale float64) bool {
	if a.SpreadRate > 0 {
		// A backlog's wait is spread around its mean by a few standard deviations only,
		// which can be far less than the path's mean: where it meets the timeout, a move
		// of a fraction of that spread moves the share that times out. It is held to
		// spreadTolerance of its standard deviation, √spreadStages ÷ rate.
		scale = min(scale, spreadTolerance*math.Sqrt(spreadStages)/a.SpreadRate)
	}
	if math.Abs(a.Fixed-b.Fixed) > scale {
		return true
	}
	// |1/ra − 1/rb| > scale  ⇔  |rb − ra| > scale·ra·rb
	switch ra, rb := a.ServiceRate, b.ServiceRate; {
	case ra > 0 && rb > 0:
		if math.Abs(rb-ra) > scale*ra*rb {
			return true
		}
	case ra > 0 || rb > 0:
		return true
	}
	// A backlog's spread: spreadStages ÷ rate is the part of its mean wait it carries, and
	// about twice that of its 99th percentile (an Erlang of 8 phases), which is what it is
	// held to: between computations a p99 follows the mean, and a spread that narrows as
	// the fixed part grows moves the p99 twice as far as the mean.
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
	// |pa/wa − pb/wb| > scale  ⇔  |pa·wb − pb·wa| > scale·wa·wb
	bWaits := b.WaitProb > 0 && b.WaitRate > 0
	if !(a.WaitProb > 0 && a.WaitRate > 0) {
		return bWaits && b.WaitProb > scale*b.WaitRate
	}
	if !bWaits {
		return a.WaitProb > scale*a.WaitRate
	}
	if math.Abs(a.WaitProb*b.WaitRate-b.WaitProb*a.WaitRate) > scale*a.WaitRate*b.WaitRate {
		return true
	}
	// The same mean wait can have another shape (frequent short waits or rare long
	// ones) when probability and rate move together. Each is also held on its own to
	// what it would do to the mean: |Δp|/w > scale and p·|Δw|/w² > scale.
	return math.Abs(a.WaitProb-b.WaitProb) > scale*a.WaitRate ||
		a.WaitProb*math.Abs(a.WaitRate-b.WaitRate) > scale*a.WaitRate*a.WaitRate
}

// stale reports whether the inputs moved beyond the tolerance since the last computation,
// or at all once they have settled.
func (lc *latencyCache) stale(m *model, st *runState, answered float64) bool {
	settled := answered == lc.prevAnswered
	lc.prevAnswered = answered
	settled = settled && slices.Equal(st.extraSec, lc.prevExtra)
	copy(lc.prevExtra, st.extraSec)
	// A path's share of the answers w = t/A against w0 = t0/A0 at the last computation:
	// |w − w0| > tol·max(w, w0, 0.001), multiplied through by A·A0.
	a0, shareMoved := lc.answeredAt, false
	floor := latencyTolerance * 0.001 * answered * a0
	for _, i := range m.answering { // no other node answers: its share stays 0
		t := m.nodes[i].terminal
		settled = settled && t == lc.prevTerm[i]
		lc.prevTerm[i] = t
		if !shareMoved {
			x, y := t*a0, lc.termAt[i]*answered
			d := math.Abs(x - y)
			shareMoved = d > floor && d > latencyTolerance*max(x, y)
		}
	}
	// Nothing on record, or answers start or stop: no share can be compared.
	fresh := !lc.valid || (answered > 0) != (lc.answeredAt > 0)
	// The pools are compared as they are recorded, while the tick still looks unsettled:
	// within the tolerance until one has moved. The pools passed before a first difference
	// from the previous tick are compared then.
	moved := fresh
	for p := range m.pools {
		s := &m.pools[p].stage
		if settled && !sameStage(s, &lc.prev[p]) {
			settled = false
			for q := 0; q < p && !moved; q++ {
				moved = stageMoved(&lc.stages[q], &lc.prev[q], latencyTolerance*lc.hopScale[q])
			}
		}
		lc.prev[p] = *s
		if !settled && !moved {
			moved = stageMoved(&lc.stages[p], s, latencyTolerance*lc.hopScale[p]) // +Inf for a pool no answered path crosses
		}
	}
	if fresh {
		return true
	}
	if settled {
		for p := range m.pools {
			if !sameStage(&lc.stages[p], &lc.prev[p]) {
				return true
			}
		}
		for e, x := range lc.prevExtra {
			if lc.extra[e] != x {
				return true
			}
		}
		if answered != lc.answeredAt {
			return true
		}
		for i, t := range lc.prevTerm {
			if t != lc.termAt[i] {
				return true
			}
		}
		return false
	}
	if moved {
		return true
	}
	for e, x := range lc.prevExtra {
		// An unchanged injection of 0 or more (most are 0) is within any tolerance.
		if lc.extra[e] == x && x >= 0 {
			continue
		}
		if math.Abs(lc.extra[e]-x) > latencyTolerance*max(lc.extra[e], x) {
			return true
		}
	}
	return shareMoved
}

// answers is how many of the tick's client requests node i answered (0 for background work).
func (m *model) answers(i int) float64 {
	if nd := &m.nodes[i]; !nd.background {
		return nd.terminal
	}
	return 0
}

// latencies brings st.lat up to date for this tick: quantiles of the request mix and each
// path's timeout share. It needs the nodes' path means of this tick.
func (m *model) latencies(st *runState, answered float64) {
	lc := &st.lat
	if !lc.stale(m, st, answered) {
		return
	}
	lc.valid = true
	for p := range m.pools {
		lc.stages[p] = m.pools[p].stage
		lc.hopScale[p] = math.Inf(1)
	}
	copy(lc.extra, st.extraSec)
	copy(lc.termAt, lc.prevTerm)
	lc.answeredAt = answered
	timeout := m.v.cfg.Client.TimeoutMs / 1000
	// Paths with identical hops (identical replicas behind a balancer, say) have identical
	// distributions: each distinct one is computed once.
	lc.groups.reset()
	for i := range m.nodes {
		nd := &m.nodes[i]
		lc.late[i] = 0
		if nd.background || nd.terminal <= 0 {
			continue
		}
		start := len(lc.groups.stages)
		for _, pn := range m.paths[nd.pathStart : nd.pathStart+nd.pathLen] {
			if s := m.stageOf(pn, st); !sameStage(&s, &Stage{}) {
				lc.groups.stages = append(lc.groups.stages, s)
			}
			if p := m.nodes[pn].pool; p >= 0 {
				lc.hopScale[p] = min(lc.hopScale[p], nd.pathMean)
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
	var lateSum, weight float64
	for g := range lc.groups.list {
		grp := &lc.groups.list[g]
		grp.late = 0
		if timeout > 0 {
			grp.late = st.mix.PathTail(g, timeout)
		}
		lateSum += grp.weight * grp.late
		weight += grp.weight
	}
	lc.lateAll = 0
	if weight > 0 {
		lc.lateAll = min(1, lateSum/weight)
	}
	for i, g := range lc.groups.ofNode {
		if g >= 0 {
			lc.late[i] = lc.groups.list[g].late
		}
	}
	// A timed-out attempt is an error, not a latency: the quantiles are those of the answers
	// within the timeout, the mix's quantiles at p × (share within the timeout).
	var ps [3]float64
	for i, p := range tickQuantiles {
		ps[i] = p * (1 - lc.lateAll)
	}
	st.mix.Quantiles(ps[:], lc.quantiles[:])
	lc.meanAt = st.mix.Mean()
}

// scaled returns the quantiles carried to this tick's exact mean: between computations the
// shape of the distribution is kept and its scale follows the mean, so a stale quantile is
// off only by how much the shape changed. None exceeds the client timeout (0: none).
func (lc *latencyCache) scaled(mean, timeout float64) [3]float64 {
	q := lc.quantiles
	if lc.meanAt > 0 && mean > 0 {
		k := mean / lc.meanAt
		q[0], q[1], q[2] = q[0]*k, q[1]*k, q[2]*k
	}
	if timeout > 0 {
		q[0], q[1], q[2] = min(q[0], timeout), min(q[1], timeout), min(q[2], timeout)
	}
	return q
}
