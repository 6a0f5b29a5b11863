package sim

import (
	"context"
	"encoding/json"
	"math"
	"testing"
)

// mustDesign decodes a design written as JSON, failing the test on bad JSON.
func mustDesign(t testing.TB, s string) Design {
	t.Helper()
	var d Design
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		t.Fatalf("design JSON: %v", err)
	}
	return d
}

func mustRun(t testing.TB, d Design, cfg Config) *Result {
	t.Helper()
	r, err := Run(context.Background(), d, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return r
}

// constant is a run of d seconds at rps requests per second, all reads unless mix says otherwise.
func constant(rps, seconds float64) Config {
	return Config{TickMs: 100, DurationSec: seconds, Traffic: Traffic{Kind: "constant", RPS: rps},
		Mix: Mix{Read: 1}, Client: Client{TimeoutMs: 2000}}
}

// steady averages f over the last half of the ticks.
func steady(r *Result, f func(Tick) float64) float64 {
	ticks := r.Ticks[len(r.Ticks)/2:]
	sum := 0.0
	for _, tk := range ticks {
		sum += f(tk)
	}
	return sum / float64(len(ticks))
}

func comp(r *Result, id string) int {
	for i, c := range r.Components {
		if c.ID == id {
			return i
		}
	}
	panic("no component " + id)
}

func steadyComp(r *Result, id string, f func(ComponentTick) float64) float64 {
	i := comp(r, id)
	return steady(r, func(tk Tick) float64 { return f(tk.Components[i]) })
}

func near(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(math.Abs(want), 1e-12)
}

func mustJSON(s string, v any) {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		panic(err)
	}
}
