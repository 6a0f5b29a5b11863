package sim

// The reference's elastic kinds and the calls between services (testdata/reference.md): a
// CDN's edge, serverless functions, container pools under an autoscaler, a database's read
// replicas, and an app whose requests go on to the services it calls.

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
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
	if r.class != ClassStatic || c.m.s.rng.Float64() >= c.at(c.m.s.now) {
		if c.origin == nil {
			reply(refErrored)
			return
		}
		c.origin.call(r, reply)
		return
	}
	c.comp.pools[0].arrive(&refJob{fail: reply, start: func(release func()) {
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

func (c refCalls) of(class Class) (refHop, bool) {
	switch class {
	case ClassRead:
		return c.read, true
	case ClassWrite:
		return c.write, true
	case ClassAsyncWrite:
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
}

func (f *refFunction) call(r *refReq, reply func(refOutcome)) {
	s := f.m.s
	if f.comp.failed {
		reply(refErrored)
		return
	}
	if f.running >= f.maxConc {
		reply(refRejected) // throttled
		return
	}
	f.running++
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
		f.running--
		f.idleSince = append(f.idleSince, s.now)
		f.finished++
		reply(o)
	}
	s.at(s.now+delay, func() {
		start := s.now
		s.at(start+f.maxExec, func() { finish(refErrored) })
		s.at(start+s.exp(f.serviceSec), func() {
			down, calls := f.calls.of(r.class)
			switch {
			case !calls:
				finish(refOK)
			case down == nil:
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
	if r.class != ClassRead {
		d.nonReads[0]++
		pools[0].arrive(&refJob{fail: reply, start: func(release func()) {
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
	pools[pick].arrive(&refJob{fail: reply, start: func(release func()) {
		release()
		reply(refOK)
	}})
}

// requeueWith adds a job of its own service time that no room refuses (a replica's replay).
func (p *refPool) requeueWith(j *refJob, serviceSec float64) {
	j.service = serviceSec
	p.requeue(j)
}

// The overload scenarios of these kinds (rows of TestOverloadScenarios), each at two loads.

// cdnPurge is a CDN holding 90% of the static requests in front of an app of 2 × 8 workers
// at 20 ms (800 rps), purged at 10 s and rebuilding over 5 s: the origin takes everything
// for a moment. The clients retry once.
func cdnPurge(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"cdn","type":"cdn","params":{"hit_ratio":0.9,"ttl_sec":5}},
		 {"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":20}}],
		 "edges":[{"from":"cdn","to":"app"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 30, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1},
			Chaos:  []ChaosEvent{{Kind: ChaosCacheFlush, AtSec: 10, Target: "cdn"}}}
		return des, cfg
	}
}

// appCallsApp is a front app of 2 × 8 workers at 5 ms with no store of its own, holding
// each through a read from a back app of 2 × 8 workers at 20 ms (800 rps) that reads from a
// database of 10 × 5 ms; no retries.
func appCallsApp(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"front","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":5}},
		 {"id":"back","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":20}},
		 {"id":"db","type":"database","params":{"connections":10,"query_time_ms":5}}],
		 "edges":[{"from":"front","to":"back"},{"from":"back","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Read: 1},
			Client: Client{TimeoutMs: 1000}}
		return des, cfg
	}
}

// functionStep is a function of 50 concurrent executions at 20 ms (2,500 rps), 250 ms cold
// starts, stepped from 500 rps to rps at 10 s: the new instances start cold, and beyond 50
// executions requests are throttled. No retries.
func functionStep(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":50,"service_time_ms":20,"cold_start_ms":250}}],"edges":[]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "step", RPS: 500, Steps: []TrafficStep{{AtSec: 10, RPS: rps}}},
			Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000}}
		return des, cfg
	}
}

// autoscaledStep is a container pool (2 to 10 replicas of 8 workers at 20 ms, 400 rps
// each, target 60%, new replicas after 5 s, removed after 10 s low) offered 400 rps,
// stepped to rps from 10 to 30 s; the clients retry once.
func autoscaledStep(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[{"id":"pool","type":"container_pool","params":{"min_replicas":2,"max_replicas":10,"concurrency":8,
		 "service_time_ms":20,"target_utilization":0.6,"scale_out_delay_sec":5,"scale_in_delay_sec":10}}],"edges":[]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 45, Traffic: Traffic{Kind: "step", RPS: 400,
			Steps: []TrafficStep{{AtSec: 10, RPS: rps}, {AtSec: 30, RPS: 400}}},
			Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000, MaxRetries: 1}}
		return des, cfg
	}
}

// readReplicas is an app of 4 × 16 workers at 5 ms over a database of 4 connections at
// 10 ms (400 q/s a node) with two read replicas; 80% reads, spread over the three nodes.
// No retries.
func readReplicas(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":16,"service_time_ms":5}},
		 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":10,"read_replicas":2}}],
		 "edges":[{"from":"app","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Read: 0.8, Write: 0.2},
			Client: Client{TimeoutMs: 1000}}
		return des, cfg
	}
}

var cdnPurgeMetrics = []overloadMetric{
	{name: "failed share 10–15 s", tol: tolRate, measure: failShare(10, 15)},
	{name: "recovery from the purge (s)", tol: tolRecovery, measure: recoverySec(10)},
}

var throughputMetrics = []overloadMetric{
	{name: "served ÷ offered", tol: tolRate, measure: servedShare},
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms},
}

var functionStepMetrics = []overloadMetric{
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms},
}

// Why the engine misses the rows of these kinds marked as gaps.
const (
	gapScalerWindow = "the engine's autoscaler reads the last tick's utilisation and orders at the first tick after the step (ready at 15.1 s); the reference's reads the last second's, at a phase of its own, so its first wish after the step still holds some of the second before it and often orders 1 replica where the engine orders 2: it recovers at 5.8 to 6.6 s against 5.1 s and fails 0.47 of 10–20 s against 0.42"
	gapReadSpread   = "both spread reads over the nodes in proportion to their spare capacity, but the reference weighs each node by the last second's writes and replays, which wander from second to second (its p99 reads 75 to 209 ms over seeds at 900 rps; with the weights fixed at their means it reads 94.7 ms against the engine's 90.5); overloaded at 1,300 rps the engine's full rooms read 532 ms against 432"
)

var autoscaledStepMetrics = []overloadMetric{
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
	{name: "recovery from the step (s)", tol: tolRecovery, measure: recoverySec(10)},
}

var autoscaledStepMetricsGap = []overloadMetric{
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20), gap: gapScalerWindow},
	{name: "recovery from the step (s)", tol: tolRecovery, measure: recoverySec(10)},
}

var readReplicaMetrics = []overloadMetric{
	{name: "served ÷ offered", tol: tolRate, measure: servedShare},
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms, gap: gapReadSpread},
}

// The breaker over a slow call, swept over the delay, the tick and the load: with the
// default breaker every figure is within tolerance of the reference; with a 5 s window and
// 2 s open the figures outside are logged (BENCHMARKS.md, "Known gaps and floors").
func TestBreakerSweepOverASlowCall(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("96 figures, 10 reference seeds each: a measurement, run without -short and -race")
	}
	outside, total := 0, 0
	for _, breaker := range []string{"", `{"breaker_window_sec":5,"breaker_open_sec":2}`} {
		for _, delay := range []float64{300, 600, 1500} {
			for _, tick := range []float64{100, 250} {
				for _, load := range []float64{0.4, 0.8} {
					build := func() (Design, Config) {
						d, cfg := breakerOverSlowCall(load)()
						d.Components[0].Params = map[string]json.RawMessage{}
						if breaker != "" {
							mustJSON(breaker, &d.Components[0].Params)
						}
						cfg.TickMs = tick
						cfg.Chaos[0].Params.ExtraLatencyMs = delay
						return d, cfg
					}
					name := fmt.Sprintf("breaker %s, %v ms slower, %v ms ticks, %v load", breaker, delay, tick, load)
					for _, r := range measureScenario(t, overloadScenario{name: name, build: build, metrics: breakerMetrics}) {
						total++
						switch {
						case r.ok:
						case breaker == "":
							t.Errorf("%s: %s: engine %s, reference %s: outside tolerance (%s)", name, r.metric,
								fmtValue(r.eng, r.engOK), fmtValue(r.ref, r.refOK), r.tol)
						default:
							outside++
							t.Logf("%s: %s: engine %s, reference %s (%s)", name, r.metric, fmtValue(r.eng, r.engOK),
								fmtValue(r.ref, r.refOK), strings.Join(r.refSeeds, ", "))
						}
					}
				}
			}
		}
	}
	t.Logf("%d of %d figures outside tolerance, all with the 5 s window and 2 s open", outside, total)
}
