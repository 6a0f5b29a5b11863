package sim

// Diagnosis of a failing tick: where its attempts were lost and why (doc.go, "Why it
// happened"). It reads the tick's flows while the nodes still hold them.

// failingShare is the seed architecture-simulator's failure rule: a tick fails when more
// than this share of the attempts offered in it fail.
const failingShare = 0.05

func failingTick(attempts, lost float64) bool { return attempts > 0 && lost > failingShare*attempts }

// minCauseShare: a failing tick is put down to a cause only if that cause lost at least this
// share of the tick's attempts. A tick whose losses are all load-dependent error rates is not.
const minCauseShare = 0.01

// tickCause is the diagnosis of one failing tick.
type tickCause struct {
	tick  int
	cause Cause
	comp  int // the limiting component
	pool  int // saturated: the limiting pool, or -1
	edge  int // partition: the cut edge; timeouts: the slow edge, or -1
	lb    int // node_failed: the balancer in front, or -1
	// no_route: the request classes (bit 1<<class) that had nowhere to go from comp.
	classes uint8

	attempts, fresh float64
	// What the detail quotes, per cause: saturated: demand and capacity (req/s) or, while
	// draining, backlog and seconds of work; node_failed and partition: the share of the
	// attempts lost there; rate_limited: offered and admitted (req/s); throttled: executions
	// needed and allowed at once; breaker_open: the share refused; timeouts: the slow hop's
	// seconds.
	a, b     float64
	extra    float64 // saturated: the injected latency of the slow call its workers wait on
	draining bool    // saturated: working off a backlog; node_failed: noticed, and no backend left
}

// causeRun is a stretch of consecutive failing ticks with the same diagnosis: a run whose
// queues settle repeats its ticks, and a repeated tick's diagnosis is the one it repeats, so
// the failing ticks are recorded as runs of one entry rather than one entry each (a copy per
// tick would be most of what a long failing run allocates). Its fields are a tickCause's, packed:
// no pointers for the garbage collector to scan, and half the size.
type causeRun struct {
	tick, n                   int32 // the run's first tick, and its number of ticks
	comp, pool, edge, lb      int32
	cause                     causeCode
	draining                  bool
	classes                   uint8
	attempts, fresh, a, b, ex float64
}

// causeCode is a Cause in a causeRun: an index into causeCodes.
type causeCode uint8

// causeCodes are the causes a tick's diagnosis names.
var causeCodes = [...]Cause{"", CauseSaturated, CauseNodeFailed, CausePartition, CauseBreakerOpen,
	CauseRateLimited, CauseThrottled, CauseTimeouts, CauseNoRoute}

func codeOf(c Cause) causeCode {
	for k, x := range causeCodes {
		if x == c {
			return causeCode(k)
		}
	}
	panic("sim: a tick diagnosed with the structural cause " + string(c))
}

func runOf(d tickCause) causeRun {
	return causeRun{tick: int32(d.tick), n: 1, comp: int32(d.comp), pool: int32(d.pool), edge: int32(d.edge), lb: int32(d.lb),
		cause: codeOf(d.cause), draining: d.draining, classes: d.classes, attempts: d.attempts, fresh: d.fresh, a: d.a, b: d.b, ex: d.extra}
}

// diagnosis is the diagnosis of each of the run's ticks, dated its first.
func (r *causeRun) diagnosis() tickCause {
	return tickCause{tick: int(r.tick), cause: causeCodes[r.cause], comp: int(r.comp), pool: int(r.pool), edge: int(r.edge), lb: int(r.lb),
		attempts: r.attempts, fresh: r.fresh, a: r.a, b: r.b, extra: r.ex, draining: r.draining, classes: r.classes}
}

// causeName is what a stretch of the timeline is named by: the cause, where, and whether
// it was a backlog draining.
type causeName struct {
	cause      causeCode
	comp, edge int32
	draining   bool
}

func (r *causeRun) names() causeName { return causeName{r.cause, r.comp, r.edge, r.draining} }

func (r *causeRun) first() int { return int(r.tick) }
func (r *causeRun) last() int  { return int(r.tick + r.n - 1) }
func (r *causeRun) ticks() int { return int(r.n) }

// causeLog is the run's failing ticks, diagnosed, in order of time.
type causeLog []causeRun

// add records the diagnosis d of tick d.tick, later than every tick recorded.
func (l *causeLog) add(d tickCause) {
	next := runOf(d)
	if n := len(*l); n > 0 {
		if r := &(*l)[n-1]; r.last()+1 == d.tick && r.sameDiagnosis(&next) {
			r.n++
			return
		}
	}
	*l = append(*l, next)
}

// sameDiagnosis: o diagnoses its ticks as r does, dates apart.
func (r *causeRun) sameDiagnosis(o *causeRun) bool {
	return r.names() == o.names() && r.pool == o.pool && r.lb == o.lb && r.classes == o.classes && r.attempts == o.attempts &&
		r.fresh == o.fresh && r.a == o.a && r.b == o.b && r.ex == o.ex
}

// diagScratch holds per-component and per-edge sums, reused from one failing tick to the next.
type diagScratch struct {
	failed, breaker, limited, throttled, overload, noRoute, cut []float64
	all                                                         []float64 // all of them, cleared at once
	classes                                                     []uint8   // no_route: the classes lost, by component
}

// diagnose names the cause of a failing tick. It runs after the tick is resolved, while the
// nodes still hold the tick's flows.
func (m *model) diagnose(t int, st *runState, attempts, fresh, timedOut float64) (tickCause, bool) {
	d := tickCause{tick: t, comp: -1, pool: -1, edge: -1, lb: -1, attempts: attempts, fresh: fresh}
	s := &st.acc.diag
	if s.all == nil {
		n := len(m.comps)
		s.all = make([]float64, 6*n+len(m.edgeTo))
		s.failed, s.breaker, s.limited = s.all[:n:n], s.all[n:2*n:2*n], s.all[2*n:3*n:3*n]
		s.throttled, s.overload, s.noRoute = s.all[3*n:4*n:4*n], s.all[4*n:5*n:5*n], s.all[5*n:6*n:6*n]
		s.cut = s.all[6*n:]
		s.classes = make([]uint8, n)
	}
	clear(s.all)
	clear(s.classes)
	queuedOut := 0.0      // timed out waiting in a queue
	cuts := st.events.cut // else no link is cut and nothing was sent across one this tick
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.background {
			continue
		}
		lost := nd.lost
		if cuts {
			if nd.edge >= 0 && nd.cut > 0 {
				s.cut[nd.edge] += nd.cut
			}
			lost -= m.cutBelow(i)
		}
		if lost > 1e-12 {
			// Forwarded nowhere: every backend failed or cut off, or the class has no route
			// from here at all (an app with no database to write to, a CDN with no origin
			// for its misses).
			if f := m.failedChild(i); f >= 0 {
				s.failed[f] += lost
			} else if e := m.cutChild(i, st); e >= 0 {
				s.cut[e] += lost
			} else if len(nd.children) == 0 {
				s.noRoute[nd.comp] += lost
				s.classes[nd.comp] |= 1 << nd.class
			}
		}
		if nd.pool < 0 {
			continue
		}
		pl := &m.pools[nd.pool]
		if pl.failed {
			s.failed[nd.comp] += nd.errors
			continue
		}
		// Attempts whose deadline passed while they waited in this pool's queue were lost
		// here; what is left of the tick's timeouts are answers that came back too late.
		over := &s.overload[nd.comp] // added to in the order the causes are listed
		*over += nd.expired
		queuedOut += nd.expired
		rej, pushback := nd.rejected, nd.pushback
		if nd.refusedAtOnce > 0 { // retries sent at once, refused here as their first attempts were
			again := 1 + nd.refusedAtOnce/(rej+pushback)
			rej, pushback = rej*again, pushback*again
		}
		if pl.gated > 0 && pl.rejected > 0 {
			g := rej * min(1, pl.gated/pl.rejected)
			if b := m.comps[nd.comp].gate.during; b == BreakerOpen || b == BreakerHalfOpen {
				s.breaker[nd.comp] += g
			} else {
				s.limited[nd.comp] += g
			}
			rej -= g
		}
		if m.comps[nd.comp].kind == KindServerless {
			s.throttled[nd.comp] += rej
		} else {
			*over += rej
		}
		*over += pushback + nd.errors
	}

	timedOut = max(0, timedOut-queuedOut)
	overload := timedOut
	for _, x := range s.overload {
		overload += x
	}
	best, bestCause, bestComp := overload, CauseSaturated, -1
	pick := func(xs []float64, c Cause) {
		for i, x := range xs {
			if x > best {
				best, bestCause, bestComp = x, c, i
			}
		}
	}
	pick(s.failed, CauseNodeFailed)
	pick(s.breaker, CauseBreakerOpen)
	pick(s.limited, CauseRateLimited)
	pick(s.throttled, CauseThrottled)
	pick(s.noRoute, CauseNoRoute)
	bestEdge := -1
	for e, x := range s.cut {
		if x > best {
			best, bestCause, bestComp, bestEdge = x, CausePartition, m.edgeTo[e], e
		}
	}
	if best < minCauseShare*attempts {
		return d, false // nothing that is a cause here lost enough to explain the failure
	}
	d.cause, d.comp = bestCause, bestComp
	switch bestCause {
	case CauseNodeFailed:
		d.a = s.failed[bestComp] / attempts
		d.lb = m.balancerOf(bestComp)
		if d.lb >= 0 && m.comps[d.lb].healthChecks {
			// The checks have taken it out already: its share failed because no backend was left.
			d.draining = st.tickStart >= m.comps[bestComp].failedSince+m.comps[d.lb].detectSec
		}
	case CausePartition:
		d.edge, d.a = bestEdge, s.cut[bestEdge]/attempts
	case CauseBreakerOpen:
		d.a = s.breaker[bestComp] / attempts
	case CauseRateLimited:
		pl := &m.pools[m.comps[bestComp].pools[0]]
		d.a, d.b = pl.in/m.dt, m.comps[bestComp].gate.rateLimit
	case CauseThrottled:
		pl := &m.pools[m.comps[bestComp].pools[0]]
		d.a, d.b = pl.in/m.dt*(pl.serviceSec+pl.holdSec), float64(pl.workers)
	case CauseNoRoute:
		d.a, d.classes = s.noRoute[bestComp]/attempts, s.classes[bestComp]
	default:
		m.limitingTier(&d, st, timedOut)
		if d.cause == CauseSaturated {
			m.behindTheTier(&d, st, attempts)
		}
	}
	return d, true
}

// behindTheTier looks past a saturated tier at what it waits on. A queue whose workers'
// link to the database is cut fills up and refuses writes because of the partition: that
// is the cause, at the queue. A tier whose workers wait on a call slowed by injected latency
// is named as saturated still, with the slow call (d.edge) for the detail.
func (m *model) behindTheTier(d *tickCause, st *runState, attempts float64) {
	c := &m.comps[d.comp]
	for _, e := range c.edges {
		switch {
		case c.kind == KindQueue && st.partitioned[e]:
			d.cause, d.edge, d.pool, d.draining = CausePartition, e, -1, false
			d.a = st.acc.diag.overload[d.comp] / attempts
			return
		case st.extraSec[e] > 0 && (d.edge < 0 || st.extraSec[e] > d.extra):
			d.edge, d.extra = e, st.extraSec[e]
		}
	}
}

// cutBelow is what node n lost on cut links to its children this tick.
func (m *model) cutBelow(n int) float64 {
	sum := 0.0
	for _, ch := range m.nodes[n].children {
		sum += m.nodes[ch].cut
	}
	return sum
}

// failedChild is the first failed component among node n's children, or -1.
func (m *model) failedChild(n int) int {
	for _, ch := range m.nodes[n].children {
		if c := m.nodes[ch].comp; m.comps[c].failed {
			return c
		}
	}
	return -1
}

// cutChild is the edge to the first of node n's children cut off by a partition, or -1.
func (m *model) cutChild(n int, st *runState) int {
	for _, ch := range m.nodes[n].children {
		if e := m.nodes[ch].edge; e >= 0 && st.partitioned[e] {
			return e
		}
	}
	return -1
}

// balancerOf is a load balancer in front of component comp, or -1.
func (m *model) balancerOf(comp int) int {
	for e, to := range m.edgeTo {
		if to == comp && m.comps[m.edgeFrm[e]].kind == KindLoadBalancer {
			return m.edgeFrm[e]
		}
	}
	return -1
}

// limitingTier finds the tier behind refusals and timeouts: the one whose demand on its own
// work (what would reach it if nothing above refused, with its workers held only for the
// bare time of their calls) is the highest share of its capacity, when that reaches
// saturation; else the one with the most work still backlogged; else, for timeouts with
// no saturated tier, the slowest hop.
func (m *model) limitingTier(d *tickCause, st *runState, timedOut float64) {
	m.computeDemand(st)
	worst, worstRatio, worstDem, worstCap := -1, -1.0, 0.0, 0.0
	for p := range m.pools {
		pl := &m.pools[p]
		if pl.failed || pl.unlimited || pl.demand <= 0 {
			continue
		}
		dem := pl.demand / m.dt
		capRPS := float64(pl.workers) / (pl.serviceSec + pl.bareHold)
		ratio := float64(maxReportedUtil)
		if capRPS > 0 {
			ratio = min(maxReportedUtil, dem/capRPS)
		}
		if ratio > worstRatio {
			worst, worstRatio, worstDem, worstCap = p, ratio, dem, capRPS
		}
	}
	if worst >= 0 && worstRatio >= saturationCap {
		d.cause, d.pool, d.comp, d.a, d.b = CauseSaturated, worst, m.pools[worst].comp, worstDem, worstCap
		return
	}
	drain, drainPool := 0.0, -1
	for p := range m.pools {
		pl := &m.pools[p]
		if pl.failed || pl.backlog1 <= 1e-6 || pl.capRate <= 0 {
			continue
		}
		if w := pl.backlog1 / pl.capRate; w > drain {
			drain, drainPool = w, p
		}
	}
	if drainPool >= 0 {
		d.cause, d.pool, d.comp, d.draining = CauseSaturated, drainPool, m.pools[drainPool].comp, true
		d.a, d.b = m.pools[drainPool].backlog1, drain
		return
	}
	s := &st.acc.diag
	rejected, rejComp := 0.0, -1
	for c, x := range s.overload {
		if x > rejected {
			rejected, rejComp = x, c
		}
	}
	if rejected > timedOut && rejComp >= 0 {
		// Refusals below saturation: a pool with little or no waiting room losing what
		// arrives while all its workers are busy (Erlang B).
		d.cause, d.comp = CauseSaturated, rejComp
		if worst >= 0 && m.pools[worst].comp == rejComp {
			d.pool, d.a, d.b = worst, worstDem, worstCap
		} else {
			p := m.comps[rejComp].pools[0]
			d.pool, d.a, d.b = p, m.pools[p].in/m.dt, m.pools[p].capRate
		}
		return
	}
	// Timeouts with no saturated tier: the slowest hop, an injected latency first.
	d.cause = CauseTimeouts
	for e, x := range st.extraSec {
		if x > d.a {
			d.a, d.edge, d.comp = x, e, m.edgeTo[e]
		}
	}
	if d.edge >= 0 {
		return
	}
	for p := range m.pools {
		pl := &m.pools[p]
		if pl.failed || pl.in <= 0 {
			continue
		}
		if pl.meanSec > d.a {
			d.a, d.comp, d.pool = pl.meanSec, pl.comp, p
		}
	}
	if d.comp < 0 {
		d.comp = 0
	}
}

// Idle lists what no request of the run's mix ever visits: the ids of components no route
// reaches, and the indices of design edges no route crosses (an edge back to a component
// already on every path through it, which closes a cycle, or a call no request class makes).
// Such parts of a design cost money, or look as if they did something, and change nothing.
func (p *Prepared) Idle() (components []string, edges []int) {
	m := p.m
	shares := m.v.cfg.Mix.shares()
	usedComp := make([]bool, len(m.comps))
	usedEdge := make([]bool, len(m.edgeTo))
	for i := range m.nodes {
		nd := &m.nodes[i]
		if i == m.sinkNode || shares[nd.class] <= 0 {
			continue
		}
		usedComp[nd.comp] = true
		if nd.edge >= 0 {
			usedEdge[nd.edge] = true
		}
	}
	for i, used := range usedComp {
		if !used {
			components = append(components, m.comps[i].id)
		}
	}
	for e, used := range usedEdge {
		if !used {
			edges = append(edges, e)
		}
	}
	return components, edges
}
