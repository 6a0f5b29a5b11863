package sim

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// The seeds' own situations, reproduced.

// archSim is seed architecture-simulator's default: 400 rps offered, a balancer, an app
// tier of 640 rps (4 replicas × 8 workers ÷ 50 ms), a database of 250 rps (5 connections ÷
// 20 ms), one query per request, a 1 s client timeout and one retry, 250 ms steps.
func archSim(cache string) (Design, Config) {
	d := `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":8,"service_time_ms":50}},
	 ` + cache + `
	 {"id":"db","type":"database","params":{"connections":5,"query_time_ms":20}}],
	 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}`
	if cache != "" {
		d += `,{"from":"app","to":"cache"}`
	}
	d += `]}`
	var des Design
	mustJSON(d, &des)
	cfg := Config{TickMs: 250, DurationSec: 10, Traffic: Traffic{Kind: "constant", RPS: 400}, Mix: Mix{Read: 1},
		Client: Client{TimeoutMs: 1000, MaxRetries: 1}}
	return des, cfg
}

func TestArchitectureSimulatorDefaultDatabaseSaturatesFirst(t *testing.T) {
	d, cfg := archSim("")
	r := mustRun(t, d, cfg)
	s := r.Summary
	if len(s.Why) == 0 || s.Why[0].Component != "db" || s.Why[0].Cause != CauseSaturated {
		t.Fatalf("why = %+v, want db saturated", s.Why)
	}
	if s.FirstFailingSec == nil {
		t.Fatal("no failing step reported; the seed's rule (>5% failing in a step) must trip")
	}
	// Latency climbs to the client's timeout, and no further: what is slower is not an answer.
	first, last := r.Ticks[0], r.Ticks[len(r.Ticks)-1]
	if !(last.P99Ms > first.P99Ms) || last.P99Ms > cfg.Client.TimeoutMs {
		t.Errorf("p99 first %.0f ms, last %.0f ms: latency should climb to the %.0f ms timeout", first.P99Ms, last.P99Ms, cfg.Client.TimeoutMs)
	}
	// The app's queue holds more than a timeout's worth of its throughput: nearly every
	// request times out waiting (the few whose wait falls short of the mean are answered in
	// time, as in the per-request reference), and the app serves work whose clients have left.
	if last.ServedRPS > 0.1*cfg.Traffic.RPS || r.Summary.Components[comp(r, "app")].Late <= 0 {
		t.Errorf("served %.1f rps at the end, app late work %.0f: want clients to time out in the app's queue",
			last.ServedRPS, r.Summary.Components[comp(r, "app")].Late)
	}
	// The app's workers wait on the database, so its own buffer fills: the cascade.
	app := comp(r, "app")
	if fill := r.Ticks[len(r.Ticks)-1].Components[app].QueueFill; fill < 0.99 {
		t.Errorf("app queue fill at the end = %.2f, want full: its workers are stuck on the database", fill)
	}
	// Retries feed the next steps: offered load climbs above 400.
	if last.OfferedRPS <= 400 {
		t.Errorf("offered at the end = %.0f rps, want retries on top of 400", last.OfferedRPS)
	}
}

func TestArchitectureSimulatorCacheHolds(t *testing.T) {
	d, cfg := archSim(`{"id":"cache","type":"cache","params":{"hit_ratio":0.6}},`)
	r := mustRun(t, d, cfg)
	s := r.Summary
	if s.FirstFailingSec != nil {
		t.Fatalf("failing step at %v s; a 60%% hit ratio leaves the database at 64%% and must hold", *s.FirstFailingSec)
	}
	if len(s.Why) != 0 {
		t.Errorf("why %+v, want none", s.Why)
	}
	if s.Busiest != "app" {
		t.Errorf("busiest %q, want app", s.Busiest)
	}
	if db := steadyComp(r, "db", func(c ComponentTick) float64 { return c.InputRPS }); !near(db, 160, 0.01) {
		t.Errorf("database input %.1f rps, want 40%% of 400 = 160", db)
	}
}

func TestSimpleModelCapacities(t *testing.T) {
	// seed simple-model: an app server is 6 workers × 15 ms = 400 req/s; a database node 10 × 8 ms = 1,250 q/s.
	tests := []struct {
		name, design, id string
		mix              Mix
		rps, wantUtil    float64
	}{
		{"app server", `{"components":[{"id":"app","type":"app_service"}],"edges":[]}`, "app", Mix{Static: 1}, 200, 0.5},
		{"database", `{"components":[{"id":"app","type":"app_service","params":{"replicas":10}},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"db"}]}`, "db", Mix{Write: 1}, 625, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := constant(tt.rps, 10)
			cfg.Mix = tt.mix
			r := mustRun(t, mustDesign(t, tt.design), cfg)
			// Within 1e-4: the app's load-dependent error rate fails a trace of requests first.
			if u := steadyComp(r, tt.id, func(c ComponentTick) float64 { return c.Utilization }); !near(u, tt.wantUtil, 1e-4) {
				t.Errorf("utilisation = %v, want %v", u, tt.wantUtil)
			}
		})
	}
}

func TestNoWaitingRoomLosesAsErlangB(t *testing.T) {
	// 6 workers × 15 ms offered 125% (500 rps) with no waiting room: about a third is lost.
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"queue_per_replica":0}}],"edges":[]}`)
	cfg := constant(500, 10)
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, d, cfg)
	lost := steady(r, func(tk Tick) float64 { return tk.RejectedRPS / tk.OfferedRPS })
	if want := directErlangB(6, 7.5); !near(lost, want, 1e-9) {
		t.Errorf("lost share = %v, want Erlang B(6, 7.5) = %v", lost, want)
	}
	if lost < 0.30 || lost > 0.40 {
		t.Errorf("lost share = %v, want about a third (the fluid model would say a fifth)", lost)
	}
}

func TestOverloadWithFullBufferRejectsTheExcess(t *testing.T) {
	// At 200% of capacity, once the buffer is full, half of what arrives is rejected.
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"queue_per_replica":50}}],"edges":[]}`)
	cfg := constant(800, 20)
	cfg.Mix = Mix{Static: 1}
	cfg.Client.TimeoutMs = 0
	r := mustRun(t, d, cfg)
	if got := steady(r, func(tk Tick) float64 { return tk.RejectedRPS / tk.OfferedRPS }); !near(got, 0.5, 1e-9) {
		t.Errorf("rejected share = %v, want 0.5", got)
	}
	app := r.Ticks[len(r.Ticks)-1].Components[0]
	if app.Backlog != 50 || app.QueueFill != 1 {
		t.Errorf("backlog %v fill %v, want a full buffer of 50", app.Backlog, app.QueueFill)
	}
	// A request waits backlog ÷ capacity on top of its service: 50/400 s = 125 ms.
	if p50 := r.Ticks[len(r.Ticks)-1].P50Ms; p50 < 125 {
		t.Errorf("p50 = %.1f ms, want at least the 125 ms backlog wait", p50)
	}
}

func TestSynchronousCallsHoldTheCallersWorkers(t *testing.T) {
	// Slow the database (still below saturation): app utilisation rises while its traffic stays the same.
	run := func(queryMs string) (appUtil, appIn float64) {
		d := mustDesign(t, `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":4}},
		 {"id":"db","type":"database","params":{"connections":20,"query_time_ms":`+queryMs+`}}],
		 "edges":[{"from":"app","to":"db"}]}`)
		r := mustRun(t, d, constant(300, 20))
		return steadyComp(r, "app", func(c ComponentTick) float64 { return c.Utilization }),
			steadyComp(r, "app", func(c ComponentTick) float64 { return c.InputRPS })
	}
	fastU, fastIn := run("5")
	slowU, slowIn := run("40")
	if !near(fastIn, slowIn, 1e-9) {
		t.Fatalf("app traffic changed: %v vs %v", fastIn, slowIn)
	}
	if !(slowU > fastU*1.5) {
		t.Errorf("app utilisation %.3f with a fast database, %.3f with a slow one: want it to rise", fastU, slowU)
	}
}

func TestAsyncHandOffDoesNotHoldTheCaller(t *testing.T) {
	run := func(jobMs string) float64 {
		d := mustDesign(t, `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":2}},
		 {"id":"q","type":"queue","params":{"workers":50,"job_time_ms":`+jobMs+`}},
		 {"id":"db","type":"database","params":{"connections":20}}],
		 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
		cfg := constant(300, 20)
		cfg.Mix = Mix{AsyncWrite: 1}
		r := mustRun(t, d, cfg)
		return steadyComp(r, "app", func(c ComponentTick) float64 { return c.Utilization })
	}
	if fast, slow := run("5"), run("100"); !near(fast, slow, 1e-9) {
		t.Errorf("app utilisation %.4f vs %.4f: slower queue workers must not hold app workers", fast, slow)
	}
}

func TestRequestClassesFollowTheirPaths(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"cdn","type":"cdn","params":{"hit_ratio":0.9}},
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":8}},
	 {"id":"cache","type":"cache","params":{"hit_ratio":0.75}},
	 {"id":"q","type":"queue","params":{"workers":20}},
	 {"id":"db","type":"database","params":{"connections":20}}],
	 "edges":[{"from":"cdn","to":"lb"},{"from":"lb","to":"app"},{"from":"app","to":"cache"},{"from":"app","to":"db"},
	  {"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	cfg := constant(1000, 20)
	cfg.Mix = Mix{Static: 0.4, Read: 0.4, Write: 0.1, AsyncWrite: 0.1}
	r := mustRun(t, d, cfg)
	in := func(id string) float64 { return steadyComp(r, id, func(c ComponentTick) float64 { return c.InputRPS }) }
	checks := []struct {
		id   string
		want float64
	}{
		{"cdn", 1000},
		{"lb", 1000 - 0.9*400},        // static hits stay at the edge
		{"app", 40 + 400 + 100 + 100}, // static misses, reads, writes, async writes
		{"cache", 400},
		{"q", 100 + 100},        // broker takes the 100 async writes; consumers take the 100 jobs
		{"db", 100 + 100 + 100}, // misses (25% of reads), sync writes, one write per job
	}
	for _, c := range checks {
		if got := in(c.id); !near(got, c.want, 1e-4) {
			t.Errorf("%s input = %.3f rps, want %.3f", c.id, got, c.want)
		}
	}
	if s := r.Summary; s.ErrorRate > 0.01 {
		t.Errorf("error rate %v: a comfortable design should not fail", s.ErrorRate)
	}
}

func TestReadsSpreadOverReplicasAndReplicasReplayWrites(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":20}},
	 {"id":"db","type":"database","params":{"read_replicas":2}}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := constant(2000, 20)
	cfg.Mix = Mix{Read: 0.8, Write: 0.2}
	r := mustRun(t, d, cfg)
	// Three nodes of 1,250 q/s: 400 writes on the primary, 160 replayed on each replica,
	// 1,600 reads spread by spare capacity (850 on the primary, 1,090 on each replica).
	// The busiest node is the primary.
	spareP, spareR := 1250-400.0, 1250-160.0
	want := (400 + 1600*spareP/(spareP+2*spareR)) / 1250
	if u := steadyComp(r, "db", func(c ComponentTick) float64 { return c.Utilization }); !near(u, want, 1e-4) {
		t.Errorf("database utilisation %.4f, want %.4f on the primary", u, want)
	}
	if lag := r.Summary.Components[comp(r, "db")].MaxLagMs; lag != 0 {
		t.Errorf("replication lag %v ms, want none", lag)
	}
}

func TestReplicaThatCannotKeepUpLagsAndFailsTheRun(t *testing.T) {
	// 1,000 writes/s and 2,000 reads/s on two nodes of 1,250 q/s: the replica replays 400 q/s
	// and cannot also serve its share of the reads, so its replay falls further behind.
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":200}},
	 {"id":"db","type":"database","params":{"read_replicas":1}}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := constant(3000, 30)
	cfg.Mix = Mix{Read: 2.0 / 3, Write: 1.0 / 3}
	cfg.Client.TimeoutMs = 0
	r := mustRun(t, d, cfg)
	s := r.Summary
	if s.Components[comp(r, "db")].MaxLagMs <= 0 {
		t.Fatal("no replication lag reported")
	}
	if !containsString(s.Failures, "replication_lag:db") {
		t.Errorf("failures %v, want replication_lag:db", s.Failures)
	}
}

func TestQueueThatOutrunsTheDatabaseLosesAcknowledgedWrites(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"q","type":"queue","params":{"workers":100,"buffer":1000000}},
	 {"id":"db","type":"database","params":{"connections":2}}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	cfg := constant(600, 30)
	cfg.Mix = Mix{AsyncWrite: 1}
	r := mustRun(t, d, cfg)
	s := r.Summary
	if s.ErrorRate > 0.001 {
		t.Errorf("error rate %v: the queue acknowledges every write, so the client sees success", s.ErrorRate)
	}
	// The database stores 250/s of 600/s: 350/s pile up for 30 s.
	if !near(s.LostWrites, 350*30, 0.02) {
		t.Errorf("lost writes = %.0f, want about %d", s.LostWrites, 350*30)
	}
	if !containsString(s.Failures, "lost_data:q") {
		t.Errorf("failures %v, want lost_data:q", s.Failures)
	}
}

func TestFullQueuePushesBackOnProducers(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"q","type":"queue","params":{"workers":1,"job_time_ms":10,"buffer":500}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	cfg := constant(300, 30)
	cfg.Mix = Mix{AsyncWrite: 1}
	r := mustRun(t, d, cfg)
	last := r.Ticks[len(r.Ticks)-1]
	if last.Components[comp(r, "q")].QueueFill < 0.95 {
		t.Fatalf("queue fill %v, want full", last.Components[comp(r, "q")].QueueFill)
	}
	// One worker at 10 ms + an 8 ms write drains about 55/s; the rest is refused.
	if last.RejectedRPS < 200 {
		t.Errorf("rejected %.0f rps, want producers refused once the queue is full", last.RejectedRPS)
	}
}

func TestCacheMemoryBelowWorkingSetLowersHitRatio(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"cache","type":"cache","params":{"hit_ratio":0.9,"memory_gb":2}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"cache"},{"from":"app","to":"db"}]}`)
	cfg := constant(500, 10)
	cfg.WorkingSetGB = 8
	r := mustRun(t, d, cfg)
	if h := steadyComp(r, "cache", func(c ComponentTick) float64 { return c.HitRatio }); !near(h, 0.9*2/8, 1e-9) {
		t.Errorf("hit ratio %v, want 0.9 × 2/8", h)
	}
}

func TestCostsFollowTheCatalog(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":3}},
	 {"id":"db","type":"database","params":{"read_replicas":1}}],
	 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}]}`)
	r := mustRun(t, d, constant(100, 5))
	probes := 3600 / 5.0 * 0.25 / 1e6 // the balancer's default checks: one backend every 5 s at 25¢ a million
	want := (20+3*40+2*120)/730.0 + probes
	if got := r.Summary.CostPerHour; !near(got, want, 1e-9) {
		t.Errorf("cost per hour = %v, want %v", got, want)
	}
	if got := r.Summary.TotalCost; !near(got, want*5/3600, 1e-9) {
		t.Errorf("total cost = %v, want %v", got, want*5/3600)
	}
}

// balancedDesign is a balancer with the given params in front of n single-replica apps.
func balancedDesign(t *testing.T, lbParams string, backends int) Design {
	t.Helper()
	comps := `{"id":"lb","type":"load_balancer","params":` + lbParams + `}`
	edges := ""
	for i := range backends {
		id := string(rune('a' + i))
		comps += `,{"id":"` + id + `","type":"app_service"}`
		if i > 0 {
			edges += ","
		}
		edges += `{"from":"lb","to":"` + id + `"}`
	}
	return mustDesign(t, `{"components":[`+comps+`],"edges":[`+edges+`]}`)
}

// Health checks cost a probe of each backend every interval: twice the backends or half the
// interval costs twice as much, and checks that are off cost nothing.
func TestHealthChecksCost(t *testing.T) {
	base := func(backends int) float64 { return (20 + float64(backends)*40) / 730.0 }
	for _, tt := range []struct {
		lb       string
		backends int
		probes   float64 // an hour
	}{
		{`{}`, 1, 720},
		{`{}`, 2, 1440},
		{`{"health_check_interval_sec":0.1}`, 2, 72000},
		{`{"health_check_interval_sec":0.1,"health_checks":false}`, 2, 0},
	} {
		r := mustRun(t, balancedDesign(t, tt.lb, tt.backends), constant(100, 5))
		want := base(tt.backends) + tt.probes*0.25/1e6
		if got := r.Summary.CostPerHour; !near(got, want, 1e-9) {
			t.Errorf("%s with %d backends: cost per hour %v, want %v (%v probes an hour)", tt.lb, tt.backends, got, want, tt.probes)
		}
	}
}

func TestBalancerSplits(t *testing.T) {
	design := func(alg string) Design {
		return mustDesign(t, `{"components":[
		 {"id":"lb","type":"load_balancer","params":{"algorithm":"`+alg+`"}},
		 {"id":"a","type":"app_service","params":{"replicas":2}},
		 {"id":"b","type":"app_service","params":{"replicas":2}},
		 {"id":"c","type":"app_service","params":{"replicas":4}}],
		 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"lb","to":"c"}]}`)
	}
	cfg := constant(600, 5)
	cfg.Mix = Mix{Static: 1}
	inputs := func(alg string) []float64 {
		r := mustRun(t, design(alg), cfg)
		var out []float64
		for _, id := range []string{"a", "b", "c"} {
			out = append(out, steadyComp(r, id, func(c ComponentTick) float64 { return c.InputRPS }))
		}
		return out
	}
	if got := inputs("round_robin"); !near(got[0], 200, 1e-9) || !near(got[2], 200, 1e-9) {
		t.Errorf("round robin = %v, want 200 each", got)
	}
	// Least-connections levels outstanding requests: all three take 15 ms and none is near
	// its capacity (3 outstanding each), so they draw alike whatever their size.
	if got := inputs("least_connections"); !near(got[0], 200, 1e-6) || !near(got[2], 200, 1e-6) {
		t.Errorf("least connections = %v, want 200 each (outstanding requests level)", got)
	}
	got := inputs("consistent_hash")
	shares := ringShares([]string{"a", "b", "c"})
	for i := range got {
		if !near(got[i], 600*shares[i], 1e-6) {
			t.Errorf("consistent hash input %d = %v, want %v", i, got[i], 600*shares[i])
		}
	}
	if math.Abs(got[0]-got[1]) < 1 {
		t.Errorf("consistent hash split %v shows no skew", got)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The engine's own per-tick quantiles for a single M/M/c pool match the exact Erlang-C
// response-time quantiles within 5% (computed here by bisection on the closed form).
func TestEngineQuantilesOfOneWorkerPoolAreExact(t *testing.T) {
	for _, c := range []int{1, 2, 6, 10, 32} {
		for _, rho := range []float64{0.1, 0.5, 0.8, 0.9, 0.95} {
			serviceMs := 20.0
			mu := 1000 / serviceMs
			lambda := rho * float64(c) * mu
			d := mustDesign(t, fmt.Sprintf(`{"components":[{"id":"app","type":"app_service",
			  "params":{"concurrency":%d,"service_time_ms":%g,"queue_per_replica":1000000}}],"edges":[]}`, c, serviceMs))
			cfg := constant(lambda, 5)
			cfg.Mix = Mix{Static: 1}
			cfg.Client = Client{}
			r := mustRun(t, d, cfg)
			last := r.Ticks[len(r.Ticks)-1]
			surv := func(x float64) float64 { return exactMMCSurvival(c, mu, lambda, x) }
			for _, q := range []struct {
				p   float64
				got float64
			}{{0.95, last.P95Ms}, {0.99, last.P99Ms}} {
				want := quantileByBisection(surv, q.p) * 1000
				if !near(q.got, want, 0.05) {
					t.Errorf("c=%d ρ=%.2f p%.0f = %.3f ms, exact %.3f ms", c, rho, q.p*100, q.got, want)
				}
			}
		}
	}
}

func TestCacheMemoryComesFromNodesThatArePaidFor(t *testing.T) {
	run := func(params string) (hit, cost float64) {
		d := mustDesign(t, `{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":4}},
		 {"id":"cache","type":"cache","params":`+params+`},
		 {"id":"db","type":"database"}],
		 "edges":[{"from":"app","to":"cache"},{"from":"app","to":"db"}]}`)
		cfg := constant(500, 5)
		cfg.WorkingSetGB = 8
		r := mustRun(t, d, cfg)
		return steadyComp(r, "cache", func(c ComponentTick) float64 { return c.HitRatio }),
			steadyComp(r, "cache", func(c ComponentTick) float64 { return c.CostPerHour })
	}
	smallHit, smallCost := run(`{"hit_ratio":0.8}`)
	largeHit, largeCost := run(`{"hit_ratio":0.8,"instance_type":"cache.large"}`)
	clusterHit, clusterCost := run(`{"hit_ratio":0.8,"memory_gb":8}`)
	if !near(smallHit, 0.1, 1e-9) || !near(largeHit, 0.8, 1e-9) || !near(clusterHit, 0.8, 1e-9) {
		t.Errorf("hit ratios small %v, large %v, 8-node cluster %v; want 0.1, 0.8, 0.8", smallHit, largeHit, clusterHit)
	}
	if !near(clusterCost, 8*smallCost, 1e-9) || !(largeCost > smallCost) {
		t.Errorf("costs small %v, large %v, cluster %v: memory must be paid for", smallCost, largeCost, clusterCost)
	}
}

func TestAutoscalerDoesNotOvershootWhenReplicasJoin(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"pool","type":"container_pool","params":{"min_replicas":3,"max_replicas":10,"target_utilization":0.5,
	   "scale_out_delay_sec":10,"scale_in_delay_sec":600}},
	 {"id":"db","type":"database"}],"edges":[{"from":"pool","to":"db"}]}`)
	cfg := constant(400, 60)
	cfg.Mix = Mix{Read: 0.8, Write: 0.2}
	r := mustRun(t, d, cfg)
	pool := comp(r, "pool")
	if got := r.Ticks[len(r.Ticks)-1].Components[pool].Replicas; got != 4 {
		t.Errorf("replicas %d, want 4: utilisation measured on 3 replicas must not be charged to 4", got)
	}
}

func TestQueueBehindOnAverageLosesWritesEvenIfTheRunEndsInALull(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":8}},
	 {"id":"q","type":"queue","params":{"workers":8,"job_time_ms":10,"buffer":1000000}},
	 {"id":"db","type":"database","params":{"connections":20}}],
	 "edges":[{"from":"app","to":"q"},{"from":"q","to":"db"}]}`)
	cfg := Config{TickMs: 100, DurationSec: 240, Mix: Mix{AsyncWrite: 1}, Client: Client{TimeoutMs: 1000},
		Traffic: Traffic{Kind: "wave", RPS: 700, AmplitudeRPS: 600, PeriodSec: 240}}
	r := mustRun(t, d, cfg)
	if !containsString(r.Summary.Failures, "lost_data:q") || r.Summary.LostWrites <= 0 {
		t.Errorf("failures %v, lost %v: consumers of ~440/s fed 700/s on average must lose writes", r.Summary.Failures, r.Summary.LostWrites)
	}
}

func TestServerlessMemoryBuysSpeed(t *testing.T) {
	p99 := func(mem string) float64 {
		d := mustDesign(t, `{"components":[{"id":"fn","type":"serverless","params":{"memory_mb":`+mem+`,"service_time_ms":40}}],"edges":[]}`)
		cfg := constant(50, 20)
		cfg.Mix = Mix{Static: 1}
		return steady(mustRun(t, d, cfg), func(tk Tick) float64 { return tk.MeanMs })
	}
	if slow, base, fast, capped := p99("512"), p99("1024"), p99("1769"), p99("4096"); !(slow > base && base > fast && near(fast, capped, 1e-9)) {
		t.Errorf("mean latency at 512/1024/1769/4096 MB = %.1f/%.1f/%.1f/%.1f ms: want faster with memory up to 1,769 MB", slow, base, fast, capped)
	}
}

// The timed-out share is read from the latency tail, so it rises smoothly as the system
// slows, not as a step at the timeout (seed architecture-simulator's model had the step).
func TestTimeoutsRiseSmoothly(t *testing.T) {
	var shares []float64
	for q := 10.0; q <= 60; q += 1 {
		d := mustDesign(t, fmt.Sprintf(`{"components":[
		 {"id":"app","type":"app_service","params":{"replicas":40}},
		 {"id":"db","type":"database","params":{"connections":40,"query_time_ms":%g}}],
		 "edges":[{"from":"app","to":"db"}]}`, q))
		cfg := constant(500, 10)
		cfg.Client = Client{TimeoutMs: 100}
		r := mustRun(t, d, cfg)
		shares = append(shares, steady(r, func(tk Tick) float64 { return tk.TimedOutRPS / tk.OfferedRPS }))
	}
	between := 0
	for i, s := range shares {
		if s > 0.01 && s < 0.99 {
			between++
		}
		if i > 0 && math.Abs(s-shares[i-1]) > 0.15 {
			t.Errorf("timed-out share jumps from %.3f to %.3f between query times %d and %d ms", shares[i-1], s, 9+i, 10+i)
		}
	}
	if between < 5 {
		t.Errorf("timed-out shares %v: want a gradual rise, not a step", shares)
	}
}

// A worker held through a call is busy for its own exponential service and the call's
// response, which varies as the call does: an injected network delay not at all. Worked by
// hand: 15 ms of own work, a database read of 8 ms (exponential, hardly queued at 8% load)
// behind a 42 ms delay hold a worker 65 ms with a variance of 15² + 8² = 289 ms², a squared
// coefficient of variation of 289 ÷ 65² = 0.068, not the 0.645 of a hold taken as
// exponential ((15² + 50²) ÷ 65²). Over a backlog's wait w the departures of the pool's c
// workers vary by that share of w ÷ (c ÷ 65 ms), and so does the wait.
func TestHeldBusyTimeVariesAsItsCall(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":1}},
	 {"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := constant(100, 5)
	cfg.Chaos = []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 0, DurationSec: 5, From: "app", To: "db",
		Params: ChaosParams{ExtraLatencyMs: 42}}}
	p, err := Prepare(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var app *pool
	for i := range p.m.comps {
		if p.m.comps[i].id == "app" {
			app = &p.m.pools[p.m.comps[i].pools[0]]
		}
	}
	busy := app.serviceSec + app.holdSec
	if !near(busy, 0.065, 0.01) {
		t.Fatalf("held worker busy %.2f ms a request, want 65", busy*1000)
	}
	const w = 1.0 // s of backlog
	cv2 := app.spreadVar(w) * app.capRate / w
	if want := 289.0 / (65 * 65); !near(cv2, want, 0.02) {
		t.Errorf("the busy time's squared coefficient of variation reads %.4f, want %.4f", cv2, want)
	}
}
