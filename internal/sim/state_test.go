package sim

import (
	"reflect"
	"testing"
)

// Every field the tick loop keeps is classified for tick reuse (state.go). Value fields of
// the route nodes, pools, components, breakers, autoscalers and functions are compared as
// they are; a field that holds a reference (slice, map, pointer, string) is compared only by
// its address, so each must be listed here as either compared by its contents in
// carriedState or not carried from tick to tick. Every field of the run's own state and the
// latency caches must be listed, since those are compared field by field. A new field fails
// this test until it is classified: put it in carriedState if a tick reads what an earlier
// tick left in it.
func TestCarriedStateClassified(t *testing.T) {
	// Compared by contents in carriedState.
	byContent := map[string]bool{
		"node.q": true, "pool.frac": true, "component.gate": true, "component.scaler": true, "scalerState.orders": true, "scalerState.busy": true, "component.fn": true,
		"gateState.window": true, "fnState.maxNeed": true, "fnState.starting": true,
		"runState.retries": true, "runState.genShare": true, "runState.partitioned": true, "runState.extraSec": true,
		"runState.cutSince": true, "runState.cutStart": true, "runState.spikeMult": true, "runState.lat": true,
		"runState.failedShare": true,
		"runState.events":      true, // its active set; the rest is the schedule
		"latencyCache.valid":   true, "latencyCache.stages": true, "latencyCache.extra": true, "latencyCache.hopScale": true,
		"latencyCache.termAt": true, "latencyCache.prev": true, "latencyCache.prevExtra": true, "latencyCache.prevTerm": true,
		"latencyCache.answeredAt": true, "latencyCache.prevAnswered": true, "latencyCache.late": true,
		"latencyCache.lateAll": true, "latencyCache.quantiles": true, "latencyCache.meanAt": true, "latencyCache.comps": true,
		"compLatency.stageAt": true, "compLatency.inAt": true, "compLatency.prev": true, "compLatency.prevIn": true,
		"compLatency.p99At": true, "compLatency.meanAt": true, "compLatency.computed": true,
	}
	// Not carried: fixed for the run, rebuilt before it is read, or folded into the run's
	// totals rather than read by a later tick.
	notCarried := map[string]bool{
		"node.children": true, "node.weights": true,
		"pool.nodes":   true,
		"component.id": true, "component.kind": true, "component.p": true, "component.pools": true, "component.edges": true,
		"runState.retryDelay": true, "runState.mix": true, "runState.compMix": true, "runState.tickStart": true,
		"runState.hist": true, "runState.acc": true, "runState.tot": true, "runState.compTot": true,
		"runState.retryAmount": true, "runState.replayOf": true, "runState.reuse": true, "runState.lostByType": true,
		"runState.lostAtOnce": true, "runState.atOnceIn": true, "runState.atOnceRefused": true, "runState.atOnceSent": true,
		"runState.lostInTick": true, "runState.retriedInTick": true, "runState.inTickGen": true,
		"runState.genShareBegan": true, "runState.extraBefore": true,
		"latencyCache.groups":        true,
		"latencyCache.extraAtLeast0": true,                          // a function of latencyCache.extra
		"gateState.partial":          true,                          // the window's sums: a function of gateState.window
		"gateState.nowSec":           true,                          // scratch of the tick's observation
		"slidingMax.ticks":           true, "slidingMax.vals": true, // compared by age through fnState.maxNeed
	}
	refKinds := map[reflect.Kind]bool{reflect.Slice: true, reflect.Map: true, reflect.Pointer: true, reflect.String: true,
		reflect.Interface: true, reflect.Func: true, reflect.Chan: true}
	all := map[reflect.Type]bool{ // whole struct classified field by field
		reflect.TypeFor[runState](): true, reflect.TypeFor[latencyCache](): true, reflect.TypeFor[compLatency](): true,
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[node](), reflect.TypeFor[pool](), reflect.TypeFor[component](),
		reflect.TypeFor[gateState](), reflect.TypeFor[scalerState](), reflect.TypeFor[fnState](), reflect.TypeFor[slidingMax](),
		reflect.TypeFor[runState](), reflect.TypeFor[latencyCache](), reflect.TypeFor[compLatency]()} {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := typ.Name() + "." + f.Name
			if byContent[name] && notCarried[name] {
				t.Errorf("%s is listed twice", name)
			}
			if (all[typ] || refKinds[f.Type.Kind()]) && !byContent[name] && !notCarried[name] {
				t.Errorf("%s (%s) is not classified for tick reuse: compare it in carriedState (state.go) if a tick reads what an earlier one left in it, else list it as not carried", name, f.Type)
			}
		}
	}
}

// compiledCase compiles a golden case with its run state, for tests that look at the state.
func compiledCase(t *testing.T, name string) (*model, *runState) {
	t.Helper()
	d, cfg := goldenCases()[name]()
	m, _ := compileCase(t, d, cfg)
	return m, m.newRunState()
}

// A carried state copies the nodes' rings and the pools' queue shares each as one block,
// which initQueues makes: each block holds every node's ring, or every pool's shares.
func TestQueueBlocks(t *testing.T) {
	m, _ := compiledCase(t, "random/13/constant")
	if got, want := len(m.rings), len(m.nodes)*m.slots; got != want {
		t.Errorf("rings: %d cohorts in one block, want %d", got, want)
	}
	if got, want := len(m.fracs), len(m.pools)*len(m.pools[0].frac); got != want {
		t.Errorf("queue shares: %d in one block, want %d", got, want)
	}
}

// Two carried states are the same when every queue holds the same cohorts by age, wherever
// its ring starts; a cohort of another age or amount makes them differ.
func TestSameStateByAge(t *testing.T) {
	m, st := compiledCase(t, "random/13/constant")
	if m.slots < 3 {
		t.Fatalf("%d slots: too few to move a ring", m.slots)
	}
	fill := func(start int) {
		m.ring = start
		for i := range m.nodes {
			for age := range m.slots {
				m.nodes[i].q[(start+age)%m.slots] = cohort{live: float64(100*i + age), sent: float64(age)}
			}
		}
	}
	fill(0)
	a := m.carriedState(0, st, nil)
	for _, start := range []int{0, 1, m.slots - 1} {
		fill(start)
		if b := m.carriedState(0, st, nil); !m.sameState(a, b) || !m.sameState(b, a) {
			t.Errorf("rings starting at slot %d: the same cohorts by age compare as different", start)
		}
	}
	fill(1)
	m.ring = 2 // the same slots, read from another start: other ages
	if b := m.carriedState(0, st, nil); m.sameState(a, b) {
		t.Error("cohorts of other ages compare as the same")
	}
	fill(1)
	m.nodes[len(m.nodes)-1].q[0].ghost = 1
	if b := m.carriedState(0, st, nil); m.sameState(a, b) {
		t.Error("a cohort of another amount compares as the same")
	}
}

// A run makes its carried-state buffers once, at carriedLen: no carried state of any tick is
// longer, and without functions (whose sliding maxima vary in length) every one is as long.
func TestCarriedLenBoundsState(t *testing.T) {
	for _, name := range []string{"service/20", "random/6/constant", "random/13", "flat/20"} {
		m, st := compiledCase(t, name)
		bound := m.carriedLen(st)
		fns := false
		for i := range m.comps {
			fns = fns || m.comps[i].fn != nil
		}
		ticks := make([]Tick, min(m.v.ticks, 600))
		all := make([]ComponentTick, len(ticks)*len(m.comps))
		for k := range ticks {
			ticks[k].Components = all[k*len(m.comps) : (k+1)*len(m.comps)]
			m.step(k, &ticks[k], st)
			n := len(m.carriedState(k+1, st, nil))
			if n > bound || !fns && n != bound {
				t.Fatalf("%s, tick %d: a carried state of %d bytes, carriedLen %d", name, k, n, bound)
			}
		}
	}
}
