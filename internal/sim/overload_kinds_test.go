package sim

// The reference's elastic kinds and the calls between services (internal/reference/reference.md): a
// CDN's edge, serverless functions, container pools under an autoscaler, a database's read
// replicas, and an app whose requests go on to the services it calls.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

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

// functionCold is the same function offered rps from the start, when it has no instance:
// the first invocations start cold, each holding a slot of the 50 for its cold start and
// execution, and the rest are throttled until the first instances are ready. No retries.
func functionCold(rps float64) func() (Design, Config) {
	return func() (Design, Config) {
		d := `{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":50,"service_time_ms":20,"cold_start_ms":250}}],"edges":[]}`
		var des Design
		mustJSON(d, &des)
		cfg := Config{TickMs: 100, DurationSec: 5, Traffic: Traffic{Kind: "constant", RPS: rps},
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

var functionColdMetrics = []overloadMetric{
	{name: "failed share 0–0.5 s", tol: tolRate, measure: failShare(0, 0.5)},
	{name: "failed share 0.5–5 s", tol: tolRate, measure: failShare(0.5, 5)},
}

// Why the engine misses the rows of these kinds marked as gaps.
const gapReadSpread = "both spread reads over the nodes in proportion to their spare capacity, but the reference weighs each node by the last second's writes and replays, which wander from second to second (its p99 reads 75 to 209 ms over seeds at 900 rps; with the weights fixed at their means it reads 94.7 ms against the engine's 90.5); overloaded at 1,300 rps the engine's full rooms read 532 ms against 432"

var autoscaledStepMetrics = []overloadMetric{
	{name: "failed share 10–20 s", tol: tolRate, measure: failShare(10, 20)},
	{name: "recovery from the step (s)", tol: tolRecovery, measure: recoverySec(10)},
}

var readReplicaMetrics = []overloadMetric{
	{name: "served ÷ offered", tol: tolRate, measure: servedShare},
	{name: "p99 (ms)", tol: tolTime, measure: p99Ms, gap: gapReadSpread},
}

// The breaker over a slow call, swept over the delay, the tick and the load: with the
// default breaker every figure is within tolerance of the reference; with a 5 s window and
// 2 s open the figures outside are logged (BENCHMARKS.md, "Known gaps and floors").
// BreakerSweep is TestBreakerSweepOverASlowCall's measurement (package sim_test hands it the
// reference).
func BreakerSweep(t *testing.T, ref ReferenceRun) {
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
					for _, r := range measureScenario(t, overloadScenario{name: name, build: build, metrics: breakerMetrics}, ref) {
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
