package reference

// The reference simulator is trusted only where it reproduces exact queueing theory: the
// M/M/c response-time distribution (mean, p95, p99) and Erlang-B / M/M/c/K loss, each within
// the simulator's own 99% confidence interval from independent replications (seeds).

import (
	"backpressure/internal/sim"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// mmcResponseTail is P(T > t) for M/M/c: with probability C the request waits an
// exponential time of rate cμ − λ, then it is served for an exponential time of rate μ.
func mmcResponseTail(c int, lambda, mu, t float64) float64 {
	a := lambda / mu
	wait := directErlangC(c, a)
	theta := float64(c)*mu - lambda
	var both float64 // P(W + S > t) for W ~ Exp(θ), S ~ Exp(μ)
	if math.Abs(theta-mu) < 1e-12*mu {
		both = (1 + mu*t) * math.Exp(-mu*t)
	} else {
		both = (theta*math.Exp(-mu*t) - mu*math.Exp(-theta*t)) / (theta - mu)
	}
	return (1-wait)*math.Exp(-mu*t) + wait*both
}

func mmcResponseQuantile(c int, lambda, mu, q float64) float64 {
	lo, hi := 0.0, 1.0
	for mmcResponseTail(c, lambda, mu, hi) > 1-q {
		hi *= 2
	}
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if mmcResponseTail(c, lambda, mu, mid) > 1-q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentT995 is the two-sided 99% quantile of Student's t for n−1 degrees of freedom.
func studentT995(df int) float64 {
	table := map[int]float64{4: 4.604, 9: 3.250, 14: 2.977, 19: 2.861, 24: 2.797, 29: 2.756}
	if v, ok := table[df]; ok {
		return v
	}
	return 2.576
}

// batchCI is the mean of xs and the half-width of its 99% confidence interval.
func batchCI(xs []float64) (mean, half float64) {
	mean, sd := meanAndSpread(xs)
	return mean, studentT995(len(xs)-1) * sd / math.Sqrt(float64(len(xs)))
}

// onePool is a single app replica serving static requests: one M/M/c(/K) pool, nothing else.
func onePool(workers int, serviceMs float64, queue int) sim.Design {
	var d sim.Design
	mustJSON(fmt.Sprintf(`{"components":[{"id":"app","type":"app_service","params":
	 {"replicas":1,"concurrency":%d,"service_time_ms":%g,"queue_per_replica":%d}}],"edges":[]}`, workers, serviceMs, queue), &d)
	return d
}

func poolRun(t *testing.T, d sim.Design, rps, seconds float64, seed uint64) *refRecord {
	t.Helper()
	cfg := sim.Config{TickMs: 100, DurationSec: seconds, Traffic: sim.Traffic{Kind: "constant", RPS: rps}, Mix: sim.Mix{Static: 1}}
	rec, err := refRun(d, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// replications is how many independent seeds each validation point runs; the first tenth
// of every run is its warm-up. Replications, not batches of one run: near saturation the
// waits are correlated over many seconds, which makes batch means overconfident.
const replications = 10

func TestReferenceMatchesExactMMc(t *testing.T) {
	tests := []struct {
		name      string
		workers   int
		serviceMs float64
		util      float64
		seconds   float64
	}{
		{"M/M/1 at 50%", 1, 10, 0.5, 400},
		{"app server 6×15 ms at 80%", 6, 15, 0.8, 120},
		{"database 10×8 ms at 85%", 10, 8, 0.85, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mu := 1000 / tt.serviceMs
			lambda := tt.util * float64(tt.workers) * mu
			var means, p95s, p99s []float64
			for seed := uint64(1); seed <= replications; seed++ {
				rec := poolRun(t, onePool(tt.workers, tt.serviceMs, 1_000_000), lambda, tt.seconds, seed)
				var xs []float64
				for k := len(rec.latency) / 10; k < len(rec.latency); k++ {
					xs = append(xs, rec.latency[k]...)
				}
				sum := 0.0
				for _, x := range xs {
					sum += x
				}
				means = append(means, sum/float64(len(xs)))
				p95s = append(p95s, quantile(xs, 0.95))
				p99s = append(p99s, quantile(xs, 0.99))
			}
			exact := map[string]float64{
				"mean": 1/mu + directErlangC(tt.workers, lambda/mu)/(float64(tt.workers)*mu-lambda),
				"p95":  mmcResponseQuantile(tt.workers, lambda, mu, 0.95),
				"p99":  mmcResponseQuantile(tt.workers, lambda, mu, 0.99),
			}
			for _, stat := range []struct {
				name string
				xs   []float64
			}{{"mean", means}, {"p95", p95s}, {"p99", p99s}} {
				got, half := batchCI(stat.xs)
				want := exact[stat.name]
				t.Logf("%s: reference %.3f ± %.3f ms, exact %.3f ms", stat.name, got*1000, half*1000, want*1000)
				if math.Abs(got-want) > half {
					t.Errorf("%s = %.3f ± %.3f ms, exact M/M/%d %.3f ms: outside the reference's own 99%% interval",
						stat.name, got*1000, half*1000, tt.workers, want*1000)
				}
				if half > 0.06*want {
					t.Errorf("%s: interval ±%.3f ms is wider than 6%% of %.3f ms: the check has no teeth", stat.name, half*1000, want*1000)
				}
			}
		})
	}
}

func TestReferenceLosesAsErlangBAndMMcK(t *testing.T) {
	tests := []struct {
		name      string
		workers   int
		serviceMs float64
		queue     int
		erlangs   float64
		seconds   float64
	}{
		{"6 workers offered 125%, no waiting room", 6, 15, 0, 7.5, 30},
		{"10 workers offered 80%, no waiting room", 10, 8, 0, 8, 20},
		{"4 workers and 5 places offered 120%", 4, 20, 5, 4.8, 40},
		// A function with no cold start: its concurrency is the workers, with no waiting room.
		{"a function of 10 executions offered 90%", 10, 20, -1, 9, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rps := tt.erlangs * 1000 / tt.serviceMs
			d := onePool(tt.workers, tt.serviceMs, tt.queue)
			if tt.queue < 0 {
				tt.queue = 0
				mustJSON(fmt.Sprintf(`{"components":[{"id":"fn","type":"serverless","params":
				 {"max_concurrency":%d,"service_time_ms":%g,"cold_start_ms":0}}],"edges":[]}`, tt.workers, tt.serviceMs), &d)
			}
			var losses []float64
			for seed := uint64(1); seed <= replications; seed++ {
				rec := poolRun(t, d, rps, tt.seconds, seed)
				var off, rej float64
				for k := len(rec.offered) / 10; k < len(rec.offered); k++ {
					off += rec.offered[k]
					rej += rec.rejected[k]
				}
				losses = append(losses, rej/off)
			}
			got, half := batchCI(losses)
			want := bruteMMCKBlocking(tt.workers, tt.queue, tt.erlangs)
			if tt.queue == 0 {
				want = directErlangB(tt.workers, tt.erlangs)
			}
			t.Logf("loss: reference %.4f ± %.4f, exact %.4f", got, half, want)
			if math.Abs(got-want) > half {
				t.Errorf("loss %.4f ± %.4f, exact %.4f: outside the reference's own 99%% interval", got, half, want)
			}
			if half > 0.1*want {
				t.Errorf("interval ±%.4f is wider than 10%% of %.4f: the check has no teeth", half, want)
			}
		})
	}
}

// The reference accounts for every attempt: answered, refused, failed, timed out or still
// in flight at the end; and a late completion is an attempt that had already timed out.
func TestReferenceConservesAttempts(t *testing.T) {
	d, cfg := archSim("")
	cfg.DurationSec = 20
	rec, err := refRun(d, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	var off, fresh, retries, done, timedOut, late, dropped float64
	for k := range rec.offered {
		off += rec.offered[k]
		fresh += rec.fresh[k]
		retries += rec.retries[k]
		done += rec.served[k] + rec.rejected[k] + rec.errors[k] + rec.timedOut[k]
		timedOut += rec.timedOut[k]
		late += rec.late[k]
		dropped += rec.dropped[k]
	}
	if off != fresh+retries {
		t.Errorf("offered %v ≠ fresh %v + retries %v", off, fresh, retries)
	}
	if rec.inFlight < 0 || off != done+rec.inFlight {
		t.Errorf("offered %v ≠ finished %v + in flight %v", off, done, rec.inFlight)
	}
	if late > timedOut || late == 0 {
		t.Errorf("late completions %v, timed out %v: the saturated database must finish abandoned work late", late, timedOut)
	}
	if dropped > fresh {
		t.Errorf("dropped %v > fresh %v", dropped, fresh)
	}
	// A client gives up at its deadline: no answer it accepted took longer.
	for k, xs := range rec.latency {
		for _, x := range xs {
			if x > cfg.Client.TimeoutMs/1000+1e-9 {
				t.Fatalf("tick %d: an answer after %.3f s was accepted with a %.0f ms timeout", k, x, cfg.Client.TimeoutMs)
			}
		}
	}
}

// splitDesign is a balancer over two single-replica app servers of c workers each.
func splitDesign(algorithm string, health bool, workers int, serviceMs float64) sim.Design {
	var d sim.Design
	app := fmt.Sprintf(`"type":"app_service","params":{"replicas":1,"concurrency":%d,"service_time_ms":%g,"queue_per_replica":100000}`, workers, serviceMs)
	mustJSON(fmt.Sprintf(`{"components":[
	 {"id":"lb","type":"load_balancer","params":{"algorithm":%q,"health_checks":%t}},
	 {"id":"a",%s},{"id":"b",%s}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`, algorithm, health, app, app), &d)
	return d
}

// A random split of a Poisson stream is Poisson, so behind a balancer (itself an M/M/1
// whose output is Poisson) each backend is exactly M/M/c at half the rate. Round-robin
// sends each backend every other request, a more regular stream, so it waits less;
// least-connections, which sees the queues, waits no more than round-robin.
func TestReferenceBalancerSplits(t *testing.T) {
	const workers, serviceMs, util, seconds = 1, 10.0, 0.7, 100
	mu := 1000 / serviceMs
	lambda := 2 * util * workers * mu // both backends together
	balancerMu := 2000.0              // one worker at 0.5 ms
	mean := func(algorithm string) (float64, float64) {
		var means []float64
		for seed := uint64(1); seed <= replications; seed++ {
			cfg := sim.Config{TickMs: 100, DurationSec: seconds, Traffic: sim.Traffic{Kind: "constant", RPS: lambda}, Mix: sim.Mix{Static: 1}}
			rec, err := refRun(splitDesign(algorithm, false, workers, serviceMs), cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			var sum, n float64
			for k := len(rec.latency) / 10; k < len(rec.latency); k++ {
				for _, x := range rec.latency[k] {
					sum, n = sum+x, n+1
				}
			}
			means = append(means, sum/n)
		}
		return batchCI(means)
	}
	random, randomHalf := mean("random")
	exact := 1/(balancerMu-lambda) + 1/mu + directErlangC(workers, lambda/2/mu)/(float64(workers)*mu-lambda/2)
	t.Logf("random: %.3f ± %.3f ms, exact %.3f ms", random*1000, randomHalf*1000, exact*1000)
	if math.Abs(random-exact) > randomHalf {
		t.Errorf("random split: mean %.3f ± %.3f ms, exact M/M/1 + M/M/%d at half the rate %.3f ms", random*1000, randomHalf*1000, workers, exact*1000)
	}
	rr, rrHalf := mean("round_robin")
	lc, lcHalf := mean("least_connections")
	t.Logf("round robin: %.3f ± %.3f ms, least connections: %.3f ± %.3f ms", rr*1000, rrHalf*1000, lc*1000, lcHalf*1000)
	if !(rr+rrHalf < random-randomHalf) {
		t.Errorf("round robin %.3f ms does not wait clearly less than random %.3f ms", rr*1000, random*1000)
	}
	if lc > rr+rrHalf+lcHalf {
		t.Errorf("least connections %.3f ms waits more than round robin %.3f ms", lc*1000, rr*1000)
	}
}

// A balancer with health checks stops sending to a dead backend after two failed probes
// 5 s apart, so its share fails for between 5 and 10 s after the strike (the probes' phase
// is random); without health checks it fails until the backend is back.
func TestReferenceHealthChecksDetectAfterTwoProbes(t *testing.T) {
	lastError := func(health bool, seed uint64) float64 {
		cfg := sim.Config{TickMs: 100, DurationSec: 40, Traffic: sim.Traffic{Kind: "constant", RPS: 100}, Mix: sim.Mix{Static: 1},
			Client: sim.Client{TimeoutMs: 1000},
			Chaos:  []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 10, DurationSec: 20, Target: "a"}}}
		rec, err := refRun(splitDesign("round_robin", health, 6, 15), cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		last := 0.0
		for k, e := range rec.errors {
			if e > 0 {
				last = float64(k+1) * rec.dt
			}
		}
		return last
	}
	var sum float64
	for seed := uint64(1); seed <= 8; seed++ {
		got := lastError(true, seed) - 10
		sum += got
		if got < 5 || got > 10.1 {
			t.Errorf("seed %d: the dead backend's share failed for %.1f s, want between 5 and 10 s", seed, got)
		}
		if without := lastError(false, seed); without != 30 {
			t.Errorf("seed %d without health checks: last error at %.1f s, want errors until the repair at 30 s", seed, without)
		}
	}
	t.Logf("mean time to detection %.2f s (7.5 s expected)", sum/8)
}

// The reference is reproducible: one seed, one record, to the last request; another seed,
// another record.
func TestReferenceIsDeterministic(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer"},{"id":"a","type":"app_service"},
	 {"id":"b","type":"app_service"},{"id":"c","type":"app_service"}],
	 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"lb","to":"c"}]}`)
	cfg := sim.Config{TickMs: 100, DurationSec: 45, Traffic: sim.Traffic{Kind: "constant", RPS: 960}, Mix: sim.Mix{Static: 1},
		Client: sim.Client{TimeoutMs: 1000, MaxRetries: 1},
		Chaos:  []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 15, DurationSec: 15, Target: "a"}}}
	a, err := refRun(d, cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := refRun(d, cfg, 7)
	c, _ := refRun(d, cfg, 8)
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs with seed 7 differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 give the same run: the seed is not used")
	}
}

// The mapping refuses what the reference does not model instead of simulating it wrongly.
func TestReferenceRefusesWhatItDoesNotModel(t *testing.T) {
	tests := []struct{ name, design, want string }{
		{"a gateway over two components", `{"components":[{"id":"gw","type":"api_gateway"},{"id":"a","type":"app_service"},
		 {"id":"b","type":"app_service"}],"edges":[{"from":"gw","to":"a"},{"from":"gw","to":"b"}]}`, "gw"},
		{"two replicated primaries", `{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"},
		 {"id":"db2","type":"database"}],"edges":[{"from":"app","to":"db"},{"from":"db","to":"db2"}]}`, "db"},
		{"a balancer over a database", `{"components":[{"id":"lb","type":"load_balancer"},{"id":"db","type":"database"}],
		 "edges":[{"from":"lb","to":"db"}]}`, "lb"},
		{"consistent hashing", `{"components":[{"id":"lb","type":"load_balancer","params":{"algorithm":"consistent_hash"}},
		 {"id":"app","type":"app_service"}],"edges":[{"from":"lb","to":"app"}]}`, "lb"},
		{"two ingresses", `{"components":[{"id":"a","type":"app_service"},{"id":"b","type":"app_service"}],"edges":[]}`, "b"},
	}
	for _, tt := range tests {
		_, err := newRefModel(mustDesign(t, tt.design), constant(100, 1), 1)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.want)
		}
	}
}

// mmcKShortfall is how many places short of full the waiting room of M/M/c/K (c workers,
// buffer places, offered a Erlangs) stands on average: buffer − E[waiting].
func mmcKShortfall(c, buffer int, a float64) float64 {
	k := c + buffer
	p := make([]float64, k+1)
	p[0] = 1
	var total, waiting float64
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * a / float64(min(n, c))
	}
	for n, v := range p {
		total += v
		waiting += float64(max(0, n-c)) * v
	}
	return float64(buffer) - waiting/total
}

// Under overload a waiting room does not stand full: it hovers below full by what the
// stationary M/M/c/K says (about 1 ÷ (ρ − 1) places for a large room), and rooms of replicas
// dealt requests in turn hover nearer full than independent Poisson-fed rooms would, their
// arrivals being more regular. This is why "the room is 99% full" is, in the reference, a
// fluctuation rather than a level (internal/sim/overload_scenarios_test.go, the backlog-full rows).
func TestReferenceRoomHoversBelowFull(t *testing.T) {
	tests := []struct {
		name                   string
		replicas, workers, per int
		rho                    float64
	}{
		{"one room of 32 workers and 256 places offered 160%", 1, 32, 256, 1.6},
		{"four rooms of 8 workers and 64 places each, in turn, offered 160%", 4, 8, 64, 1.6},
	}
	const serviceMs, seconds = 50.0, 20.0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d sim.Design
			mustJSON(fmt.Sprintf(`{"components":[{"id":"app","type":"app_service","params":
			 {"replicas":%d,"concurrency":%d,"service_time_ms":%g,"queue_per_replica":%d}}],"edges":[]}`,
				tt.replicas, tt.workers, serviceMs, tt.per), &d)
			rps := tt.rho * float64(tt.replicas*tt.workers) * 1000 / serviceMs
			var shorts []float64
			for seed := uint64(1); seed <= replications; seed++ {
				rec := poolRun(t, d, rps, seconds, seed)
				fill := rec.fill["app"]
				var sum float64
				n := 0
				for k := len(fill) / 10; k < len(fill); k++ {
					sum += fill[k]
					n++
				}
				shorts = append(shorts, float64(tt.replicas*tt.per)*(1-sum/float64(n)))
			}
			got, half := batchCI(shorts)
			want := float64(tt.replicas) * mmcKShortfall(tt.workers, tt.per, tt.rho*float64(tt.workers))
			t.Logf("places short of full: reference %.2f ± %.2f, M/M/c/K rooms fed Poisson %.2f", got, half, want)
			if half > 0.1*want {
				t.Errorf("interval ±%.2f is wider than 10%% of %.2f: the check has no teeth", half, want)
			}
			if tt.replicas == 1 {
				if math.Abs(got-want) > half {
					t.Errorf("shortfall %.2f ± %.2f, exact M/M/c/K %.2f: outside the reference's own 99%% interval", got, half, want)
				}
				return
			}
			if !(got+half < want) {
				t.Errorf("shortfall %.2f ± %.2f: rooms dealt in turn should stand nearer full than Poisson-fed ones (%.2f)", got, half, want)
			}
		})
	}
}

// A health-checked failover worked out by hand, with the design's own schedule: probes
// every 2 s, out after 3 failures in a row. Backend a fails at 10 s and is repaired at
// 20 s. By hand: its share fails until the third failed probe, between 4 and 6 s after the
// strike (the first failing probe comes within one interval); after that nothing fails;
// and a is sent requests again from its first passing probe, within 2 s of the repair,
// not before.
func TestReferenceHealthCheckedFailoverAsWorkedByHand(t *testing.T) {
	d := splitDesign("round_robin", true, 6, 15)
	d.Components[0].Params["health_check_interval_sec"] = []byte("2")
	d.Components[0].Params["unhealthy_threshold"] = []byte("3")
	cfg := sim.Config{TickMs: 100, DurationSec: 30, Traffic: sim.Traffic{Kind: "constant", RPS: 100}, Mix: sim.Mix{Static: 1},
		Client: sim.Client{TimeoutMs: 1000},
		Chaos:  []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "a"}}}
	for seed := uint64(1); seed <= 8; seed++ {
		rec, err := refRun(d, cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		lastError, back := 0.0, -1.0
		for k := range rec.errors {
			end := float64(k+1) * rec.dt
			if rec.errors[k] > 0 {
				lastError = end
			}
			if end > 20 && back < 0 && rec.out["a"][k] > 0 {
				back = float64(k) * rec.dt
			}
		}
		if got := lastError - 10; got < 4 || got > 6.1 {
			t.Errorf("seed %d: a's share failed for %.1f s after the strike, want 4 to 6 s", seed, got)
		}
		if back < 20 || back > 22 {
			t.Errorf("seed %d: a served again from %.1f s, want within 2 s of the repair at 20 s", seed, back)
		}
	}
}
