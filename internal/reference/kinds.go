package reference

// The reference's elastic kinds and the calls between services (reference.md): a
// CDN's edge, serverless functions, container pools under an autoscaler, a database's read
// replicas, and an app whose requests go on to the services it calls.

import (
	"backpressure/internal/sim"
	"math"
)

// refCDNServiceSec is an edge's own time per request: the engine's constant for the kind,
// as refGatewayServiceSec is.
const refCDNServiceSec = 0.005

// refReplayCost is the share of a write's query time a replica spends replaying it (the
// parameter's documented 40%).
const refReplayCost = 0.4

// refFnFullCoreMB is the function memory that buys a full core (the parameter's document).
const refFnFullCoreMB = 1769

// refFlushable is a component whose hit ratio a flush empties: a cache or a CDN.
type refFlushable interface {
	flush(at, warm float64)
	warmup() float64
}

// refHitRatio is a cache's or an edge's hit ratio, rebuilt linearly after a flush.
type refHitRatio struct {
	target, warm        float64 // once warm; the warm-up after a flush by default
	flushedAt, flushDur float64
}

func (h *refHitRatio) at(now float64) float64 {
	since := now - h.flushedAt
	if math.IsInf(h.flushedAt, -1) || h.flushDur <= 0 || since >= h.flushDur {
		return h.target
	}
	return h.target * math.Max(0, since) / h.flushDur
}

func (h *refHitRatio) flush(at, warm float64) { h.flushedAt, h.flushDur = at, warm }
func (h *refHitRatio) warmup() float64        { return h.warm }

// refCDN answers a static request it holds at the edge, as many at once as come, and sends
// its misses and every other class to its origin.
type refCDN struct {
	m    *refModel
	comp *refComp
	refHitRatio
	// origin is the forwarding hop to the services behind it (nil: none).
	origin refHop
}

func (c *refCDN) call(r *refReq, reply func(refOutcome)) {
	if r.class != sim.ClassStatic || c.m.s.rng.Float64() >= c.at(c.m.s.now) {
		if c.origin == nil {
			r.lose(c.comp.id, sim.CauseNoRoute)
			reply(refErrored)
			return
		}
		c.origin.call(r, reply)
		return
	}
	c.comp.pools[0].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		reply(refOK)
	}})
}

// refSplit deals requests in turn to the services a component calls.
type refSplit struct {
	hops []refHop
	next int
}

func (s *refSplit) call(r *refReq, reply func(refOutcome)) {
	s.next++
	s.hops[s.next%len(s.hops)].call(r, reply)
}

// refCalls are where a compute component sends each request class after its own work:
// static requests it answers itself; reads through its cache to its database, or without
// either to the services it calls; writes to its database, or to the services; asynchronous
// writes to its queue, else as writes.
type refCalls struct {
	read, write, async refHop
}

func (c refCalls) of(class sim.Class) (refHop, bool) {
	switch class {
	case sim.ClassRead:
		return c.read, true
	case sim.ClassWrite:
		return c.write, true
	case sim.ClassAsyncWrite:
		return c.async, true
	}
	return nil, false // static: answered here
}

// refFunction is a serverless function: up to maxConc executions at once and no waiting
// room (beyond it, 429). An instance idle for less than the idle timeout is warm; an
// invocation takes the warm instance used last, or starts a new one and waits its cold
// start first. An execution (its own work and its calls, the cold start apart) still running
// at the limit is killed: an error.
type refFunction struct {
	m                        *refModel
	comp                     *refComp
	calls                    refCalls
	maxConc, running         int
	serviceSec, cold, idle   float64
	maxExec                  float64
	idleSince                []float64 // the warm idle instances, by when they became idle (the last used last)
	invocations, coldStarted int
	finished                 int // executions ended, answered or not
	// busyInt is running × time integrated up to busyAt: the execution-seconds so far.
	busyInt, busyAt float64
}

// setRunning changes the executions running, integrating their time up to now first.
func (f *refFunction) setRunning(n int) {
	now := f.m.s.now
	f.busyInt += float64(f.running) * (now - f.busyAt)
	f.busyAt, f.running = now, n
}

// busySeconds is the execution-seconds (cold starts included) the function has run so far.
func (f *refFunction) busySeconds() float64 {
	return f.busyInt + float64(f.running)*(f.m.s.now-f.busyAt)
}

func (f *refFunction) call(r *refReq, reply func(refOutcome)) {
	s := f.m.s
	if f.comp.failed {
		r.lose(f.comp.id, sim.CauseNodeFailed)
		reply(refErrored)
		return
	}
	if f.running >= f.maxConc {
		r.lose(f.comp.id, sim.CauseThrottled)
		reply(refRejected) // throttled
		return
	}
	f.setRunning(f.running + 1)
	f.invocations++
	// Instances idle past the timeout are reclaimed.
	for len(f.idleSince) > 0 && s.now-f.idleSince[0] >= f.idle {
		f.idleSince = f.idleSince[1:]
	}
	delay := 0.0
	if n := len(f.idleSince); n > 0 {
		f.idleSince = f.idleSince[:n-1]
	} else {
		delay = f.cold
		f.coldStarted++
	}
	done := false
	finish := func(o refOutcome) {
		if done {
			return
		}
		done = true
		f.setRunning(f.running - 1)
		f.idleSince = append(f.idleSince, s.now)
		f.finished++
		reply(o)
	}
	s.at(s.now+delay, func() {
		start := s.now
		if r.loss != nil {
			r.loss.at = f.comp.id
		}
		s.at(start+f.maxExec, func() {
			r.lose(f.comp.id, sim.CauseTimeouts) // killed at its limit
			finish(refErrored)
		})
		s.at(start+s.exp(f.serviceSec), func() {
			down, calls := f.calls.of(r.class)
			switch {
			case !calls:
				finish(refOK)
			case down == nil:
				r.lose(f.comp.id, sim.CauseNoRoute)
				finish(refErrored)
			default:
				down.call(r, finish)
			}
		})
	})
}

// refScaler is a container pool's horizontal autoscaler. Once a second it measures the
// pool's utilisation over that second (busy worker-seconds ÷ its workers' seconds) and
// wants ceil(replicas × utilisation ÷ target) replicas within the bounds. Wanting more than
// it has and has ordered, it orders the difference, each order serving after the scale-out
// delay; wanting fewer for the whole scale-in delay, it removes down to the most it wanted
// over that time (a removed replica takes no new request and finishes what it holds). A run
// starts in the middle of a day: until a second's wish asks for no more than it has, a wish
// takes effect at once.
type refScaler struct {
	a                         *refApp
	minR, maxR, conc          int
	target, outDelay, inDelay float64
	serviceSec                float64
	queue                     int
	ordered                   int     // replicas ordered, not yet serving
	lowSince                  float64 // -1 while the wish is not below the replicas
	lowWant                   int
	warm                      bool
	busySeen                  float64 // the replicas' busy worker-seconds at the last decision
}

func (sc *refScaler) decide(end float64) {
	s := sc.a.m.s
	busy := 0.0
	for _, pl := range sc.a.comp.pools {
		busy += pl.busySeconds()
	}
	replicas := len(sc.a.live)
	util := (busy - sc.busySeen) / float64(replicas*sc.conc)
	sc.busySeen = busy
	want := int(math.Ceil(float64(replicas)*util/sc.target - 1e-9))
	want = min(max(want, sc.minR), sc.maxR)
	switch {
	case !sc.warm && want > replicas:
		for range want - replicas {
			sc.a.addReplica()
		}
	case want > replicas+sc.ordered:
		sc.warm, sc.lowSince = true, -1
		n := want - replicas - sc.ordered
		sc.ordered += n
		s.at(s.now+sc.outDelay, func() {
			sc.ordered -= n
			for range n {
				sc.a.addReplica()
			}
		})
	case want < replicas && sc.ordered == 0:
		sc.warm = true
		if sc.lowSince < 0 {
			sc.lowSince, sc.lowWant = s.now, want
		}
		sc.lowWant = max(sc.lowWant, want)
		if s.now-sc.lowSince >= sc.inDelay {
			sc.a.removeReplicas(replicas - sc.lowWant)
			sc.lowSince = -1
		}
	default:
		sc.warm = true
		sc.lowSince = -1
	}
	if s.now+1 < end {
		s.at(s.now+1, func() { sc.decide(end) })
	}
}

// refDBNodes is a database with read replicas. Writes go to the primary, and once stored
// every replica replays each at 40% of its query time, in turn with its reads and whatever
// its room holds. Reads go to the primary and the replicas (or the replicas only) as the
// parameter documents, in proportion to their spare capacity: each read picks a node at
// random, weighted by its capacity (connections ÷ query time) less the writes and replays
// it took in the last whole second, a replay counted as the 40% of a query it costs.
type refDBNodes struct {
	m            *refModel
	comp         *refComp
	replicasOnly bool
	replaySec    float64
	second       int       // the second the counts are of
	nonReads     []float64 // per node: writes and replays taken this second, in queries' worth of work
	lastNonReads []float64 // per node: in the last whole second
}

// roll moves the counts on to the current second.
func (d *refDBNodes) roll() {
	now := int(math.Floor(d.m.s.now))
	if d.nonReads == nil {
		d.nonReads, d.lastNonReads = make([]float64, len(d.comp.pools)), make([]float64, len(d.comp.pools))
		d.second = now
	}
	if now == d.second {
		return
	}
	for i, n := range d.nonReads {
		d.lastNonReads[i] = n
		if now > d.second+1 {
			d.lastNonReads[i] = 0
		}
		d.nonReads[i] = 0
	}
	d.second = now
}

func (d *refDBNodes) call(r *refReq, reply func(refOutcome)) {
	pools := d.comp.pools
	d.roll()
	if r.class != sim.ClassRead {
		d.nonReads[0]++
		pools[0].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
			release()
			d.roll()
			for i, rp := range pools[1:] {
				d.nonReads[i+1] += refReplayCost
				rp.requeueWith(&refJob{fail: func(refOutcome) {}, start: func(release func()) { release() }}, d.replaySec)
			}
			reply(refOK)
		}})
		return
	}
	first := 0
	if d.replicasOnly {
		first = 1
	}
	spare := func(i int) float64 {
		p := pools[i]
		return math.Max(0, float64(p.workers)/p.serviceSec-d.lastNonReads[i])
	}
	total := 0.0
	for i := first; i < len(pools); i++ {
		total += spare(i)
	}
	pick := len(pools) - 1
	if total > 0 {
		u := d.m.s.rng.Float64() * total
		for i := first; i < len(pools); i++ {
			if u -= spare(i); u < 0 {
				pick = i
				break
			}
		}
	} else {
		pick = first + d.m.s.rng.IntN(len(pools)-first)
	}
	pools[pick].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		reply(refOK)
	}})
}

// requeueWith adds a job of its own service time that no room refuses (a replica's replay).
func (p *refPool) requeueWith(j *refJob, serviceSec float64) {
	j.service = serviceSec
	p.requeue(j)
}
