package sim

import (
	"fmt"
	"math"
	"testing"
)

// Conservation: every attempt offered is served, rejected, failed, timed out or still queued,
// per tick and over the run.
func TestConservation(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		d, cfg := randomDesign(seed)
		r := mustRun(t, d, cfg)
		dt := r.TickMs / 1000
		prevQueued := 0.0
		for i, tk := range r.Ticks {
			in := tk.OfferedRPS * dt
			out := (tk.ServedRPS+tk.RejectedRPS+tk.ErrorRPS+tk.TimedOutRPS)*dt + tk.Queued - prevQueued
			if math.Abs(in-out) > 1e-6*math.Max(1, in) {
				t.Fatalf("seed %d tick %d: offered %.9f ≠ outcomes + Δqueued %.9f", seed, i, in, out)
			}
			prevQueued = tk.Queued
		}
		s := r.Summary
		if out := s.Served + s.Rejected + s.Errors + s.TimedOut + s.QueuedAtEnd; math.Abs(s.Offered-out) > 1e-6*math.Max(1, s.Offered) {
			t.Fatalf("seed %d: offered %.6f ≠ outcomes + queued %.6f", seed, s.Offered, out)
		}
		if math.Abs(s.Offered-s.Fresh-s.Retries) > 1e-6*math.Max(1, s.Offered) {
			t.Fatalf("seed %d: offered %.6f ≠ fresh %.6f + retries %.6f", seed, s.Offered, s.Fresh, s.Retries)
		}
	}
}

// bottleneckDesign has one tier clearly short of capacity, whose size the test varies.
func bottleneckDesign(dbConnections int) Design {
	var d Design
	mustJSON(fmt.Sprintf(`{"components":[
	 {"id":"lb","type":"load_balancer"},
	 {"id":"app","type":"app_service","params":{"replicas":8,"concurrency":16}},
	 {"id":"db","type":"database","params":{"connections":%d,"query_time_ms":8}}],
	 "edges":[{"from":"lb","to":"app"},{"from":"app","to":"db"}]}`, dbConnections), &d)
	return d
}

// Adding capacity to the bottleneck never raises the steady-state p99 or error rate.
func TestMoreBottleneckCapacityNeverHurts(t *testing.T) {
	for _, rps := range []float64{200, 600, 1000, 1400, 2000} {
		prevP99, prevErr := math.Inf(1), math.Inf(1)
		for conns := 2; conns <= 24; conns += 2 {
			cfg := constant(rps, 30)
			cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
			r := mustRun(t, bottleneckDesign(conns), cfg)
			p99 := steady(r, func(tk Tick) float64 { return tk.P99Ms })
			errRate := steady(r, func(tk Tick) float64 { return tk.ErrorRate })
			if p99 > prevP99*(1+1e-9)+1e-9 || errRate > prevErr*(1+1e-9)+1e-12 {
				t.Errorf("%v rps, %d connections: p99 %.3f ms (was %.3f), errors %.6f (was %.6f): more capacity made it worse",
					rps, conns, p99, prevP99, errRate, prevErr)
			}
			prevP99, prevErr = p99, errRate
		}
	}
}

// Latency is monotone in load: more traffic never lowers the steady-state p50, p95 or p99
// (beyond the latency cache's documented tolerance). Just above saturation a tier's rooms
// take most of 20 s to fill, so the runs last 40 s and the second half is the steady state.
func TestLatencyMonotoneInLoad(t *testing.T) {
	d := bottleneckDesign(10)
	prev := [3]float64{}
	for rps := 50.0; rps <= 2500; rps += 50 {
		cfg := constant(rps, 40)
		cfg.Client = Client{}
		r := mustRun(t, d, cfg)
		got := [3]float64{
			steady(r, func(tk Tick) float64 { return tk.P50Ms }),
			steady(r, func(tk Tick) float64 { return tk.P95Ms }),
			steady(r, func(tk Tick) float64 { return tk.P99Ms }),
		}
		for i := range got {
			// Quantiles are recomputed when an input moves by latencyTolerance (latcache.go):
			// in a saturated plateau they may wobble within it, never beyond.
			if got[i] < prev[i]*(1-latencyTolerance) {
				t.Errorf("%v rps: quantile %d fell from %.4f to %.4f ms", rps, i, prev[i], got[i])
			}
		}
		prev = got
	}
}

// No output of any run is NaN or infinite.
func TestOutputsAreFinite(t *testing.T) {
	for seed := uint64(100); seed < 140; seed++ {
		d, cfg := randomDesign(seed)
		r := mustRun(t, d, cfg)
		if err := checkFinite(r); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// Two balancers that call each other, each fed by its own ingress, close a cycle between
// their pools: one edge is deferred (its requests arrive a tick later) and everything is
// still conserved, tick by tick.
func TestCycleIsBrokenAtADeferredEdgeAndConserves(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"cdn","type":"cdn","params":{"hit_ratio":0}},{"id":"gw","type":"api_gateway"},
	 {"id":"lb1","type":"load_balancer"},{"id":"lb2","type":"load_balancer"},
	 {"id":"app1","type":"app_service","params":{"replicas":2}},{"id":"app2","type":"app_service","params":{"replicas":2}}],
	 "edges":[{"from":"cdn","to":"lb1"},{"from":"gw","to":"lb2"},{"from":"lb1","to":"lb2"},{"from":"lb2","to":"lb1"},
	  {"from":"lb1","to":"app1"},{"from":"lb2","to":"app2"}]}`)
	v, err := validate(d, constant(300, 10))
	if err != nil {
		t.Fatal(err)
	}
	m, err := compile(v)
	if err != nil {
		t.Fatal(err)
	}
	deferred := 0
	for _, nd := range m.nodes {
		if nd.deferred {
			deferred++
		}
	}
	if deferred == 0 {
		t.Fatal("no deferred edge: the test design does not close a cycle")
	}
	cfg := constant(300, 10)
	cfg.Mix = Mix{Static: 1}
	r := mustRun(t, d, cfg)
	prevQueued := 0.0
	for i, tk := range r.Ticks {
		in := tk.OfferedRPS * 0.1
		out := (tk.ServedRPS+tk.RejectedRPS+tk.ErrorRPS+tk.TimedOutRPS)*0.1 + tk.Queued - prevQueued
		if math.Abs(in-out) > 1e-6*max(1, in) {
			t.Fatalf("tick %d: offered %.9f ≠ outcomes + Δqueued %.9f", i, in, out)
		}
		prevQueued = tk.Queued
	}
	// Both apps serve: requests crossing the deferred edge arrive and are answered.
	for _, id := range []string{"app1", "app2"} {
		if in := steadyComp(r, id, func(c ComponentTick) float64 { return c.InputRPS }); in <= 0 {
			t.Errorf("%s receives nothing", id)
		}
	}
	if e := steady(r, errRate); e > 0.01 {
		t.Errorf("error rate %v, want ~0", e)
	}
}
