package sim

import (
	"fmt"
	"math"
	"testing"
)

// The autoscaler reads its replicas' busy share over the last second, and each order of
// replicas serves its own scale-out delay after it was made. Worked by hand on a pool of
// 400 rps a replica (6 workers × 15 ms), 2 replicas at least, a 60% target, 100 ms ticks:
// the wish is the last second's busy workers over the 3.6 a replica keeps busy at 60%.
//
// A step from 400 to 1,600 rps at 60 s: the two replicas go from 6 busy workers to 12
// (saturated), and the last second's reading rises by 0.6 a tick, 6 + 0.6k after k ticks of
// the step. It asks for 3 replicas (7.8 ÷ 3.6 = 2.17) at the third tick, 60.3 s, and for 4
// (11.4 ÷ 3.6 = 3.17) at the ninth, 60.9 s: two orders, serving 30 s later each.
//
// Steps to 600 rps at 60 s (9 busy: 7.5 ÷ 3.6 = 2.08 at 60.5 s, so 3) and to 900 rps at
// 70 s (saturated, 12 busy: 11.1 ÷ 3.6 = 3.08 at 70.7 s, so 4): the replica ordered at
// 70.7 s serves at 90.7 s, not with the one ordered at 60.5 s. The backlog built from 70 s,
// which the three drain with every worker busy for four ticks after they join, asks for a
// fifth at 81 s (14.7 ÷ 3.6 = 4.08), serving at 101 s.
func TestAutoscalerReadsTheLastSecondAndServesEachOrderInTurn(t *testing.T) {
	tests := []struct {
		name     string
		delaySec float64
		steps    []TrafficStep
		want     map[float64]int // replicas serving in the tick starting at that second
	}{
		{"a step read over the second after it", 30, []TrafficStep{{AtSec: 60, RPS: 1600}},
			map[float64]int{90.2: 2, 90.3: 3, 90.8: 3, 90.9: 4}},
		{"an order made while another starts", 20, []TrafficStep{{AtSec: 60, RPS: 600}, {AtSec: 70, RPS: 900}},
			map[float64]int{80.4: 2, 80.5: 3, 90.6: 3, 90.7: 4, 100.9: 4, 101: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustDesign(t, fmt.Sprintf(`{"components":[
			 {"id":"pool","type":"container_pool","params":{"min_replicas":2,"max_replicas":6,"target_utilization":0.6,
			   "scale_out_delay_sec":%g,"scale_in_delay_sec":600}}],"edges":[]}`, tt.delaySec))
			cfg := Config{TickMs: 100, DurationSec: 120, Mix: Mix{Static: 1}, Client: Client{TimeoutMs: 1000},
				Traffic: Traffic{Kind: "step", RPS: 400, Steps: tt.steps}}
			r := mustRun(t, d, cfg)
			pool := comp(r, "pool")
			for at, want := range tt.want {
				if got := r.Ticks[int(math.Round(at/0.1))].Components[pool].Replicas; got != want {
					t.Errorf("replicas serving at %.1f s: %d, want %d", at, got, want)
				}
			}
		})
	}
}
