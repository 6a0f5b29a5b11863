package sim

import (
	"math"
	"slices"
	"testing"
)

// refPathGroups is the grouping of paths as latencies made it before paths were interned
// as classes: each answering node's hops gathered and hashed, and compared hop by hop with
// the group of the same hash.
type refPathGroups struct {
	stages []Stage
	list   []refPathGroup
	ofNode []int
	table  []int
}

type refPathGroup struct {
	hash         uint64
	start, end   int
	weight, late float64
}

func (pg *refPathGroups) init(nodes int) {
	pg.ofNode = make([]int, nodes)
	size := 1
	for size < 2*nodes {
		size <<= 1
	}
	pg.table = make([]int, size)
}

func (pg *refPathGroups) add(node, start int, weight float64) {
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
			pg.list = append(pg.list, refPathGroup{hash: h, start: start, end: len(pg.stages), weight: weight})
			pg.table[slot] = len(pg.list)
			pg.ofNode[node] = len(pg.list) - 1
			return
		}
		grp := &pg.list[g]
		if grp.hash == h && refEqualStages(pg.stages[grp.start:grp.end], hops) {
			grp.weight += weight
			pg.ofNode[node] = g
			pg.stages = pg.stages[:start]
			return
		}
	}
}

func fnvMix(h uint64, x float64) uint64 { return (h ^ math.Float64bits(x)) * 1099511628211 }

func refEqualStages(a, b []Stage) bool {
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

// staleReference is latencyCache.stale as it read before its shortcuts for stages equal to
// their record and for no injected latency.
func (lc *latencyCache) staleReference(m *model, st *runState, answered float64) bool {
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

// latenciesReference is latencies as it read before paths were interned and before the
// shortcuts of stale: every node's path walked hop by hop, for its group and for the pools'
// scales. With always, it computes the tick whether or not its inputs moved.
func (m *model) latenciesReference(st *runState, answered float64, always bool) {
	lc := &st.lat
	if !lc.staleReference(m, st, answered) && !always {
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
	var pg refPathGroups
	pg.init(len(m.nodes))
	for i := range pg.ofNode {
		pg.ofNode[i] = -1
	}
	for i := range m.nodes {
		nd := &m.nodes[i]
		lc.late[i] = 0
		if nd.background || nd.terminal <= 0 {
			continue
		}
		start := len(pg.stages)
		for _, pn := range m.paths[nd.pathStart : nd.pathStart+nd.pathLen] {
			if s := m.stageOf(pn, st); s != (Stage{}) {
				pg.stages = append(pg.stages, s)
			}
			if p := m.nodes[pn].pool; p >= 0 {
				lc.hopScale[p] = min(lc.hopScale[p], nd.pathMean)
			}
		}
		pg.add(i, start, nd.terminal)
	}
	st.mix.Reset()
	for g := range pg.list {
		grp := &pg.list[g]
		st.mix.BeginPath(grp.weight)
		for _, s := range pg.stages[grp.start:grp.end] {
			st.mix.AddStage(s)
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
	for i, g := range pg.ofNode {
		if g >= 0 {
			lc.late[i] = pg.list[g].late
		}
	}
	var ps [3]float64
	for i, p := range tickQuantiles {
		ps[i] = p * (1 - lc.lateAll)
	}
	st.mix.Quantiles(ps[:], lc.quantiles[:])
	lc.meanAt = st.mix.Mean()
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// TestPathClassesGroupAsBefore computes every tick of the latencyCases afresh both ways,
// with paths interned as classes and with the paths' hops walked and hashed as before, and
// wants the same mix, the same timeout shares, quantiles and pools' scales, bit for bit.
func TestPathClassesGroupAsBefore(t *testing.T) {
	groups, grouped := 0, 0
	for _, tc := range latencyCases() {
		m, v := compileCase(t, tc.d, tc.cfg)
		st := m.newRunState()
		records := make([]ComponentTick, len(m.comps))
		for tk := range v.ticks {
			tick := Tick{Components: records}
			m.step(tk, &tick, st)
			answered := answeredNow(m)
			got, want := *st, *st
			got.lat, got.mix = latencyCache{}, LatencyMix{}
			want.lat, want.mix = latencyCache{}, LatencyMix{}
			got.lat.init(m)
			want.lat.init(m)
			m.latencies(&got, answered)
			m.latenciesReference(&want, answered, true)
			g, w := &got.lat, &want.lat
			if len(got.mix.paths) != len(want.mix.paths) || len(got.mix.stages) != len(want.mix.stages) {
				t.Fatalf("%s tick %d: %d paths of %d hops, want %d of %d", tc.name, tk,
					len(got.mix.paths), len(got.mix.stages), len(want.mix.paths), len(want.mix.stages))
			}
			for k := range got.mix.paths {
				if got.mix.paths[k] != want.mix.paths[k] {
					t.Fatalf("%s tick %d: path %d is %+v, want %+v", tc.name, tk, k, got.mix.paths[k], want.mix.paths[k])
				}
			}
			for k := range got.mix.stages {
				if !sameBits(&got.mix.stages[k], &want.mix.stages[k]) {
					t.Fatalf("%s tick %d: hop %d is %+v, want %+v", tc.name, tk, k, got.mix.stages[k], want.mix.stages[k])
				}
			}
			scalars := func(lc *latencyCache) []float64 {
				return []float64{lc.lateAll, lc.quantiles[0], lc.quantiles[1], lc.quantiles[2], lc.meanAt, lc.answeredAt}
			}
			if !sameFloats(scalars(g), scalars(w)) || !sameFloats(g.late, w.late) || !sameFloats(g.hopScale, w.hopScale) ||
				!sameFloats(g.termAt, w.termAt) {
				t.Fatalf("%s tick %d: late %v, %v, quantiles %v, mean %v, scales %v; want %v, %v, %v, %v, %v", tc.name, tk,
					g.lateAll, g.late, g.quantiles, g.meanAt, g.hopScale, w.lateAll, w.late, w.quantiles, w.meanAt, w.hopScale)
			}
			groups += len(got.mix.paths)
			grouped += len(g.groups.members)
		}
	}
	if grouped <= groups {
		t.Errorf("%d paths in %d groups: none shared a group", grouped, groups)
	}
}

// A hop is compared bit for bit: a NaN (equal to nothing) makes a class of its own, as does
// every path through it, and signed zeros are told apart, as the hash of the hops did.
func TestPathClassesAreBitForBit(t *testing.T) {
	var pg pathGroups
	pg.reset()
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	a := Stage{Fixed: 0.002, ServiceRate: 100, WaitProb: 0.1, WaitRate: 50}
	b := a
	b.WaitProb = nan
	z := a
	z.Fixed = 0
	zn := z
	zn.Fixed = negZero
	ca := pg.intern(0, &a)
	if again := pg.intern(0, &a); again != ca {
		t.Errorf("the same hop twice: classes %d, %d", ca, again)
	}
	if cb, again := pg.intern(0, &b), pg.intern(0, &b); cb == again || cb == ca {
		t.Errorf("a hop holding NaN: classes %d, %d (and %d without)", cb, again, ca)
	} else if x, y := pg.intern(cb, &a), pg.intern(cb, &a); x == y {
		t.Errorf("a hop after one holding NaN: classes %d, %d", x, y)
	}
	if cz, czn := pg.intern(ca, &z), pg.intern(ca, &zn); cz == czn {
		t.Errorf("hops with Fixed 0 and -0: one class %d", cz)
	}
	if x, y := pg.intern(ca, &a), pg.intern(0, &a); x == y {
		t.Errorf("a hop after another and alone: one class %d", x)
	}
}

// TestLatencyCacheAsBefore follows every tick of the latencyCases with two latency caches,
// one kept by latencies, the other by the reference, and wants them to compute at the same
// ticks and hold the same figures, bit for bit: the shortcuts of stale decide as its
// checks did.
func TestLatencyCacheAsBefore(t *testing.T) {
	computed, ticks := 0, 0
	for _, tc := range latencyCases() {
		m, v := compileCase(t, tc.d, tc.cfg)
		st := m.newRunState()
		got, want := *st, *st
		got.lat, got.mix = latencyCache{}, LatencyMix{}
		want.lat, want.mix = latencyCache{}, LatencyMix{}
		got.lat.init(m)
		want.lat.init(m)
		records := make([]ComponentTick, len(m.comps))
		for tk := range v.ticks {
			tick := Tick{Components: records}
			m.step(tk, &tick, st)
			answered := answeredNow(m)
			got.extraSec, want.extraSec = st.extraSec, st.extraSec
			before := got.lat.meanAt
			m.latencies(&got, answered)
			m.latenciesReference(&want, answered, false)
			g, w := &got.lat, &want.lat
			scalars := func(lc *latencyCache) []float64 {
				return []float64{lc.lateAll, lc.quantiles[0], lc.quantiles[1], lc.quantiles[2], lc.meanAt, lc.answeredAt, lc.prevAnswered}
			}
			if !sameFloats(scalars(g), scalars(w)) || !sameFloats(g.late, w.late) || !sameFloats(g.hopScale, w.hopScale) ||
				!sameFloats(g.termAt, w.termAt) || !sameFloats(g.extra, w.extra) || g.valid != w.valid {
				t.Fatalf("%s tick %d: quantiles %v, late %v at a mean of %v; want %v, %v at %v", tc.name, tk,
					g.quantiles, g.lateAll, g.meanAt, w.quantiles, w.lateAll, w.meanAt)
			}
			ticks++
			if math.Float64bits(g.meanAt) != math.Float64bits(before) {
				computed++
			}
		}
	}
	if computed == 0 || computed == ticks {
		t.Errorf("%d of %d ticks computed: the cache was not exercised", computed, ticks)
	}
	t.Logf("%d of %d ticks computed", computed, ticks)
}

// TestInjectedLatencyCheckedAsBefore records a tick with one injected latency, then checks
// the same tick with another, both ways: injections of 0, -0, more than 0, less than 0
// and NaN, before and after, must make stale decide as its reference does.
func TestInjectedLatencyCheckedAsBefore(t *testing.T) {
	m, _ := compileCase(t, serviceDesign(20), benchConfig(60))
	st := m.newRunState()
	records := make([]ComponentTick, len(m.comps))
	for tk := range 30 {
		tick := Tick{Components: records}
		m.step(tk, &tick, st)
	}
	answered := answeredNow(m)
	edge := -1
	for _, i := range m.answering {
		for _, pn := range m.paths[m.nodes[i].pathStart : m.nodes[i].pathStart+m.nodes[i].pathLen] {
			if e := m.nodes[pn].edge; e >= 0 && m.nodes[i].terminal > 0 {
				edge = e
			}
		}
	}
	if edge < 0 {
		t.Fatal("no edge on an answered path")
	}
	vals := []float64{0, math.Copysign(0, -1), 0.05, 0.0501, -0.05, math.NaN(), 1e-300}
	decided := map[bool]int{}
	// The tick is checked as it was recorded, and with its answers a trace apart (it is
	// then not settled, and the injections decide).
	for _, again := range []float64{answered, answered * (1 + 1e-9)} {
		for _, before := range vals {
			for _, now := range vals {
				extra := func(x float64) []float64 {
					e := make([]float64, len(st.extraSec))
					e[edge] = x
					return e
				}
				got, want := *st, *st
				got.lat, got.mix = latencyCache{}, LatencyMix{}
				want.lat, want.mix = latencyCache{}, LatencyMix{}
				got.lat.init(m)
				want.lat.init(m)
				got.extraSec, want.extraSec = extra(before), extra(before)
				m.latencies(&got, answered)
				m.latenciesReference(&want, answered, true)
				got.extraSec, want.extraSec = extra(now), extra(now)
				g, w := got.lat.stale(m, &got, again), want.lat.staleReference(m, &want, again)
				if g != w {
					t.Errorf("injected %v, then %v, answers %v then %v: stale %v, want %v", before, now, answered, again, g, w)
				}
				decided[w]++
			}
		}
	}
	if decided[true] == 0 || decided[false] == 0 {
		t.Errorf("decisions %v: both are wanted", decided)
	}
}
