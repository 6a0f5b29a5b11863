package sim

import (
	"context"
	"math"
)

// Run simulates a design under a configuration. Invalid input returns Problems listing
// every problem; ctx only lets a caller abandon a long run.
func Run(ctx context.Context, d Design, cfg Config) (*Result, error) {
	v, err := validate(d, cfg)
	if err != nil {
		return nil, err
	}
	m, err := compile(v)
	if err != nil {
		return nil, err
	}
	return m.run(ctx)
}

// runState is what the tick loop carries besides the model's own state.
type runState struct {
	retries     [][]float64 // ring over ticks × retry generation (1..max)
	retryDelay  []int       // ticks from a failure to retry number g
	genShare    []float64
	mix         LatencyMix // the tick's request mix
	compMix     LatencyMix // one component, for its own p99
	lat         latencyCache
	partitioned []bool    // per design edge
	extraSec    []float64 // per design edge
	cutSince    []float64 // per design edge: when the current cut began; +Inf while whole
	cutStart    []float64 // scratch: the earliest start among the active cuts
	tickStart   float64
	spikeMult   float64
	hist        latencyHistogram
	acc         accumulators
	events      eventTracker
}

var tickQuantiles = []float64{0.5, 0.95, 0.99}

func (m *model) run(ctx context.Context) (*Result, error) {
	v := m.v
	nt, nc := v.ticks, len(m.comps)
	res := &Result{TickMs: v.cfg.TickMs, Components: make([]ComponentInfo, nc), Ticks: make([]Tick, nt)}
	for i, c := range m.comps {
		res.Components[i] = ComponentInfo{ID: c.id, Type: c.kind}
	}
	all := make([]ComponentTick, nt*nc)
	st := m.newRunState()
	for t := 0; t < nt; t++ {
		if t&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		tick := &res.Ticks[t]
		tick.Components = all[t*nc : (t+1)*nc : (t+1)*nc]
		m.step(t, tick, st)
	}
	m.summarize(res, st)
	return res, nil
}

func (m *model) newRunState() *runState {
	cl := m.v.cfg.Client
	maxDelay := 1
	for g := 1; g <= cl.MaxRetries; g++ {
		if d := m.retryDelayTicks(g); d > maxDelay {
			maxDelay = d
		}
	}
	st := &runState{
		retryDelay:  make([]int, cl.MaxRetries+1),
		retries:     make([][]float64, maxDelay+1),
		genShare:    make([]float64, cl.MaxRetries+1),
		partitioned: make([]bool, len(m.edgeTo)),
		extraSec:    make([]float64, len(m.edgeTo)),
		spikeMult:   1,
	}
	for i := range st.retries {
		st.retries[i] = make([]float64, cl.MaxRetries+1)
	}
	st.cutSince, st.cutStart = make([]float64, len(m.edgeTo)), make([]float64, len(m.edgeTo))
	for e := range st.cutSince {
		st.cutSince[e], st.cutStart[e] = math.Inf(1), math.Inf(1)
	}
	for g := 1; g <= cl.MaxRetries; g++ {
		st.retryDelay[g] = m.retryDelayTicks(g)
	}
	st.hist.init()
	st.lat.init(m)
	st.acc.init(len(m.comps))
	st.events.init(m)
	return st
}

// retryDelayTicks is how many ticks after a failure retry number g arrives.
func (m *model) retryDelayTicks(g int) int {
	cl := m.v.cfg.Client
	if cl.BackoffMs <= 0 {
		return 1
	}
	delay := cl.BackoffMs * math.Pow(cl.BackoffMultiplier, float64(g-1)) / 1000
	return max(1, int(math.Ceil(delay/m.dt-1e-9)))
}

// step advances the model by one tick and records it.
func (m *model) step(t int, tick *Tick, st *runState) {
	dt := m.dt
	t0 := float64(t) * dt
	tick.T = t0 + dt
	st.events.apply(m, st, t0, t0+dt)
	m.preTick(t0, st)

	// Arrivals: fresh requests from the curve plus retries due this tick, by generation.
	cfg := &m.v.cfg
	fresh := cfg.Traffic.rate(t0+dt/2) * st.spikeMult * dt
	slot := st.retries[t%len(st.retries)]
	attempts := fresh
	for g := 1; g < len(slot); g++ {
		attempts += slot[g]
	}
	retried := attempts - fresh
	if attempts > 0 {
		st.genShare[0] = fresh / attempts
		for g := 1; g < len(slot); g++ {
			st.genShare[g] = slot[g] / attempts
			slot[g] = 0
		}
	}
	shares := cfg.Mix.shares()
	for class, roots := range m.roots {
		for _, r := range roots {
			m.nodes[r].in = attempts * shares[class] / float64(len(roots))
		}
	}

	for it := 0; it < maxIterations; it++ {
		m.resetFlows()
		for _, p := range m.order {
			m.resolvePool(p, st)
		}
		if m.updateHoldTimes(st) {
			break
		}
	}

	m.detectSplitBrain(t, st)

	// Outcomes of the client's attempts, and the latency of those answered.
	var served, timedOut, rejected, failed, queued, answered float64
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.background {
			continue
		}
		queued += nd.backlogNext + nd.pendingNext
		rejected += nd.rejected + nd.pushback
		failed += nd.errors + nd.lost
		answered += nd.terminal
		// Mean latency from the ingress to this node's answer: parents come first.
		nd.pathMean = m.hopMean(i, st)
		if nd.parent >= 0 {
			nd.pathMean += m.nodes[nd.parent].pathMean
		}
	}
	m.latencies(st, answered)
	var meanSec float64
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.background || nd.terminal <= 0 {
			continue
		}
		late := nd.terminal * st.lat.late[i]
		timedOut += late
		served += nd.terminal - late
		meanSec += nd.terminal * nd.pathMean
	}

	// Failed attempts come back as retries, each generation up to the client's limit.
	lost := rejected + failed + timedOut
	m.scheduleRetries(t, lost, fresh, st)

	m.commit()
	m.postTick(t, st)

	tick.FreshRPS = fresh / dt
	tick.RetryRPS = retried / dt
	tick.OfferedRPS = attempts / dt
	tick.ServedRPS = served / dt
	tick.RejectedRPS = rejected / dt
	tick.ErrorRPS = failed / dt
	tick.TimedOutRPS = timedOut / dt
	tick.Queued = queued
	if done := served + lost; done > 0 {
		tick.ErrorRate = lost / done
	}
	if served+timedOut > 0 {
		mean := meanSec / answered
		q := st.lat.scaled(mean)
		tick.MeanMs = mean * 1000
		tick.P50Ms, tick.P95Ms, tick.P99Ms = q[0]*1000, q[1]*1000, q[2]*1000
		st.hist.add(served+timedOut, q)
	}
	tick.Events = st.events.activeIDs()
	m.recordComponents(t, tick, st)
	st.acc.addTick(m, t, tick, attempts, fresh, retried, served, rejected, failed, timedOut, queued)
}

const maxIterations = 5

// holdTolerance is when the hold times have converged: a change below 0.1% of a worker's
// busy time per request moves no reported figure by more than that.
const holdTolerance = 1e-3

// maxReportedUtil caps reported utilisation (offered load ÷ capacity) so that a pool with no
// capacity left still reports a finite number.
const maxReportedUtil = 1000

// resetFlows clears what the previous iteration sent along the routes; roots keep their input.
func (m *model) resetFlows() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		nd.pendingNext = 0
		if nd.parent >= 0 || nd.background {
			nd.in = 0
		}
		if nd.deferred {
			nd.in = nd.pendingIn
		}
		nd.rejected, nd.processed, nd.errors, nd.ok, nd.terminal, nd.lost, nd.pushback = 0, 0, 0, 0, 0, 0, 0
		nd.cut = 0
	}
}

// resolvePool runs one pool for one tick: admission, service, backlog, then hands each
// node's finished requests on along its route.
func (m *model) resolvePool(p int, st *runState) {
	pl := &m.pools[p]
	dt := m.dt
	pl.in, pl.backlog0, pl.wIn = 0, 0, 0
	cv2In := 0.0 // arrivals weighted by the squared coefficient of variation of their interarrival times
	for _, n := range pl.nodes {
		nd := &m.nodes[n]
		if nd.replay {
			nd.in = replayCost * m.pools[nd.source].wProc
			nd.held = 0
			if nd.edge >= 0 && st.partitioned[nd.edge] {
				// The link is cut: the writes wait on the near side until it heals.
				nd.held, nd.in = nd.in, 0
			}
		}
		pl.in += nd.in
		cv2In += nd.in * nd.arrivalCV2()
		pl.backlog0 += nd.backlog
		if nd.write || nd.replay {
			pl.wIn += nd.in
		}
	}
	cv2 := 1.0 // of the arrivals' interarrival times, squared (1: Poisson)
	if pl.in > 0 {
		cv2 = cv2In / pl.in
	}
	pl.wProc = 0
	gated := 0.0 // refused at the door: rate limit (429) or open breaker (503)
	if g := m.comps[pl.comp].gate; g != nil && !pl.failed {
		admitted := g.admit(pl.in, dt)
		gated, pl.in = max(0, pl.in-admitted), admitted
	}
	pl.gated = gated
	lambda := pl.in / dt
	if pl.failed {
		pl.util, pl.processed, pl.rejected, pl.errRate = 0, 0, 0, 1
		pl.backlog1 = 0
		if pl.durable {
			pl.backlog1 = pl.backlog0
		}
		pl.stage, pl.meanSec = Stage{}, 0
		pl.nodeRejected, pl.nodeFailed = 0, 0
		for _, n := range pl.nodes {
			nd := &m.nodes[n]
			nd.errors = nd.in
			nd.backlogNext = 0
			if pl.durable {
				nd.backlogNext = nd.backlog
			} else {
				nd.errors += nd.backlog
			}
			pl.nodeFailed += nd.errors
		}
		return
	}
	m.queueing(pl, lambda)
	if cv2 < 1 {
		pl.stage.WaitProb *= (cv2 + 1) / 2 // Allen–Cunneen: more regular arrivals wait less
	}
	if f := m.comps[pl.comp].fn; f != nil {
		f.shape(pl, dt)
	}
	pl.meanSec = stageMean(pl.stage)

	admittedAll := pl.in - pl.rejected + pl.backlog0
	total := pl.in + gated
	pl.nodeRejected, pl.nodeFailed = 0, 0
	pl.in, pl.rejected = total, pl.rejected+gated
	// Each node's part of the pool's refusals and of its finished work, as a share.
	rejShare, procShare := 0.0, 0.0
	if total > 0 {
		rejShare = pl.rejected / total
	}
	if admittedAll > 0 && pl.processed > 0 {
		procShare = pl.processed / admittedAll
	}
	for _, n := range pl.nodes {
		nd := &m.nodes[n]
		if total > 0 {
			nd.rejected = nd.in * rejShare
		}
		admitted := max(0, nd.in-nd.rejected)
		// Clamped: with fluid amounts near zero, rounding must not create or destroy requests.
		nd.processed = min(admitted+nd.backlog, (admitted+nd.backlog)*procShare)
		nd.rejected = nd.in - admitted
		nd.backlogNext = nd.backlog + admitted - nd.processed
		if nd.backlogNext < 1e-9 {
			nd.processed += nd.backlogNext // a rounding residue, not a waiting request
			nd.backlogNext = 0
		}
		if nd.replay && nd.rejected > 0 {
			// A replica never refuses its replication stream; it falls behind instead.
			nd.backlogNext += nd.rejected
			nd.rejected = 0
		}
		nd.errors = nd.processed * pl.errRate
		nd.ok = nd.processed - nd.errors
		if nd.write {
			pl.wProc += nd.processed
		}
		m.finish(n, st)
		pl.nodeRejected += nd.rejected + nd.pushback
		pl.nodeFailed += nd.errors + nd.lost
	}
}

// queueing applies the pool model to one tick's arrivals: the exact M/M/c queue below
// saturation, Erlang B without waiting room, a fluid backlog at and above saturation.
func (m *model) queueing(pl *pool, lambda float64) {
	dt := m.dt
	mu := 1 / (pl.serviceSec + pl.holdSec)
	pl.stage = Stage{Fixed: pl.fixedSec, ServiceRate: 1 / pl.serviceSec}
	pl.backlog1, pl.rejected, pl.processed = 0, 0, 0
	if pl.unlimited {
		pl.capRate = math.Inf(1)
		pl.processed, pl.rejected = pl.in+pl.backlog0, 0
		pl.util = lambda / pl.nominalRPS
		pl.errRate = loadErrorRate(pl)
		return
	}
	c := pl.workers
	pl.capRate = float64(c) * mu
	a := lambda / mu
	switch {
	case c == 0:
		pl.processed, pl.rejected = 0, 0
		pl.backlog1 = pl.backlog0 + pl.in
		if pl.backlog1 > pl.buffer {
			pl.rejected = min(pl.in, pl.backlog1-pl.buffer)
			pl.backlog1 -= pl.rejected
		}
	case pl.buffer == 0:
		pl.rejected = pl.in * erlangB(c, a)
		pl.processed = pl.in - pl.rejected
	case lambda < pl.capRate && pl.backlog0 <= 0:
		b := erlangB(c, a)
		if !math.IsInf(pl.buffer, 1) {
			pl.rejected = pl.in * mmcKBlockingFromB(c, int(min(pl.buffer, maxBuffer)), a, b)
		}
		pl.processed = pl.in - pl.rejected
		pl.stage.WaitProb = erlangCFromB(c, a, b)
		pl.stage.WaitRate = pl.capRate - lambda
	default:
		demand := pl.backlog0 + pl.in
		pl.processed = min(pl.capRate*dt, demand)
		left := demand - pl.processed
		pl.rejected = min(pl.in, max(0, left-pl.buffer))
		pl.backlog1 = left - pl.rejected
		aS := min(a, saturationCap*float64(c))
		pl.stage.WaitProb = erlangC(c, aS)
		pl.stage.WaitRate = pl.capRate - aS*mu
		pl.stage.Fixed += (pl.backlog0 + pl.backlog1) / 2 / pl.capRate
	}
	pl.util = 0
	if pl.capRate > 0 {
		pl.util = max(lambda, pl.processed/dt) / pl.capRate
	} else if pl.in+pl.backlog0 > 0 {
		pl.util = maxReportedUtil // no workers at all, yet work waiting
	}
	pl.util = min(pl.util, maxReportedUtil)
	pl.errRate = loadErrorRate(pl)
}

// loadErrorRate is a pool's own error rate: base + utilisation³ × factor (seed
// simulation-design), so errors accelerate sharply as a pool nears its limit.
func loadErrorRate(pl *pool) float64 {
	u := min(pl.util, 1)
	return min(1, pl.baseErr+u*u*u*pl.loadErr)
}

// finish decides what happens to the requests node n's pool finished.
func (m *model) finish(n int, st *runState) {
	nd := &m.nodes[n]
	switch nd.role {
	case roleServe:
		if len(nd.children) == 0 {
			nd.terminal = nd.ok
			return
		}
		m.forward(n, nd.ok, st)
	case roleUnrouted:
		nd.lost += nd.ok
	case roleCache:
		hit := m.comps[nd.comp].hitNow
		nd.terminal = nd.ok * hit
		m.forward(n, nd.ok-nd.terminal, st)
	case roleEnqueue:
		q := &m.comps[nd.comp]
		consumer := &m.nodes[m.pools[q.pools[1]].nodes[0]]
		space := max(0, q.queueBuffer-consumer.backlog-consumer.in)
		stored := min(nd.ok, space)
		nd.terminal = stored
		nd.pushback = nd.ok - stored
		consumer.in += stored
	case roleForward, roleDispatch:
		m.forward(n, nd.ok, st)
	}
}

// forward shares amount among node n's children by the node's split rule.
func (m *model) forward(n int, amount float64, st *runState) {
	nd := &m.nodes[n]
	if amount <= 0 {
		return
	}
	if len(nd.children) == 0 {
		nd.lost += amount
		return
	}
	total := m.splitShares(n, st)
	nd.shareTotal = total
	if total <= 0 {
		nd.lost += amount // nowhere healthy to send it: the caller gets an error
		return
	}
	perShare := amount / total
	ways := m.roundRobinWays(nd)
	for _, ch := range nd.children {
		c := &m.nodes[ch]
		part := max(0, c.share*perShare)
		switch {
		case part == 0:
		case c.edge >= 0 && st.partitioned[c.edge]:
			nd.lost += part
			c.cut = part
		case c.deferred:
			c.pendingNext += part
		case c.role == roleDispatch:
			c.in = part
			c.processed, c.ok = part, part
			m.forward(ch, part, st)
		default:
			c.in = part
			c.rrWays = ways
		}
	}
}

// splitShares sets each child's share weight and returns their sum.
func (m *model) splitShares(n int, st *runState) float64 {
	nd := &m.nodes[n]
	health := m.comps[nd.comp].healthChecks // balancers only
	total := 0.0
	for k, ch := range nd.children {
		c := &m.nodes[ch]
		w := 1.0
		switch nd.split {
		case splitCapacity:
			w = m.capacityOf(c)
		case splitRing:
			w = nd.weights[k]
		case splitSpare:
			pl := &m.pools[c.pool]
			w = 0
			if !pl.failed {
				w = max(0, pl.capRate-pl.wIn/m.dt)
			}
		}
		if health && (m.comps[c.comp].failed || (c.edge >= 0 && st.partitioned[c.edge])) {
			w *= 1 - m.detected(nd.comp, c, st)
		}
		c.share = w
		total += w
	}
	if total == 0 && nd.split == splitSpare {
		// Every node is busy with writes: share in proportion to capacity.
		for _, ch := range nd.children {
			c := &m.nodes[ch]
			if pl := &m.pools[c.pool]; !pl.failed {
				c.share = pl.capRate
				total += c.share
			}
		}
	}
	return total
}

func (m *model) capacityOf(nd *node) float64 {
	if nd.pool < 0 {
		return 1
	}
	pl := &m.pools[nd.pool]
	if pl.unlimited {
		return pl.nominalRPS
	}
	return float64(pl.workers) / (pl.serviceSec + pl.holdSec)
}

// updateHoldTimes recomputes mean response times bottom-up and, from them, how long each
// holding pool's workers wait on their calls. It reports whether they have converged.
func (m *model) updateHoldTimes(st *runState) bool {
	for i := len(m.nodes) - 1; i >= 0; i-- { // children always follow their parent
		nd := &m.nodes[i]
		nd.downMean = m.downstreamMean(i, st)
		nd.meanResp = m.hopMean(i, st) + nd.downMean
	}
	converged := true
	for p := range m.pools {
		pl := &m.pools[p]
		if !pl.holds {
			continue
		}
		var w, sum float64
		for _, n := range pl.nodes {
			nd := &m.nodes[n]
			sum += nd.in * nd.downMean
			w += nd.in
		}
		if w <= 0 {
			continue // no traffic: keep the last estimate
		}
		hold := sum / w
		if math.Abs(hold-pl.holdSec) > holdTolerance*(pl.serviceSec+pl.holdSec) {
			converged = false
			// Slower callees hold workers longer, which lets fewer requests through to the
			// callees, which makes them faster: the plain iteration overshoots, so it is damped.
			hold = 0.5 * (hold + pl.holdSec)
		}
		pl.holdSec = hold
	}
	return converged
}

// downstreamMean is the mean time a request at node n spends in calls below it.
func (m *model) downstreamMean(n int, st *runState) float64 { return m.downstream(n, st, false) }

// downstream averages the children's mean response (their bare one if bare) over the calls
// a request at node n makes below it, weighted by how the node splits its requests and by
// the share that goes on at all (cache misses).
func (m *model) downstream(n int, st *runState, bare bool) float64 {
	nd := &m.nodes[n]
	if len(nd.children) == 0 {
		return 0
	}
	frac := 1.0
	switch nd.role {
	case roleCache:
		frac = 1 - m.comps[nd.comp].hitNow
	case roleEnqueue, roleUnrouted:
		return 0
	}
	var total, sum float64
	for _, ch := range nd.children {
		c := &m.nodes[ch]
		if c.edge >= 0 && st.partitioned[c.edge] {
			continue
		}
		r := c.meanResp
		if bare {
			r = c.bareResp
		}
		total += c.share
		sum += c.share * r
	}
	if total <= 0 {
		// No split yet (nothing arrived): assume an even one.
		for _, ch := range nd.children {
			if bare {
				sum += m.nodes[ch].bareResp
			} else {
				sum += m.nodes[ch].meanResp
			}
		}
		return frac * sum / float64(len(nd.children))
	}
	return frac * sum / total
}

func stageMean(s Stage) float64 {
	mean := s.Fixed
	if s.ServiceRate > 0 {
		mean += 1 / s.ServiceRate
	}
	if s.WaitProb > 0 && s.WaitRate > 0 {
		mean += s.WaitProb / s.WaitRate
	}
	return mean
}

// hopMean is the mean of node n's contribution to the latency of a request passing through
// it: stageMean(m.stageOf(n, st)).
func (m *model) hopMean(n int, st *runState) float64 {
	nd := &m.nodes[n]
	mean := 0.0
	if nd.pool >= 0 {
		mean = m.pools[nd.pool].meanSec
	}
	if nd.edge >= 0 {
		mean += st.extraSec[nd.edge]
	}
	return mean
}

// stageOf is node n's contribution to the latency of a request passing through it.
func (m *model) stageOf(n int, st *runState) Stage {
	nd := &m.nodes[n]
	var s Stage
	if nd.pool >= 0 {
		s = m.pools[nd.pool].stage
	}
	if nd.edge >= 0 {
		s.Fixed += st.extraSec[nd.edge]
	}
	return s
}

// commit makes this tick's backlogs the next tick's state.
func (m *model) commit() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		nd.backlog = nd.backlogNext + nd.held
		nd.pendingIn = nd.pendingNext
		if nd.background && nd.write && nd.parent >= 0 {
			// A job whose write failed goes back to its queue: delivery is at least once.
			consumer := &m.nodes[nd.parent]
			consumer.backlog += nd.rejected + nd.errors + nd.lost
		}
	}
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.consumer {
			// Consumer errors: the job stays queued too.
			nd.backlog += nd.errors + nd.lost
		}
	}
}

// scheduleRetries turns this tick's failed attempts into retries, generation by generation.
func (m *model) scheduleRetries(t int, failed, fresh float64, st *runState) {
	maxR := len(st.genShare) - 1
	if failed <= 0 {
		return
	}
	want := 0.0
	for g := 0; g < maxR; g++ {
		want += failed * st.genShare[g]
	}
	scale := 1.0
	if budget := m.v.cfg.Client.RetryBudget; budget > 0 && want > budget*fresh {
		scale = budget * fresh / want
	}
	for g := 0; g < maxR; g++ {
		amount := failed * st.genShare[g] * scale
		st.retries[(t+st.retryDelay[g+1])%len(st.retries)][g+1] += amount
	}
	st.acc.dropped += failed*st.genShare[maxR] + want*(1-scale)
}

// computeDemand propagates the tick's attempts along the routes as if no tier refused or
// throttled anything. A tier whose demand exceeds its capacity is where the design breaks,
// even when a tier above it, its workers stuck waiting, is the one that overflows.
//
// A tier that holds its workers during calls needs them for its own service time plus the
// calls' bare time (service and fixed latency, no queueing below): that is its own work,
// while time spent queueing at a saturated callee is the callee's problem.
func (m *model) computeDemand(st *runState) {
	for p := range m.pools {
		m.pools[p].demand, m.pools[p].bareHold = 0, 0
	}
	for i := len(m.nodes) - 1; i >= 0; i-- {
		nd := &m.nodes[i]
		nd.bareResp = m.downstream(i, st, true)
		if nd.pool >= 0 {
			pl := &m.pools[nd.pool]
			nd.bareResp += pl.fixedSec + pl.serviceSec
		}
		if nd.edge >= 0 {
			nd.bareResp += st.extraSec[nd.edge]
		}
	}
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.parent < 0 {
			nd.demand = nd.in
		} else {
			par := &m.nodes[nd.parent]
			total := par.shareTotal
			frac := 1.0
			switch par.role {
			case roleCache:
				frac = 1 - m.comps[par.comp].hitNow
			case roleEnqueue, roleUnrouted:
				frac = 0
			}
			nd.demand = 0
			if total > 0 {
				nd.demand = par.demand * frac * nd.share / total
			}
		}
		if nd.pool >= 0 {
			pl := &m.pools[nd.pool]
			pl.demand += nd.demand
			if pl.holds {
				pl.bareHold += nd.demand * (nd.bareResp - pl.fixedSec - pl.serviceSec)
			}
		}
	}
	for p := range m.pools {
		if pl := &m.pools[p]; pl.demand > 0 {
			pl.bareHold /= pl.demand
		}
	}
}

// detectSplitBrain records databases that take writes on both sides of a cut replication
// link: their data diverges, whatever the latency and error numbers say.
func (m *model) detectSplitBrain(t int, st *runState) {
	for _, r := range m.replay {
		nd := &m.nodes[r]
		if nd.edge < 0 || !st.partitioned[nd.edge] {
			continue
		}
		if m.pools[nd.source].wProc > 0 && m.pools[m.primary[nd.comp]].wProc > 0 {
			st.acc.splitBrain(m.comps[m.pools[nd.source].comp].id, m.comps[nd.comp].id, t)
		}
	}
}
