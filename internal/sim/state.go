package sim

import (
	"bytes"
	"math"
	"unsafe"
)

// Tick reuse. A tick is a transition: from the state the ticks before it left (the carried
// state, below) and its inputs (the fresh requests of the curve, the chaos events acting,
// the retries due, which are carried state) it computes its record and the next state. When
// a tick leaves the carried state exactly as it found it (a fixed point) and the next tick's
// inputs are exactly the same, the next tick is the same computation on the same numbers:
// its record is the last one's and the state stays where it is. The engine then copies the
// record instead of computing it, tick after tick, until an input changes. Constant traffic
// without chaos active settles into such a fixed point within a few ticks, a standing queue
// included (backlog.go keeps it by age), or into a short cycle of states that come back bit
// for bit, which is repeated period by period (cycleTick): most campaign levels, and most
// candidates of a fix-hint search.
//
// The carried state is compared byte for byte, never within a tolerance: the route nodes,
// pools and components (every field, the scratch of the last tick included: a field read
// before the tick writes it is carried state, and it costs nothing to compare one that is
// not), their queues by age, the gateways' breaker windows, the autoscalers, the functions'
// warm instances, the retries due in the ticks ahead, the chaos state and the latency
// caches (carriedState lists them). What is carried must be in one of those places, as a
// value: a slice or pointer is compared by its contents only where carriedState reads them.
//
// The tick computation must also not depend on the tick's number or time, which it does only
// through state that names a time: a warming cache, a failure or cut the health checks have
// not fully noticed, an autoscaler in the tick its delay runs out, a breaker open, probing or
// just closed, a function starting instances or refusing invocations.
// A tick with any of those is always computed (timeInvariant). Queues name none: their
// cohorts are kept by age, and sameState compares the rings by age.
// Accumulation over the run (totals, peaks, the latency histogram, the diagnosis of a failing
// tick) is not state: accumulate folds a repeated tick in as it folds in a computed one.

// tickTotals are the amounts of the last computed tick that accumulate folds into the run.
type tickTotals struct {
	attempts, fresh, retried, served, rejected, failed, timedOut, queued float64
	late                                                                 float64    // answered after the client gave up
	dropped                                                              float64    // fresh requests given up for good
	scheduled                                                            bool       // retries were scheduled (st.retryAmount)
	hist                                                                 bool       // answered within the timeout: histQ goes into the run's histogram
	histQ                                                                [3]float64 // the tick's quantiles, seconds
}

// reuseState decides which ticks are repeated.
type reuseState struct {
	disabled  bool   // compute every tick (RunOptions.DisableReuse)
	fixed     bool   // the last tick left the carried state exactly as it found it
	prevFresh uint64 // bits of the last tick's fresh requests
	havePrev  bool
	prev      *Tick     // the last tick's record
	after     []byte    // the carried state after the tick being checked
	maxDetect float64   // the longest detection of a balancer with health checks; -Inf if none
	reused    int       // ticks repeated in this run
	cause     tickCause // the diagnosis of the last computed tick, if it failed
	causeOK   bool

	// Cycles: the last computed ticks with the same inputs, by tick modulo slots, the histN
	// latest of them consecutive. A state that comes back to where it stood period ticks
	// ago (period ≥ 2) is a cycle, repeated period by period from cycleFrom on.
	hist      [maxCycle]cycleTick
	slots     int // maxCycle where the design may cycle; else one, the tick being checked
	histN     int
	skip      int // candidate ticks to leave unchecked after a window of checks found nothing
	backoff   int
	cycles    bool // the design may cycle (mayCycle)
	timed     bool // a breaker, an autoscaler or functions: state a repeated tick moves on
	period    int
	cycleFrom int
	stateLen  int // the longest carried state the run can have (carriedLen): buffers are made at it
}

// stateBuf is buf emptied, with room for any carried state of the run: a run's buffers (one
// a cycle slot, and one more) are each made once rather than grown by doubling from nothing,
// which had the garbage collector's assists take a fifth of a design that never settles.
func (m *model) stateBuf(st *runState, buf []byte) []byte {
	r := &st.reuse
	if r.stateLen == 0 {
		r.stateLen = m.carriedLen(st)
	}
	if cap(buf) < r.stateLen {
		return make([]byte, 0, r.stateLen)
	}
	return buf[:0]
}

// cycleTick is a computed tick as a cycle repeats it: the carried state before it, its
// record, and what accumulate and the retries read of it.
type cycleTick struct {
	before      []byte
	tick        *Tick
	tot         tickTotals
	compTot     []compTotals
	retryAmount []float64
	cause       tickCause
	causeOK     bool
}

// maxReuseBackoff bounds how many candidate ticks go unchecked after a check that found
// nothing (maxCycle checked ticks in a row where cycles are looked for): checking costs a
// copy of the carried state, and a state that converges slowly is found at most that many
// ticks late.
const maxReuseBackoff = 32

// maxCycle is the longest cycle found. Under a standing queue the rounding of a tick's
// sums can come back to the same bits after a few ticks rather than stand still: a full
// waiting room refuses what its rounded content leaves no room for, which changes the
// next cohort by a bit, which comes back to the door when the cohort is served.
const maxCycle = 16

func (r *reuseState) init(m *model) {
	r.maxDetect = math.Inf(-1)
	for i := range m.comps {
		if c := &m.comps[i]; c.kind == KindLoadBalancer && c.healthChecks {
			r.maxDetect = max(r.maxDetect, c.detectSec)
		}
	}
	r.cycles = m.mayCycle()
	r.timed = m.timedState()
	r.slots = 1
	if r.cycles {
		// A design that may not cycle compares a tick's state after with its state before
		// alone: one slot, so that its run makes two buffers rather than one a slot.
		r.slots = maxCycle
	}
	r.backoff = 1
	if sc := m.opts.Scratch; sc != nil {
		// Lent buffers of any length: stateBuf makes a buffer anew only where one is short.
		for i := range r.slots {
			r.hist[i].before = sc.take()
		}
		r.after = sc.take()
	}
}

// giveBack returns the run's state buffers to the Scratch it was lent, if any.
func (r *reuseState) giveBack(sc *Scratch) {
	if sc == nil {
		return
	}
	for i := range r.slots {
		sc.give(r.hist[i].before)
		r.hist[i].before = nil
	}
	sc.give(r.after)
	r.after = nil
}

// take is a buffer the Scratch holds, emptied, or nil.
func (sc *Scratch) take() []byte {
	n := len(sc.states)
	if n == 0 {
		return nil
	}
	buf := sc.states[n-1]
	sc.states = sc.states[:n-1]
	return buf[:0]
}

func (sc *Scratch) give(buf []byte) {
	if cap(buf) > 0 {
		sc.states = append(sc.states, buf[:0])
	}
}

// mayCycle: the design's ticks may be repeated in cycles, not only at fixed points. A
// repeated cycle leaves the carried state as it found it, its ticks' records and totals
// taken from the ticks it repeats; that needs every tick of it to change nothing a repeated
// tick does not redo: no breaker window, autoscaler or warm functions (whose state a fixed
// point keeps, but a cycle moves through), and no display figures for only some ticks.
func (m *model) mayCycle() bool {
	return m.opts.Points <= 0 && !m.timedState()
}

// timedState: some component keeps state that even a repeated tick moves on, a breaker's
// window, an autoscaler's timers or functions' warm instances (preTick, postTick).
func (m *model) timedState() bool {
	for i := range m.comps {
		if c := &m.comps[i]; c.gate != nil || c.scaler != nil || c.fn != nil {
			return true
		}
	}
	return false
}

// reuseTick repeats the last tick as tick t if it may: the last tick was a fixed point and
// this one's inputs are the same. It does what the computed tick would have done to what
// is indexed by time (the retries due, the breaker windows, the functions' warm instances)
// and folds the tick into the run's totals.
func (m *model) reuseTick(t int, tick *Tick, fresh float64, st *runState) bool {
	r := &st.reuse
	if r.period > 0 {
		return m.cycleTick(t, tick, fresh, st)
	}
	if !r.fixed || st.events.changed || st.events.delayEnds || math.Float64bits(fresh) != r.prevFresh || !m.timeInvariant(st) {
		return false
	}
	t0 := float64(t) * m.dt
	if r.timed {
		m.preTick(t0, st)
	}
	m.dueRetries(t, st)
	if r.timed {
		// Without any, preTick only sets a warm cache's hit ratio, which the fixed point
		// holds already, and postTick does nothing.
		m.postTick(t, st)
	}
	comps := tick.Components
	*tick = *r.prev
	tick.T = t0 + m.dt
	tick.Components = comps
	copy(comps, r.prev.Components)
	if m.opts.Points != 0 {
		// Display-only figures for some ticks only: the last tick's may not be this one's.
		// They are computed as the full tick computes them; nothing else reads them or the
		// state they keep (compLatency).
		detail := m.detailed(t)
		for i := range comps {
			ct := &comps[i]
			ct.MeanMs, ct.P99Ms = 0, 0
			if detail {
				mean, p99 := m.componentLatency(i, st)
				ct.MeanMs, ct.P99Ms = mean*1000, p99*1000
			}
		}
	}
	tick.Events = st.events.activeIDs()
	m.accumulate(t, tick, st, true)
	r.prev = tick
	r.reused++
	return true
}

// dueRetries does to the retries due what tick t does when it repeats the last computed
// tick's totals (st.tot, st.retryAmount): the retries due now arrive, and those it
// scheduled are due later.
func (m *model) dueRetries(t int, st *runState) {
	slot := st.retries[t%len(st.retries)]
	for i := requestTypes; i < len(slot); i++ {
		slot[i] = 0
	}
	if st.tot.scheduled {
		for i := requestTypes; i < len(st.retryAmount); i++ {
			st.retries[(t+st.retryDelay[i/requestTypes])%len(st.retries)][i] += st.retryAmount[i]
		}
	}
}

// cycleTick repeats tick t as the tick one period before it in the cycle. A period is
// repeated whole or not at all: its first tick checks that the inputs stay the same to its
// end (the fresh requests and the chaos events acting), so that after it the carried state,
// left untouched but for the retries due, is where the cycle stands.
func (m *model) cycleTick(t int, tick *Tick, fresh float64, st *runState) bool {
	r := &st.reuse
	phase := (t - r.cycleFrom) % r.period
	if phase == 0 && !m.steadyAhead(t, r.period, fresh, st) {
		r.period, r.histN = 0, 0
		return false
	}
	e := &r.hist[(r.cycleFrom-r.period+phase)%r.slots]
	st.tot, r.cause, r.causeOK = e.tot, e.cause, e.causeOK
	copy(st.compTot, e.compTot)
	copy(st.retryAmount, e.retryAmount)
	m.dueRetries(t, st)
	comps := tick.Components
	*tick = *e.tick
	tick.T = float64(t)*m.dt + m.dt // as a computed tick reckons it, bit for bit
	tick.Components = comps
	copy(comps, e.tick.Components)
	tick.Events = st.events.activeIDs()
	m.accumulate(t, tick, st, true)
	r.prev = tick
	r.reused++
	m.cycled++
	return true
}

// steadyAhead reports whether ticks t to t+n−1 are all within the run and have the inputs
// of the last tick: its fresh requests, bit for bit, and the same chaos events acting,
// none of them starting or ending.
func (m *model) steadyAhead(t, n int, fresh float64, st *runState) bool {
	r := &st.reuse
	if t+n > m.v.ticks || st.events.changed || st.events.delayEnds || math.Float64bits(fresh) != r.prevFresh {
		return false
	}
	et := &st.events
	for k := t + 1; k < t+n; k++ {
		t0 := float64(k) * m.dt
		t1 := t0 + m.dt
		if math.Float64bits(m.fresh(t0, st)) != r.prevFresh {
			return false
		}
		for i, e := range et.events {
			start, end := m.window(e, et.comp[i])
			if acts(start, end, t0, t1) != et.active[i] || (e.Kind == ChaosCacheFlush && start < t1) {
				return false
			}
		}
	}
	// Nor may the cycle's last tick be one a delay ends after: that tick is computed (events.go).
	t0 := float64(t+n) * m.dt
	for i, e := range et.events {
		if start, end := m.window(e, et.comp[i]); e.Kind == ChaosLatencyInjection && et.active[i] && !acts(start, end, t0, t0+m.dt) {
			return false
		}
	}
	return true
}

// beginTick decides whether tick t, about to be computed, is checked for a fixed point or
// a cycle, and if so records the carried state before it.
func (m *model) beginTick(t int, fresh float64, st *runState) bool {
	r := &st.reuse
	r.fixed = false
	same := r.havePrev && math.Float64bits(fresh) == r.prevFresh && !st.events.changed
	r.prevFresh, r.havePrev = math.Float64bits(fresh), true
	if r.disabled || !same {
		r.histN, r.skip, r.backoff = 0, 0, 1
		return false
	}
	if r.skip > 0 || !m.timeInvariant(st) {
		r.skip = max(0, r.skip-1)
		r.histN = 0
		return false
	}
	e := &r.hist[t%r.slots]
	if r.histN > 0 {
		// The last tick was checked, and nothing has moved since it ended: what it left is
		// this tick's state before (its chaos events are the same, and applying them again
		// writes what they wrote).
		e.before, r.after = r.after, e.before
	} else {
		e.before = m.carriedState(t, st, m.stateBuf(st, e.before))
	}
	return true
}

// endTick closes tick t: if it was checked, whether it was a fixed point or closed a
// cycle.
func (m *model) endTick(t int, tick *Tick, check bool, st *runState) {
	r := &st.reuse
	r.prev = tick
	if !check {
		return
	}
	e := &r.hist[t%r.slots]
	if r.cycles { // what a repeated cycle copies; a fixed point copies the last tick as it stands
		e.tick, e.tot, e.cause, e.causeOK = tick, st.tot, r.cause, r.causeOK
		e.compTot = append(e.compTot[:0], st.compTot...)
		e.retryAmount = append(e.retryAmount[:0], st.retryAmount...)
	}
	r.histN = min(r.histN+1, r.slots)
	if !m.timeInvariant(st) {
		r.histN = 0
		return
	}
	// A design that may not cycle looks for fixed points alone, which a check of two ticks
	// in a row finds; one that may, for a cycle as long as maxCycle, which takes as many.
	// The state after the last check of those is copied only if it may be where the tick
	// came back to: its route nodes, where they lie, are those of a state before (they come
	// first in a carried state, and mostly tell two states apart).
	last := !r.cycles || r.histN == maxCycle
	if !last || m.nodesAsBefore(r, t) {
		r.after = m.carriedState(t+1, st, m.stateBuf(st, r.after))
		for p := 1; p <= r.histN; p++ {
			if !m.sameState(r.after, r.hist[(t+1-p)%r.slots].before) {
				continue
			}
			switch {
			case p == 1:
				r.fixed = true
			case r.cycles:
				r.period, r.cycleFrom = p, t+1
			}
			r.backoff = 1
			return
		}
	}
	if last {
		r.skip, r.histN = r.backoff, 0
		r.backoff = min(2*r.backoff, maxReuseBackoff)
	}
}

// timeInvariant reports whether the tick computation on the current state depends on
// neither the tick's number nor its time (see above).
func (m *model) timeInvariant(st *runState) bool {
	// Queues are kept by age (backlog.go): a standing queue names no time.
	//
	// While a backend or a link is down or came back within a probe interval, the health
	// checks' expected split moves with the time (health.go).
	if st.events.outages {
		return false
	}
	// A failure or cut is noticed by the health checks at a time; once every balancer has
	// noticed, nothing depends on the time any more.
	noticed := func(since float64) bool {
		return math.IsInf(since, 1) || st.tickStart >= since+st.reuse.maxDetect
	}
	for i := range m.comps {
		c := &m.comps[i]
		if !noticed(c.failedSince) || !math.IsInf(c.flushedAt, -1) {
			return false
		}
		// An autoscaler waiting to act depends on the time only in the tick it acts in:
		// before it, its timer (a time on the clock, carried as it is) stands still.
		if s := c.scaler; s != nil && (len(s.orders) > 0 && st.tickStart >= s.orders[0].at ||
			s.lowSince >= 0 && st.tickStart-s.lowSince >= s.inDelay) {
			return false
		}
		// A function's tick names the time while instances start or invocations are
		// refused: the cohorts' ends and the pieces of the tick between them (elastic.go).
		// Its warm instances are kept from a busier tick until the idle timeout: the tick
		// they are reclaimed in is the one that names the time.
		if f := c.fn; f != nil && (!f.quiet || f.maxNeed.expires(f.tick, f.window)) {
			return false
		}
		if g := c.gate; g != nil && g.threshold > 0 && (g.state != BreakerClosed || g.filtering || !uniformWindow(g.window)) {
			// An open breaker waits for a time; a closed one writes its window in turn and,
			// just after it closed, leaves out the answers to requests sent before.
			return false
		}
	}
	for _, since := range st.cutSince {
		if !noticed(since) {
			return false
		}
	}
	return true
}

// uniformWindow: every (failed, finished) pair of a breaker's window is the same, so where
// the next one is written does not matter.
func uniformWindow(w []float64) bool {
	for k := 2; k < len(w); k += 2 {
		if math.Float64bits(w[k]) != math.Float64bits(w[0]) || math.Float64bits(w[k+1]) != math.Float64bits(w[1]) {
			return false
		}
	}
	return true
}

// carriedState appends the carried state at the start of tick t to buf, in a form that does
// not name t: rings indexed by tick are read from t on. The nodes' queues come last, as they
// lie, followed by where every ring starts (m.ring): sameState reads them by age.
func (m *model) carriedState(t int, st *runState, buf []byte) []byte {
	buf = appendRaw(buf, m.nodes)
	buf = appendRaw(buf, m.pools)
	buf = appendRaw(buf, m.comps)
	buf = appendRaw(buf, m.fracs)
	for i := range m.comps {
		c := &m.comps[i]
		if g := c.gate; g != nil {
			// The window is uniform (timeInvariant): where its next pair goes is no state.
			buf = appendValue(buf, g)
			clear(buf[len(buf)-int(unsafe.Sizeof(*g))+int(unsafe.Offsetof(g.pos)):][:unsafe.Sizeof(g.pos)])
			buf = appendRaw(buf, g.window)
		}
		if s := c.scaler; s != nil {
			// The orders as they stand, and the last second's busy workers by age: where the
			// next goes is no state.
			buf = appendValue(buf, s)
			clear(buf[len(buf)-int(unsafe.Sizeof(*s))+int(unsafe.Offsetof(s.busyNext)):][:unsafe.Sizeof(s.busyNext)])
			buf = appendRaw(buf, s.orders)
			buf = appendRaw(buf, s.busy[s.busyNext:])
			buf = appendRaw(buf, s.busy[:s.busyNext])
		}
		if f := c.fn; f != nil {
			// The sliding maximum from its oldest entry on: the latest by age, and those
			// before it, the instances kept from a busier tick, by the tick they expire
			// after, which stands still until they do (timeInvariant).
			buf = appendValue(buf, f)
			at := buf[len(buf)-int(unsafe.Sizeof(*f)):]
			clear(at[unsafe.Offsetof(f.tick):][:unsafe.Sizeof(f.tick)])
			clear(at[unsafe.Offsetof(f.maxNeed):][:unsafe.Sizeof(f.maxNeed)])
			clear(at[unsafe.Offsetof(f.starting):][:unsafe.Sizeof(f.starting)])
			// The starting instances by what is left of their first invocation.
			t0 := float64(t) * m.dt
			for _, c := range f.starting {
				e := [2]float64{c.until - t0, c.n}
				buf = appendValue(buf, &e)
			}
			mx := &f.maxNeed
			n := len(mx.vals)
			for k := 0; k < mx.size; k++ {
				j := (mx.head + k) % n
				e := [2]float64{float64(mx.ticks[j]), mx.vals[j]}
				if k == mx.size-1 {
					e[0] = float64(f.tick - mx.ticks[j])
				}
				buf = appendValue(buf, &e)
			}
		}
	}
	for k := range st.retries {
		buf = appendRaw(buf, st.retries[(t+k)%len(st.retries)])
	}
	buf = appendRaw(buf, st.genShare)
	buf = appendValue(buf, &st.failedShare)
	buf = appendRaw(buf, st.partitioned)
	buf = appendRaw(buf, st.extraSec)
	buf = appendRaw(buf, st.cutSince)
	buf = appendRaw(buf, st.cutStart)
	buf = appendValue(buf, &st.spikeMult)
	buf = appendRaw(buf, st.events.active)
	lc := &st.lat
	valid := 0.0
	if lc.valid {
		valid = 1
	}
	scalars := [8]float64{valid, lc.answeredAt, lc.prevAnswered, lc.lateAll, lc.quantiles[0], lc.quantiles[1], lc.quantiles[2], lc.meanAt}
	buf = appendValue(buf, &scalars)
	buf = appendRaw(buf, lc.extra)
	buf = appendRaw(buf, lc.hopScale)
	buf = appendRaw(buf, lc.termAt)
	buf = appendRaw(buf, lc.prevExtra)
	buf = appendRaw(buf, lc.prevTerm)
	buf = appendRaw(buf, lc.late)
	buf = appendRaw(buf, lc.stages)
	buf = appendRaw(buf, lc.prev)
	cl := &lc.comps
	buf = appendRaw(buf, cl.stageAt)
	buf = appendRaw(buf, cl.prev)
	buf = appendRaw(buf, cl.inAt)
	buf = appendRaw(buf, cl.prevIn)
	buf = appendRaw(buf, cl.p99At)
	buf = appendRaw(buf, cl.meanAt)
	buf = appendRaw(buf, cl.computed)
	buf = appendRaw(buf, m.rings)
	start := m.ring
	return appendValue(buf, &start)
}

// nodesAsBefore reports whether the route nodes as tick t left them are byte for byte those
// of the carried state before one of the last histN checked ticks.
func (m *model) nodesAsBefore(r *reuseState, t int) bool {
	now := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.nodes))), len(m.nodes)*int(unsafe.Sizeof(node{})))
	for p := 1; p <= r.histN; p++ {
		if before := r.hist[(t+1-p)%r.slots].before; len(before) >= len(now) && bytes.Equal(now, before[:len(now)]) {
			return true
		}
	}
	return false
}

// carriedLen is the length of the longest carried state the run can have: carriedState's,
// with functions' sliding maxima at their longest.
func (m *model) carriedLen(st *runState) int {
	n := rawLen(m.nodes) + rawLen(m.pools) + rawLen(m.comps) + rawLen(m.fracs)
	for i := range m.comps {
		c := &m.comps[i]
		if g := c.gate; g != nil {
			n += int(unsafe.Sizeof(*g)) + rawLen(g.window)
		}
		if s := c.scaler; s != nil {
			n += int(unsafe.Sizeof(*s)) + cap(s.orders)*int(unsafe.Sizeof(scaleOrder{})) + rawLen(s.busy)
		}
		if f := c.fn; f != nil {
			n += int(unsafe.Sizeof(*f)) + (len(f.maxNeed.vals)+len(f.starting))*int(unsafe.Sizeof([2]float64{}))
		}
	}
	for _, slot := range st.retries {
		n += rawLen(slot)
	}
	n += rawLen(st.genShare) + int(unsafe.Sizeof(st.failedShare)) + rawLen(st.partitioned) + rawLen(st.extraSec) + rawLen(st.cutSince) +
		rawLen(st.cutStart) + int(unsafe.Sizeof(st.spikeMult)) + rawLen(st.events.active)
	lc, cl := &st.lat, &st.lat.comps
	n += int(unsafe.Sizeof([8]float64{})) + rawLen(lc.extra) + rawLen(lc.hopScale) + rawLen(lc.termAt) +
		rawLen(lc.prevExtra) + rawLen(lc.prevTerm) + rawLen(lc.late) + rawLen(lc.stages) + rawLen(lc.prev)
	n += rawLen(cl.stageAt) + rawLen(cl.prev) + rawLen(cl.inAt) + rawLen(cl.prevIn) + rawLen(cl.p99At) +
		rawLen(cl.meanAt) + rawLen(cl.computed)
	return n + rawLen(m.rings) + int(unsafe.Sizeof(m.ring))
}

func rawLen[T any](xs []T) int {
	var zero T
	return len(xs) * int(unsafe.Sizeof(zero))
}

// sameState reports whether two carried states are the same: byte for byte up to the
// nodes' rings, and each ring the same by age, from where it starts in each.
func (m *model) sameState(a, b []byte) bool {
	var start int
	tail := int(unsafe.Sizeof(start))
	rowLen := m.slots * int(unsafe.Sizeof(cohort{}))
	head := len(a) - tail - len(m.nodes)*rowLen
	if len(a) != len(b) || head < 0 || !bytes.Equal(a[:head], b[:head]) {
		return false
	}
	at := func(s []byte) int { return *(*int)(unsafe.Pointer(&s[len(s)-tail])) }
	// Slot y of a's ring holds the age b's slot y+d does.
	d := (at(b) - at(a) + m.slots) % m.slots * int(unsafe.Sizeof(cohort{}))
	for off := head; off < len(a)-tail; off += rowLen {
		ra, rb := a[off:off+rowLen], b[off:off+rowLen]
		if !bytes.Equal(ra[:rowLen-d], rb[d:]) || !bytes.Equal(ra[rowLen-d:], rb[:d]) {
			return false
		}
	}
	return true
}

// appendRaw appends the bytes of xs. Pointers and slice headers inside its elements are
// compared as addresses: they are fixed for a run.
func appendRaw[T any](buf []byte, xs []T) []byte {
	if len(xs) == 0 {
		return buf
	}
	var zero T
	return append(buf, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs)*int(unsafe.Sizeof(zero)))...)
}

func appendValue[T any](buf []byte, x *T) []byte {
	return append(buf, unsafe.Slice((*byte)(unsafe.Pointer(x)), unsafe.Sizeof(*x))...)
}
