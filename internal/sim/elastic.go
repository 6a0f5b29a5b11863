package sim

import "math"

// The elastic and protective components of seed simulation-design: an API gateway with a
// rate limit and a circuit breaker, serverless functions with cold starts, and container
// pools under a horizontal autoscaler.

type gateState struct {
	rateLimit float64 // requests per second; 0 = none
	threshold float64 // downstream error rate that opens the breaker; 0 = no breaker
	probe     float64 // share let through while half-open
	openTicks int
	window    []float64 // ring of (failed, finished) pairs over the window, while closed
	// partial[2j], partial[2j+1]: the failed and finished sums of the window's pairs before
	// pair j, added in pair order. Writing pair j leaves the sums before it as they were, so
	// a tick re-adds only the pairs from j on, in the order the whole window was added in:
	// the same sums to the bit, for half the additions on average.
	partial     []float64
	pos         int
	state       Breaker
	during      Breaker // the state during the current tick, as reported
	openedUntil int     // tick at which an open breaker starts probing
}

func newGate(p paramValues, dt float64) *gateState {
	g := &gateState{rateLimit: p.f("rate_limit_rps"), threshold: p.f("breaker_error_threshold"),
		probe: p.f("breaker_probe_ratio"), state: BreakerClosed}
	g.openTicks = max(1, int(math.Round(p.f("breaker_open_sec")/dt)))
	g.window = make([]float64, 2*max(1, int(math.Round(p.f("breaker_window_sec")/dt))))
	g.partial = make([]float64, len(g.window)+2)
	return g
}

// admit is how many of in requests the gateway lets in this tick.
func (g *gateState) admit(in, dt float64) float64 {
	switch g.state {
	case BreakerOpen:
		return 0 // 503 at once; nothing reaches the services behind
	case BreakerHalfOpen:
		in *= g.probe
	}
	if g.rateLimit > 0 {
		in = min(in, g.rateLimit*dt) // the excess gets 429
	}
	return in
}

// observe feeds the tick's downstream outcome to the breaker and moves its state.
func (g *gateState) observe(t int, failed, finished float64) {
	if g.threshold <= 0 {
		return
	}
	switch g.state {
	case BreakerOpen:
		if t+1 >= g.openedUntil {
			g.state = BreakerHalfOpen
		}
	case BreakerHalfOpen:
		if finished <= 0 {
			return
		}
		if failed/finished > g.threshold {
			g.open(t)
		} else {
			g.state = BreakerClosed
			clear(g.window)
			clear(g.partial)
		}
	case BreakerClosed:
		w, ps := g.window, g.partial
		k := 2 * g.pos
		g.pos = (g.pos + 1) % (len(w) / 2)
		f, d := ps[len(w)], ps[len(w)+1]
		// A pair written as it was (a steady downstream) leaves every sum as it was.
		if math.Float64bits(w[k]) != math.Float64bits(failed) || math.Float64bits(w[k+1]) != math.Float64bits(finished) {
			w[k], w[k+1] = failed, finished
			f, d = ps[k], ps[k+1]
			for ; k < len(w); k += 2 {
				f, d = f+w[k], d+w[k+1]
				ps[k+2], ps[k+3] = f, d
			}
		}
		if d > 0 && f/d > g.threshold {
			g.open(t)
		}
	}
}

func (g *gateState) open(t int) {
	g.state = BreakerOpen
	g.openedUntil = t + 1 + g.openTicks
}

// scalerState is a horizontal autoscaler (seed simulation-design's HPA): it wants
// ceil(replicas × utilisation ÷ target) replicas, gets more only after the scale-out delay,
// and gives some back only after utilisation has stayed low for the scale-in delay.
type scalerState struct {
	replicas   int
	pending    int // replicas ordered, serving from readyAt
	readyAt    float64
	lowSince   float64 // -1 while utilisation is not low
	lowDesired int     // the most replicas wanted while low
	// warm: the autoscaler has settled on the run's first traffic. Until then its
	// decisions take effect at once, as if made before the run: a run starts in the middle
	// of a day whose traffic has been flowing, so the pool is already scaled for it.
	warm bool

	// The pool's parameters, read once: the scaler runs every tick.
	target, outDelay, inDelay, queuePerReplica float64
	minReplicas, maxReplicas, concurrency      int
}

func newScaler(p paramValues) *scalerState {
	return &scalerState{replicas: p.i("min_replicas"), lowSince: -1,
		target: p.f("target_utilization"), outDelay: p.f("scale_out_delay_sec"), inDelay: p.f("scale_in_delay_sec"),
		queuePerReplica: p.f("queue_per_replica"), minReplicas: p.i("min_replicas"), maxReplicas: p.i("max_replicas"),
		concurrency: p.i("concurrency")}
}

func (m *model) autoscale(c *component, t0 float64) {
	s := c.scaler
	pl := &m.pools[c.pools[0]]
	util := pl.util
	if pl.failed {
		util = 0
	}
	// The utilisation was measured on the replicas that served the last tick: the wish is
	// computed from those, before replicas that become ready now join.
	desired := int(math.Ceil(float64(s.replicas)*util/s.target - 1e-9))
	desired = min(max(desired, s.minReplicas), s.maxReplicas)
	if s.pending > 0 && t0 >= s.readyAt {
		s.replicas, s.pending = s.pending, 0
	}
	if !s.warm && t0 > 0 { // a tick has been measured
		if desired > s.replicas {
			s.replicas = desired
		} else {
			s.warm = true
		}
	}
	switch {
	case desired > s.replicas:
		s.lowSince = -1
		if s.pending == 0 {
			s.readyAt = t0 + s.outDelay
		}
		s.pending = max(s.pending, desired)
	case desired < s.replicas && s.pending == 0:
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

// fnState tracks a serverless function's warm instances: an instance used within the idle
// timeout stays warm; every instance beyond them starts cold, and its first invocation pays
// the cold start (taken as exponentially distributed with mean cold_start_ms).
type fnState struct {
	coldSec, maxExecSec float64
	window              int        // ticks an idle instance is kept
	maxNeed             slidingMax // concurrent executions needed, over the window
	tick                int
	warm                float64
	coldShare           float64 // share of this tick's invocations that start cold
}

func newFn(p paramValues, dt float64) *fnState {
	w := max(1, int(math.Ceil(p.f("idle_timeout_sec")/dt)))
	return &fnState{coldSec: p.f("cold_start_ms") / 1000, maxExecSec: p.f("max_execution_ms") / 1000,
		window: w, maxNeed: newSlidingMax(w)}
}

// shape adds cold starts and execution-time limits to a function's pool after queueing.
func (f *fnState) shape(pl *pool, dt float64) {
	invocations := pl.processed
	execSec := pl.serviceSec + pl.holdSec
	need := min(invocations/dt*execSec, float64(pl.workers)) // Little's law
	f.coldShare = 0
	if invocations > 0 && need > f.warm {
		f.coldShare = min(1, (need-f.warm)/invocations)
	}
	if f.coldSec > 0 && f.coldShare > 0 {
		pl.stage.WaitProb, pl.stage.WaitRate = f.coldShare, 1/f.coldSec
	}
	// Executions longer than the limit are killed: with exponential execution times that
	// is e^(−limit ÷ mean) of them.
	pl.errRate = min(1, pl.errRate+math.Exp(-f.maxExecSec/execSec))
}

// settle records the tick's need; instances idle longer than the timeout are reclaimed, so
// the warm instances are the most needed at once within the timeout.
func (f *fnState) settle(pl *pool, dt float64) {
	need := min(pl.processed/dt*(pl.serviceSec+pl.holdSec), float64(pl.workers))
	f.warm = f.maxNeed.push(f.tick, need, f.window)
	f.tick++
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

// gateOutcome sums what happened below a gateway node this tick: requests that failed
// (refused, errors, timeouts) and all that finished. A node's subtree is the run of nodes
// after it up to subtreeEnd (routes are built depth first).
func (m *model) gateOutcome(n int, st *runState) (failed, finished float64) {
	below := m.nodes[n+1 : m.nodes[n].subtreeEnd]
	lates := st.lat.late[n+1:][:len(below)] // the same nodes' shares answered late
	for i := range below {
		nd := &below[i]
		late := nd.terminal * lates[i]
		f := nd.rejected + nd.pushback + nd.errors + nd.lost + late + nd.expired
		failed += f
		finished += f + nd.terminal - late
	}
	return failed, finished
}
