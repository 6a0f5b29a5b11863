package reference

import (
	"testing"

	"backpressure/internal/sim"
)

// Workers held through a delayed call come back as their calls return. An app of 4 × 8
// workers calls a database for every request; for 5 s each call is 200 ms slower, so the app
// serves about 145 requests a second and its rooms fill. When the delay ends, the calls under
// way still take it: over the next 200 ms the app's workers come back one by one, and what it
// finishes rises from the 145 a second it finished with the delay towards the 1,800 it can
// do without. Read over those 200 ms (four 50 ms ticks), the engine finishes what the
// reference does within a quarter (its workers, back, start new work at once, where the
// reference's first answers them a service time later); a pool that took every worker back
// at once finishes about twice as much.
func TestHeldWorkersComeBackAsTheirCallsReturn(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":8,"service_time_ms":10}},
	 {"id":"db","type":"database","params":{"connections":20,"query_time_ms":5}}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := sim.Config{TickMs: 50, DurationSec: 12, Traffic: sim.Traffic{Kind: "constant", RPS: 700}, Mix: sim.Mix{Read: 1},
		Client: sim.Client{TimeoutMs: 5000},
		Chaos: []sim.ChaosEvent{{ID: "slow", Kind: sim.ChaosLatencyInjection, AtSec: 5, DurationSec: 5, From: "app", To: "db",
			Params: sim.ChaosParams{ExtraLatencyMs: 200}}}}
	const from, to = 10.0, 10.2 // the 200 ms after the delay ends
	finished := func(out []float64, tickSec float64) float64 {
		sum := 0.0
		for k, x := range out {
			if end := float64(k+1) * tickSec; end > from+1e-9 && end <= to+1e-9 {
				sum += x * tickSec
			}
		}
		return sum
	}
	ref := 0.0
	const seeds = 10
	for seed := uint64(1); seed <= seeds; seed++ {
		tr, err := Simulate(d, cfg, seed, false)
		if err != nil {
			t.Fatal(err)
		}
		ref += finished(tr.Out["app"], tr.TickSec) / seeds

	}
	res := mustRun(t, d, cfg)
	var out []float64
	for _, tk := range res.Ticks {
		out = append(out, tk.Components[0].OutputRPS)
	}
	engine := finished(out, res.TickMs/1000)

	t.Logf("finished by the app in the 200 ms after the delay ends: engine %.1f, reference %.1f (%d seeds)", engine, ref, seeds)
	if !near(engine, ref, 0.25) {
		t.Errorf("engine %.1f against the reference's %.1f: want within a quarter", engine, ref)
	}
}
