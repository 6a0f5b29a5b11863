package challenges

import (
	"testing"

	"backpressure/internal/sim"
)

// The estimate before a run holds what the run then measures: for every level, its
// reference solution, its best known design and its starting design cost between the
// estimate's low and high (per-request components, serverless executions included).
func TestCostEstimateContainsTheMeasuredCost(t *testing.T) {
	for _, l := range campaign(t) {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			best, _ := threeStarDesign(t, l.Slug)
			for name, d := range map[string]sim.Design{"starting": l.StartingDesign, "reference": solution(t, l.Slug), "three-star": best} {
				ev, err := l.Evaluate(t.Context(), d)
				if err != nil {
					t.Fatal(err)
				}
				cost, _ := ev.Condition(CondCost)
				r := l.CostEstimate(d)
				if cost.Measured < r.Low-1e-9 || cost.Measured > r.High+1e-9 {
					t.Errorf("%s: measured $%.4f/h, estimated $%.4f–$%.4f/h", name, cost.Measured, r.Low, r.High)
				}
			}
		})
	}
}
