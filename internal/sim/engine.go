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
	// retries is a ring over ticks of the retries due, by generation (1..max) and request
	// type: index g×numClasses + class. A client retries the request it sent, so a type's
	// losses come back as that type (retrySlot).
	retries    [][]float64
	retryDelay []int // ticks from a failure to retry number g
	// genShare is, per generation and type (retrySlot), the share of the tick's attempts of
	// that type which are of that generation.
	genShare    []float64
	lostByType  [numClasses]float64 // the tick's failed attempts by request type
	mix         LatencyMix          // the tick's request mix
	compMix     LatencyMix          // one component, for its own p99
	lat         latencyCache
	partitioned []bool    // per design edge
	extraSec    []float64 // per design edge
	extraBefore []float64 // per design edge: scratch, the last tick's extraSec (events.go)
	cutSince    []float64 // per design edge: when the current cut began; +Inf while whole
	cutStart    []float64 // scratch: the earliest start among the active cuts
	tickStart   float64
	spikeMult   float64
	hist        latencyHistogram
	acc         accumulators
	events      eventTracker

	// lostAtOnce is the part of lostByType whose retries, sent at once, are refused at
	// once (atonce.go); atOnceIn and atOnceRefused are, per component, those retries, and
	// atOnceSent says they hold some.
	lostAtOnce              [numClasses]float64
	atOnceIn, atOnceRefused []float64
	atOnceSent              bool
	// lostInTick is the part of lostByType that failed at once at a crashed component or a
	// cut link, retriedInTick how many of those were retried within the tick
	// (failedatonce.go); inTickGen and genShareBegan are its scratch, by retrySlot.
	lostInTick, retriedInTick [numClasses]float64
	inTickGen, genShareBegan  []float64
	// failedShare is, by type, the share of the last tick's attempts that failed at once:
	// the first guess at this tick's.
	failedShare [numClasses]float64

	tot         tickTotals // the last computed tick's amounts, folded into acc (state.go)
	compTot     []compTotals
	retryAmount []float64 // per generation and type (retrySlot): what the last computed tick scheduled
	replayOf    [][]int   // per component: its replicas' replay nodes, in m.replay order
	reuse       reuseState
}

var tickQuantiles = []float64{0.5, 0.95, 0.99}

func (m *model) run(ctx context.Context) (*Result, error) {
	v := m.v
	nt, nc := v.ticks, len(m.comps)
	sc := m.opts.Scratch
	slabT, slabC := sc.takeRecords(nt, nc)
	res := &Result{TickMs: v.cfg.TickMs, Components: make([]ComponentInfo, nc), Ticks: slabT[:nt:nt]}
	for i, c := range m.comps {
		res.Components[i] = ComponentInfo{ID: c.id, Type: c.kind}
	}
	all := slabC[: nt*nc : nt*nc]
	res.records = slabC
	st := m.newRunState()
	st.acc.causes = sc.takeCauses()
	defer st.reuse.giveBack(sc)
	defer func() { sc.giveCauses(st.acc.causes) }()
	// The run looks at ctx after every ctxCheckWork units of work, not every so many
	// ticks, so that it stops within a few milliseconds however its work is shaped: a run
	// of a few hundred heavy ticks looks before every tick.
	tickWork := m.tickWork()
	work := ctxCheckWork
	for t := 0; t < nt; t++ {
		if work >= ctxCheckWork {
			work = 0
			if err := ctx.Err(); err != nil {
				sc.giveRecords(slabT, slabC) // no result: no one holds its records
				return nil, err
			}
		}
		work += tickWork
		tick := &res.Ticks[t]
		tick.Components = all[t*nc : (t+1)*nc : (t+1)*nc]
		m.step(t, tick, st)
		if m.opts.Stop != nil && m.opts.Stop(res, t) {
			m.reused = st.reuse.reused
			sc.giveRecords(slabT, slabC)
			return nil, ErrStopped
		}
	}
	m.summarize(res, st)
	m.reused = st.reuse.reused
	return res, nil
}

// ctxCheckWork is how much work (tickWork units) a run does between looks at its
// context: about a millisecond of one core.
const ctxCheckWork = 4096

// tickWork is the work of one tick in the units ctxCheckWork counts: a unit for every
// request path of every retry generation, component, chaos event and traffic point the
// tick visits.
func (m *model) tickWork() int {
	cfg := &m.v.cfg
	return len(m.nodes)*(1+max(cfg.Client.MaxRetries, 0)) + len(m.comps) + len(cfg.Chaos) +
		len(cfg.Traffic.Steps) + len(cfg.Traffic.Spikes)
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
		retryDelay:    make([]int, cl.MaxRetries+1),
		retries:       make([][]float64, maxDelay+1),
		genShare:      make([]float64, (cl.MaxRetries+1)*requestTypes),
		retryAmount:   make([]float64, (cl.MaxRetries+1)*requestTypes),
		inTickGen:     make([]float64, (cl.MaxRetries+1)*requestTypes),
		genShareBegan: make([]float64, (cl.MaxRetries+1)*requestTypes),
		compTot:       make([]compTotals, len(m.comps)),
		partitioned:   make([]bool, len(m.edgeTo)),
		extraSec:      make([]float64, len(m.edgeTo)),
		spikeMult:     1,
	}
	if m.atOnce {
		nc := len(m.comps)
		sums := make([]float64, 2*nc)
		st.atOnceIn, st.atOnceRefused = sums[:nc:nc], sums[nc:]
	}
	// Rows of one block, and the per-edge buffers of another: a run's fixed cost is in its
	// number of allocations as much as in their size.
	width := (cl.MaxRetries + 1) * requestTypes
	rows := make([]float64, len(st.retries)*width)
	for i := range st.retries {
		st.retries[i] = rows[i*width : (i+1)*width : (i+1)*width]
	}
	ne := len(m.edgeTo)
	cuts := make([]float64, 3*ne)
	st.cutSince, st.cutStart, st.extraBefore = cuts[:ne:ne], cuts[ne:2*ne:2*ne], cuts[2*ne:]
	for e := range st.cutSince {
		st.cutSince[e], st.cutStart[e] = math.Inf(1), math.Inf(1)
	}
	for g := 1; g <= cl.MaxRetries; g++ {
		st.retryDelay[g] = m.retryDelayTicks(g)
	}
	st.lat.init(m)
	st.acc.init(len(m.comps))
	st.events.init(m)
	st.replayOf = make([][]int, len(m.comps))
	for _, r := range m.replay {
		c := m.nodes[r].comp
		st.replayOf[c] = append(st.replayOf[c], r)
	}
	st.reuse.init(m)
	st.reuse.disabled = m.opts.DisableReuse
	return st
}

// cutOff reports whether design edge e (−1: none) is cut this tick. Most ticks cut no link,
// and then it reads no edge.
func (st *runState) cutOff(e int) bool {
	return st.events.cut && e >= 0 && st.partitioned[e]
}

// retrySlot is where retry generation g of request type class sits in a row of
// runState.retries, genShare and retryAmount.
func retrySlot(g int, class Class) int { return g*requestTypes + int(class) }

// retryGrain is how finely retries are counted: in 2⁻²⁰ths of a request (scheduleRetries).
const retryGrain = 1 << 20

// toRetryGrain rounds a count of retries to the nearest 2⁻²⁰th of a request. Added to
// 1.5 × 2³², a count below 2³¹ keeps 20 bits after the point and no more, and taking the
// constant off again is exact: two additions, where a rounding function costs a call.
func toRetryGrain(x float64) float64 {
	const shift = 1.5 * (1 << 32)
	return (x + shift) - shift
}

// requestTypes is how many request types a retry row holds per generation.
const requestTypes = int(numClasses)

// retryDelayTicks is how many ticks after a failure retry number g arrives.
func (m *model) retryDelayTicks(g int) int {
	cl := m.v.cfg.Client
	if cl.BackoffMs <= 0 {
		return 1
	}
	delay := cl.BackoffMs * math.Pow(cl.BackoffMultiplier, float64(g-1)) / 1000
	return max(1, int(math.Ceil(delay/m.dt-1e-9)))
}

// fresh is the traffic curve's new requests in the tick starting at t0.
func (m *model) fresh(t0 float64, st *runState) float64 {
	return m.v.cfg.Traffic.rate(t0+m.dt/2) * st.spikeMult * m.dt
}

// step advances the model by one tick and records it.
func (m *model) step(t int, tick *Tick, st *runState) {
	dt := m.dt
	t0 := float64(t) * dt
	m.tick = t
	tick.T = t0 + dt
	st.events.apply(m, st, t0, t0+dt)
	fresh := m.fresh(t0, st)
	if m.reuseTick(t, tick, fresh, st) {
		return // the tick repeats the last one exactly (state.go)
	}
	check := m.beginTick(t, fresh, st)
	m.preTick(t0, st)

	// Arrivals: fresh requests from the curve in the level's mix, plus the retries due this
	// tick, each of the type its client first sent.
	slot := st.retries[t%len(st.retries)]
	attempts := fresh
	for i := requestTypes; i < len(slot); i++ {
		attempts += slot[i]
	}
	retried := attempts - fresh
	shares := m.v.cfg.Mix.shares()
	var typeIn [numClasses]float64
	for class, roots := range m.roots {
		typeFresh := fresh * shares[class]
		typeAttempts := typeFresh
		for g := 1; g < len(st.retryDelay); g++ {
			typeAttempts += slot[retrySlot(g, Class(class))]
		}
		if typeAttempts > 0 {
			st.genShare[class] = typeFresh / typeAttempts
			for g := 1; g < len(st.retryDelay); g++ {
				i := retrySlot(g, Class(class))
				st.genShare[i] = slot[i] / typeAttempts
				slot[i] = 0
			}
		}
		typeIn[class] = typeAttempts
		for _, r := range roots {
			m.nodes[r].in = typeAttempts / float64(len(roots))
		}
	}

	// Attempts that fail at once, at a crashed component or a cut link, are retried at once
	// with no backoff: attempts of this tick (failedatonce.go).
	inTick := m.solveRetryingFailedAtOnce(st, &typeIn, fresh)
	attempts += inTick
	retried += inTick
	// Queues move on; attempts whose deadline passed while they waited time out now.
	expired := m.settle()

	m.detectSplitBrain(t, st)

	// Outcomes of the client's attempts, and the latency of those answered.
	var served, timedOut, rejected, failed, queued, answered, lateDone float64
	// The attempts lost by request type: the nodes come type by type (model.classEnd), and
	// background work, which no client retries, last.
	var lostByType [numClasses + 1]float64
	// The slices in locals: the stores through nd below would otherwise make the compiler
	// load their headers again on every node.
	nodes, pools, extraSec := m.nodes, m.pools, st.extraSec
	start := 0
	for class := range lostByType {
		end := len(nodes)
		if class < int(numClasses) {
			end = m.classEnd[class]
		}
		typeLost := 0.0
		typeNodes := nodes[start:end]
		for k := range typeNodes {
			nd := &typeNodes[k] // ranged over the type's own nodes: no bounds check
			lateDone += nd.lateDone
			if nd.background {
				continue
			}
			queued += nd.liveQueued + nd.pendingNext
			refused, errs := nd.rejected+nd.pushback, nd.errors+nd.lost
			rejected += refused
			failed += errs
			typeLost += refused + errs + nd.expired
			answered += nd.terminal
			// Mean latency from the ingress to this node's answer: its parent's path (parents
			// come first) and its own hop, the mean of its stage (stageOf).
			mean := 0.0
			if nd.pool >= 0 {
				mean = pools[nd.pool].meanSec
			}
			if nd.edge >= 0 {
				mean += extraSec[nd.edge]
			}
			if nd.parent >= 0 {
				mean += nodes[nd.parent].pathMean
			}
			nd.pathMean = mean
		}
		lostByType[class] = typeLost
		start = end
	}
	m.latencies(st, answered)
	var meanSec float64
	// lateShare has a share per node: resliced to the nodes' length, it needs no bounds check of
	// its own once nodes[i] has passed one.
	lateShare := st.lat.late[:len(nodes)]
	start = 0
	for class, end := range m.answeringEnd { // no other node answers
		typeLate := 0.0
		for _, i := range m.answering[start:end] {
			nd := &nodes[i]
			if nd.terminal <= 0 {
				continue
			}
			late := nd.terminal * lateShare[i]
			timedOut += late
			typeLate += late
			served += nd.terminal - late
			meanSec += nd.terminal * nd.pathMean
		}
		lostByType[class] += typeLate
		start = end
	}
	// Answered after the client gave up: at its deadline while waiting, or late on the way.
	tot := &st.tot
	tot.late = lateDone + timedOut
	timedOut += expired

	// Failed attempts come back as retries, each generation up to the client's limit.
	lost := rejected + failed + timedOut
	st.lostByType = [numClasses]float64(lostByType[:numClasses])
	m.refusalsMetAgain(st)
	if atOnce := m.scheduleRetries(t, lost, fresh, st); atOnce > 0 {
		// Retries sent at once and refused at once: attempts of this tick (atonce.go).
		attempts += atOnce
		retried += atOnce
		rejected += atOnce
		lost += atOnce
	}

	m.commit()
	m.postTick(t, st)
	if st.events.delayEnds && len(m.delayable) > 0 {
		m.noteDelayedCalls(st)
	}

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
	tot.hist = false
	if answered > 0 {
		mean := meanSec / answered
		tick.MeanMs = mean * 1000
		if served > 0 {
			q := st.lat.scaled(mean, m.timeoutSec)
			tick.P50Ms, tick.P95Ms, tick.P99Ms = q[0]*1000, q[1]*1000, q[2]*1000
			tot.histQ, tot.hist = q, true
		}
	}
	if served <= 0 && timedOut > 0 {
		// Nobody got an answer in time: they all waited the whole timeout for nothing.
		to := m.timeoutSec * 1000
		tick.P50Ms, tick.P95Ms, tick.P99Ms = to, to, to
	}
	tick.Events = st.events.activeIDs()
	m.recordComponents(t, tick, st)
	tot.attempts, tot.fresh, tot.retried, tot.served = attempts, fresh, retried, served
	tot.rejected, tot.failed, tot.timedOut, tot.queued = rejected, failed, timedOut, queued
	m.accumulate(t, tick, st, false)
	m.endTick(t, tick, check, st)
}

// solveTick resolves every pool for the tick's arrivals at the entry points, in passes
// until the hold times agree (holdtime.go).
func (m *model) solveTick(st *runState) {
	m.resetHoldBrackets()
	for it := 0; it < maxIterations; it++ {
		m.resetFlows()
		for _, p := range m.order {
			m.resolvePool(p, st)
		}
		if m.updateHoldTimes(st) {
			break
		}
	}
}

// maxIterations bounds the passes that solve a tick's hold times (holdtime.go).
const maxIterations = 24

// holdTolerance is when the hold times have converged: a change below 0.1% of a worker's
// busy time per request moves no reported figure by more than that.
const holdTolerance = 1e-3

// maxReportedUtil caps reported utilisation (offered load ÷ capacity) so that a pool with no
// capacity left still reports a finite number.
const maxReportedUtil = 1000

// resetFlows clears what the previous iteration sent along the routes; roots keep their input.
func (m *model) resetFlows() {
	nodes := m.nodes // in a local, the loop's stores cannot move it: no bounds check
	for i := range nodes {
		nd := &nodes[i]
		nd.nodeFlows = nodeFlows{}
		if nd.parent >= 0 || nd.background {
			nd.in = 0
		}
		if nd.deferred {
			nd.in = nd.pendingIn
		}
	}
}

// resolvePool runs one pool for one tick: admission, service, backlog, then hands each
// node's finished requests on along its route.
func (m *model) resolvePool(p int, st *runState) {
	m.resolving++
	pl := &m.pools[p]
	comp := &m.comps[pl.comp]
	// In a local, the nodes' header is loaded once, not again after every store through nd.
	nodes := m.nodes
	dt := m.dt
	var in, backlog0, wIn float64
	levelPlaces := math.Inf(1)
	cv2In := 0.0 // arrivals weighted by the squared coefficient of variation of their interarrival times
	for _, n := range pl.nodes {
		nd := &nodes[n]
		if nd.replay {
			nd.in = replayCost * m.pools[nd.source].wProc // another pool's, resolved before this one
			nd.held = 0
			if st.cutOff(nd.edge) {
				// The link is cut: the writes wait on the near side until it heals.
				nd.held, nd.in = nd.in, 0
			}
		}
		if nd.leveled {
			levelPlaces = min(levelPlaces, nd.levelPlaces)
		}
		in += nd.in + nd.gin
		cv2In += (nd.in + nd.gin) * nd.arrivalCV2() // ghost work comes down the same route
		backlog0 += nd.backlog
		if nd.write || nd.replay {
			wIn += nd.in + nd.gin
		}
	}
	pl.in, pl.backlog0, pl.wIn, pl.levelPlaces = in, backlog0, wIn, levelPlaces
	cv2 := 1.0 // of the arrivals' interarrival times, squared (1: Poisson)
	if pl.in > 0 {
		cv2 = cv2In / pl.in
	}
	pl.wProc, pl.ghostProcessed, pl.keeps = 0, 0, false
	gated := 0.0 // refused at the door: rate limit (429) or open breaker (503)
	if g := comp.gate; g != nil {
		g.admitted = 0 // a failed gateway lets nothing in, and its bucket refills
		if !pl.failed {
			g.admitted = g.admit(pl.in, dt)
			gated, pl.in = max(0, pl.in-g.admitted), g.admitted
		}
	}
	pl.gated = gated
	lambda := pl.in / dt
	pl.stochNext = 0 // unless an open queue's room builds one below; a failed node's is lost
	if pl.failed {
		pl.util, pl.processed, pl.rejected, pl.errRate = 0, 0, 0, 1
		pl.backlog1 = 0
		if pl.durable {
			pl.backlog1 = pl.backlog0
		}
		pl.stage, pl.meanSec, pl.holdMean, pl.wait, pl.ownSec = Stage{}, 0, 0, 0, 0
		pl.stageVar = 0
		pl.nodeRejected, pl.nodeFailed = 0, 0
		for _, n := range pl.nodes {
			nd := &nodes[n]
			// Live work fails; ghost work vanishes unseen: its client has already given up.
			nd.errors = nd.in
			if !pl.durable {
				nd.errors += nd.liveQueued
			}
			pl.nodeFailed += nd.errors
		}
		return
	}
	if pl.rooms > 1 {
		cv2 /= float64(pl.rooms) // each replica's room is dealt every rooms-th arrival
	}
	fn := comp.fn
	if fn != nil {
		fn.coldStarts(pl, lambda, dt)
	}
	m.queueing(pl, lambda, cv2)
	m.fifo(pl, pl.in-pl.rejected)
	m.queueWait(pl)
	if fn != nil {
		fn.shape(pl, dt)
	}
	pl.meanSec = stageMean(pl.stage)
	pl.holdMean = pl.meanSec + pl.holdExtra
	if pl.heldVar {
		pl.stageVar = stageVar(&pl.stage)
	}
	pl.ownSec = nonNegative(pl.meanSec - pl.wait)

	total := pl.in + gated
	pl.nodeRejected, pl.nodeFailed = 0, 0
	pl.in, pl.rejected = total, pl.rejected+gated
	// Each node's part of the pool's refusals, as a share; its part of the served work
	// comes from its place in the queue (backlog.go).
	rejShare := 0.0
	if total > 0 {
		rejShare = pl.rejected / total
	}
	// What the loop reads of the pool does not change in it: finishing a node moves work
	// on to other pools only, and the pool's sums are added in the nodes' order all the same.
	admGhostShare, errRate, okRate := 1-rejShare, pl.errRate, 1-pl.errRate
	fNew := pl.frac[m.slots+1] // the share of the tick's own arrivals served (backlog.go)
	var ghostProcessed, wProc, nodeRejected, nodeFailed float64
	for _, n := range pl.nodes {
		nd := &nodes[n]
		nd.admLive = nonNegative(nd.in - nd.in*rejShare)
		nd.rejected = nd.in - nd.admLive
		nd.admGhost = nd.gin * admGhostShare
		ghostRejected := nd.gin - nd.admGhost
		if nd.replay && nd.rejected > 0 {
			// A replica never refuses its replication stream; it falls behind instead.
			nd.keep, nd.rejected = nd.rejected, 0
			pl.keeps = true
		}
		if nd.backlog > 0 {
			m.serveQueue(pl, nd)
		} else {
			// Nothing waits here: its part of the served work is of its own arrivals.
			nd.processed, nd.gProcessed, nd.outAge = nd.admLive*fNew, nd.admGhost*fNew, nd.inAge
		}
		nd.errors = nd.processed * errRate
		nd.ok = nd.processed - nd.errors
		nd.gok = nd.gProcessed * okRate
		ghostProcessed += nd.gProcessed
		if nd.write {
			wProc += nd.processed + nd.gProcessed
		}
		switch { // finish, the commonest roles without the call
		case nd.role == roleServe && len(nd.children) == 0:
			nd.terminal = nd.ok // the answer
		case nd.role == roleForward:
			m.forward(n, nd.ok, st)
		default:
			m.finish(n, st)
		}
		if nd.gok > 0 {
			m.finishGhost(n, st)
		}
		nodeRejected += nd.rejected + nd.pushback + ghostRejected
		nodeFailed += nd.errors + nd.lost
	}
	pl.ghostProcessed, pl.wProc, pl.nodeRejected, pl.nodeFailed = ghostProcessed, wProc, nodeRejected, nodeFailed
}

// queueWait sets the pool's one wait. A pool with a queue waits what the work it served
// waited in the queue (w, measured on the cohorts) or its stochastic wait S, whichever is
// longer, not their sum: max(w, S). With S exponential with probability C, max(w, S) is
// w plus, with probability C·e^(−θw), the same exponential (it is memoryless), so the one
// wait is still a stage: exact M/M/c when there is no queue (below saturation), growing
// continuously and monotonically with the queue. The whole wait is bounded by what the
// waiting room holds ÷ capacity: a full waiting room waits that and no more.
//
// A caller held on the pool waits what a call made now waits, so the hold reads the queue
// as it is this tick (its mean content ÷ capacity, Little's law) rather than what the work
// served now waited, which it joined ticks ago: pl.holdExtra is the difference.
func (m *model) queueWait(pl *pool) {
	s := &pl.stage
	most := math.Inf(1)
	if pl.capRate > 0 && pl.buffer > 0 && !math.IsInf(pl.buffer, 1) {
		most = pl.buffer / pl.capRate
	}
	if pl.closed.population > 0 { // an open pool's bound is +Inf
		most = min(most, pl.closedWaitBound())
	}
	now := 0.0
	if pl.capRate > 0 {
		now = (pl.backlog0 + pl.backlog1) / 2 / pl.capRate
	}
	p, theta := s.WaitProb, s.WaitRate
	served := min(pl.wait, most)
	pServed := oneWait(served, p, theta, most)
	held, pHeld := served, pServed // the same when the queue's wait is what it holds now (none)
	if now != pl.wait {
		held = min(now, most)
		pHeld = oneWait(held, p, theta, most)
	}
	pl.holdExtra = 0
	if theta > 0 {
		pl.holdExtra = (held + pHeld/theta) - (served + pServed/theta)
	} else {
		pl.holdExtra = held - served
	}
	if pServed < minWaitProb {
		s.WaitProb, s.WaitRate = 0, 0
	} else {
		s.WaitProb = pServed
	}
	pl.wait = served
	s.Fixed += served
	if served*pl.capRate >= 1 {
		if v := pl.spreadVar(served); v > 0 {
			// The wait behind a backlog of a request or more is not the same for everyone:
			// a shifted Erlang with its mean and variance (at most served²/spreadStages).
			rho := max(spreadStages/served, math.Sqrt(spreadStages/v))
			s.Fixed -= spreadStages / rho
			s.SpreadRate = rho
		}
	}
}

// spreadVar is the variance of the wait of work that waited w behind a backlog. Behind n
// requests drained at rate R the wait is the time of n departures: for exponential workers
// Erlang(n, R), of variance w/R. A worker held through calls is busy for its service plus
// the hold, which is less variable than one exponential of the same mean: the departures
// of many such workers over a long wait vary by the busy time's squared coefficient of
// variation, (S² + H²) ÷ (S + H)² with the hold taken as exponential. Replicas each with
// their own room drain theirs at R ÷ rooms.
func (pl *pool) spreadVar(w float64) float64 {
	if !(pl.capRate > 0) || math.IsInf(pl.capRate, 1) {
		return 0
	}
	return w * pl.busyCV2() * float64(max(1, pl.rooms)) / pl.capRate
}

// oneWait combines a queue's wait w (at most most) with a stochastic wait (probability p,
// rate θ) into max(w, S), bounded by most: it is the remaining probability of waiting the
// exponential on top of w. Small enough to inline: most pools in most ticks have no
// stochastic wait.
func oneWait(w, p, theta, most float64) float64 {
	if p > 0 && theta > 0 {
		return stochasticWait(w, p, theta, most)
	}
	return 0
}

// stochasticWait is oneWait for p, θ > 0.
func stochasticWait(w, p, theta, most float64) float64 {
	if w > 0 {
		p *= math.Exp(-theta * w)
	}
	// The mean wait w + p/θ stays within the bound.
	return max(0, min(p, theta*(most-w)))
}

// queueing applies the pool model to one tick's arrivals (cv2: how much their interarrival
// times vary, squared, as each room sees them): below saturation each room an M/M/c/K queue
// of its share (its replica's workers, places and arrivals) carried from tick to tick, Erlang
// B without waiting room, a fluid backlog at and above saturation.
func (m *model) queueing(pl *pool, lambda, cv2 float64) {
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
	if pl.releaseWorkers > 0 {
		// Calls made before a delay ended still hold some workers (inflight.go).
		if r, ok := pl.releasedCapacity(float64(m.tick)*dt, dt, mu); ok {
			pl.capRate = r
		}
	}
	a := lambda / mu
	rooms := max(1, pl.rooms) // each replica's room takes its share of the workers and arrivals
	switch {
	case c == 0:
		pl.processed, pl.rejected = 0, 0
		pl.backlog1 = pl.backlog0 + pl.in
		if pl.backlog1 > pl.buffer {
			pl.rejected = min(pl.in, pl.backlog1-pl.buffer)
			pl.backlog1 -= pl.rejected
		}
	case pl.closed.population > 0 && m.closedQueue(pl, lambda, mu):
		// Reached only by held calls: a closed loop of the callers' workers (closedloop.go).
	case pl.buffer == 0 && m.comps[pl.comp].fn != nil:
		// A function's starting instances hold slots of its concurrency (elastic.go).
		pl.rejected = pl.in * m.comps[pl.comp].fn.throttled(pl, mu, cv2, dt)
		pl.processed = pl.in - pl.rejected
	case pl.buffer == 0:
		// Each replica's workers lose their share as a loss system fed every rooms-th
		// arrival: a regular stream refuses less than Erlang B says (regularLoss).
		pl.rejected = pl.in * regularLoss(c/rooms, a/float64(rooms), cv2)
		pl.processed = pl.in - pl.rejected
	case lambda < pl.capRate && pl.backlog0 <= 0 && math.IsInf(pl.levelPlaces, 1):
		r := room{workers: c / rooms, places: pl.buffer / float64(rooms), mu: mu, cv2: cv2, cs2: pl.busyCV2()}
		capped := r.offer(a / float64(rooms))
		pl.rejected = pl.in * m.stochasticQueue(pl, r, true)
		pl.processed = pl.in - pl.rejected
		if capped {
			pl.boundClosedWait()
		}
	default:
		demand := pl.backlog0 + pl.in
		pl.processed = min(pl.capRate*dt, demand)
		left := demand - pl.processed
		pl.rejected = min(pl.in, max(0, left-pl.buffer))
		pl.backlog1 = left - pl.rejected
		// A saturated pool's stochastic wait is a room's at 98%, without a bound of places:
		// what bounds it is the backlog's (queueWait), which refuses past its buffer above,
		// or a least-connections balancer's level, which sends it nothing more while it holds
		// more than the others (outstanding.go).
		r := room{workers: c / rooms, places: pl.levelPlaces / float64(rooms), mu: mu, cv2: cv2, cs2: pl.busyCV2()}
		r.offer(a / float64(rooms))
		m.stochasticQueue(pl, r, false)
		pl.boundClosedWait() // held callers queue no more than their workers (closedloop.go)
		// The queue's own wait is measured on the cohorts served (queueWait).
	}
	pl.util = 0
	if pl.capRate > 0 {
		pl.util = max(lambda, pl.processed/dt) / pl.capRate
	} else if pl.in+pl.backlog0 > 0 {
		pl.util = maxReportedUtil // no workers at all, yet work waiting
	}
	pl.util = atMost(pl.util, maxReportedUtil)
	pl.errRate = loadErrorRate(pl)
}

// room is one replica's share of a pool below saturation: its workers of rate mu and its
// places, fed a stream whose interarrival times vary by cv2 (squared), and, once offered its
// load, its stationary queue.
type room struct {
	workers    int
	places, mu float64
	cv2        float64
	cs2        float64 // of the workers' busy time per request, squared (1: exponential)
	lambda     float64 // arrivals a second, at most the 98% the queue stops growing at
	waitChance float64 // the chance that an admitted arrival waits
	meanWait   float64 // an admitted arrival's mean wait (s)
	refused    float64 // the share of arrivals refused for want of a place
	capacity   float64 // workers × mu
}

// offer sets the room's stationary queue at a Erlangs, held at its 98% value between 98%
// and saturation, which the saturated pool starts from: the wait never falls as load rises.
// It reports whether it was held.
func (r *room) offer(a float64) (capped bool) {
	c := float64(r.workers)
	if aS := saturationCap * c; a > aS {
		a, capped = aS, true
	}
	sigma := a / c
	if r.cv2 < 1 {
		// Heavy-traffic GI/M/c: a regular stream's queue falls off faster over the places,
		// and its wait decays faster, 1 − σ = 2(1 − ρ) ÷ (ca² + 1). Far from saturation,
		// where that would fall below 0, hardly anyone queues.
		sigma = max(0, 1-2*(1-sigma)/(r.cv2+1))
	}
	r.capacity, r.lambda = c*r.mu, a*r.mu
	var departures float64
	r.waitChance, departures, r.refused = roomQueue(r.workers, a, sigma, r.places)
	r.meanWait = departures / r.capacity
	return capped
}

// stochasticQueue sets the stochastic wait of each of a pool's rooms, r, and returns the
// share of its arrivals a room refuses now. A room waits what its queue has built
// (pool.stochWait): at most its stationary mean wait, and from what it stood at the last
// tick it grows as a reflected random walk's mean grows from empty, s√(2t/π) requests
// (s² = λ·ca² + c·μ a second) drained at c·μ, or falls towards it (drainTowards).
// The chance to wait stays the stationary one, and the room refuses in proportion to how
// near its queue stands to the stationary one. stationary says the pool is below
// saturation, where a run's first tick finds it at its stationary state.
func (m *model) stochasticQueue(pl *pool, r room, stationary bool) float64 {
	w, target := pl.stochWait, r.meanWait
	if m.tick == 0 && stationary {
		// A run starts in the middle of a day whose traffic has been flowing: below
		// saturation a room stands where its load puts it. At or above there is no such
		// state, and the room starts empty, as the per-request reference's do.
		w = target
	}
	switch {
	case w > target:
		// A saturated pool's room is taken without a bound of places (queueing), but the
		// queue it drains lives in the places its replica has.
		places := min(r.places, pl.buffer/float64(max(1, pl.rooms)))
		w = drainTowards(w, target, r.lambda/r.capacity, r.settling(places), m.dt)
	case w < target:
		if grown := w*w + 2/math.Pi*r.walkVariance()/(r.capacity*r.capacity)*m.dt; grown < target*target {
			w = math.Sqrt(grown)
		} else {
			w = target
		}
	}
	pl.stochNext = w
	if !(w > 0) {
		return 0
	}
	pl.stage.WaitProb, pl.stage.WaitRate = r.waitChance, r.waitChance/w
	if w == target {
		return r.refused
	}
	return r.refused * w / target
}

// drainTowards is where a room's wait w, above its stationary wait target at utilisation
// rho, stands dt seconds later. A queue above its stationary mean does not drain at the
// whole spare capacity: in the runs whose queue has emptied, workers idle as they would at
// the stationary state. Its excess u = w − target falls as du/dt = −(1 − ρ)·u ÷ (u + B):
// at the spare capacity while it is large against B, as a fluid, and ever more slowly as it
// nears the stationary queue, where it decays at (1 − ρ) ÷ B, the rate the room's queue
// settles at (B from room.settling; 0 drains as a fluid). Over dt the excess solves
// u + B·ln u = u₀ + B·ln u₀ − (1 − ρ)·dt: the same whether a stretch is taken in one tick
// or in many.
func drainTowards(w, target, rho, b, dt float64) float64 {
	u0 := w - target
	fluid := (1 - rho) * dt
	if !(target > 0) || !(rho > 0) || !(b > 0) {
		return max(target, w-fluid)
	}
	if u0 < fluid && u0*math.Exp((u0-fluid)/b) < 1e-6*target {
		return target // the excess is at most that: the queue stands at its stationary state
	}
	// In v = ln u the equation is g(v) = e^v + B·v − goal = 0, g increasing and convex:
	// Newton's steps from above the root stay above it and descend to it. The excess falls
	// at least as fast as its rate at the start, (1 − ρ) ÷ (u₀ + B) of itself, so
	// v₀ = ln u₀ − (1 − ρ)·dt ÷ (u₀ + B) is above the root, and near it.
	lnU0 := math.Log(u0)
	goal := u0 + b*lnU0 - fluid
	v := lnU0 - fluid/(u0+b)
	for range 16 {
		e := math.Exp(v)
		step := (e + b*v - goal) / (e + b)
		v -= step
		if step < 1e-12 {
			break
		}
	}
	return target + math.Exp(v)
}

// walkVariance is s², the variance a second of the random walk the room's queue makes: its
// arrivals' and its departures', their squared coefficients of variation taken at most 1.
func (r *room) walkVariance() float64 {
	return r.lambda*min(1, r.cv2) + r.capacity*min(1, r.cs2)
}

// settling is B of drainTowards for the room with places: the wait whose excess over the
// stationary one drains at the spare capacity's share u ÷ (u + B), so that a small excess
// decays at the rate a reflected random walk of the room's queue settles at, its spectral
// gap. For a walk of drift −δ and variance s² a second between an empty queue and K places
// that is δ² ÷ 2s² + π²s² ÷ 2K²: an unbounded queue settles slowly as its load nears
// capacity, a room of a few places within a moment whatever its load. (With no bound of
// places, B is four times the walk's stationary wait, s² ÷ 2δ requests drained at c·μ.)
// 0 means drain as a fluid.
func (r *room) settling(places float64) float64 {
	variance := r.walkVariance()
	spare := r.capacity - r.lambda
	if !(variance > 0) || !(spare > 0) {
		return 0
	}
	gap := spare * spare / (2 * variance)
	if places > 0 && !math.IsInf(places, 1) {
		gap += math.Pi * math.Pi * variance / (2 * places * places)
	}
	return spare / r.capacity / gap
}

// loadErrorRate is a pool's own error rate: base + utilisation³ × factor (seed
// simulation-design), so errors accelerate sharply as a pool nears its limit.
func loadErrorRate(pl *pool) float64 {
	u := atMost(pl.util, 1)
	return atMost(pl.baseErr+u*u*u*pl.loadErr, 1)
}

// nonNegative is max(0, x) (x ≤ 0, −0 included, gives +0; a NaN stays a NaN) by one
// comparison: the builtin's general handling of signed zeros costs a few instructions
// more, on lines every pool and node runs every pass. (A NaN's payload is the compiler's
// either way: nothing reads it.)
func nonNegative(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x
}

// atMost is min(x, bound) for a bound above 0 (a NaN stays a NaN; no zero's sign is at
// stake), by one comparison.
func atMost(x, bound float64) float64 {
	if x > bound {
		return bound
	}
	return x
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
	nodes := m.nodes // in a local: the stores through c cannot move it, so it is loaded once
	nd := &nodes[n]
	if amount <= 0 {
		return
	}
	if len(nd.children) == 0 {
		nd.lost += amount
		return
	}
	total, nowhere := 0.0, 0.0
	if nd.split == splitEven && !m.checksHealth(nd, st) {
		total = m.evenShares(nd) // splitShares without the call
	} else {
		total, nowhere = m.splitShares(n, st)
	}
	nd.shareTotal = total
	if total <= 0 {
		nd.lost += amount // nowhere healthy to send it: the caller gets an error
		return
	}
	nd.lost += amount * nowhere
	perShare := amount / total
	age := nd.outAge
	if nd.pool >= 0 {
		age += m.pools[nd.pool].ownSec
	}
	ways := m.roundRobinWays(nd)
	for _, ch := range nd.children {
		c := &nodes[ch]
		part := c.share * perShare
		switch {
		case part <= 0: // nothing to send: what max(0, part) == 0 tells (a NaN is sent on)
		case st.cutOff(c.edge):
			nd.lost += part
			c.cut = part
		case c.deferred:
			c.pendingNext += part
		case c.role == roleDispatch:
			c.in = part
			c.processed, c.ok = part, part
			c.inAge, c.outAge = age, age
			m.forward(ch, part, st)
		default:
			c.in = part
			c.rrWays = ways
			c.inAge = age
			if c.edge >= 0 {
				c.inAge += st.extraSec[c.edge]
			}
		}
	}
}

// finishGhost passes on the ghost work node n finished: the server does not know its client
// left, so it makes the same calls and answers nobody (a late completion).
func (m *model) finishGhost(n int, st *runState) {
	nd := &m.nodes[n]
	g := nd.gok
	switch nd.role {
	case roleServe:
		if len(nd.children) == 0 {
			nd.lateDone = g
			return
		}
		m.forwardGhost(n, g, st)
	case roleCache:
		nd.lateDone = g * m.comps[nd.comp].hitNow
		m.forwardGhost(n, g-nd.lateDone, st)
	case roleEnqueue:
		// The write is stored all the same and becomes a job like any other.
		q := &m.comps[nd.comp]
		consumer := &m.nodes[m.pools[q.pools[1]].nodes[0]]
		stored := min(g, max(0, q.queueBuffer-consumer.backlog-consumer.in))
		nd.lateDone = stored
		consumer.in += stored
	case roleForward, roleDispatch:
		m.forwardGhost(n, g, st)
	}
}

// forwardGhost shares ghost work among node n's children by the node's split rule, as
// forward does: health checks take a dead backend out only once they notice it, and a
// round-robin balancer deals ghosts in turn with live work. What a cut link, a dead end or
// a deferred edge would refuse vanishes: nobody waits for it.
func (m *model) forwardGhost(n int, amount float64, st *runState) {
	nodes := m.nodes // in a local: the stores through c cannot move it, so it is loaded once
	nd := &nodes[n]
	if amount <= 0 || len(nd.children) == 0 {
		return
	}
	total, _ := m.splitShares(n, st)
	nd.shareTotal = total
	if total <= 0 {
		return
	}
	perShare := amount / total
	ways := m.roundRobinWays(nd)
	for _, ch := range nd.children {
		c := &nodes[ch]
		part := c.share * perShare
		switch {
		case part <= 0, c.deferred, st.cutOff(c.edge):
		case c.role == roleDispatch:
			c.gin, c.gProcessed, c.gok = part, part, part
			m.forwardGhost(ch, part, st)
		default:
			c.gin = part
			c.rrWays = ways
		}
	}
}

// splitShares sets each child's share weight and returns their sum. A balancer's health
// checks may have taken a backend out only in part of the probe phases (health.go): the
// split is then the expectation over them (expectedShares), and nowhere the share of
// requests for which no backend is left.
func (m *model) splitShares(n int, st *runState) (total, nowhere float64) {
	nodes := m.nodes // in a local: the stores through c cannot move it, so it is loaded once
	nd := &nodes[n]
	health := m.checksHealth(nd, st)
	if nd.split == splitEven && !health {
		return m.evenShares(nd), 0
	}
	partial := false
	if nd.split == splitOutstanding {
		m.outstandingShares(n, st)
	}
	for k, ch := range nd.children {
		c := &nodes[ch]
		w := 1.0
		switch nd.split {
		case splitOutstanding:
			w = c.share // outstandingShares: +Inf for a backend that answers at once
		case splitRing:
			w = nd.weights[k]
		case splitSpare:
			pl := &m.pools[c.pool]
			w = 0
			if !pl.failed {
				w = nonNegative(pl.capRate - pl.wIn/m.dt)
			}
		}
		if health {
			o := m.outShare(nd.comp, c, st)
			if o > 0 && o < 1 {
				if !partial {
					m.prepareSplit(len(nd.children))
					partial = true
				}
				m.splitOut[k] = o
			}
			if o >= 1 {
				w = 0
			}
		}
		c.share = w
		total += w
	}
	if partial {
		total, nowhere = m.expectedShares(nd)
		return takeAll(m, nd, total), nowhere
	}
	if nd.split == splitOutstanding {
		total = takeAll(m, nd, total)
	}
	if total == 0 && nd.split == splitSpare {
		// Every node is busy with writes: share in proportion to capacity.
		for _, ch := range nd.children {
			c := &nodes[ch]
			if pl := &m.pools[c.pool]; !pl.failed {
				c.share = pl.capRate
				total += c.share
			}
		}
	}
	return total, 0
}

// evenShares weighs each of node nd's children 1 and returns their sum: the count, exactly
// what adding the ones would give.
func (m *model) evenShares(nd *node) float64 {
	nodes := m.nodes // in a local: the stores cannot move it, so it is loaded once
	for _, ch := range nd.children {
		nodes[ch].share = 1
	}
	return float64(len(nd.children))
}

// checksHealth reports whether node nd's split depends on its health checks this tick:
// balancers only, and only while a backend is or was just down.
func (m *model) checksHealth(nd *node, st *runState) bool {
	return st.events.outages && m.comps[nd.comp].healthChecks
}

// updateHoldTimes recomputes mean response times bottom-up and, from them, how long each
// holding pool's workers wait on their calls. It reports whether they have converged.
func (m *model) updateHoldTimes(st *runState) bool {
	// In locals: the stores through nd cannot move them, so they are loaded once. (Not
	// st.extraSec too: one more live slice costs the loop more in spills than it saves.)
	nodes, pools := m.nodes, m.pools
	for _, i := range m.holding { // children first; no other node's response is read
		nd := &nodes[i]
		nd.downMean, nd.downVar = 0, 0
		if len(nd.children) > 0 && nd.role != roleEnqueue && nd.role != roleUnrouted {
			// downstream's mean (not bare) and, in the same pass over the children, the
			// variance of the time spent in the calls below: the mixture over the children
			// the node splits its calls between (and, for a cache, the hits that call
			// nothing), each child's response its own variance about its own mean.
			frac := 1.0
			if nd.role == roleCache {
				frac = 1 - m.comps[nd.comp].hitNow
			}
			var total, sum, sum2 float64
			for _, ch := range nd.children {
				c := &nodes[ch]
				if st.cutOff(c.edge) {
					continue
				}
				total += c.share
				sum += c.share * c.meanResp
				sum2 += c.share * (c.respVar + c.meanResp*c.meanResp)
			}
			if total <= 0 {
				// No split yet (nothing arrived): assume an even one.
				for _, ch := range nd.children {
					c := &nodes[ch]
					sum += c.meanResp
					sum2 += c.respVar + c.meanResp*c.meanResp
				}
				total = float64(len(nd.children))
			}
			nd.downMean = frac * sum / total
			nd.downVar = nonNegative(frac*sum2/total - nd.downMean*nd.downMean)
		}
		// The node's own part: hopHoldMean's mean, and its pool's stage's variance.
		mean, variance := 0.0, 0.0
		if nd.pool >= 0 {
			pl := &pools[nd.pool]
			mean, variance = pl.holdMean, pl.stageVar
		}
		if nd.edge >= 0 {
			mean += st.extraSec[nd.edge]
		}
		nd.meanResp = mean + nd.downMean
		nd.respVar = variance + nd.downVar
	}
	converged := true
	for _, p := range m.holders {
		pl := &pools[p]
		var w, sum, sum2 float64
		for _, n := range pl.nodes {
			nd := &nodes[n]
			in := nd.in + nd.gin // ghost work holds workers as long as live work does
			sum += in * nd.downMean
			sum2 += in * (nd.downVar + nd.downMean*nd.downMean)
			w += in
		}
		if w <= 0 {
			continue // no traffic: keep the last estimate
		}
		mean := sum / w
		// The variance moves only the spread of the queue's wait, and a change within the
		// hold's tolerance is none: a standing queue stands still, bit for bit.
		if v := nonNegative(sum2/w - mean*mean); math.Abs(v-pl.holdVar) > holdTolerance*(pl.serviceSec+mean)*(pl.serviceSec+mean) {
			pl.holdVar = v
		}
		if !pl.nextHold(mean) {
			converged = false
		}
	}
	return converged
}

// stageVar is the variance of a stage's time: an exponential service, an exponential wait
// taken with its chance, a backlog's spread; the fixed part (an injected delay,
// authentication) varies not at all.
func stageVar(s *Stage) float64 {
	v := 0.0
	if s.ServiceRate > 0 {
		v += 1 / (s.ServiceRate * s.ServiceRate)
	}
	if p, th := s.WaitProb, s.WaitRate; p > 0 && th > 0 {
		v += (2*p - p*p) / (th * th)
	}
	if s.SpreadRate > 0 {
		v += spreadStages / (s.SpreadRate * s.SpreadRate)
	}
	return v
}

// busyCV2 is the squared coefficient of variation of a worker's busy time per request: its
// own exponential service and, for a pool that holds its workers through calls, the hold,
// of the variance its calls' responses have. A hold that is mostly a fixed delay (a slow
// network) makes the workers' departures nearly regular.
func (pl *pool) busyCV2() float64 {
	s, h := pl.serviceSec, pl.holdSec
	if !(h > 0) {
		return 1
	}
	return (s*s + pl.holdVar) / ((s + h) * (s + h))
}

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
		if st.cutOff(c.edge) {
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
	if s.SpreadRate > 0 {
		mean += spreadStages / s.SpreadRate
	}
	return mean
}

// hopHoldMean is the mean time a call arriving at node n now spends there: what holds the
// caller's worker.
func (m *model) hopHoldMean(n int, st *runState) float64 {
	nd := &m.nodes[n]
	mean := 0.0
	if nd.pool >= 0 {
		mean = m.pools[nd.pool].holdMean
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

// commit makes what waits outside the pools' own flow part of the next tick's queues
// (settle has moved the queues themselves on).
func (m *model) commit() {
	pools := m.pools // in a local, the loop's stores cannot move it: no bounds checks
	for i := range pools {
		pools[i].stochWait = pools[i].stochNext
	}
	for _, i := range m.committing { // the other nodes hold nothing back and defer nothing
		nd := &m.nodes[i]
		if nd.held > 0 {
			m.push(nd, nd.held)
		}
		nd.pendingIn = nd.pendingNext
		if nd.background && nd.write && nd.parent >= 0 {
			// A job whose write failed goes back to its queue: delivery is at least once.
			if back := nd.rejected + nd.errors + nd.lost; back > 0 {
				m.push(&m.nodes[nd.parent], back)
			}
		}
	}
	for _, i := range m.consumers {
		nd := &m.nodes[i]
		if back := nd.errors + nd.lost; back > 0 {
			// Consumer errors: the job stays queued too.
			m.push(nd, back)
		}
	}
}

// scheduleRetries turns this tick's failed attempts into retries, generation by generation,
// each of the request type that failed: a type's losses are its generations' in the shares
// its attempts arrived in (genShare). The losses whose retries, sent at once, are refused at
// once (st.lostAtOnce) fail for good now; it returns how many such retries were sent.
func (m *model) scheduleRetries(t int, failed, fresh float64, st *runState) float64 {
	maxR := len(st.retryDelay) - 1
	st.tot.scheduled, st.tot.dropped = failed > 0, 0
	if failed <= 0 {
		return 0
	}
	wantLater, wantAtOnce, dropped := 0.0, 0.0, 0.0
	var left [numClasses]float64  // per type whose losses are retried at once: retries left an attempt
	var later [numClasses]float64 // per type: the losses retried in a later tick
	for class, lost := range st.lostByType {
		if lost == 0 {
			continue
		}
		atOnce := st.lostAtOnce[class]
		later[class] = nonNegative(lost - atOnce - st.lostInTick[class])
		for g := range maxR {
			wantLater += later[class] * st.genShare[retrySlot(g, Class(class))]
		}
		dropped += later[class]*st.genShare[retrySlot(maxR, Class(class))] + atOnce
		dropped += nonNegative(st.lostInTick[class] - st.retriedInTick[class])
		if atOnce > 0 {
			left[class] = st.attemptsLeft(Class(class))
			wantAtOnce += atOnce * left[class]
		}
	}
	scale := 1.0
	if want, budget := wantLater+wantAtOnce, m.v.cfg.Client.RetryBudget; budget > 0 {
		// The retries already sent within the tick (failedatonce.go) came first.
		allowed := budget * fresh
		for _, sent := range st.retriedInTick {
			allowed -= sent
		}
		allowed = nonNegative(allowed)
		if want > allowed {
			scale = allowed / want
		}
	}
	st.tot.dropped = dropped + wantLater*(1-scale)
	clear(st.retryAmount)
	for g := 1; g <= maxR; g++ {
		due := st.retries[(t+st.retryDelay[g])%len(st.retries)]
		for class, later := range later {
			if later == 0 {
				continue
			}
			// Retries are counted in whole 2⁻²⁰ths of a request. Types that fail alike
			// otherwise feed each other rounding that wanders in the last bits of a retry
			// loop standing still, and its ticks, never the same twice, are never repeated
			// (state.go); a millionth of a request moves no figure.
			i := retrySlot(g, Class(class))
			amount := toRetryGrain(later * st.genShare[i-requestTypes] * scale)
			st.retryAmount[i] = amount
			due[i] += amount
		}
	}
	if wantAtOnce == 0 {
		return 0
	}
	return m.sendRetriesAtOnce(st, &left, scale)
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
