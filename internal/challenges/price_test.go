package challenges

import (
	"math"
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

// Health checks are priced before the run as the engine prices them: a probe of each
// backend every interval, the same at any load, so the estimate's low and high both move
// by it, and the run measures a cost inside the estimate with and without them.
func TestCostEstimatePricesHealthChecks(t *testing.T) {
	l, err := CampaignLevel("lose-a-node")
	if err != nil {
		t.Fatal(err)
	}
	withChecks := func(on bool, interval float64) sim.Design {
		d := cloneDesign(solution(t, l.Slug))
		for i, c := range d.Components {
			if c.Type == sim.KindLoadBalancer {
				d.Components[i] = withParam(withParam(c, "health_checks", on), "health_check_interval_sec", interval)
			}
		}
		return d
	}
	off := l.CostEstimate(withChecks(false, 0.1))
	on := l.CostEstimate(withChecks(true, 0.1))
	want := 2 * 3600 / 0.1 * l.Config().Catalog["lb.standard"].PricePerMillionProbes / 1e6
	if want <= 0 {
		t.Fatal("the balancer's probes are free")
	}
	if dl, dh := on.Low-off.Low, on.High-off.High; math.Abs(dl-want) > 1e-12 || math.Abs(dh-want) > 1e-12 {
		t.Errorf("checks every 0.1 s on 2 backends add $%.6f/h low and $%.6f/h high, want $%.6f/h", dl, dh, want)
	}
	for _, on := range []bool{false, true} {
		ev, err := l.Evaluate(t.Context(), withChecks(on, 0.1))
		if err != nil {
			t.Fatal(err)
		}
		cost, _ := ev.Condition(CondCost)
		if r := l.CostEstimate(withChecks(on, 0.1)); cost.Measured < r.Low-1e-9 || cost.Measured > r.High+1e-9 {
			t.Errorf("checks %v: measured $%.4f/h, estimated $%.4f–$%.4f/h", on, cost.Measured, r.Low, r.High)
		}
	}
}
