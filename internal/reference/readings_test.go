package reference

import (
	"fmt"
	"math"
	"testing"

	"backpressure/internal/sim"
)

// secondReadings are the whole seconds' busy shares of component comp from second from
// on, as an autoscaler reading once a second sees them: the mean of each second's ticks.
func secondReadings(res *sim.Result, comp int, tickSec, from float64) []float64 {
	perSecond := int(math.Round(1 / tickSec))
	var out []float64
	for k := int(from / tickSec); k+perSecond <= len(res.Ticks); k += perSecond {
		sum := 0.0
		for _, tk := range res.Ticks[k : k+perSecond] {
			sum += tk.Components[comp].Utilization
		}
		out = append(out, sum/float64(perSecond))
	}
	return out
}

// A container pool's autoscaler reads its busy share over each second. On a pool of fixed
// size whose workers only serve, the readings wander as the busy workers of an
// infinite-server pool averaged over a second do (M/G/∞: variance λ·E[S²] ÷ 1 s, which for
// an exponential service time S is 2 × utilisation × S ÷ (workers × 1 s)), within 15%, from
// 40% to 80% busy, on 18 workers and on 48. At 90% on 18 workers they wander less, 10–30%
// narrower: the workers' count caps the busy share, and the room takes the excess as a
// queue. A pool whose mean reading stands a spread or two below its target still orders
// replicas on readings above it, which the engine's autoscaler, reading the last second's
// mean, does not (BENCHMARKS.md, "The campaign's verdicts the engine does not share"). Four
// seeds of 200 s, read from 20 s.
func TestReferenceAutoscalerReadingsWanderAsItsBusyWorkers(t *testing.T) {
	if raceEnabled {
		t.Skip("a description of the reference, 16 runs; the plain run holds it")
	}
	const serviceSec, concurrency = 0.024, 6
	for _, tt := range []struct {
		replicas int
		busy     float64
		lo, hi   float64 // the readings' spread ÷ M/G/∞'s
	}{{3, 0.4, 0.85, 1.15}, {3, 0.7, 0.85, 1.15}, {3, 0.9, 0.7, 0.9}, {8, 0.5, 0.85, 1.15}, {8, 0.8, 0.85, 1.15}} {
		t.Run(fmt.Sprintf("%d replicas %.0f%% busy", tt.replicas, 100*tt.busy), func(t *testing.T) {
			workers := float64(tt.replicas * concurrency)
			d := mustDesign(t, fmt.Sprintf(`{"components":[{"id":"shop","type":"container_pool","params":
			 {"min_replicas":%d,"max_replicas":%d,"concurrency":%d,"service_time_ms":%g,"target_utilization":0.9}}],"edges":[]}`,
				tt.replicas, tt.replicas, concurrency, 1000*serviceSec))
			cfg := sim.Config{TickMs: 250, DurationSec: 200, Traffic: sim.Traffic{Kind: "constant", RPS: tt.busy * workers / serviceSec},
				Mix: sim.Mix{Static: 1}, Client: sim.Client{TimeoutMs: 5000}}
			var readings []float64
			for seed := uint64(1); seed <= 4; seed++ {
				res, err := Run(t.Context(), d, cfg, Options{Seeds: []uint64{seed}})
				if err != nil {
					t.Fatal(err)
				}
				readings = append(readings, secondReadings(res, 0, 0.25, 20)...)
			}
			mean, spread := meanAndSpread(readings)
			want := math.Sqrt(2 * mean * serviceSec / workers)
			t.Logf("mean reading %.3f, spread %.4f, M/G/∞ %.4f", mean, spread, want)
			if r := spread / want; r < tt.lo || r > tt.hi {
				t.Errorf("readings spread %.4f about %.3f, %.2f × M/G/∞'s %.4f; want %.2f to %.2f ×", spread, mean, r, want, tt.lo, tt.hi)
			}
		})
	}
}
