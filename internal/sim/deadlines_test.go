package sim

import (
	"fmt"
	"math"
	"testing"
)

// No successful-latency quantile, of a tick, of the run or of a component, is above the
// client's timeout: an attempt slower than that is an error.
func TestNoSuccessfulLatencyAboveTheTimeout(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		d, cfg := randomDesign(seed)
		r := mustRun(t, d, cfg)
		to := cfg.Client.TimeoutMs
		if to <= 0 {
			continue
		}
		for i, tk := range r.Ticks {
			if tk.P50Ms > to || tk.P95Ms > to || tk.P99Ms > to {
				t.Fatalf("seed %d tick %d: p50/p95/p99 %.1f/%.1f/%.1f ms above the %.0f ms timeout", seed, i, tk.P50Ms, tk.P95Ms, tk.P99Ms, to)
			}
			for c, ct := range tk.Components {
				if ct.P99Ms > to {
					t.Fatalf("seed %d tick %d: %s p99 %.1f ms above the %.0f ms timeout", seed, i, r.Components[c].ID, ct.P99Ms, to)
				}
			}
		}
		if s := r.Summary; s.P50Ms > to || s.P95Ms > to || s.P99Ms > to {
			t.Fatalf("seed %d: run p50/p95/p99 %.1f/%.1f/%.1f ms above the %.0f ms timeout", seed, s.P50Ms, s.P95Ms, s.P99Ms, to)
		}
	}
}

// queueDesign is one app tier of 6 workers at 15 ms (400 req/s) with a waiting room of
// 4,000 requests: 10 s of its capacity, far longer than any client waits.
func queueDesign(t *testing.T) Design {
	return mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"queue_per_replica":4000}}],"edges":[]}`)
}

// An attempt that waits in a queue times out in the tick its deadline passes, not when it
// is finally served: at 500 req/s against 400 an attempt arriving at a finds a wait of a/4
// seconds, so the first to wait past the 1 s timeout arrives at 4 s and times out at 5 s
// (a little earlier for the stochastic tail). The work stays queued.
func TestAttemptsTimeOutAtTheirDeadlineWhileTheWorkStaysQueued(t *testing.T) {
	cfg := constant(500, 20)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 1000}
	r := mustRun(t, queueDesign(t), cfg)
	first := -1.0
	for _, tk := range r.Ticks {
		if tk.TimedOutRPS > 1 {
			first = tk.T
			break
		}
	}
	if first < 4.2 || first > 5.1 {
		t.Fatalf("first timeouts at %v s, want just before 5 s, when the first attempts to wait 1 s reach their deadline", first)
	}
	last := r.Ticks[len(r.Ticks)-1]
	app := last.Components[0]
	// The server does not know: it serves its whole capacity, most of it for nobody.
	if !near(app.OutputRPS, 400, 0.01) {
		t.Errorf("app serves %.1f rps, want its capacity of 400", app.OutputRPS)
	}
	if app.LateRPS < 300 || r.Summary.LateCompletions <= 0 || r.Summary.Components[0].Late <= 0 {
		t.Errorf("late work %.1f rps (run %.0f, app %.0f): want the app busy with requests whose clients left",
			app.LateRPS, r.Summary.LateCompletions, r.Summary.Components[0].Late)
	}
	// At 500 offered, the fresh requests time out at their deadline: about 500 a second.
	if !near(last.TimedOutRPS, 500, 0.05) || last.ServedRPS > 5 {
		t.Errorf("timed out %.1f rps, served %.1f rps at the end: want nearly everything to time out waiting", last.TimedOutRPS, last.ServedRPS)
	}
	// The queue holds ghosts: far more waits than the live attempts counted as queued.
	if !(app.Backlog > 2*last.Queued) {
		t.Errorf("app backlog %.0f, live attempts queued %.0f: want the dead work to stay queued", app.Backlog, last.Queued)
	}
}

// Retries leave when the deadline passes (plus the backoff), and a queue's cohorts time out
// together, so a storm's attempts per fresh request can exceed 1 + max_retries: that bound
// would hold only if timeouts were noticed when a request finished.
func TestRetryStormBurstsAboveOnePlusMaxRetries(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":5,"queue_per_replica":1000}},
	 {"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`)
	cfg := Config{TickMs: 250, DurationSec: 120, Traffic: Traffic{Kind: "constant", RPS: 500}, Mix: Mix{Read: 0.8, Write: 0.2},
		Client: Client{TimeoutMs: 1000, MaxRetries: 3},
		Chaos: []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 30, DurationSec: 20, From: "app", To: "db",
			Params: ChaosParams{ExtraLatencyMs: 60}}}}
	r := mustRun(t, d, cfg)
	peak, peakAt := 0.0, 0.0
	for _, tk := range r.Ticks {
		if a := tk.OfferedRPS / tk.FreshRPS; a > peak {
			peak, peakAt = a, tk.T
		}
	}
	if peak <= 1+float64(cfg.Client.MaxRetries)+0.5 {
		t.Errorf("peak amplification ×%.2f at %v s, want bursts above ×%d", peak, peakAt, 1+cfg.Client.MaxRetries)
	}
	t.Logf("peak retry amplification ×%.2f at %v s", peak, peakAt)
}

// Timed-out attempts are retried from the tick in which they timed out, after the backoff.
func TestRetriesLeaveAtTheDeadlinePlusBackoff(t *testing.T) {
	cfg := constant(500, 20)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 1, BackoffMs: 500, BackoffMultiplier: 1}
	r := mustRun(t, queueDesign(t), cfg)
	for i, tk := range r.Ticks {
		if i < 5 {
			continue
		}
		// Every retry arriving now is one timeout (or error) from exactly 5 ticks before.
		before := r.Ticks[i-5]
		failedThen := before.TimedOutRPS + before.RejectedRPS + before.ErrorRPS
		firstTries := before.FreshRPS / before.OfferedRPS
		// Retries are counted in 2⁻²⁰ths of a request (retryGrain).
		if want := failedThen * firstTries; math.Abs(tk.RetryRPS-want) > 1e-6*max(1, want)+1/(retryGrain*r.TickMs/1000) {
			t.Fatalf("tick %d: %.3f rps of retries, want %.3f: the first tries that failed 500 ms before", i, tk.RetryRPS, want)
		}
	}
}

// One wait: a saturated pool's wait never exceeds what its waiting room holds ÷ its
// capacity plus its service, and the latency grows monotonically with the load, at the end
// of a run and, continuously through saturation, in the first tick after the load steps to
// it from 90% (before any backlog has built, a pool just above saturation waits what one
// just below does). A run does not start that way: below saturation its pools stand where
// their load puts them (the day's traffic has been flowing), at or above it they start
// empty, as the per-request reference's do; TestStochasticQueueStartsAsTheReference.
func TestOneWaitBoundedByTheWaitingRoomAndMonotoneThroughSaturation(t *testing.T) {
	const workers, serviceMs, buffer = 6, 15.0, 64
	capRPS := workers * 1000 / serviceMs
	d := mustDesign(t, fmt.Sprintf(`{"components":[{"id":"app","type":"app_service","params":{"queue_per_replica":%d}}],"edges":[]}`, buffer))
	most := (buffer/capRPS + serviceMs/1000) * 1000
	const stepSec = 10
	prev, prevStep := 0.0, 0.0
	for load := 0.5; load <= 2.0; load += 0.01 {
		cfg := constant(load*capRPS, 30)
		cfg.Traffic = Traffic{Kind: "step", RPS: 0.9 * capRPS, Steps: []TrafficStep{{AtSec: stepSec, RPS: load * capRPS}}}
		cfg.Mix = Mix{Static: 1}
		cfg.Client = Client{}
		r := mustRun(t, d, cfg)
		last := r.Ticks[len(r.Ticks)-1]
		if mean := last.Components[0].MeanMs; mean > most*(1+1e-9) {
			t.Errorf("load %.2f: mean %.1f ms, above the waiting room's %.1f ms", load, mean, most)
		}
		if last.MeanMs < prev*(1-1e-9) {
			t.Errorf("load %.2f: mean latency fell from %.3f to %.3f ms", load, prev, last.MeanMs)
		}
		step := r.Ticks[int(math.Round(stepSec*1000/r.TickMs))].MeanMs
		if step < prevStep*(1-1e-9) {
			t.Errorf("load %.2f: the step's first tick's mean latency fell from %.3f to %.3f ms", load, prevStep, step)
		}
		if load > 0.985 && prevStep > 0 && step > prevStep*1.01 {
			t.Errorf("load %.2f: the step's first tick's mean latency jumps from %.3f to %.3f ms", load, prevStep, step)
		}
		prev, prevStep = last.MeanMs, step
	}
}

// A client retries the request it sent. Reads with nowhere to go fail every attempt, so
// each comes back as a read, max_retries times, while static files never fail: once the
// retries run, every tick offers a static file and three reads for every two fresh requests,
// and serves only the static files. Retries dealt over the mix would come back in part as
// static files that succeed, serving more and offering less.
func TestRetriesKeepTheirRequestType(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"a","type":"app_service","params":{"replicas":4}}],"edges":[]}`)
	cfg := constant(300, 10)
	cfg.Mix = Mix{Read: 0.5, Static: 0.5}
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	r := mustRun(t, d, cfg)
	// Within 0.1%: a static file fails now and then too (the pool's base error rate).
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-3*want }
	for i, tk := range r.Ticks[2:] {
		fresh := tk.FreshRPS
		if !near(tk.OfferedRPS, 2*fresh) || !near(tk.RetryRPS, fresh) || !near(tk.ServedRPS, fresh/2) {
			t.Fatalf("tick %d: %.3f fresh, %.3f retries, %.3f offered, %.3f served rps; want %.3f retries (two a read), %.3f offered, %.3f served (the static files)",
				i+2, fresh, tk.RetryRPS, tk.OfferedRPS, tk.ServedRPS, fresh, 2*fresh, fresh/2)
		}
	}
}
