package reference

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"backpressure/internal/sim"
)

// mustDesign decodes a design written as JSON, failing the test on bad JSON.
func mustDesign(t testing.TB, s string) sim.Design {
	t.Helper()
	var d sim.Design
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("design JSON: %v", err)
	}
	return d
}

func mustJSON(s string, v any) {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		panic(err)
	}
}

// mustRun is the engine's run of d under cfg.
func mustRun(t testing.TB, d sim.Design, cfg sim.Config) *sim.Result {
	t.Helper()
	r, err := sim.Run(context.Background(), d, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

// constant is a run of d seconds at rps requests per second, all reads.
func constant(rps, seconds float64) sim.Config {
	return sim.Config{TickMs: 100, DurationSec: seconds, Traffic: sim.Traffic{Kind: "constant", RPS: rps},
		Mix: sim.Mix{Read: 1}, Client: sim.Client{TimeoutMs: 2000}}
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-12)
}

// archSim is seed architecture-simulator's default: 400 rps offered, a balancer, an app
// tier of 640 rps (4 replicas × 8 workers ÷ 50 ms), a database of 250 rps (5 connections ÷
// 20 ms), one query per request, a 1 s client timeout and one retry, 250 ms steps.
func archSim(cache string) (sim.Design, sim.Config) {
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
	var des sim.Design
	mustJSON(d, &des)
	cfg := sim.Config{TickMs: 250, DurationSec: 10, Traffic: sim.Traffic{Kind: "constant", RPS: 400}, Mix: sim.Mix{Read: 1},
		Client: sim.Client{TimeoutMs: 1000, MaxRetries: 1}}
	return des, cfg
}

// directErlangB is (a^c/c!) / Σ_{k≤c} a^k/k!, summed in log space.
func directErlangB(c int, a float64) float64 {
	logTerm := func(k int) float64 {
		lg, _ := math.Lgamma(float64(k + 1))
		return float64(k)*math.Log(a) - lg
	}
	top := logTerm(c)
	sum := 0.0
	for k := 0; k <= c; k++ {
		sum += math.Exp(logTerm(k) - top)
	}
	return 1 / sum
}

// directErlangC is the textbook Erlang C formula.
func directErlangC(c int, a float64) float64 {
	fact := 1.0
	sum := 0.0
	term := 1.0 // a^k/k!
	for k := 0; k < c; k++ {
		if k > 0 {
			fact *= float64(k)
			term = math.Pow(a, float64(k)) / fact
		}
		sum += term
	}
	fact *= float64(c)
	last := math.Pow(a, float64(c)) / fact * float64(c) / (float64(c) - a)
	return last / (sum + last)
}

// bruteMMCKBlocking builds the M/M/c/K stationary distribution state by state.
func bruteMMCKBlocking(c, buffer int, a float64) float64 {
	k := c + buffer
	p := make([]float64, k+1)
	p[0] = 1
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * a / float64(min(n, c))
	}
	total := 0.0
	for _, v := range p {
		total += v
	}
	return p[k] / total
}

// meanAndSpread are the mean and the standard deviation of xs.
func meanAndSpread(xs []float64) (mean, spread float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		spread += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(spread / float64(len(xs)-1))
}
