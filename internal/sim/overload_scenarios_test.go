package sim

// The overload scenarios: the engine held against the reference simulator (mean of
// referenceSeeds) on the situations the game is about. Every row computes both and prints them.
// A row within tolerance asserts that it stays within. A row marked as a known gap (with
// the reason) asserts that the engine is STILL outside tolerance: when the engine is fixed
// the test fails, and the row must lose its gap and become an ordinary assertion. So the
// table can neither hide a regression nor go on claiming a gap that is gone.
//
// Print it: go test ./internal/sim -run TestOverloadScenarios -v

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// tolerance kinds, as the engine's promise states them.
type tolerance int

const (
	tolTime          tolerance = iota // within 15% or one tick
	tolRate                           // within 3 points
	tolAmplification                  // within 30%
	tolRecovery                       // within 30% or 1 s; recovering and not recovering never match
)

func (k tolerance) String() string {
	return [...]string{"15% or 1 tick", "3 points", "30%", "30% or 1 s"}[k]
}

// within reports whether the engine's value is within tolerance of the reference's.
// A missing value (never failed, never recovered) matches only a missing value.
func within(k tolerance, eng, ref float64, engOK, refOK bool, dt float64) bool {
	if engOK != refOK {
		return false
	}
	if !engOK {
		return true
	}
	d := math.Abs(eng - ref)
	switch k {
	case tolTime:
		return d <= math.Max(0.15*math.Abs(ref), dt+1e-9)
	case tolRate:
		return d <= 0.03+1e-12
	case tolAmplification:
		return d <= 0.3*math.Abs(ref)
	default:
		return d <= math.Max(0.3*math.Abs(ref), 1)
	}
}

type overloadMetric struct {
	name    string
	tol     tolerance
	measure func(overloadSeries) (float64, bool)
	// gap, when set, says why the engine is known to be outside tolerance here.
	gap string
}

type overloadScenario struct {
	name    string
	build   func() (Design, Config)
	metrics []overloadMetric
	// ref is how the reference reads the configuration (the default: as the engine does).
	slowDatabase bool // the reference reads an injected delay into a database as a slow database
}

// leastConnectionsMetrics: the slow backend's share of the fresh requests, and the run's p99.
var leastConnectionsMetrics = []overloadMetric{
	{name: "slow backend's share", tol: tolRate, measure: storedShare("slow")},
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms, gap: gapLeastConnectionsWaits},
}

// gapLeastConnectionsWaits: the split is right, the waits are each backend's own room's.
const gapLeastConnectionsWaits = "least-connections queues a request at a backend only when it holds no fewer than the others, so a backend's waits follow the others' counts; the engine waits in each backend's own room: at 50% the slow backend, 83% busy, waits as an M/M/6 (p99 99 ms against 73), at 80% the saturated one holds the level's mean 3 waiting where the reference's count wanders with the fast backend's (72 against 88)"

// failFastMetrics: the attempts failed while no phase of the checks can have noticed (the
// first second), and over the whole failure.
var failFastMetrics = []overloadMetric{
	{name: "failed share 10–11 s", tol: tolRate, measure: failShare(10, 11)},
	{name: "failed share during the failure", tol: tolRate, measure: failShare(10, 20)},
}

// referenceSeeds are the seeds whose mean is the reference's value: ten, so that a
// random-phase timing (a health check's probes) wanders well under its tolerance.
var referenceSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

// The scenario designs.

// archSimRetries is seed architecture-simulator's default with the given retries.
func archSimRetries(retries int) func() (Design, Config) {
	return func() (Design, Config) {
		d, cfg := archSim("")
		cfg.Client.MaxRetries = retries
		return d, cfg
	}
}

// cacheFlush is the seed's default with a 60% cache, flushed at 10 s (10 s warm-up), one retry.
func cacheFlush() (Design, Config) {
	d, cfg := archSim(`{"id":"cache","type":"cache","params":{"hit_ratio":0.6,"warmup_sec":10}},`)
	cfg.DurationSec = 40
	cfg.Chaos = []ChaosEvent{{Kind: ChaosCacheFlush, AtSec: 10, Target: "cache"}}
	return d, cfg
}

// threeBackends is a balancer with health checks over three app servers of 400 rps each
// (6 workers ÷ 15 ms); backend a fails from 15 s to 30 s. At 50% load the two left run at
// 75%; at 80% load they are 20% short.
func threeBackends(load float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"lb","type":"load_balancer"},
		 {"id":"a","type":"app_service"},
		 {"id":"b","type":"app_service"},
		 {"id":"c","type":"app_service"}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"lb","to":"c"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 45, Traffic: Traffic{Kind: "constant", RPS: load * 1200}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1},
			Chaos:  []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 15, DurationSec: 15, Target: "a"}}}
		return des, cfg
	}
}

// leastConnections puts a least-connections balancer over a fast, large backend (two
// replicas of 6 workers at 10 ms: 1,200 rps) and a slow, small one (6 workers at 20 ms: 300
// rps), offered the given share of their 1,500 rps. Below saturation the balancer keeps
// their outstanding requests level, so the slow one draws a third (1 ÷ T), not the fifth its
// capacity would; near saturation its queue holds it back.
func leastConnections(load float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"lb","type":"load_balancer","params":{"algorithm":"least_connections"}},
		 {"id":"fast","type":"app_service","params":{"replicas":2,"service_time_ms":10}},
		 {"id":"slow","type":"app_service","params":{"service_time_ms":20}}],
		 "edges":[{"from":"lb","to":"fast"},{"from":"lb","to":"slow"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 30, Traffic: Traffic{Kind: "constant", RPS: load * 1500}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1}}
		return des, cfg
	}
}

// leastConnectionsFailFast fails one of two equal backends (6 workers at 15 ms each) behind
// a least-connections balancer checking every second, out after two failed probes: the dead
// backend answers at once, so it never has a request outstanding and draws everything until
// the checks take it out, 1 to 2 s after it fails.
func leastConnectionsFailFast(load float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"lb","type":"load_balancer","params":{"algorithm":"least_connections","health_check_interval_sec":1}},
		 {"id":"a","type":"app_service"},
		 {"id":"b","type":"app_service"}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 30, Traffic: Traffic{Kind: "constant", RPS: load * 800}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1},
			Chaos:  []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "a"}}}
		return des, cfg
	}
}

// slowCall injects 300 ms on the app's database call for 10 s. The app (16 workers, 20 ms)
// holds its workers through the call, so its capacity falls from 640 to about 50 rps, its
// 1,024 waiting places fill and everything times out; the clients retry up to 3 times.
func slowCall(budget float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"lb","type":"load_balancer"},
		 {"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":20,"queue_per_replica":512}},
		 {"id":"db","type":"database","params":{"connections":10,"query_time_ms":5}}],
		 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 35, Traffic: Traffic{Kind: "constant", RPS: 400}, Mix: Mix{Read: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 3, RetryBudget: budget},
			Chaos: []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 10, DurationSec: 10, From: "app", To: "db",
				Params: ChaosParams{ExtraLatencyMs: 300}}}}
		return des, cfg
	}
}

// slowCallWithBackoff is slowCall without a budget, its clients backing off exponentially.
func slowCallWithBackoff(backoffMs, multiplier float64) func() (Design, Config) {
	return func() (Design, Config) {
		d, cfg := slowCall(0)()
		cfg.Client.BackoffMs, cfg.Client.BackoffMultiplier = backoffMs, multiplier
		return d, cfg
	}
}

// consumersOnASaturatedDatabase: 1,000 asynchronous writes/s through a queue whose 10
// consumers (5 ms a job) each hold their worker through a write to a database of 800 q/s.
func consumersOnASaturatedDatabase() (Design, Config) {
	d := `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"q","type":"queue","params":{"workers":10,"job_time_ms":5,"buffer":1000000}},
	 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":5}}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`
	var des Design
	mustJSON(d, &des)
	cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: 1000}, Mix: Mix{AsyncWrite: 1},
		Client: Client{TimeoutMs: 1000}}
	return des, cfg
}

// heldChain is an app tier of 2 × 8 workers (15 ms) holding each through a write to a
// database of 6 connections (10 ms, 600 q/s), offered 650 writes/s: more than the closed
// loop of 16 held workers can pass (about 561/s), where treating the calls as an open
// stream passes about 507/s.
func heldChain() (Design, Config) {
	d := `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":15}},
	 {"id":"db","type":"database","params":{"connections":6,"query_time_ms":10}}],
	 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}]}`
	var des Design
	mustJSON(d, &des)
	cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: 650}, Mix: Mix{Write: 1},
		Client: Client{TimeoutMs: 1000}}
	return des, cfg
}

// quickBreaker is a gateway whose breaker judges 2 s of answers against 50%, stays open 1 s
// and probes with a tenth of the requests: it cycles several times in a 10 s trouble.
const quickBreaker = `{"id":"gw","type":"api_gateway","params":{"breaker_window_sec":2,"breaker_open_sec":1,"breaker_probe_ratio":0.1}}`

// breakerOverFailedApp is a quickBreaker over an app of 2 × 8 workers at 20 ms (800 rps) that fails from 10 to 20 s;
// the clients retry once.
func breakerOverFailedApp(load float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[` + quickBreaker + `,
		 {"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":20}}],
		 "edges":[{"from":"gw","to":"app"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 250, DurationSec: 40, Traffic: Traffic{Kind: "constant", RPS: load * 800}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1},
			Chaos:  []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "app"}}}
		return des, cfg
	}
}

// breakerOverSlowCall is a quickBreaker over an app of 2 × 8 workers at 20 ms holding
// each through a read from a database of 10 × 5 ms (640 rps), whose edge is 600 ms slower
// from 10 to 20 s: the app's held workers pass about 26 rps, its rooms fill and the
// clients (1 s timeout, one retry) time out.
func breakerOverSlowCall(load float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[` + quickBreaker + `,
		 {"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":20}},
		 {"id":"db","type":"database","params":{"connections":10,"query_time_ms":5}}],
		 "edges":[{"from":"gw","to":"app"},{"from":"app","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 250, DurationSec: 40, Traffic: Traffic{Kind: "constant", RPS: load * 640}, Mix: Mix{Read: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 1},
			Chaos: []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 10, DurationSec: 10, From: "app", To: "db",
				Params: ChaosParams{ExtraLatencyMs: 600}}}}
		return des, cfg
	}
}

// rateLimitStep is a gateway limiting to 300 rps in front of an app that can serve far more
// (4 × 8 workers), its static traffic stepped at 5 s from 200 rps to mult × 300; nobody
// retries. The token bucket, full when the step comes, lets the step through until it is
// empty: at 3× for half a second (a third of the first second refused), at 1.5× for two
// seconds; then the excess is refused, two thirds of 900 a second or a third of 450.
func rateLimitStep(mult float64) func() (Design, Config) {
	return func() (Design, Config) {
		cfg := Config{TickMs: 100, DurationSec: 12, Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000},
			Traffic: Traffic{Kind: "step", RPS: 200, Steps: []TrafficStep{{AtSec: 5, RPS: mult * 300}}}}
		return gatewayOverApp(300), cfg
	}
}

// gatewayOverApp is a gateway limiting to rateRPS in front of an app of 4 replicas.
func gatewayOverApp(rateRPS float64) Design {
	d := fmt.Sprintf(`{"components":[
	 {"id":"gw","type":"api_gateway","params":{"rate_limit_rps":%g}},
	 {"id":"app","type":"app_service","params":{"replicas":4}}],
	 "edges":[{"from":"gw","to":"app"}]}`, rateRPS)
	var des Design
	mustJSON(d, &des)
	return des
}

// rateLimitRetriedAtOnce is a gateway limiting to 100 rps in front of an app that serves far
// more, offered mult × 100 static requests a second by clients who retry twice with no
// backoff: a request refused for want of a token retries the instant it is refused, finds
// the bucket as empty, and fails all three attempts (atonce.go).
func rateLimitRetriedAtOnce(mult float64) func() (Design, Config) {
	return func() (Design, Config) {
		cfg := Config{TickMs: 100, DurationSec: 20, Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000, MaxRetries: 2},
			Traffic: Traffic{Kind: "constant", RPS: mult * 100}}
		return gatewayOverApp(100), cfg
	}
}

// rateLimitRetriedAtOnceMetrics are the rows of rateLimitRetriedAtOnce: the retries its
// refusals bring, and the failed share of the attempts.
var rateLimitRetriedAtOnceMetrics = []overloadMetric{
	{name: "retries per fresh request, 10–20 s", tol: tolAmplification, measure: retriesPerFresh},
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
}

// crashedBackendRetriedAtOnce is a balancer dealing static requests in turn to two apps of
// eight replicas, with no health checks, so that a crashed app keeps its share; clients
// retry twice with no backoff. App a crashes from 10 s to 20 s: an attempt dealt to it
// fails the instant it gets there, and its retry, sent that instant, is dealt again
// (failedatonce.go).
func crashedBackendRetriedAtOnce(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		app := `"type":"app_service","params":{"replicas":8}`
		d := `{"components":[{"id":"lb","type":"load_balancer","params":{"health_checks":false}},{"id":"a",` + app + `},{"id":"b",` + app + `}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 30, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000, MaxRetries: 2},
			Chaos:  []ChaosEvent{{ID: "a-down", Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "a"}}}
		return des, cfg
	}
}

// crashedBackendMetrics are the rows of crashedBackendRetriedAtOnce: the retries in the
// failure's first tick (none yet if they waited for the next) and in the first half second
// after the repair (some if they did), and the failed share while it lasts.
var crashedBackendMetrics = []overloadMetric{
	{name: "retries per fresh request, 10–10.1 s", tol: tolAmplification, measure: retriesPerFreshIn(10, 10.1)},
	{name: "retries per fresh request, 20–20.5 s", tol: tolRate, measure: retriesPerFreshIn(20, 20.5)},
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
}

// roundRobinNoRoom is a balancer dealing static requests in turn to three app servers of
// 6 workers at 15 ms with no waiting room (1,200 rps in all), as three components or as one
// app of three replicas; nobody retries.
func roundRobinNoRoom(load float64, oneTier bool) func() (Design, Config) {
	return func() (Design, Config) {
		app := `"type":"app_service","params":{"queue_per_replica":0}`
		d := `{"components":[{"id":"lb","type":"load_balancer"},{"id":"a",` + app + `},{"id":"b",` + app + `},{"id":"c",` + app + `}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"lb","to":"c"}]}`
		if oneTier {
			d = `{"components":[{"id":"lb","type":"load_balancer"},{"id":"a","type":"app_service","params":{"replicas":3,"queue_per_replica":0}}],
			 "edges":[{"from":"lb","to":"a"}]}`
		}
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: load * 1200}, Mix: Mix{Static: 1},
			Client: Client{TimeoutMs: 1000}}
		return des, cfg
	}
}

// slowDeadline is the held chain (16 held app workers over a database of 600 q/s, about
// 561 passed a second) offered a little more than it passes, with 512 places per replica:
// the rooms fill slowly and the waits cross the 1 s deadline only after some seconds. No
// retries.
func slowDeadline(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d, cfg := heldChain()
		d.Components[1].Params["queue_per_replica"] = []byte("512")
		cfg.Traffic.RPS, cfg.DurationSec = rps, 30
		return d, cfg
	}
}

// sharedPrimary is an app whose reads go to the database's primary, which the queue's
// consumers also write to: 4 connections of 5 ms (800 q/s) shared by reads and the
// consumers' writes; a large buffer, so the backlog of acknowledged writes grows.
func sharedPrimary(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":4}},
		 {"id":"q","type":"queue","params":{"workers":10,"job_time_ms":5,"buffer":1000000}},
		 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":5}}],
		 "edges":[{"from":"app","to":"q"},{"from":"app","to":"db"},{"from":"q","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Read: 0.5, AsyncWrite: 0.5},
			Client: Client{TimeoutMs: 1000}}
		return des, cfg
	}
}

// slowNetworkCall is an app of 5 replicas × 6 workers at 15 ms with 32 places each, holding
// every worker through a read from the database (10 × 8 ms), whose edge is 42 ms slower from
// 10 to 20 s: a worker is held about 65 ms, most of it a fixed delay, so the tier passes
// about 460 rps. Nobody retries.
func slowNetworkCall(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":5,"queue_per_replica":32}},
		 {"id":"db","type":"database"}],
		 "edges":[{"from":"app","to":"db"}]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 250, DurationSec: 30, Traffic: Traffic{Kind: "constant", RPS: rps}, Mix: Mix{Read: 1},
			Client: Client{TimeoutMs: 1000},
			Chaos: []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 10, DurationSec: 10, From: "app", To: "db",
				Params: ChaosParams{ExtraLatencyMs: 42}}}}
		return des, cfg
	}
}

// Why the engine misses the rows marked as gaps.
const (
	gapRoomFill = "above saturation the engine's rooms are one fluid backlog for the tier, which starts filling at once, while the reference's first requests take idle workers (after the first step its room reads 7% full, the engine's 15%), and the engine's backlog then stands full, while the reference's rooms, one per replica, hover below full (98.7% without retries, 99.6% with one, over 40 seeds): reading 99% full is a fluctuation there, first seen after 2.4 s without retries and 2.2 s with one (2.1 s with the four rooms pooled into one); a model matching the reference's mean fill would never read 99% without retries"
)

// gapRepairPhase: the health checks' phase is random (doc.go). The engine's run is that of
// the expected split over the phases; each reference seed draws one phase, and its
// recovery after the repair depends on how soon the next passing probe comes: at 70% load
// the seeds recover at 0 to 4.1 s (mean 1.65 s over 10 seeds), the expected split at
// 0.6 s. The mean of the recoveries is not the recovery of the mean run; at 80% load the
// two agree (2.20 s against 2.42 s).
const gapRepairPhase = "the engine recovers as the expected split over the probes' phases does (0.6 s), the reference's seeds each at their own phase's (0 to 4.1 s, mean 1.65 s): a mean of recoveries is not the recovery of the mean run"

var overloadScenarios = []overloadScenario{
	{name: "seed default, 1 retry", build: archSimRetries(1), metrics: []overloadMetric{
		{name: "first failing step (s)", tol: tolTime, measure: firstFailingSec},
		{name: "app backlog full (s)", tol: tolTime, measure: fillSec("app"), gap: gapRoomFill},
		{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
	}},
	{name: "seed default, no retries", build: archSimRetries(0), metrics: []overloadMetric{
		{name: "first failing step (s)", tol: tolTime, measure: firstFailingSec},
		{name: "app backlog full (s)", tol: tolTime, measure: fillSec("app"), gap: gapRoomFill},
		{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
	}},
	{name: "cache flush, 1 retry", build: cacheFlush, metrics: []overloadMetric{
		{name: "recovery from the flush (s)", tol: tolRecovery, measure: recoverySec(10)},
		{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
	}},
	{name: "node failure at 50% load", build: threeBackends(0.5), metrics: []overloadMetric{
		{name: "failed share during the failure", tol: tolRate, measure: failShare(15, 30)},
		{name: "recovery from the strike (s)", tol: tolRecovery, measure: recoverySec(15)},
	}},
	{name: "node failure at 70% load", build: threeBackends(0.7), metrics: []overloadMetric{
		{name: "failed share during the failure", tol: tolRate, measure: failShare(15, 30)},
		{name: "recovery from the repair (s)", tol: tolRecovery, measure: recoverySec(30), gap: gapRepairPhase},
	}},
	{name: "node failure at 80% load", build: threeBackends(0.8), metrics: []overloadMetric{
		{name: "failed share during the failure", tol: tolRate, measure: failShare(15, 30)},
		{name: "recovery from the repair (s)", tol: tolRecovery, measure: recoverySec(30)},
	}},
	{name: "least-connections, fast and slow backends at 50% load", build: leastConnections(0.5), metrics: leastConnectionsMetrics},
	{name: "least-connections, fast and slow backends at 80% load", build: leastConnections(0.8), metrics: leastConnectionsMetrics},
	{name: "least-connections over a backend that fails fast at 40% load", build: leastConnectionsFailFast(0.4), metrics: failFastMetrics},
	{name: "least-connections over a backend that fails fast at 80% load", build: leastConnectionsFailFast(0.8), metrics: failFastMetrics},
	{name: "slow held call, no retry budget", build: slowCall(0), metrics: []overloadMetric{
		{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
		{name: "recovery after the injection (s)", tol: tolRecovery, measure: recoverySec(20)},
	}},
	{name: "slow held call, backoff 100 ms ×2", build: slowCallWithBackoff(100, 2), metrics: []overloadMetric{
		{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
		{name: "recovery after the injection (s)", tol: tolRecovery, measure: recoverySec(20)},
	}},
	{name: "slow held call, retry budget 20%", build: slowCall(0.2), metrics: []overloadMetric{
		{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
		{name: "recovery after the injection (s)", tol: tolRecovery, measure: recoverySec(20)},
	}},
	{name: "slow database holding its connections, 400 rps", build: slowCall(0), slowDatabase: true,
		metrics: slowDatabaseMetrics},
	{name: "slow database holding its connections, 100 rps", build: slowDatabaseAt(100), slowDatabase: true,
		metrics: slowDatabaseMetrics},
	{name: "queue consumers on a saturated database", build: consumersOnASaturatedDatabase, metrics: []overloadMetric{
		{name: "stored writes ÷ offered", tol: tolRate, measure: storedShare("db")},
	}},
	{name: "breaker over a failed app at 40% load", build: breakerOverFailedApp(0.4), metrics: breakerMetrics},
	{name: "breaker over a failed app at 80% load", build: breakerOverFailedApp(0.8), metrics: breakerMetrics},
	{name: "breaker over a slow call at 40% load", build: breakerOverSlowCall(0.4), metrics: breakerMetrics},
	{name: "breaker over a slow call at 80% load", build: breakerOverSlowCall(0.8), metrics: breakerMetrics},
	{name: "rate limit, traffic stepped to 1.5× it", build: rateLimitStep(1.5), metrics: rateLimitMetrics},
	{name: "rate limit, traffic stepped to 3× it", build: rateLimitStep(3), metrics: rateLimitMetrics},
	{name: "rate limit, retried at once, 2× it", build: rateLimitRetriedAtOnce(2), metrics: rateLimitRetriedAtOnceMetrics},
	{name: "rate limit, retried at once, 3× it", build: rateLimitRetriedAtOnce(3), metrics: rateLimitRetriedAtOnceMetrics},
	{name: "a crashed backend kept in, retried at once, 300 rps", build: crashedBackendRetriedAtOnce(300), metrics: crashedBackendMetrics},
	{name: "a crashed backend kept in, retried at once, 1,500 rps", build: crashedBackendRetriedAtOnce(1500), metrics: crashedBackendMetrics},
	{name: "round-robin, no room, three components at 90% load", build: roundRobinNoRoom(0.9, false), metrics: noRoomMetrics},
	{name: "round-robin, no room, three components at 110% load", build: roundRobinNoRoom(1.1, false), metrics: noRoomMetrics},
	{name: "round-robin, no room, three replicas at 90% load", build: roundRobinNoRoom(0.9, true), metrics: noRoomMetrics},
	{name: "round-robin, no room, three replicas at 110% load", build: roundRobinNoRoom(1.1, true), metrics: noRoomMetrics},
	{name: "held rooms filling slowly, no retries, 600 rps", build: slowDeadline(600), metrics: slowDeadlineMetrics},
	{name: "held rooms filling slowly, no retries, 650 rps", build: slowDeadline(650), metrics: slowDeadlineMetrics},
	{name: "queue consumers sharing the primary with reads, 1,200 rps", build: sharedPrimary(1200), metrics: sharedPrimaryMetrics},
	{name: "queue consumers sharing the primary with reads, 1,400 rps", build: sharedPrimary(1400), metrics: sharedPrimaryMetrics},
	{name: "CDN purged, 2,000 rps", build: cdnPurge(2000), metrics: cdnPurgeMetrics},
	{name: "CDN purged, 4,000 rps", build: cdnPurge(4000), metrics: cdnPurgeMetrics},
	{name: "app calling an app, 700 rps", build: appCallsApp(700), metrics: throughputMetrics},
	{name: "app calling an app, 950 rps", build: appCallsApp(950), metrics: throughputMetrics},
	{name: "function stepped to 2,000 rps", build: functionStep(2000), metrics: functionStepMetrics},
	{name: "function stepped to 3,000 rps", build: functionStep(3000), metrics: functionStepMetrics},
	{name: "function started cold, 1,000 rps", build: functionCold(1000), metrics: functionColdMetrics},
	{name: "function started cold, 2,000 rps", build: functionCold(2000), metrics: functionColdMetrics},
	{name: "autoscaled pool stepped to 1,500 rps", build: autoscaledStep(1500), metrics: autoscaledStepMetrics},
	{name: "autoscaled pool stepped to 2,500 rps", build: autoscaledStep(2500), metrics: autoscaledStepMetrics},
	{name: "read replicas, 900 rps", build: readReplicas(900), metrics: readReplicaMetrics},
	{name: "read replicas, 1,300 rps", build: readReplicas(1300), metrics: readReplicaMetrics},
	{name: "held workers behind a slow network call, 480 rps", build: slowNetworkCall(480), metrics: slowNetworkCallMetrics},
	{name: "held workers behind a slow network call, 500 rps", build: slowNetworkCall(500), metrics: slowNetworkCallMetrics},
	{name: "held chain over a smaller database", build: heldChain, metrics: []overloadMetric{
		{name: "served ÷ offered", tol: tolRate, measure: servedShare},
		{name: "p99 (ms)", tol: tolTime, measure: p99Ms},
		{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
	}},
}

// breakerMetrics are the rows of a breaker whose trouble lasts from 10 to 20 s.
var breakerMetrics = []overloadMetric{
	{name: "breaker opens after the trouble starts (s)", tol: tolTime, measure: breakerOpensSec("gw", 10)},
	{name: "breaker opens (times)", tol: tolAmplification, measure: breakerOpenings("gw")},
	{name: "breaker closes for good after the trouble ends (s)", tol: tolRecovery, measure: breakerClosesSec("gw", 20)},
	{name: "recovery after the trouble (s)", tol: tolRecovery, measure: recoverySec(20)},
}

// A slow database holds its connections through the delay (the reference's slowDatabase
// reading), which the engine cannot express: it reads an injected latency as the network's,
// held by the caller's worker alone. Where the held app tier is the bottleneck, both
// readings start about the same storm.
var slowDatabaseMetrics = []overloadMetric{
	{name: "peak retry amplification", tol: tolAmplification, measure: peakAmplification},
}

// slowDatabaseAt is slowCall without a budget at rps.
func slowDatabaseAt(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d, cfg := slowCall(0)()
		cfg.Traffic.RPS = rps
		return d, cfg
	}
}

// rateLimitMetrics are the rows of a rate limit the traffic steps over at 5 s.
var rateLimitMetrics = []overloadMetric{
	{name: "failed share 5–6 s", tol: tolRate, measure: failShare(5, 6)},
	{name: "failed share 6–8 s", tol: tolRate, measure: failShare(6, 8)},
	{name: "failed share 9–12 s", tol: tolRate, measure: failShare(9, 12)},
}

// slowNetworkCallMetrics are the rows of held workers behind a slow network call.
var slowNetworkCallMetrics = []overloadMetric{
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms},
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
}

var noRoomMetrics = []overloadMetric{
	{name: "failed share 2–20 s", tol: tolRate, measure: failShare(2, 20)},
}

var slowDeadlineMetrics = []overloadMetric{
	{name: "first timeouts (s)", tol: tolTime, measure: firstTimeoutsSec},
	{name: "failed share 20–30 s", tol: tolRate, measure: failShare(20, 30)},
}

var sharedPrimaryMetrics = []overloadMetric{
	{name: "acknowledged writes waiting, growth (/s)", tol: tolAmplification, measure: backlogGrowth("q", 1_000_000)},
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
}

// overloadRow is one measured line of the table.
type overloadRow struct {
	scenario, metric string
	tol              tolerance
	eng, ref         float64
	engOK, refOK     bool
	refSeeds         []string
	ok               bool
	gap              string
}

func (r overloadRow) verdict() string {
	switch {
	case r.ok && r.gap == "":
		return "within"
	case r.ok:
		return "FIXED: promote"
	case r.gap != "":
		return "known gap"
	}
	return "REGRESSION"
}

func fmtValue(v float64, ok bool) string {
	if !ok {
		return "never"
	}
	return fmt.Sprintf("%.2f", v)
}

// measureScenario runs the engine once and the reference with every seed.
func measureScenario(t *testing.T, sc overloadScenario, ref ReferenceRun) []overloadRow {
	t.Helper()
	d, cfg := sc.build()
	eng := engineSeries(mustRun(t, d, cfg))
	var refs []overloadSeries
	for _, seed := range referenceSeeds {
		tr, err := ref(d, cfg, seed, sc.slowDatabase)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		refs = append(refs, tr.series())
	}
	var rows []overloadRow
	for _, m := range sc.metrics {
		row := overloadRow{scenario: sc.name, metric: m.name, tol: m.tol, gap: m.gap}
		row.eng, row.engOK = m.measure(eng)
		// The reference's value is the mean over the seeds that have one; it has none
		// (never failed, never recovered) when most seeds have none.
		var sum float64
		var n int
		for _, s := range refs {
			v, ok := m.measure(s)
			row.refSeeds = append(row.refSeeds, fmtValue(v, ok))
			if ok {
				sum += v
				n++
			}
		}
		row.refOK = 2*n > len(refs)
		if n > 0 {
			row.ref = sum / float64(n)
		}
		row.ok = within(m.tol, row.eng, row.ref, row.engOK, row.refOK, eng.dt)
		rows = append(rows, row)
	}
	return rows
}

func overloadTable(rows []overloadRow) string {
	var b strings.Builder
	b.WriteString("| scenario | metric | engine | reference (seeds) | tolerance | verdict |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s (%s) | %s | %s |\n", r.scenario, r.metric, fmtValue(r.eng, r.engOK),
			fmtValue(r.ref, r.refOK), strings.Join(r.refSeeds, ", "), r.tol, r.verdict())
	}
	return b.String()
}

// OverloadScenarios holds the engine against the reference on every row of the overload
// table (TestOverloadScenarios, in package sim_test, hands it the reference).
func OverloadScenarios(t *testing.T, ref ReferenceRun) {
	measured := make([][]overloadRow, len(overloadScenarios))
	// The scenarios are independent runs; the group returns once all of them have.
	t.Run("scenario", func(t *testing.T) {
		for i, sc := range overloadScenarios {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				rows := measureScenario(t, sc, ref)
				measured[i] = rows
				for _, r := range rows {
					t.Logf("%s: engine %s, reference %s (%s), tolerance %s: %s", r.metric, fmtValue(r.eng, r.engOK),
						fmtValue(r.ref, r.refOK), strings.Join(r.refSeeds, ", "), r.tol, r.verdict())
					switch {
					case r.gap == "" && !r.ok:
						t.Errorf("%s: engine %s, reference %s: outside tolerance (%s)", r.metric,
							fmtValue(r.eng, r.engOK), fmtValue(r.ref, r.refOK), r.tol)
					case r.gap != "" && r.ok:
						t.Errorf("%s: engine %s, reference %s: now within tolerance (%s); the known gap (%s) is gone: remove it from the table",
							r.metric, fmtValue(r.eng, r.engOK), fmtValue(r.ref, r.refOK), r.tol, r.gap)
					}
				}
			})
		}
	})
	var all []overloadRow
	for _, rows := range measured {
		all = append(all, rows...)
	}
	t.Logf("engine against the per-request reference (mean of %d seeds):\n%s", len(referenceSeeds), overloadTable(all))
}
