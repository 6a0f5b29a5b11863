package sim

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// window averages f over the ticks ending in (from, to].
func window(r *Result, from, to float64, f func(Tick) float64) float64 {
	sum, n := 0.0, 0
	for _, tk := range r.Ticks {
		if tk.T > from+1e-9 && tk.T <= to+1e-9 {
			sum += f(tk)
			n++
		}
	}
	if n == 0 {
		panic("empty window")
	}
	return sum / float64(n)
}

func errRate(tk Tick) float64 { return tk.ErrorRate }

func TestCacheFlushSendsTheHerdToTheDatabaseUntilWarm(t *testing.T) {
	// The database is sized for an 80% hit ratio: 1,000 reads → 200 misses on a 250 q/s node.
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":10,"concurrency":16}},
	 {"id":"cache","type":"cache","params":{"hit_ratio":0.8,"warmup_sec":20}},
	 {"id":"db","type":"database","params":{"connections":2}}],
	 "edges":[{"from":"app","to":"cache"},{"from":"app","to":"db"}]}`)
	cfg := constant(1000, 80)
	cfg.Client = Client{TimeoutMs: 1000}
	cfg.Chaos = []ChaosEvent{{ID: "flush", Kind: ChaosCacheFlush, AtSec: 20, Target: "cache"}}
	r := mustRun(t, d, cfg)
	db := comp(r, "db")
	if before := window(r, 10, 20, errRate); before > 0.001 {
		t.Errorf("error rate before the flush %.4f, want ~0", before)
	}
	if u := window(r, 20, 25, func(tk Tick) float64 { return tk.Components[db].Utilization }); u < 1 {
		t.Errorf("database utilisation just after the flush %.2f, want saturated", u)
	}
	if during := window(r, 20, 30, errRate); during < 0.2 {
		t.Errorf("error rate during warm-up %.3f, want the herd to overwhelm the database", during)
	}
	if after := window(r, 60, 80, errRate); after > 0.001 {
		t.Errorf("error rate long after warm-up %.4f, want recovered", after)
	}
	hit := r.Ticks[int(30/0.1)].Components[comp(r, "cache")].HitRatio
	if !near(hit, 0.8*10/20, 0.02) {
		t.Errorf("hit ratio 10 s into a 20 s warm-up = %.3f, want about half of 0.8", hit)
	}
	ev := r.Summary.Events[0]
	if ev.RecoverySec == nil || ev.PeakError < 0.2 {
		t.Errorf("impact %+v: want a recovery time and a high peak", ev)
	}
}

func threeReplicas(t *testing.T, rps float64) *Result {
	// Three app components of 400 rps behind a health-checked balancer; one fails for 20 s.
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"a","type":"app_service"},{"id":"b","type":"app_service"},{"id":"c","type":"app_service"}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"lb","to":"c"}]}`)
	cfg := constant(rps, 60)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 500}
	cfg.Chaos = []ChaosEvent{{ID: "a-down", Kind: ChaosNodeFailure, AtSec: 20, DurationSec: 20, Target: "a"}}
	return mustRun(t, d, cfg)
}

func TestNodeFailureBehindHealthCheckedBalancer(t *testing.T) {
	// At 60% (720 of 1,200 rps) the two survivors run at 90%: absorbed. At 80% they need 120%.
	at60 := threeReplicas(t, 720)
	// The balancer's checks (every 5 s at some phase, 2 failures in a row) notice the dead
	// backend 5 to 10 s after it fails: until then its third of the requests fails (in
	// expectation, all of it for 5 s and a third falling linearly to none over the next 5);
	// then the survivors absorb it.
	if e := window(at60, 20, 30, errRate); !near(e, 0.25, 0.02) {
		t.Errorf("60%% load: error rate before the checks notice %.4f, want the dead backend's third, then less (0.25)", e)
	}
	if e := window(at60, 30, 40, errRate); e > 0.01 {
		t.Errorf("60%% load: error rate once the checks noticed %.4f, want absorbed", e)
	}
	if s := at60.Ticks[int(30/0.1)].Components[comp(at60, "a")].Status; s != StatusFailed {
		t.Errorf("failed replica status %q, want failed", s)
	}
	at80 := threeReplicas(t, 960)
	if e := window(at80, 30, 40, errRate); e < 0.1 {
		t.Errorf("80%% load: error rate during the failure %.4f, want the survivors overwhelmed", e)
	}
	if e := window(at80, 50, 60, errRate); e > 0.01 {
		t.Errorf("80%% load: error rate after recovery %.4f, want ~0", e)
	}
	if ev := at80.Summary.Events[0]; ev.RecoverySec == nil || ev.Lost <= 0 {
		t.Errorf("impact %+v: want lost requests and a recovery", ev)
	}
}

func TestNodeFailureWithoutHealthChecksFailsItsShare(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer","params":{"health_checks":false}},
	 {"id":"a","type":"app_service"},{"id":"b","type":"app_service"}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`)
	cfg := constant(200, 30)
	cfg.Mix = Mix{Static: 1}
	cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "a"}}
	r := mustRun(t, d, cfg)
	if e := window(r, 11, 20, errRate); !near(e, 0.5, 0.01) {
		t.Errorf("error rate %.3f, want half: the balancer keeps sending to the failed backend", e)
	}
}

func TestOnlyPathsThroughAFailedComponentFail(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := constant(400, 30)
	cfg.Mix = Mix{Static: 0.7, Write: 0.3}
	cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "db"}}
	r := mustRun(t, d, cfg)
	if e := window(r, 11, 20, errRate); !near(e, 0.3, 0.02) {
		t.Errorf("error rate %.3f with the database down, want the 30%% of writes only", e)
	}
}

func TestTrafficSpikeMultipliesIngress(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":4}}],"edges":[]}`)
	cfg := constant(100, 30)
	cfg.Mix = Mix{Static: 1}
	cfg.Chaos = []ChaosEvent{{ID: "spike", Kind: ChaosTrafficSpike, AtSec: 10, DurationSec: 5, Params: ChaosParams{Multiplier: 3}}}
	r := mustRun(t, d, cfg)
	if f := window(r, 10, 15, func(tk Tick) float64 { return tk.FreshRPS }); !near(f, 300, 1e-9) {
		t.Errorf("fresh rps during the spike %v, want 300", f)
	}
	if f := window(r, 16, 20, func(tk Tick) float64 { return tk.FreshRPS }); !near(f, 100, 1e-9) {
		t.Errorf("fresh rps after the spike %v, want 100", f)
	}
	for _, tk := range r.Ticks {
		active := len(tk.Events) == 1 && tk.Events[0] == "spike"
		if want := tk.T > 10 && tk.T <= 15+1e-9; active != want {
			t.Fatalf("tick %.1f: events %v, want spike active = %v", tk.T, tk.Events, want)
		}
	}
}

func TestNetworkPartitionDropsTheEdgeAndReportsSplitBrain(t *testing.T) {
	// Two regions, each with its own primary, replicating to each other. Cutting the link
	// while both take writes splits the brain; cutting a region's app from its database
	// fails only that region's writes.
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"east","type":"app_service","params":{"replicas":2}},
	 {"id":"west","type":"app_service","params":{"replicas":2}},
	 {"id":"db-east","type":"database"},{"id":"db-west","type":"database"}],
	 "edges":[{"from":"lb","to":"east"},{"from":"lb","to":"west"},{"from":"east","to":"db-east"},{"from":"west","to":"db-west"},
	  {"from":"db-east","to":"db-west"},{"from":"db-west","to":"db-east"}]}`)
	cfg := constant(400, 40)
	cfg.Mix = Mix{Write: 1}
	cfg.Chaos = []ChaosEvent{
		{ID: "cut-link", Kind: ChaosNetworkPartition, AtSec: 5, DurationSec: 5, From: "db-east", To: "db-west"},
		{ID: "cut-east", Kind: ChaosNetworkPartition, AtSec: 20, DurationSec: 5, From: "east", To: "db-east"},
	}
	r := mustRun(t, d, cfg)
	if !containsString(r.Summary.Failures, "split_brain:db-east:db-west") {
		t.Errorf("failures %v, want split_brain:db-east:db-west", r.Summary.Failures)
	}
	if e := window(r, 5, 10, errRate); e > 0.01 {
		t.Errorf("error rate while the replication link is cut %.3f: both sides keep serving", e)
	}
	if lag := r.Summary.Components[comp(r, "db-west")].MaxLagMs; lag <= 0 {
		t.Error("no replication lag while the link was cut")
	}
	if e := window(r, 20, 25, errRate); !near(e, 0.5, 0.02) {
		t.Errorf("error rate with east cut from its database %.3f, want east's half", e)
	}
}

func TestLatencyInjectionWithTightTimeoutStartsARetryStorm(t *testing.T) {
	// 300 ms extra between app and database, a 200 ms timeout and three retries: the retries
	// pile onto a tier that is then too slow to drain, and the storm outlasts the injection.
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":8}},
	 {"id":"db","type":"database","params":{"connections":10}}],
	 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}]}`)
	cfg := constant(500, 90)
	cfg.Client = Client{TimeoutMs: 200, MaxRetries: 3}
	cfg.Chaos = []ChaosEvent{{ID: "slow", Kind: ChaosLatencyInjection, AtSec: 20, DurationSec: 10, From: "app", To: "db",
		Params: ChaosParams{ExtraLatencyMs: 300}}}
	r := mustRun(t, d, cfg)
	if before := window(r, 10, 20, func(tk Tick) float64 { return tk.RetryRPS }); before > 1 {
		t.Fatalf("retries before the injection %.1f rps, want none", before)
	}
	if during := window(r, 25, 30, func(tk Tick) float64 { return tk.OfferedRPS }); during < 1000 {
		t.Errorf("offered during the injection %.0f rps, want retries to multiply the 500", during)
	}
	if after := window(r, 35, 45, errRate); after < 0.5 {
		t.Errorf("error rate 5–15 s after the injection ended %.3f, want the storm still raging", after)
	}
	if ev := r.Summary.Events[0]; ev.RecoverySec != nil && *ev.RecoverySec < 5 {
		t.Errorf("recovered %.1f s after the injection, want the storm to outlast it", *ev.RecoverySec)
	}
}

func TestQueueContentsSurviveItsOwnFailure(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"q","type":"queue","params":{"workers":1,"job_time_ms":10}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	cfg := constant(100, 40)
	cfg.Mix = Mix{AsyncWrite: 1}
	cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 5, Target: "q"}}
	r := mustRun(t, d, cfg)
	q := comp(r, "q")
	before := r.Ticks[int(10/0.1)-1].Components[q].Backlog
	during := r.Ticks[int(14/0.1)].Components[q].Backlog
	if before <= 0 || !near(during, before, 1e-6) {
		t.Errorf("depth %.1f before the failure, %.1f during: want it kept", before, during)
	}
	if e := window(r, 10, 15, errRate); e < 0.99 {
		t.Errorf("producers' error rate while the queue is down %.3f, want all failing", e)
	}
	after := r.Ticks[int(15/0.1)+1].Components[q].OutputRPS
	if after <= 0 {
		t.Error("consumers did not resume after recovery")
	}
}

func TestAutoscalerSaturatesDuringScaleOutThenRecovers(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"pool","type":"container_pool","params":{"min_replicas":2,"max_replicas":6,"target_utilization":0.6,
	   "scale_out_delay_sec":30,"scale_in_delay_sec":60}}],
	 "edges":[{"from":"lb","to":"pool"}]}`)
	cfg := Config{TickMs: 100, DurationSec: 300, Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000},
		Traffic: Traffic{Kind: "step", RPS: 400, Steps: []TrafficStep{{AtSec: 60, RPS: 1600}, {AtSec: 180, RPS: 400}}}}
	r := mustRun(t, d, cfg)
	pool := comp(r, "pool")
	replicas := func(at float64) int { return r.Ticks[int(at/0.1)].Components[pool].Replicas }
	if replicas(50) != 2 {
		t.Errorf("replicas before the step %d, want 2", replicas(50))
	}
	if e := window(r, 65, 89, errRate); e < 0.2 {
		t.Errorf("error rate during the scale-out delay %.3f, want the existing replicas saturated", e)
	}
	// Saturated, the two replicas read 100% busy, not the 4 × their capacity offered: the
	// first order is for 2 ÷ 0.6 → 4, and the second, once those 4 read 100%, for 6.
	if replicas(100) != 4 {
		t.Errorf("replicas after one delay %d, want 4: a saturated pool grows by 1 ÷ target a delay", replicas(100))
	}
	if replicas(125) != 6 {
		t.Errorf("replicas after two delays %d, want enough for 1,600 rps at 60%%", replicas(125))
	}
	if e := window(r, 125, 180, errRate); e > 0.01 {
		t.Errorf("error rate after scale-out %.3f, want recovered", e)
	}
	// Traffic drops at 180 s; the replicas stay for the 60 s scale-in delay, then go.
	if replicas(235) != replicas(179) {
		t.Errorf("replicas changed within the scale-in delay: %d → %d", replicas(179), replicas(235))
	}
	if replicas(299) >= replicas(179) {
		t.Errorf("replicas %d at the end, want scaled in from %d", replicas(299), replicas(179))
	}
	// The wish grows over the second after the step as the reading takes it in, and each
	// order serves its own delay later, so the pool grows in steps a fraction of a second
	// apart; it grows, then shrinks once, and does not swing.
	turns, last := 0, 0
	for k := 1; k < len(r.Ticks); k++ {
		step := r.Ticks[k].Components[pool].Replicas - r.Ticks[k-1].Components[pool].Replicas
		if step != 0 && last != 0 && (step > 0) != (last > 0) {
			turns++
		}
		if step != 0 {
			last = step
		}
	}
	if turns > 1 {
		t.Errorf("replica count turned %d times, want it to grow and then shrink, no oscillation", turns)
	}
	if c0, c1 := r.Ticks[int(50/0.1)].Components[pool].CostPerHour, r.Ticks[int(150/0.1)].Components[pool].CostPerHour; c1 <= c0 {
		t.Errorf("cost %v → %v, want it to follow the replica count", c0, c1)
	}
}

func gatewayDesign(params string) Design {
	var d Design
	mustJSON(`{"components":[
	 {"id":"gw","type":"api_gateway","params":`+params+`},
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"gw","to":"app"},{"from":"app","to":"db"}]}`, &d)
	return d
}

func TestGatewayRateLimitRejectsTheExcess(t *testing.T) {
	cfg := constant(500, 20)
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, gatewayDesign(`{"rate_limit_rps":300}`), cfg)
	if rej := steady(r, func(tk Tick) float64 { return tk.RejectedRPS }); !near(rej, 200, 1e-6) {
		t.Errorf("rejected %.2f rps, want the 200 over the limit", rej)
	}
	if in := steadyComp(r, "app", func(c ComponentTick) float64 { return c.InputRPS }); !near(in, 300, 1e-6) {
		t.Errorf("app input %.2f rps, want 300", in)
	}
	// Authentication adds its 5 ms to every request.
	if p50 := steady(r, func(tk Tick) float64 { return tk.P50Ms }); p50 < 5 {
		t.Errorf("p50 %.2f ms, want at least the 5 ms of authentication", p50)
	}
}

// The rate limit is a token bucket of one second's tokens refilled at the rate, full at the
// start. Worked by hand for 300 rps and 100 ms ticks (30 tokens a tick, 300 at most):
//   - at 200 rps a tick spends 20 of its 30 and the bucket stays full;
//   - at 900 rps from 5 s a tick wants 90: the bucket goes 300, 240, 180, 120, 60 at the
//     starts of the first five ticks, each letting in its 90, and the sixth finds 0 and
//     lets in the 30 it refills. The first second admits 5×90 + 5×30 = 600, the bucket plus
//     the second's refill; then the rate, 300 a second;
//   - no traffic from 10 s to 10.5 s refills 5×30 = 150; at 900 rps again the ticks let in
//     90 (150+30), 90 (90+30), 60 (30+30), then 30 each: 450 in the first second, half a
//     second's tokens plus the refill.
func TestGatewayRateLimitIsATokenBucket(t *testing.T) {
	cfg := Config{TickMs: 100, DurationSec: 14, Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 2000},
		Traffic: Traffic{Kind: "step", RPS: 200, Steps: []TrafficStep{{AtSec: 5, RPS: 900}, {AtSec: 10, RPS: 0}, {AtSec: 10.5, RPS: 900}}}}
	r := mustRun(t, gatewayDesign(`{"rate_limit_rps":300}`), cfg)
	app := comp(r, "app")
	admitted := func(from, to float64) []float64 { // per tick, requests
		var out []float64
		for _, tk := range r.Ticks {
			if start := tk.T - 0.1; start > from-1e-9 && start < to-1e-9 {
				out = append(out, tk.Components[app].InputRPS*0.1)
			}
		}
		return out
	}
	for _, c := range []struct {
		name     string
		from, to float64
		want     []float64
	}{
		{"below the rate, full", 4, 5, []float64{20, 20, 20, 20, 20, 20, 20, 20, 20, 20}},
		{"3× the rate from full", 5, 6, []float64{90, 90, 90, 90, 90, 30, 30, 30, 30, 30}},
		{"then the rate", 9, 10, []float64{30, 30, 30, 30, 30, 30, 30, 30, 30, 30}},
		{"after half a second's rest", 10.5, 11.5, []float64{90, 90, 60, 30, 30, 30, 30, 30, 30, 30}},
	} {
		// The gateway's own errors at load (a few in a million) do not reach the app.
		if diff := cmp.Diff(c.want, admitted(c.from, c.to), cmpopts.EquateApprox(1e-4, 0)); diff != "" {
			t.Errorf("%s: admitted per tick (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestCircuitBreakerOpensOnFailingDownstreamAndClosesAfterRecovery(t *testing.T) {
	cfg := constant(200, 60)
	cfg.Mix = Mix{Read: 1}
	cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 15, Target: "db"}}
	r := mustRun(t, gatewayDesign(`{"breaker_error_threshold":0.5,"breaker_window_sec":2,"breaker_open_sec":5}`), cfg)
	gw, app := comp(r, "gw"), comp(r, "app")
	state := func(at float64) Breaker { return r.Ticks[int(at/0.1)].Components[gw].Breaker }
	if s := state(5); s != BreakerClosed {
		t.Errorf("breaker before the failure %q, want closed", s)
	}
	if s := state(14); s != BreakerOpen {
		t.Errorf("breaker during the failure %q, want open", s)
	}
	if in := r.Ticks[int(14/0.1)].Components[app].InputRPS; in != 0 {
		t.Errorf("app input with the breaker open %.1f, want none", in)
	}
	sawHalfOpen := false
	for _, tk := range r.Ticks {
		sawHalfOpen = sawHalfOpen || tk.Components[gw].Breaker == BreakerHalfOpen
	}
	if !sawHalfOpen {
		t.Error("breaker never probed half-open")
	}
	if s := state(55); s != BreakerClosed {
		t.Errorf("breaker long after recovery %q, want closed", s)
	}
	if e := window(r, 45, 60, errRate); e > 0.01 {
		t.Errorf("error rate after recovery %.3f, want ~0", e)
	}
}

func TestServerlessColdStartsExecutionLimitAndPrice(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":100,
	  "service_time_ms":50,"cold_start_ms":400,"max_execution_ms":200,"memory_mb":1024}}],"edges":[]}`)
	cfg := constant(200, 30)
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, d, cfg)
	fn := comp(r, "fn")
	if cold := r.Ticks[0].Components[fn].ColdStartShare; cold <= 0 {
		t.Error("no cold starts on the first invocations")
	}
	if cold := r.Ticks[len(r.Ticks)-1].Components[fn].ColdStartShare; cold != 0 {
		t.Errorf("cold start share %v once warm, want 0", cold)
	}
	if !(r.Ticks[0].P99Ms > 400) {
		t.Errorf("first tick p99 %.0f ms, want the 400 ms cold start in the tail", r.Ticks[0].P99Ms)
	}
	// Executions are exponential with a 50 ms mean: e^(−200/50) of them exceed the limit.
	if e := steady(r, errRate); !near(e, math.Exp(-4), 0.01) {
		t.Errorf("error rate %.5f, want e^-4 = %.5f killed at the limit", e, math.Exp(-4))
	}
	// 200 invocations/s: $0.20 per million plus 10 concurrent GB-executions at $0.0000166667/GB-s.
	want := 200*3600/1e6*0.20 + 200*0.05*1*3600*0.0000166667
	if c := steadyComp(r, "fn", func(c ComponentTick) float64 { return c.CostPerHour }); !near(c, want, 0.01) {
		t.Errorf("cost %.4f $/h, want %.4f", c, want)
	}
}

// A cold start counts against the function's concurrency, as on the public platforms: the
// new instance holds its slot for the cold start and its first execution. Worked by hand:
// 50 slots, 20 ms executions, 250 ms cold starts, 1,000 rps from the start, when no instance
// exists, ticks of 100 ms. The first 50 invocations start 50 instances, which hold every slot
// until 0.27 s; the other 50 of the first tick and all 100 of the second are throttled; in
// the third, the 70 arriving before 0.27 s are throttled and the 30 after find 50 ready
// instances at 20 Erlangs (Erlang B); from the fourth on, only Erlang B.
func TestServerlessColdStartsHoldTheirSlots(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":50,
	  "service_time_ms":20,"cold_start_ms":250,"memory_mb":1024}}],"edges":[]}`)
	cfg := constant(1000, 2)
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, d, cfg)
	b := directErlangB(50, 20)
	for k, want := range []float64{500, 1000, 700 + 300*b, 1000 * b, 1000 * b} {
		if got := r.Ticks[k].RejectedRPS; !near(got, want, 1e-6) {
			t.Errorf("tick %d: %.3f rps throttled, want %.3f", k, got, want)
		}
	}
	fn := comp(r, "fn")
	if cold := r.Ticks[0].Components[fn].ColdStartShare; !near(cold, 1, 1e-9) {
		t.Errorf("first tick: cold start share %v, want 1 (every invocation served started an instance)", cold)
	}
	if cold := r.Ticks[2].Components[fn].ColdStartShare; cold != 0 {
		t.Errorf("third tick: cold start share %v, want 0 (no slot free to start one)", cold)
	}
	if !(r.Ticks[0].P99Ms > 250) {
		t.Errorf("first tick p99 %.0f ms, want the 250 ms cold start in the tail", r.Ticks[0].P99Ms)
	}
}

func TestServerlessThrottlesBeyondMaxConcurrency(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":10,"service_time_ms":100}}],"edges":[]}`)
	cfg := constant(200, 10) // needs 20 concurrent executions
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, d, cfg)
	if rej := steady(r, func(tk Tick) float64 { return tk.RejectedRPS / tk.OfferedRPS }); !near(rej, directErlangB(10, 20), 1e-6) {
		t.Errorf("throttled share %.4f, want Erlang B(10, 20)", rej)
	}
}

func TestSlidingMaxMatchesBruteForce(t *testing.T) {
	const window = 7
	s := newSlidingMax(window)
	var vals []float64
	for tick := 0; tick < 200; tick++ {
		v := math.Abs(math.Sin(float64(tick)*1.7)) * float64(tick%13)
		vals = append(vals, v)
		got := s.push(tick, v, window)
		want := 0.0
		for k := max(0, tick-window+1); k <= tick; k++ {
			want = max(want, vals[k])
		}
		if got != want {
			t.Fatalf("tick %d: max %v, want %v", tick, got, want)
		}
	}
}

// A balancer's health checks probe every interval at a phase nothing fixes, and take a
// backend out after threshold failed probes in a row: in expectation over the phase, the
// dead backend's share still fails in full for (threshold − 1) × interval and then falls
// linearly to none over one more interval. A cut link is detected the same way. A repaired
// backend comes back at its next passing probe: its share returns linearly over one
// interval.
func TestHealthChecksNoticeOverTheLastInterval(t *testing.T) {
	design := func(lb string) Design {
		return mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer","params":`+lb+`},
		 {"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`)
	}
	tests := []struct {
		name                  string
		lb                    string
		chaos                 ChaosEvent
		firstSec, intervalSec float64
	}{
		{"defaults: 2 checks 5 s apart", `{}`, ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 20, Target: "a"}, 5, 5},
		{"1 check every second", `{"health_check_interval_sec":1,"unhealthy_threshold":1}`,
			ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 20, Target: "a"}, 0, 1},
		{"3 checks 2 s apart", `{"health_check_interval_sec":2,"unhealthy_threshold":3}`,
			ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 20, Target: "a"}, 4, 2},
		{"a cut link", `{"health_check_interval_sec":1.5}`,
			ChaosEvent{Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 20, From: "lb", To: "a"}, 1.5, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := constant(400, 40)
			cfg.Mix = Mix{Static: 1}
			cfg.Chaos = []ChaosEvent{tt.chaos}
			r := mustRun(t, design(tt.lb), cfg)
			noticed := 10 + tt.firstSec
			if tt.firstSec > 0 {
				if e := window(r, 10, noticed, errRate); !near(e, 0.5, 0.01) {
					t.Errorf("error rate before any phase notices %.3f, want the dead backend's half", e)
				}
			}
			if e := window(r, noticed, noticed+tt.intervalSec, errRate); !near(e, 0.25, 0.01) {
				t.Errorf("error rate over the interval in which the checks notice %.3f, want a half falling linearly to none (0.25)", e)
			}
			if e := window(r, noticed+tt.intervalSec, 30, errRate); e > 0.001 {
				t.Errorf("error rate after every phase noticed %.4f, want none", e)
			}
			a := func(tk Tick) float64 { return tk.Components[comp(r, "a")].InputRPS }
			if in := window(r, 30, 30+tt.intervalSec, a); !near(in, 100, 0.01) {
				t.Errorf("a's input over the interval after it is back %.1f rps, want its half returning linearly (100)", in)
			}
			if in := window(r, 30+tt.intervalSec, 40, a); !near(in, 200, 1e-6) {
				t.Errorf("a's input once every phase has probed it %.1f rps, want its half again", in)
			}
		})
	}
}

// A backend down for less than (threshold − 1) × interval is never taken out; one down for
// part of the last interval is taken out in that part of the phases, and those phases let
// it back in later.
func TestHealthChecksShortFailures(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer"},
	 {"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`)
	a := func(r *Result) func(Tick) float64 {
		return func(tk Tick) float64 { return tk.Components[comp(r, "a")].InputRPS }
	}
	run := func(down float64) *Result {
		cfg := constant(400, 40)
		cfg.Mix = Mix{Static: 1}
		cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: down, Target: "a"}}
		return mustRun(t, d, cfg)
	}
	short := run(4)
	if e := window(short, 10, 14, errRate); !near(e, 0.5, 0.01) {
		t.Errorf("down 4 s: error rate %.3f, want its half throughout", e)
	}
	if in := window(short, 14, 20, a(short)); !near(in, 200, 1e-6) {
		t.Errorf("down 4 s: a's input after %.1f rps, want its half at once", in)
	}
	// Down 7.5 s: half the phases took it out (from 5 to 7.5 s), and those let it back in
	// 2.5 to 5 s after the repair: over [17.5, 20) half the phases keep it out, then
	// linearly fewer until 22.5 s.
	mid := run(7.5)
	if in := window(mid, 17.5, 20, a(mid)); !near(in, 100, 0.01) {
		t.Errorf("down 7.5 s: a's input just after the repair %.1f rps, want half its share (100)", in)
	}
	if in := window(mid, 20, 22.5, a(mid)); !near(in, 150, 0.01) {
		t.Errorf("down 7.5 s: a's input 2.5–5 s after the repair %.1f rps, want 150", in)
	}
	if in := window(mid, 22.5, 30, a(mid)); !near(in, 200, 1e-6) {
		t.Errorf("down 7.5 s: a's input 5 s after the repair %.1f rps, want its half", in)
	}
}

// Round-robin deals each backend every n-th request, a more regular stream than a random
// split's, and it waits less (as the per-request reference's backends do:
// TestRoundRobinWaitsAsTheReference in internal/reference). Least-connections and one
// backend stay exact M/M/c/K.
func TestRoundRobinArrivalsWaitLess(t *testing.T) {
	design := func(algorithm string, backends int) Design {
		return balancedDesign(t, `{"algorithm":"`+algorithm+`"}`, backends)
	}
	// Each backend: 6 workers at 15 ms (400 rps), offered 320 rps: 80% busy.
	run := func(algorithm string, backends int) *Result {
		cfg := constant(320*float64(backends), 20)
		cfg.Mix = Mix{Static: 1}
		return mustRun(t, design(algorithm, backends), cfg)
	}
	wait := func(r *Result) float64 {
		return steadyComp(r, "a", func(c ComponentTick) float64 { return c.MeanMs }) - 15
	}
	for _, n := range []int{2, 3, 4} {
		random := wait(run("least_connections", n))
		if want := 1000 * exactMMcKWait(6, 64, 320, 1000/15.0); !near(random, want, 1e-9) {
			t.Errorf("least-connections over %d: wait %.6f ms, want M/M/6/70's %.6f", n, random, want)
		}
		r := run("round_robin", n)
		if rr := wait(r); !(rr < random) {
			t.Errorf("round-robin over %d: wait %.4f ms, want less than a random split's %.4f", n, rr, random)
		}
	}
	// One backend gets the whole Poisson stream: exact M/M/c/K.
	if one, random := wait(run("round_robin", 1)), wait(run("least_connections", 1)); !near(one, random, 1e-9) {
		t.Errorf("round-robin over one backend waits %.4f ms, want M/M/c's %.4f", one, random)
	}
}

// A run starts in the middle of a day whose traffic has been flowing: a pool whose
// min_replicas is below what its first traffic needs starts scaled for it, within the first
// ticks, rather than spending its first scale-out delay overloaded and ending up with more
// replicas than a pool that began at the need (which turned "fewer minimum replicas" into
// a way to buy spare capacity for later).
func TestAutoscalerStartsScaledForTheFirstTraffic(t *testing.T) {
	const target = 0.85
	run := func(minReplicas int) *Result {
		d := mustDesign(t, fmt.Sprintf(`{"components":[
		 {"id":"pool","type":"container_pool","params":{"min_replicas":%d,"max_replicas":10,"target_utilization":%g,
		   "scale_out_delay_sec":30,"scale_in_delay_sec":60}}],"edges":[]}`, minReplicas, target))
		cfg := constant(400, 120)
		cfg.Mix = Mix{Static: 1}
		return mustRun(t, d, cfg)
	}
	const settled = 1.0 // s: the warm-up decisions are taken within it
	below := run(1)
	last := below.Ticks[len(below.Ticks)-1].Components[0]
	need := last.Replicas
	if !(need > 1 && last.Utilization <= target && last.Utilization*float64(need)/float64(need-1) > target) {
		t.Fatalf("min_replicas 1 ends at %d replicas at %.2f utilisation: want the fewest within the %.2f target",
			need, last.Utilization, target)
	}
	for _, tc := range []struct {
		name        string
		minReplicas int
		want        int
	}{
		{"below the need", 1, need},
		{"at the need", need, need},
		{"above the need", need + 2, need + 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(tc.minReplicas)
			for _, tk := range r.Ticks {
				if got := tk.Components[0].Replicas; tk.T > settled && got != tc.want {
					t.Fatalf("at %.1f s: %d replicas, want %d from the warm-up decisions on", tk.T, got, tc.want)
				}
			}
			if e := window(r, settled, 120, errRate); e > 0.001 {
				t.Errorf("error rate after the warm-up decisions %.4f, want none: the pool started scaled", e)
			}
		})
	}
}

// exactMMcKWait is the mean wait in seconds of an admitted arrival at M/M/c/K (c workers of
// rate mu, places waiting places, Poisson arrivals at lambda), summed state by state.
func exactMMcKWait(c, places int, lambda, mu float64) float64 {
	p, total, queued := 1.0, 1.0, 0.0
	for n := 1; n <= c+places; n++ {
		p *= lambda / (float64(min(n, c)) * mu)
		total += p
		queued += float64(max(0, n-c)) * p
	}
	full := p / total
	return queued / total / (lambda * (1 - full))
}

// A breaker's probe is judged when its answer comes, within a tick: refused at once, it
// opens the breaker again a few milliseconds into the half-open, not a whole tick later, so
// a breaker open for 1 s over a dead app cycles every 1 s and a little, as the per-request
// one does (10 openings from 10.75 s to 20 s), where a half-open lasting whole ticks of
// 250 ms cycles every 1.25 s (8 openings). Once the trouble is over, the first probe answers
// and the breaker closes in the tick it probes, for good: the few answers to requests sent
// before it closed (a slow call's timeouts) are not held against it.
func TestBreakerProbesAreJudgedWhenTheyAnswer(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func() (Design, Config)
		opens float64
	}{
		{"over a dead app", breakerOverFailedApp(0.8), 10},
		{"over a slow call", breakerOverSlowCall(0.8), 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, cfg := c.build()
			s := engineSeries(mustRun(t, d, cfg))
			if opens, _ := breakerOpenings("gw")(s); opens != c.opens {
				t.Errorf("breaker opened %v times over a 10 s trouble, want %v", opens, c.opens)
			}
			// Open for 1 s from its last opening before 20 s, then closed by the first probe.
			if closed, ok := breakerClosesSec("gw", 20)(s); !ok || closed > 1.25 {
				t.Errorf("breaker closed for good %.2f s after the trouble (closed at the end: %v), want within 1.25 s", closed, ok)
			}
		})
	}
}
