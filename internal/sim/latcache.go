package sim

import (
	"bytes"
	"math"
	"slices"
	"unsafe"
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
	extraAtLeast0            bool // every injected latency in extra is 0 or more (none NaN): a function of extra

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
	lc.groups.init(m)
	lc.comps.init(m)
}

// pathGroups gathers the answering nodes whose paths have identical hops, without
// allocating once grown. A path is its parent's path and one more hop (none if the node's
// own stage is zero), so each distinct path is a class interned from its parent's class
// and the node's stage: two nodes' paths are the same hops, bit for bit, exactly when
// their classes are the same, found among the few classes that extend the parent's
// instead of in a pass over each path's hops.
type pathGroups struct {
	list    []pathGroup
	members []pathMember // the grouped nodes, in order
	classes []pathClass  // class 0 is the path of no hops
	need    []int        // nodes on the path of an answering node, parents first (fixed for the run)
	classOf []int        // per node in need: the class of its path
	stage   []Stage      // per node in need: its hop this tick
	subMin  []float64    // per node in need: least path mean answered in its subtree
}

type pathGroup struct {
	first        int // node whose path stands for the group's
	weight, late float64
}

type pathMember struct{ node, group int }

// pathClass is one distinct path, ending in hop.
type pathClass struct {
	hop         Stage
	child, next int  // its first extension and its parent's next one (0: none; class 0 extends nothing)
	group       int  // the group of the nodes with this path, -1 if none yet
	unique      bool // a hop holds NaN: no other path is the same, nor any path through it
}

func (pg *pathGroups) init(m *model) {
	onPath := make([]bool, len(m.nodes))
	for _, i := range m.answering {
		for n := i; n >= 0 && !onPath[n]; n = m.nodes[n].parent {
			onPath[n] = true
		}
	}
	for i, on := range onPath {
		if on {
			pg.need = append(pg.need, i)
		}
	}
	pg.classOf = make([]int, len(m.nodes))
	pg.stage = make([]Stage, len(m.nodes))
	pg.subMin = make([]float64, len(m.nodes))
}

func (pg *pathGroups) reset() {
	pg.list, pg.members = pg.list[:0], pg.members[:0]
	pg.classes = append(pg.classes[:0], pathClass{group: -1})
}

// intern returns the class of the path parent's hops followed by hop. Hops are compared
// bit for bit, and a hop holding NaN (which equals nothing) makes a class of its own, as
// does every path through it.
func (pg *pathGroups) intern(parent int, hop *Stage) int {
	unique := pg.classes[parent].unique
	if !unique {
		for c := pg.classes[parent].child; c > 0; {
			k := &pg.classes[c]
			if sameBits(&k.hop, hop) && !k.unique {
				return c
			}
			c = k.next
		}
		unique = hop.Fixed != hop.Fixed || hop.ServiceRate != hop.ServiceRate || hop.WaitProb != hop.WaitProb ||
			hop.WaitRate != hop.WaitRate || hop.SpreadRate != hop.SpreadRate
	}
	c := len(pg.classes)
	pg.classes = append(pg.classes, pathClass{hop: *hop, next: pg.classes[parent].child, group: -1, unique: unique})
	pg.classes[parent].child = c
	return c
}

// sameBits reports whether a and b are the same stage bit for bit.
func sameBits(a, b *Stage) bool {
	return math.Float64bits(a.Fixed) == math.Float64bits(b.Fixed) &&
		math.Float64bits(a.ServiceRate) == math.Float64bits(b.ServiceRate) &&
		math.Float64bits(a.WaitProb) == math.Float64bits(b.WaitProb) &&
		math.Float64bits(a.WaitRate) == math.Float64bits(b.WaitRate) &&
		math.Float64bits(a.SpreadRate) == math.Float64bits(b.SpreadRate)
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
	// Per node and per pool, resliced to the nodes' and the pools' length: an index that
	// passed one bounds check needs no other.
	nodes, prevTerm, termAt := m.nodes, lc.prevTerm[:len(m.nodes)], lc.termAt[:len(m.nodes)]
	pools, prev, stages, hopScale := m.pools, lc.prev[:len(m.pools)], lc.stages[:len(m.pools)], lc.hopScale[:len(m.pools)]
	for _, i := range m.answering { // no other node answers: its share stays 0
		t := nodes[i].terminal
		settled = settled && t == prevTerm[i]
		prevTerm[i] = t
		if !shareMoved {
			x, y := t*a0, termAt[i]*answered
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
	for p := range pools {
		s := &pools[p].stage
		if settled && !sameStage(s, &prev[p]) {
			settled = false
			for q := 0; q < p && !moved; q++ {
				moved = stageMoved(&stages[q], &prev[q], latencyTolerance*hopScale[q])
			}
		}
		prev[p] = *s
		if r := &stages[p]; !settled && !moved && (!sameStage(r, s) || hopScale[p] < 0) {
			// (An equal stage moves by nothing at a scale of 0 or more: two in three
			// pools are as recorded, and they are passed here without the call.)
			moved = stageMoved(r, s, latencyTolerance*hopScale[p]) // +Inf for a pool no answered path crosses
		}
	}
	if fresh {
		return true
	}
	if settled {
		for p := range pools {
			if !sameStage(&stages[p], &prev[p]) {
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
		for i, t := range prevTerm {
			if t != termAt[i] {
				return true
			}
		}
		return false
	}
	if moved {
		return true
	}
	if lc.extraAtLeast0 && bytes.Equal(floatBytes(lc.prevExtra), floatBytes(lc.extra)) {
		// The injected latencies are those of the last computation, bit for bit (most
		// ticks: none), found in one comparison: each is an unchanged injection of 0 or
		// more, passed below.
		return shareMoved
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

// floatBytes is the memory of xs, for a comparison of their bits.
func floatBytes(xs []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*8)
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
	// Per pool and per node, resliced to the pools' and the nodes' length: an index that
	// passed one bounds check needs no other.
	pools, stages, hopScale := m.pools, lc.stages[:len(m.pools)], lc.hopScale[:len(m.pools)]
	for p := range pools {
		stages[p] = pools[p].stage
		hopScale[p] = math.Inf(1)
	}
	copy(lc.extra, st.extraSec)
	lc.extraAtLeast0 = true
	for _, x := range lc.extra {
		lc.extraAtLeast0 = lc.extraAtLeast0 && x >= 0
	}
	copy(lc.termAt, lc.prevTerm)
	lc.answeredAt = answered
	timeout := m.v.cfg.Client.TimeoutMs / 1000
	// Paths with identical hops (identical replicas behind a balancer, say) have identical
	// distributions: each distinct one is computed once.
	pg := &lc.groups
	pg.reset()
	nodes := m.nodes
	classOf, stage, subMin := pg.classOf[:len(nodes)], pg.stage[:len(nodes)], pg.subMin[:len(nodes)]
	for _, i := range pg.need {
		nd := &nodes[i]
		parent := 0
		if nd.parent >= 0 {
			parent = classOf[nd.parent]
		}
		subMin[i] = math.Inf(1)
		s := &stage[i]
		*s = m.stageOf(i, st)
		if sameStage(s, &Stage{}) && !pg.classes[parent].unique {
			classOf[i] = parent // no hop here: the parent's path
		} else {
			classOf[i] = pg.intern(parent, s)
		}
	}
	clear(lc.late)
	for _, i := range m.answering { // no other node answers
		nd := &nodes[i]
		if nd.background || nd.terminal <= 0 {
			continue
		}
		subMin[i] = nd.pathMean
		k := &pg.classes[classOf[i]]
		if k.group < 0 {
			k.group = len(pg.list)
			pg.list = append(pg.list, pathGroup{first: i, weight: nd.terminal})
		} else {
			pg.list[k.group].weight += nd.terminal
		}
		pg.members = append(pg.members, pathMember{node: i, group: k.group})
	}
	// A pool's scale is the least mean of the answered paths through it: the least over the
	// subtrees of its nodes, gathered children first (min is exact in any order).
	for k := len(pg.need) - 1; k >= 0; k-- {
		i := pg.need[k]
		nd := &nodes[i]
		least := subMin[i]
		if p := nd.pool; p >= 0 {
			hopScale[p] = min(hopScale[p], least)
		}
		if nd.parent >= 0 {
			subMin[nd.parent] = min(subMin[nd.parent], least)
		}
	}
	st.mix.Reset()
	for g := range pg.list {
		grp := &pg.list[g]
		st.mix.BeginPath(grp.weight)
		nd := &nodes[grp.first]
		for _, pn := range m.paths[nd.pathStart : nd.pathStart+nd.pathLen] {
			if s := &stage[pn]; !sameStage(s, &Stage{}) {
				st.mix.AddStage(*s)
			}
		}
	}
	var lateSum, weight float64
	for g := range pg.list {
		grp := &pg.list[g]
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
	for _, mb := range pg.members {
		lc.late[mb.node] = pg.list[mb.group].late
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
