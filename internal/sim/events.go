package sim

import "math"

// eventTracker applies the chaos schedule tick by tick and keeps the list of active events
// without allocating per tick: the list is rebuilt only when the active set changes.
type eventTracker struct {
	events  []ChaosEvent
	comp    []int // target component per event, -1 if none
	edge    []int // design edge per event, -1 if none
	active  []bool
	changed bool
	// start, end: each event's window (model.window), fixed for the run and read every tick.
	start, end []float64
	cuts       []outage  // per design edge: its cuts as the health checks see them (health.go)
	cutEnd     []float64 // scratch: the latest end among the active cuts of each edge
	// outages: some backend or link is down, or back for less than the longest check
	// interval of any balancer (probeSec): only then may health checks keep one out.
	outages bool
	cut     bool // some link is cut this tick (runState.partitioned)
	down    bool // some component has failed this tick (pool.failed)
	// delayEnds: a delay on some link acts this tick and not the next: the tick notes the
	// workers its calls hold (inflight.go), and so is computed, never reused.
	delayEnds bool
	probeSec  float64
	ids       []string
}

func (et *eventTracker) init(m *model) {
	et.events = m.v.cfg.Chaos
	et.comp = make([]int, len(et.events))
	et.edge = make([]int, len(et.events))
	et.active = make([]bool, len(et.events))
	et.start, et.end = make([]float64, len(et.events)), make([]float64, len(et.events))
	et.cuts = make([]outage, len(m.edgeTo))
	et.cutEnd = make([]float64, len(m.edgeTo))
	for e := range et.cuts {
		et.cuts[e] = noOutage()
	}
	for _, c := range m.comps {
		if c.healthChecks {
			et.probeSec = max(et.probeSec, c.checkIntervalSec)
		}
	}
	for i, e := range et.events {
		et.comp[i], et.edge[i] = -1, -1
		if idx, ok := m.v.index[e.Target]; ok {
			et.comp[i] = idx
		}
		for k, de := range m.v.design.Edges {
			if de.From == e.From && de.To == e.To && e.From != "" {
				et.edge[i] = k
			}
		}
		et.start[i], et.end[i] = m.window(e, et.comp[i])
	}
}

// window is when an event acts: a flush acts during its warm-up.
// acts reports whether an event whose window is [start, end) acts during the tick [t0, t1):
// an event of no duration acts in the tick it strikes.
func acts(start, end, t0, t1 float64) bool {
	return start < t1 && t0 < math.Max(end, start+1e-9)
}

func (m *model) window(e ChaosEvent, comp int) (start, end float64) {
	end = e.AtSec + e.DurationSec
	if e.Kind == ChaosCacheFlush {
		end = e.AtSec + m.warmupOf(e, comp)
	}
	return e.AtSec, end
}

func (m *model) warmupOf(e ChaosEvent, comp int) float64 {
	if e.Params.WarmupSec != nil {
		return *e.Params.WarmupSec
	}
	if comp >= 0 {
		return m.comps[comp].warmupSec
	}
	return 0
}

// apply sets the chaos state of the tick [t0, t1).
func (et *eventTracker) apply(m *model, st *runState, t0, t1 float64) {
	st.tickStart = t0
	if !m.anyEvent(et, t0, t1) {
		return // no event acts now, and none left any state behind in the last tick
	}
	// In locals, and the per-edge slices resliced to one length: the loops' stores cannot
	// move them, and an edge's index needs one bounds check, not one per slice.
	pools, comps := m.pools, m.comps
	partitioned := st.partitioned
	extraSec, cutStart, cutSince := st.extraSec[:len(partitioned)], st.cutStart[:len(partitioned)], st.cutSince[:len(partitioned)]
	cuts, cutEnd := et.cuts[:len(partitioned)], et.cutEnd[:len(partitioned)]
	for p := range pools {
		pools[p].failed = false
	}
	for c := range comps {
		cp := &comps[c]
		cp.failed = false
		cp.failStart = math.Inf(1)
		cp.failEnd = math.Inf(-1)
	}
	// A delay acting in the last tick and not in this one: its calls under way still take it.
	ending := et.delayEnds
	before := st.extraBefore[:len(partitioned)]
	if ending {
		copy(before, extraSec)
	}
	et.cut, et.down, et.delayEnds = false, false, false
	for e := range partitioned {
		partitioned[e] = false
		extraSec[e] = 0
		cutStart[e] = math.Inf(1)
		cutEnd[e] = math.Inf(-1)
	}
	st.spikeMult = 1
	for i := range et.events {
		e := &et.events[i]
		start, end := et.start[i], et.end[i]
		on := acts(start, end, t0, t1)
		if e.Kind == ChaosCacheFlush && start >= t0 && start < t1 {
			c := &m.comps[et.comp[i]]
			c.flushedAt = start
			c.flushWarm = m.warmupOf(*e, et.comp[i])
		}
		if on != et.active[i] {
			et.active[i] = on
			et.changed = true
		}
		if !on {
			continue
		}
		switch e.Kind {
		case ChaosNodeFailure:
			et.down = true
			m.comps[et.comp[i]].failed = true
			m.comps[et.comp[i]].failStart = min(m.comps[et.comp[i]].failStart, e.AtSec)
			m.comps[et.comp[i]].failEnd = max(m.comps[et.comp[i]].failEnd, end)
			for _, p := range m.comps[et.comp[i]].pools {
				m.pools[p].failed = true
			}
		case ChaosTrafficSpike:
			st.spikeMult *= e.Params.Multiplier
		case ChaosNetworkPartition:
			st.partitioned[et.edge[i]] = true
			et.cut = true
			st.cutStart[et.edge[i]] = min(st.cutStart[et.edge[i]], e.AtSec)
			et.cutEnd[et.edge[i]] = max(et.cutEnd[et.edge[i]], end)
		case ChaosLatencyInjection:
			st.extraSec[et.edge[i]] += e.Params.ExtraLatencyMs / 1000
			et.delayEnds = et.delayEnds || !acts(start, end, t1, t1+(t1-t0))
		}
	}
	if ending {
		m.releaseHeldCalls(st, before, t0) // the workers its calls hold come back as they return (inflight.go)
	}
	// A failure that goes on keeps its start, even when a later event takes over from the
	// first: health checks keep counting from when the backend went down. One that ends is
	// remembered, for the checks to let the backend back in (health.go).
	et.outages = false
	for c := range comps {
		cp := &comps[c]
		cp.down.update(cp.failed, cp.failStart, cp.failEnd)
		cp.failedSince = cp.down.since
		et.outages = et.outages || cp.down.matters(t0, et.probeSec)
	}
	for e, cut := range partitioned {
		cuts[e].update(cut, cutStart[e], cutEnd[e])
		cutSince[e] = cuts[e].since
		et.outages = et.outages || cuts[e].matters(t0, et.probeSec)
	}
}

// anyEvent reports whether the tick [t0, t1) must be applied: an event acts in it, one acted in
// the previous tick, whose state must then be cleared, or an outage still matters to the
// health checks (which moves with t0). Otherwise the last apply left what this one would
// write: no event acting, every failure and cut cleared, no outage that matters.
func (m *model) anyEvent(et *eventTracker, t0, t1 float64) bool {
	if et.outages {
		return true
	}
	for i, start := range et.start {
		if et.active[i] {
			return true
		}
		if start >= t1 {
			continue
		}
		if acts(start, et.end[i], t0, t1) {
			return true
		}
	}
	return false
}

// activeIDs returns the ids of the active events; ticks with the same set share one slice.
func (et *eventTracker) activeIDs() []string {
	if et.changed {
		et.changed = false
		et.ids = nil
		for i, on := range et.active {
			if on {
				et.ids = append(et.ids, et.events[i].ID)
			}
		}
	}
	return et.ids
}

// Resilience measurement. For each event:
//   - the baseline is the mean error rate and mean p99 over the baselineSec before it
//     strikes (the first tick's values for an event at the very start);
//   - during the event (its window; a flush's window is its warm-up) the error rate is
//     failed ÷ finished attempts and the p99 is the worst tick's;
//   - the system has recovered at the first tick at or after the window's end from which
//     recoveryHoldSec of ticks (or the rest of the run) all have an error rate within
//     baseline + max(0.001, 10% of baseline) and a p99 within 110% of baseline + 1 ms;
//     RecoverySec is the time from the window's end to the start of that tick;
//   - lost requests are the failures beyond the baseline rate from the strike until recovery.
const (
	baselineSec     = 30
	recoveryHoldSec = 5
)

func (m *model) eventImpacts(res *Result, st *runState) []EventImpact {
	out := make([]EventImpact, 0, len(st.events.events))
	dt := m.dt
	ticks := res.Ticks
	failedAt := func(k int) (lost, done float64) {
		tk := &ticks[k]
		lost = (tk.RejectedRPS + tk.ErrorRPS + tk.TimedOutRPS) * dt
		return lost, lost + tk.ServedRPS*dt
	}
	tickAt := func(t float64) int { // first tick whose interval ends after t
		return min(len(ticks), max(0, int(math.Floor(t/dt+1e-9))))
	}
	for i, e := range st.events.events {
		start, end := m.window(e, st.events.comp[i])
		imp := EventImpact{ID: e.ID, Kind: string(e.Kind), StartSec: start, EndSec: end}
		k0, k1 := tickAt(start), tickAt(end)
		if k1 <= k0 {
			k1 = min(len(ticks), k0+1)
		}
		b0 := tickAt(start - baselineSec)
		if b0 >= k0 {
			b0, k0 = 0, max(k0, 0)
		}
		var bl, bd, bp float64
		var bn int
		for k := b0; k < max(k0, b0+1) && k < len(ticks); k++ {
			l, d := failedAt(k)
			bl, bd = bl+l, bd+d
			bp += ticks[k].P99Ms
			bn++
		}
		if bd > 0 {
			imp.BaselineErrorRate = bl / bd
		}
		if bn > 0 {
			imp.BaselineP99Ms = bp / float64(bn)
		}
		var el, ed float64
		for k := k0; k < k1; k++ {
			l, d := failedAt(k)
			el, ed = el+l, ed+d
			imp.P99Ms = math.Max(imp.P99Ms, ticks[k].P99Ms)
			imp.PeakError = math.Max(imp.PeakError, ticks[k].ErrorRate)
		}
		if ed > 0 {
			imp.ErrorRate = el / ed
		}
		errOK := imp.BaselineErrorRate + math.Max(0.001, 0.1*imp.BaselineErrorRate)
		p99OK := imp.BaselineP99Ms*1.1 + 1
		healthy := func(k int) bool { return ticks[k].ErrorRate <= errOK && ticks[k].P99Ms <= p99OK }
		hold := max(1, int(math.Round(recoveryHoldSec/dt)))
		recovered := len(ticks)
		for k := k1; k < len(ticks); k++ {
			ok := true
			for j := k; j < min(len(ticks), k+hold); j++ {
				if !healthy(j) {
					ok = false
					k = j // no start before j can hold either
					break
				}
			}
			if ok {
				recovered = k
				break
			}
		}
		if recovered < len(ticks) {
			r := math.Max(0, float64(recovered)*dt-end)
			imp.RecoverySec = &r
		}
		for k := k0; k < recovered; k++ {
			l, d := failedAt(k)
			imp.Lost += math.Max(0, l-imp.BaselineErrorRate*d)
		}
		out = append(out, imp)
	}
	return out
}
