package sim

import "math"

// The elastic and protective components of seed simulation-design: an API gateway with a
// rate limit and a circuit breaker, serverless functions with cold starts, and container
// pools under a horizontal autoscaler.

type gateState struct {
	rateLimit float64 // requests per second; 0 = none
	threshold float64 // downstream error rate that opens the breaker; 0 = no breaker
	probe     float64 // share let through while half-open
	openSec   float64
	timeout   float64   // the client's timeout (s): how long the gateway waits for an answer
	window    []float64 // ring of (failed, finished) pairs over the window, while closed
	// partial[2j], partial[2j+1]: the failed and finished sums of the window's pairs before
	// pair j, added in pair order. Writing pair j leaves the sums before it as they were, so
	// a tick re-adds only the pairs from j on, in the order the whole window was added in:
	// the same sums to the bit, for half the additions on average.
	partial []float64
	pos     int
	state   Breaker // the state at the end of the tick computed last
	during  Breaker // the state at the start of the current tick, as reported
	opens   uint8   // times the breaker opened during the current tick, as reported (at most 10 s ÷ 0.1 s)

	// The breaker changes state at times within a tick (s on the run's clock), as the
	// requests that move it answer.
	changedAt float64 // the last change of state: answers to requests sent before it are not judged
	openUntil float64 // open: when it starts probing
	credit    float64 // half-open: probes owed, one for every 1 ÷ probe requests at the door
	probeAt   float64 // half-open: when the first probe went; -1 before it has
	verdictAt float64 // half-open: when the first probe to be judged is judged; -1 while unknown
	verdictOK bool    // half-open: that probe was answered
	share     float64 // of the current tick's requests at the door, the part the breaker lets in
	// filtering: the last tick's window left out answers to requests sent before the last
	// change of state, a filter that depends on the time since it.
	filtering bool
	nowSec    []float64 // scratch: per node below, a request sent now takes this long to get there

	// The rate limit is a token bucket, as real gateways' are: refilled at rateLimit a
	// second, holding at most one second's tokens, full at the start. tokens is what it holds
	// at the start of the tick; admitted, what the last computed tick let in (a tick's passes
	// over the pools set it, the last one's stands), which a repeated tick spends again.
	tokens, admitted float64
}

func newGate(p paramValues, dt, timeout float64) *gateState {
	g := &gateState{rateLimit: p.f("rate_limit_rps"), threshold: p.f("breaker_error_threshold"),
		probe: p.f("breaker_probe_ratio"), openSec: p.f("breaker_open_sec"), timeout: timeout,
		state: BreakerClosed, probeAt: -1, verdictAt: -1, share: 1}
	g.tokens = g.rateLimit // a second's tokens: the bucket is full
	g.window = make([]float64, 2*max(1, int(math.Round(p.f("breaker_window_sec")/dt))))
	g.partial = make([]float64, len(g.window)+2)
	return g
}

// admit is how many of in requests the gateway lets in this tick: the breaker's share, and
// of that no more than the bucket holds plus what it refills over the tick. Requests coming
// in evenly over the tick drain the bucket before any is refused, so a burst after a quiet
// spell passes up to a second's worth over the rate before the limit bites.
func (g *gateState) admit(in, dt float64) float64 {
	in *= g.share // an open breaker answers 503 at once; half-open it lets a probe share in
	if g.rateLimit > 0 {
		in = min(in, g.tokens+g.rateLimit*dt) // the excess gets 429
	}
	return in
}

// spend takes what the tick let in out of the bucket and refills it for the tick, up to a
// second's tokens. A bucket full under a load below the rate stays full, and one emptied by
// a load above it stays empty: both the same from tick to tick, to the bit, so a repeated
// tick, spending what the tick it repeats let in, leaves it as that tick did.
func (g *gateState) spend(dt float64) {
	if g.rateLimit > 0 {
		g.tokens = min(g.rateLimit, max(0, g.tokens+g.rateLimit*dt-g.admitted))
	}
}

// begin walks the breaker through the tick [t0, t1) as far as what is known at its start
// decides: an open breaker starts probing at openUntil, a half-open one whose first probe
// has been judged closes or opens again at verdictAt. It sets the share of the tick's
// requests let in: none while open, the probe share while half-open, all while closed.
func (g *gateState) begin(t0, t1 float64) {
	g.during, g.opens = g.state, 0
	if g.state == BreakerOpen && g.changedAt == t0 {
		g.opens = 1 // opened by the last tick's window, at this tick's start
	}
	if g.threshold <= 0 {
		g.share = 1
		return
	}
	let, at := 0.0, t0
	for at < t1 {
		switch g.state {
		case BreakerOpen:
			end := min(g.openUntil, t1)
			at = end
			if g.openUntil < t1 {
				g.halfOpen(g.openUntil)
			}
		case BreakerHalfOpen:
			end := t1
			if g.verdictAt >= 0 && g.verdictAt < t1 {
				end = g.verdictAt
			}
			let += g.probe * (end - at)
			at = end
			if end < t1 {
				g.judge()
			}
		default:
			let += t1 - at
			at = t1
		}
	}
	g.share = let / (t1 - t0)
}

func (g *gateState) halfOpen(at float64) {
	g.state, g.changedAt = BreakerHalfOpen, at
	g.credit, g.probeAt, g.verdictAt = 0, -1, -1
}

// judge applies the first probe's verdict, at verdictAt.
func (g *gateState) judge() {
	if !g.verdictOK {
		g.open(g.verdictAt)
		g.opens++
		return
	}
	g.state, g.changedAt = BreakerClosed, g.verdictAt
	clear(g.window)
	clear(g.partial)
}

func (g *gateState) open(at float64) {
	g.state, g.changedAt, g.openUntil = BreakerOpen, at, at+g.openSec
	g.probeAt, g.verdictAt = -1, -1
}

// gateTick is what a gateway's breaker reads of one tick below it.
type gateTick struct {
	t0, t1 float64
	door   float64 // requests at the door a second, before the breaker and the rate limit
	sent   float64 // requests it let through
	// The tick's outcomes below, by how long after it was sent each is known: refused or
	// failed at once, timed out (at the client's deadline), answered (after answeredSec).
	failedNow, timedOut, answered float64
	answeredSec                   float64
	// nowSec: how long a request sent now takes to be answered below, as the queues stand.
	nowSec float64
}

// observe feeds the tick's downstream outcome to the breaker and moves its state. A probe
// is judged when its answer comes, at a time within a tick: at once if refused or failed,
// at the client's deadline if it times out, after its response time if answered; the first
// probe to be judged decides. A closed breaker's window counts only the answers to requests
// sent since its last change of state.
func (g *gateState) observe(o gateTick) {
	if g.threshold <= 0 {
		return
	}
	g.filtering = false
	switch g.state {
	case BreakerHalfOpen:
		g.probe1(o)
		if g.verdictAt >= 0 && g.verdictAt < o.t1 {
			g.judge()
			if g.state == BreakerClosed {
				// The rest of the tick, closed, is judged with the window.
				g.observeClosed(o)
			}
		}
	case BreakerClosed:
		g.observeClosed(o)
	}
}

// probe1 finds when the tick's probes are judged: the first probe's verdict, or an earlier
// one of a later probe refused or failed at once.
func (g *gateState) probe1(o gateTick) {
	from := max(o.t0, g.changedAt)
	rate := g.probe * o.door // probes a second
	if rate <= 0 || from >= o.t1 {
		return
	}
	if g.probeAt < 0 {
		// The probe that makes up the owed credit goes at the door's rate.
		if need := (1 - g.credit) / rate; from+need < o.t1 {
			g.probeAt = from + need
		} else {
			g.credit += rate * (o.t1 - from)
			return
		}
	}
	sent := o.sent
	if sent <= 0 {
		return
	}
	failNow := min(1, o.failedNow/sent) // of what is sent now, refused or failed at once
	if g.verdictAt < 0 {
		switch {
		case failNow > g.threshold:
			g.verdictAt, g.verdictOK = g.probeAt, false
		case o.nowSec >= g.timeout:
			g.verdictAt, g.verdictOK = g.probeAt+g.timeout, false
		default:
			g.verdictAt, g.verdictOK = g.probeAt+o.nowSec, true
		}
	}
	// A probe already waiting below is ahead of a request sent at this tick's start, so
	// it is answered by the time that one would be, as the queues now stand: a probe sent
	// into a slow call answers sooner once the call is fast again.
	if g.probeAt < o.t0 && o.t0+o.nowSec < min(g.verdictAt, g.probeAt+g.timeout) {
		g.verdictAt, g.verdictOK = o.t0+o.nowSec, true
	}
	// A later probe refused at once is judged before the first one answers.
	if failNow > 0 {
		start := max(from, g.probeAt)
		if at := start + 1/(rate*failNow); at < g.verdictAt && at < o.t1 {
			g.verdictAt, g.verdictOK = at, false
		}
	}
}

// observeClosed writes the tick's pair into the window, counting of each kind of outcome
// only what was sent since the last change of state, and opens the breaker at the tick's end
// if the window's failed share is over the threshold.
func (g *gateState) observeClosed(o gateTick) {
	dt := o.t1 - o.t0
	since := func(age float64) float64 { // the part of outcomes known age after sending
		if math.IsInf(age, 1) {
			return 1 // no deadline: nothing times out
		}
		v := (o.t1 - age - g.changedAt) / dt
		if v >= 1 {
			return 1
		}
		g.filtering = true
		return max(0, v)
	}
	now, late, ok := since(0), since(g.timeout), since(o.answeredSec)
	failed := o.failedNow*now + o.timedOut*late
	finished := failed + o.answered*ok
	w, ps := g.window, g.partial
	k := 2 * g.pos
	g.pos = (g.pos + 1) % (len(w) / 2)
	f, d := ps[len(w)], ps[len(w)+1]
	oldF, oldD := w[k], w[k+1]
	// A pair written as it was (a steady downstream) leaves every sum as it was.
	if math.Float64bits(w[k]) != math.Float64bits(failed) || math.Float64bits(w[k+1]) != math.Float64bits(finished) {
		w[k], w[k+1] = failed, finished
		f, d = ps[k], ps[k+1]
		// The pairs from k on and their sums, resliced to one length (ps has a pair more
		// than w): the loop indexes both with no bounds check.
		pairs := w[k:]
		sums := ps[k+2:][:len(pairs)]
		for j := 0; j < len(pairs)-1; j += 2 {
			f, d = f+pairs[j], d+pairs[j+1]
			sums[j], sums[j+1] = f, d
		}
	}
	// A breaker opens on failed requests: less than one in its window is no opening, however
	// few answers have come back to weigh it against.
	if f >= 1 && f/d > g.threshold {
		// The tick's answers come in through it as the pair they replace goes out: the
		// window's failed share crosses the threshold where that line does.
		over := func(x float64) float64 {
			return f - failed + (1-x)*oldF + x*failed - g.threshold*(d-finished+(1-x)*oldD+x*finished)
		}
		x := 0.0
		if a, b := over(0), over(1); a < 0 {
			x = a / (a - b)
		}
		at := o.t0 + x*dt
		if at <= g.changedAt {
			at = o.t1 // the window was written closed in an earlier part of the tick
		}
		g.open(at)
		if at < o.t1 {
			g.opens++
		}
	}
}

// scalerState is a horizontal autoscaler (seed simulation-design's HPA): it wants
// ceil(replicas × utilisation ÷ target) replicas on the last second's reading, gets more
// only after the scale-out delay, and gives some back only after utilisation has stayed low
// for the scale-in delay.
type scalerState struct {
	replicas int
	// orders are the replicas ordered and still starting, oldest first: each serves the
	// scale-out delay after it was made, so a replica ordered while others start does not
	// join them sooner.
	orders     []scaleOrder
	lowSince   float64 // -1 while utilisation is not low
	lowDesired int     // the most replicas wanted while low
	// warm: the autoscaler has settled on the run's first traffic. Until then its
	// decisions take effect at once, as if made before the run: a run starts in the middle
	// of a day whose traffic has been flowing, so the pool is already scaled for it.
	warm bool
	// busy is the workers busy on average in each tick of the last second, a ring from
	// busyNext, of which busyFilled are measured: what the autoscaler reads.
	busy                 []float64
	busyNext, busyFilled int

	// The pool's parameters, read once: the scaler runs every tick.
	target, outDelay, inDelay, queuePerReplica float64
	minReplicas, maxReplicas, concurrency      int
}

// scaleOrder is an order of replicas: the pool has replicas in all once they serve, at at.
type scaleOrder struct {
	replicas int
	at       float64
}

// readingSec is how long a stretch the autoscaler's reading averages, as a real autoscaler
// averages its replicas' CPU over a window: a second.
const readingSec = 1

func newScaler(p paramValues, dt float64) *scalerState {
	s := &scalerState{replicas: p.i("min_replicas"), lowSince: -1,
		target: p.f("target_utilization"), outDelay: p.f("scale_out_delay_sec"), inDelay: p.f("scale_in_delay_sec"),
		queuePerReplica: p.f("queue_per_replica"), minReplicas: p.i("min_replicas"), maxReplicas: p.i("max_replicas"),
		concurrency: p.i("concurrency")}
	s.busy = make([]float64, max(1, int(math.Round(readingSec/dt))))
	s.orders = make([]scaleOrder, 0, s.maxReplicas) // each order adds a replica at least
	return s
}

func (m *model) autoscale(c *component, t0 float64) {
	s := c.scaler
	pl := &m.pools[c.pools[0]]
	// It reads the busy share of the workers, as a real autoscaler reads its replicas' CPU: a
	// saturated pool reads 100%, not the demand it refuses, so it grows by at most 1 ÷ target
	// a scale-out delay.
	if t0 > 0 { // a tick has been measured
		util := min(pl.util, 1)
		if pl.failed {
			util = 0
		}
		s.record(util * float64(pl.workers))
	}
	// Over the last second, ceil(replicas × utilisation ÷ target) is the busy workers over
	// those a replica keeps busy at the target: the replicas that served, not those that
	// join now.
	desired := int(math.Ceil(s.meanBusy()/(float64(s.concurrency)*s.target) - 1e-9))
	desired = min(max(desired, s.minReplicas), s.maxReplicas)
	for len(s.orders) > 0 && t0 >= s.orders[0].at {
		s.replicas = s.orders[0].replicas
		s.orders = s.orders[:copy(s.orders, s.orders[1:])]
	}
	if !s.warm && t0 > 0 {
		if desired > s.replicas {
			s.replicas = desired
		} else {
			s.warm = true
		}
	}
	ordered := s.replicas
	if n := len(s.orders); n > 0 {
		ordered = s.orders[n-1].replicas
	}
	switch {
	case desired > s.replicas:
		s.lowSince = -1
		if desired > ordered {
			s.orders = append(s.orders, scaleOrder{desired, t0 + s.outDelay})
		}
	case desired < s.replicas && len(s.orders) == 0:
		if s.lowSince < 0 {
			s.lowSince, s.lowDesired = t0, desired
		}
		s.lowDesired = max(s.lowDesired, desired)
		if t0-s.lowSince >= s.inDelay {
			s.replicas, s.lowSince = s.lowDesired, -1
		}
	default:
		s.lowSince = -1
	}
	pl.workers, pl.rooms = s.replicas*s.concurrency, s.replicas
	pl.buffer = float64(s.replicas) * s.queuePerReplica
	c.units = float64(s.replicas)
}

// record keeps the workers busy on average in the tick just measured.
func (s *scalerState) record(busy float64) {
	s.busy[s.busyNext] = busy
	s.busyNext = (s.busyNext + 1) % len(s.busy)
	s.busyFilled = min(s.busyFilled+1, len(s.busy))
}

// meanBusy is the workers busy on average over the last second's measured ticks.
func (s *scalerState) meanBusy() float64 {
	if s.busyFilled == 0 {
		return 0
	}
	sum := 0.0
	for _, b := range s.busy {
		sum += b
	}
	return sum / float64(s.busyFilled)
}

// fnState tracks a serverless function's instances as a real platform keeps them: an
// instance used within the idle timeout stays warm and is reused; an invocation that finds
// no warm instance free starts a new one, which first runs its cold start (taken as
// exponentially distributed with mean cold_start_ms), and the cold start counts against the
// function's concurrency: the new instance holds its slot for the cold start and the first
// execution together. While new instances warm, every further invocation that finds no warm
// instance free starts another, until the concurrency runs out, so a spike fills the slots
// with cold starts and throttles until they are ready.
type fnState struct {
	coldSec, maxExecSec float64
	window              int        // ticks an idle instance is kept
	maxNeed             slidingMax // instances in use at once (executing or starting), over the window
	tick                int
	warm                float64 // instances kept: the most in use at once within the idle timeout
	// starting are the cohorts of instances still in their first invocation (cold start
	// and execution), oldest first.
	starting []fnCohort
	// This tick's, from its start (coldStarts): the invocations that start a new instance,
	// when their first invocations end, and the instances still starting from earlier ticks.
	started, startedUntil, warming float64
	coldShare                      float64 // share of this tick's invocations that start cold
	// quiet: this tick named no time. No instance was starting or started, so its refusals,
	// if any, were taken over the tick in one piece, and the next tick on the same state and
	// inputs is the same computation (timeInvariant).
	quiet bool
}

// fnCohort is the instances started in one tick, holding their slots until the first
// invocation ends, until seconds from the run's start.
type fnCohort struct {
	n, until float64
}

func newFn(p paramValues, dt float64) *fnState {
	w := max(1, int(math.Ceil(p.f("idle_timeout_sec")/dt)))
	return &fnState{coldSec: p.f("cold_start_ms") / 1000, maxExecSec: p.f("max_execution_ms") / 1000,
		window: w, maxNeed: newSlidingMax(w)}
}

// coldStarts decides, before the tick's admission, how many of its invocations start a new
// instance. The instances ready are the warm ones not still starting; invocations beyond
// what they serve (λ − ready ÷ execution time) start new instances for as long as it takes
// a new one to be ready (the tick, or the cold start and first execution if shorter), in as
// many slots as are free. Each holds its slot for the cold start and its first execution.
func (f *fnState) coldStarts(pl *pool, lambda, dt float64) {
	execSec := pl.serviceSec + pl.holdSec
	t0 := float64(f.tick) * dt
	warming := 0.0
	for _, c := range f.starting {
		if c.until > t0 {
			warming += c.n
		}
	}
	ready := max(0, f.warm-warming)
	overflow := max(0, lambda-ready/execSec)
	free := max(0, float64(pl.workers)-ready-warming)
	f.started = min(free, overflow*min(dt, f.coldSec+execSec), pl.in)
	f.warming = warming
	// A time is carried only while instances start: a tick with none leaves the same state
	// at any time, and can be repeated (state.go).
	f.startedUntil = 0
	if f.started > 0 {
		f.startedUntil = t0 + f.coldSec + execSec
	}
	f.quiet = !(f.started > 0) && len(f.starting) == 0
}

// throttled is the share of a function's invocations refused (429). Those not starting a
// new instance find the slots the starting instances do not hold: a loss system (Erlang B,
// between the whole numbers of slots around a fractional count) whose slots come free as
// each cohort's first invocation ends, so the tick is taken piece by piece between those
// times, each piece with its own slots, rather than with their mean (loss is convex in the
// slots: averaging them would refuse too little).
func (f *fnState) throttled(pl *pool, mu, cv2, dt float64) float64 {
	if !(pl.in > 0) {
		return 0
	}
	rest := pl.in - f.started
	a := rest / dt / mu
	t0 := float64(f.tick) * dt
	t1 := t0 + dt
	loss, from := 0.0, t0
	memo := lossMemo{a: a, cv2: cv2}
	for from < t1 {
		held, next := 0.0, t1
		for _, c := range f.starting {
			if c.until > from {
				held += c.n
				next = min(next, c.until)
			}
		}
		if f.started > 0 && f.startedUntil > from {
			held += f.started
			next = min(next, f.startedUntil)
		}
		weight := (next - from) / dt
		if from == t0 && next == t1 {
			// The tick in one piece weighs exactly 1, not (t1 − t0) ÷ dt, which differs from 1
			// in its last bits and would make the loss depend on the tick's number.
			weight = 1
		}
		loss += weight * memo.fracLoss(float64(pl.workers)-held)
		from = next
	}
	return rest * loss / pl.in
}

// lossMemo is regularLoss at one offered load and variation, kept for the slot counts the
// pieces of a tick ask for: neighbouring pieces share whole numbers of slots, and each
// count is worked out once.
type lossMemo struct {
	a, cv2 float64
	n      int
	slots  [4]int
	loss   [4]float64
}

func (lm *lossMemo) regularLoss(c int) float64 {
	for k := range min(lm.n, len(lm.slots)) {
		if lm.slots[k] == c {
			return lm.loss[k]
		}
	}
	loss := regularLoss(c, lm.a, lm.cv2)
	k := lm.n % len(lm.slots)
	lm.slots[k], lm.loss[k] = c, loss
	lm.n++
	return loss
}

// fracLoss is regularLoss for a fractional number of slots, between the whole numbers
// around it.
func (lm *lossMemo) fracLoss(slots float64) float64 {
	slots = max(0, slots)
	lo := math.Floor(slots)
	loss := lm.regularLoss(int(lo))
	if frac := slots - lo; frac > 0 {
		loss += frac * (lm.regularLoss(int(lo)+1) - loss)
	}
	return loss
}

// shape adds cold starts and execution-time limits to a function's pool after queueing.
func (f *fnState) shape(pl *pool, dt float64) {
	execSec := pl.serviceSec + pl.holdSec
	f.coldShare = 0
	if pl.processed > 0 {
		f.coldShare = min(1, f.started/pl.processed)
	}
	if f.coldSec > 0 && f.coldShare > 0 {
		pl.stage.WaitProb, pl.stage.WaitRate = f.coldShare, 1/f.coldSec
	}
	// Executions longer than the limit are killed: with exponential execution times that
	// is e^(−limit ÷ mean) of them.
	pl.errRate = min(1, pl.errRate+math.Exp(-f.maxExecSec/execSec))
}

// settle records the instances in use this tick (executing, or starting since this tick
// or earlier) and the tick's new cohort; instances idle longer than the timeout are
// reclaimed, so the warm instances are the most in use at once within the timeout.
func (f *fnState) settle(pl *pool, dt float64) {
	execSec := pl.serviceSec + pl.holdSec
	executing := max(0, pl.processed-f.started) / dt * execSec // Little's law
	inUse := min(executing+f.warming+f.started, float64(pl.workers))
	f.warm = f.maxNeed.push(f.tick, inUse, f.window)
	t0 := float64(f.tick) * dt
	f.tick++
	t1 := t0 + dt
	kept := f.starting[:0]
	for _, c := range f.starting {
		if c.until > t1 {
			kept = append(kept, c)
		}
	}
	f.starting = kept
	if until := t0 + f.coldSec + execSec; f.started > 0 && until > t1 {
		f.starting = append(f.starting, fnCohort{f.started, until})
	}
}

// slidingMax is the maximum of the values pushed in the last window ticks, kept in a
// monotone deque (amortised O(1) a push) on a ring buffer allocated once.
type slidingMax struct {
	ticks      []int
	vals       []float64
	head, size int
}

func newSlidingMax(window int) slidingMax {
	return slidingMax{ticks: make([]int, window+1), vals: make([]float64, window+1)}
}

func (s *slidingMax) push(tick int, v float64, window int) float64 {
	n := len(s.vals)
	for s.size > 0 && s.vals[(s.head+s.size-1)%n] <= v {
		s.size--
	}
	i := (s.head + s.size) % n
	s.ticks[i], s.vals[i] = tick, v
	s.size++
	for s.ticks[s.head] <= tick-window {
		s.head = (s.head + 1) % n
		s.size--
	}
	return s.vals[s.head]
}

// expires reports whether the push of tick reclaims an entry older than the latest, which
// the same value pushed again does not replace.
func (s *slidingMax) expires(tick, window int) bool {
	return s.size > 1 && s.ticks[s.head] <= tick-window
}

// gateTick sums what happened below a gateway this tick, over its nodes (one per request
// class): what was let through, what failed at once, timed out or was answered. A node's
// subtree is the run of nodes after it up to subtreeEnd (routes are built depth first,
// parents first).
func (m *model) gateTick(c *component, t int, st *runState) gateTick {
	pl := &m.pools[c.pools[0]]
	o := gateTick{t0: float64(t) * m.dt, t1: float64(t+1) * m.dt, door: (pl.in + pl.gated) / m.dt}
	var answeredTime float64
	for _, n := range pl.nodes {
		below := m.nodes[n+1 : m.nodes[n].subtreeEnd]
		lates := st.lat.late[n+1:][:len(below)] // the same nodes' shares answered late
		from := m.nodes[n].pathMean
		for i := range below {
			nd := &below[i]
			if nd.parent == n {
				o.sent += nd.in
			}
			late := nd.terminal * lates[i]
			// Retries sent at once and refused again passed the gateway as attempts (atonce.go).
			o.sent += nd.refusedAtOnce
			o.failedNow += nd.rejected + nd.pushback + nd.errors + nd.lost + nd.refusedAtOnce
			o.timedOut += late + nd.expired
			o.answered += nd.terminal - late
			answeredTime += (nd.terminal - late) * (nd.pathMean - from)
		}
	}
	if o.answered > 0 {
		o.answeredSec = answeredTime / o.answered
	}
	o.nowSec = math.NaN() // known only when a probe asks (gateNow)
	return o
}

// gateNow is how long a request sent below a gateway now would take to be answered, as the
// queues stand: each hop's wait for a call arriving now, as a held call's, summed along its
// path and weighted by where the tick's answers came from (or, with none, where what was
// sent ended up). +Inf when nothing went anywhere.
func (m *model) gateNow(c *component, st *runState) float64 {
	pl := &m.pools[c.pools[0]]
	var nowTime, nowWeight, leafTime, leafWeight float64
	for _, n := range pl.nodes {
		below := m.nodes[n+1 : m.nodes[n].subtreeEnd]
		now := c.gate.scratch(len(below))
		for i := range below {
			nd := &below[i]
			now[i] = m.hopHoldMean(n+1+i, st)
			if p := nd.parent; p > n {
				now[i] += now[p-n-1]
			}
			nowTime, nowWeight = nowTime+nd.terminal*now[i], nowWeight+nd.terminal
			if len(nd.children) == 0 {
				leafTime, leafWeight = leafTime+nd.in*now[i], leafWeight+nd.in
			}
		}
	}
	switch {
	case nowWeight > 0:
		return nowTime / nowWeight
	case leafWeight > 0:
		return leafTime / leafWeight
	}
	return math.Inf(1)
}

// scratch is the gateway's per-node scratch for n nodes.
func (g *gateState) scratch(n int) []float64 {
	if cap(g.nowSec) < n {
		g.nowSec = make([]float64, n)
	}
	return g.nowSec[:n]
}
