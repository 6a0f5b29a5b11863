package reference

// The reference's gateway and retry budget held to timelines worked out by hand
// (reference.md states the rules these follow from).

import (
	"backpressure/internal/sim"
	"fmt"
	"math"
	"testing"
)

// gatewayOverApp is a gateway with the given parameters in front of one app of 4 replicas
// (1,600 rps of static requests).
func gatewayOverApp(t *testing.T, gatewayParams string) sim.Design {
	t.Helper()
	return mustDesign(t, fmt.Sprintf(`{"components":[
	 {"id":"gw","type":"api_gateway","params":%s},
	 {"id":"app","type":"app_service","params":{"replicas":4}}],
	 "edges":[{"from":"gw","to":"app"}]}`, gatewayParams))
}

// refModelRun compiles d for the reference and runs it, keeping the model for inspection.
func refModelRun(t *testing.T, d sim.Design, cfg sim.Config, seed uint64) (*refModel, *refRecord) {
	t.Helper()
	m, err := newRefModel(d, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m, m.run()
}

// The app fails from 5 s to 10 s under 1,000 rps; the breaker has a threshold of 50%, a
// window of 1 s, stays open 2 s and probes with every request (ratio 1). By hand:
//   - every answer before 5 s succeeds and comes back within milliseconds, so the window
//     holds the last second's 1,000 answers; from 5 s every answer fails, and failures
//     outnumber the successes still in the window half a second later: it opens at 5.5 s;
//   - it half-opens at 7.5 s; the first probe fails at once (the app is down): open again
//     until 9.5 s, and again until 11.5 s;
//   - at 11.5 s the app has been back 1.5 s; the first probe succeeds and the breaker
//     closes for good, a probe's latency (gateway, 5 ms of authentication, app) later.
func TestReferenceBreakerOpensProbesAndClosesAsWorkedByHand(t *testing.T) {
	d := gatewayOverApp(t, `{"breaker_error_threshold":0.5,"breaker_window_sec":1,"breaker_open_sec":2,"breaker_probe_ratio":1}`)
	cfg := sim.Config{TickMs: 100, DurationSec: 20, Traffic: sim.Traffic{Kind: "constant", RPS: 1000}, Mix: sim.Mix{Static: 1},
		Client: sim.Client{TimeoutMs: 1000},
		Chaos:  []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 5, DurationSec: 5, Target: "app"}}}
	for seed := uint64(1); seed <= 5; seed++ {
		m, rec := refModelRun(t, d, cfg, seed)
		g := m.comps["gw"].hop.(*refGateway)
		want := []float64{5.5, 7.5, 9.5}
		if len(g.opened) != len(want) {
			t.Fatalf("seed %d: opened at %v, want about %v", seed, g.opened, want)
		}
		for i, at := range g.opened {
			// The opening depends on how many answers the last second held (Poisson: ±3%
			// of 1,000 moves it by about 15 ms); each probe adds its few milliseconds.
			if math.Abs(at-want[i]) > 0.05 {
				t.Errorf("seed %d: opening %d at %.3f s, want %.1f s", seed, i+1, at, want[i])
			}
		}
		last := g.history[len(g.history)-1]
		if last.state != sim.BreakerClosed || math.Abs(last.at-11.5) > 0.1 {
			t.Errorf("seed %d: last change %v at %.3f s, want closed at about 11.5 s", seed, last.state, last.at)
		}
		// Open, the gateway answers 503 at once: nothing fails at the app after the first
		// opening but the probes of the two failed half-open stretches. With a ratio of 1
		// every request of a stretch is a probe, and a stretch lasts until the first answers,
		// about 6 ms (1 ms at the gateway, 5 of authentication): about 6 probes each.
		var errs float64
		for k := m.tickOf(5.6); k < m.tickOf(11.4); k++ {
			errs += rec.errors[k]
		}
		if errs < 2 || errs > 2*15 {
			t.Errorf("seed %d: %v attempts failed at the app while the breaker cycled, want the probes of 2 stretches of about 6 ms", seed, errs)
		}
	}
}

// A probe is judged when it answers, not when it is sent. An app calls a database through
// an edge slowed by 400 ms for the whole run, and the clients give up after 200 ms, as the
// gateway then does. By hand: every request fails at its deadline, so the breaker opens
// within the first second; it half-opens 2 s later and sends a probe, which fails only at
// its deadline, 200 ms after it was sent: the breaker stays half-open that long and opens
// again. Each cycle is open 2 s plus half-open 0.2 s, and it never closes.
func TestReferenceBreakerJudgesAProbeWhenItAnswers(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"gw","type":"api_gateway","params":{"breaker_error_threshold":0.5,"breaker_window_sec":1,"breaker_open_sec":2,"breaker_probe_ratio":1}},
	 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":50}},
	 {"id":"db","type":"database","params":{"connections":100}}],
	 "edges":[{"from":"gw","to":"app"},{"from":"app","to":"db"}]}`)
	cfg := sim.Config{TickMs: 100, DurationSec: 12, Traffic: sim.Traffic{Kind: "constant", RPS: 200}, Mix: sim.Mix{Read: 1},
		Client: sim.Client{TimeoutMs: 200},
		Chaos: []sim.ChaosEvent{{Kind: sim.ChaosLatencyInjection, AtSec: 0, DurationSec: 20, From: "app", To: "db",
			Params: sim.ChaosParams{ExtraLatencyMs: 400}}}}
	for seed := uint64(1); seed <= 5; seed++ {
		m, _ := refModelRun(t, d, cfg, seed)
		g := m.comps["gw"].hop.(*refGateway)
		if len(g.opened) < 3 {
			t.Fatalf("seed %d: opened at %v, want a cycle every 2.2 s", seed, g.opened)
		}
		for i := 1; i < len(g.opened); i++ {
			if gap := g.opened[i] - g.opened[i-1]; math.Abs(gap-2.2) > 0.02 {
				t.Errorf("seed %d: reopened %.3f s after opening, want 2 s open + a probe's 0.2 s deadline", seed, gap)
			}
		}
		for _, h := range g.history {
			if h.state == sim.BreakerClosed && h.at > 0 {
				t.Errorf("seed %d: closed at %.3f s though no probe could succeed", seed, h.at)
			}
		}
	}
}

// A rate limit of 100 rps is a bucket of 100 tokens refilled at 100 a second and full at
// the start: offered 300 rps for 20 s, it admits 100 + 100 × 20 = 2,100 requests, less the
// part of a token left when the last arrival came (by hand: between 2,099 and 2,100), and
// answers every other one 429 at once.
func TestReferenceRateLimitIsATokenBucketWorkedByHand(t *testing.T) {
	d := gatewayOverApp(t, `{"rate_limit_rps":100,"breaker_error_threshold":0}`)
	cfg := sim.Config{TickMs: 100, DurationSec: 20, Traffic: sim.Traffic{Kind: "constant", RPS: 300}, Mix: sim.Mix{Static: 1}}
	for seed := uint64(1); seed <= 5; seed++ {
		_, rec := refModelRun(t, d, cfg, seed)
		var offered, served, rejected float64
		for k := range rec.offered {
			offered, served, rejected = offered+rec.offered[k], served+rec.served[k], rejected+rec.rejected[k]
		}
		admitted := offered - rejected
		if admitted < 2099-1e-9 || admitted > 2100 {
			t.Errorf("seed %d: admitted %v of %v, want 2,099 or 2,100", seed, admitted, offered)
		}
		if served+rec.inFlight != admitted {
			t.Errorf("seed %d: served %v + in flight %v ≠ admitted %v", seed, served, rec.inFlight, admitted)
		}
	}
}

// The retry budget is a token bucket: every fresh request deposits retry_budget tokens,
// every retry takes one, and it holds one second's deposits, full at the start. Against an
// app that fails everything at once, with immediate retries and no retry limit to speak
// of, every token is spent the moment it is whole: by hand, retries = the full bucket
// (0.2 × 100) + 0.2 × fresh requests, less the part of a token left at the end (under one).
// And an immediate retry is sent in the instant its attempt failed: the first tick has them.
func TestReferenceRetryBudgetIsATokenBucketWorkedByHand(t *testing.T) {
	d := onePool(6, 15, 64)
	cfg := sim.Config{TickMs: 100, DurationSec: 20, Traffic: sim.Traffic{Kind: "constant", RPS: 100}, Mix: sim.Mix{Static: 1},
		Client: sim.Client{TimeoutMs: 1000, MaxRetries: 1000, RetryBudget: 0.2},
		Chaos:  []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 0, DurationSec: 20, Target: "app"}}}
	for seed := uint64(1); seed <= 5; seed++ {
		rec, err := refRun(d, cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		var fresh, retries float64
		for k := range rec.fresh {
			fresh, retries = fresh+rec.fresh[k], retries+rec.retries[k]
		}
		left := 0.2*100 + 0.2*fresh - retries
		// Deposits of 0.2 add up with rounding: a token may fall short of whole by a hair.
		if left < -1e-9 || left > 1+1e-9 {
			t.Errorf("seed %d: %v fresh requests bought %v retries; by hand %.1f (less under one token)", seed, fresh, retries, 20+0.2*fresh)
		}
		if rec.retries[0] < 20 {
			t.Errorf("seed %d: %v retries in the first tick, want the full bucket's 20 at once", seed, rec.retries[0])
		}
	}
}
