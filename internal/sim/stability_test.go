package sim

import (
	"fmt"
	"math"
	"testing"
)

// saturatedDesigns are designs under constant overload: a database behind held app workers
// with retries (seed architecture-simulator), a slow chain of services, queue consumers
// writing to a saturated database, an app whose own queue is longer than the timeout, and
// chains of held calls whose closed loops (closedloop.go) bound what reaches the database.
func saturatedDesigns(t *testing.T) []struct {
	name string
	d    Design
	cfg  Config
} {
	arch, archCfg := archSim("")
	chain := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer"},
	 {"id":"web","type":"app_service","params":{"replicas":4,"concurrency":8}},
	 {"id":"svc","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":5}},
	 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":10}}],
	 "edges":[{"from":"lb","to":"web"},{"from":"web","to":"svc"},{"from":"svc","to":"db"}]}`)
	chainCfg := constant(600, 60)
	chainCfg.Client = Client{TimeoutMs: 800, MaxRetries: 2}
	consumers := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"q","type":"queue","params":{"workers":10,"job_time_ms":5,"buffer":5000}},
	 {"id":"db","type":"database","params":{"connections":2,"query_time_ms":4}}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	consumersCfg := constant(900, 120)
	consumersCfg.Mix = Mix{AsyncWrite: 1}
	longQueue := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"queue_per_replica":1000}}],"edges":[]}`)
	longCfg := constant(500, 60)
	longCfg.Mix = Mix{Static: 1}
	longCfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	overloaded := bottleneckDesign(4)
	overCfg := constant(2000, 60)
	overCfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2, BackoffMs: 200, BackoffMultiplier: 2}
	archCfg.DurationSec = 60
	held, heldCfg := heldChain()
	heldCfg.DurationSec = 60
	// Three tiers, each holding its workers through the call below: 16 web workers on 8
	// service workers on a database of 3 connections, with retries.
	nested := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer"},
	 {"id":"web","type":"app_service","params":{"replicas":2,"concurrency":8,"service_time_ms":10}},
	 {"id":"svc","type":"app_service","params":{"replicas":2,"concurrency":4,"service_time_ms":5}},
	 {"id":"db","type":"database","params":{"connections":3,"query_time_ms":10}}],
	 "edges":[{"from":"lb","to":"web"},{"from":"web","to":"svc"},{"from":"svc","to":"db"}]}`)
	nestedCfg := constant(500, 60)
	nestedCfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	return []struct {
		name string
		d    Design
		cfg  Config
	}{
		{"database behind held workers, retries", arch, archCfg},
		{"slow chain", chain, chainCfg},
		{"consumers into a saturated database", consumers, consumersCfg},
		{"queue longer than the timeout", longQueue, longCfg},
		{"overloaded database, backoff", overloaded, overCfg},
		{"held chain over a smaller database", held, heldCfg},
		{"three held tiers over a small database, retries", nested, nestedCfg},
	}
}

// Under constant offered load every metric settles: over the last quarter of the run every
// tick repeats the last one, the system's numbers and every component's: the hold time is
// solved each tick (holdtime.go), and anything short of the solution swings from tick to tick.
func TestSaturatedDesignsSettleAtConstantLoad(t *testing.T) {
	for _, tc := range saturatedDesigns(t) {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, tc.d, tc.cfg)
			last := r.Ticks[len(r.Ticks)-1]
			saturated := false
			for _, ct := range last.Components {
				saturated = saturated || ct.Status == StatusSaturated
			}
			if !saturated {
				t.Fatalf("no component is saturated: the design does not test what it should")
			}
			for i := len(r.Ticks) * 3 / 4; i < len(r.Ticks); i++ {
				tk := r.Ticks[i]
				if d := tickDiff(tk, last); d != "" {
					t.Fatalf("tick %d (t=%v s) differs from the last: %s", i, tk.T, d)
				}
			}
		})
	}
}

// settleTolerance: hold times are solved to 0.1% of a worker's busy time, which a database
// near saturation (M/M/c waits steepen like 1/(1−ρ)) turns into at most a few tenths of a
// percent of its wait. The oscillation this test guards against moved figures by tens of
// percent.
const settleTolerance = 5e-3

func settledEqual(a, b float64) bool {
	return math.Abs(a-b) <= settleTolerance*max(math.Abs(a), math.Abs(b), 1)
}

// tickDiff names the first figure in which two ticks differ beyond rounding.
func tickDiff(a, b Tick) string {
	sys := []struct {
		name string
		a, b float64
	}{{"offered", a.OfferedRPS, b.OfferedRPS}, {"served", a.ServedRPS, b.ServedRPS}, {"rejected", a.RejectedRPS, b.RejectedRPS},
		{"errors", a.ErrorRPS, b.ErrorRPS}, {"timed out", a.TimedOutRPS, b.TimedOutRPS}, {"queued", a.Queued, b.Queued},
		{"mean", a.MeanMs, b.MeanMs}, {"p50", a.P50Ms, b.P50Ms}, {"p95", a.P95Ms, b.P95Ms}, {"p99", a.P99Ms, b.P99Ms}}
	for _, f := range sys {
		if !settledEqual(f.a, f.b) {
			return fmt.Sprintf("%s %v vs %v", f.name, f.a, f.b)
		}
	}
	for i := range a.Components {
		x, y := a.Components[i], b.Components[i]
		for _, f := range []struct {
			name string
			a, b float64
		}{{"input", x.InputRPS, y.InputRPS}, {"output", x.OutputRPS, y.OutputRPS}, {"utilisation", x.Utilization, y.Utilization},
			{"backlog", x.Backlog, y.Backlog}, {"mean", x.MeanMs, y.MeanMs}, {"p99", x.P99Ms, y.P99Ms}, {"late", x.LateRPS, y.LateRPS}} {
			if !settledEqual(f.a, f.b) {
				return fmt.Sprintf("component %d %s %v vs %v", i, f.name, f.a, f.b)
			}
		}
	}
	return ""
}
