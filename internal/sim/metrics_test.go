package sim

import (
	"math"
	"testing"
)

// costPerHourReference is how a component's tick was priced before the pricing moved into
// recordComponents' switch over kinds.
func (m *model) costPerHourReference(c *component, handledRPS float64) float64 {
	it := &c.it
	cost := c.units*it.PricePerHour + handledRPS*3600/1e6*it.PricePerMillion
	switch c.kind {
	case KindDatabase:
		cost += (c.units - 1) * (c.rit.PricePerHour - it.PricePerHour)
	case KindQueue:
		cost += c.queueWorkers * it.PricePerWorkerHour
	case KindLoadBalancer:
		cost += ProbeCostPerHour(c.healthChecks, c.checkIntervalSec, len(c.edges), it.PricePerMillionProbes)
	case KindServerless:
		pl := &m.pools[c.pools[0]]
		busy := handledRPS * (pl.serviceSec + pl.holdSec)
		cost += busy * c.memoryGB * 3600 * it.PricePerGBSecond
	}
	return cost
}

// TestComponentCostAsBefore records every tick of the latencyCases (every kind of
// component, an autoscaler and functions scaling) once more from the state the tick left,
// and wants each component's price bit for bit as the reference gives it.
func TestComponentCostAsBefore(t *testing.T) {
	kinds := map[Kind]bool{}
	for _, tc := range latencyCases() {
		m, v := compileCase(t, tc.d, tc.cfg)
		st := m.newRunState()
		records := make([]ComponentTick, len(m.comps))
		again := make([]ComponentTick, len(m.comps))
		for tk := range v.ticks {
			tick := Tick{Components: records}
			m.step(tk, &tick, st)
			st2 := *st
			st2.compTot = make([]compTotals, len(m.comps))
			st2.lat, st2.compMix = latencyCache{}, LatencyMix{}
			st2.lat.init(m)
			tick2 := Tick{Components: again}
			m.recordComponents(tk, &tick2, &st2)
			total := 0.0
			for i := range m.comps {
				c := &m.comps[i]
				want := m.costPerHourReference(c, m.pools[c.pools[0]].processed/m.dt)
				if got := tick2.Components[i].CostPerHour; math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s tick %d %s: %v an hour, want %v", tc.name, tk, c.id, got, want)
				}
				total += want
				if want != c.units*c.it.PricePerHour {
					kinds[c.kind] = true
				}
			}
			if math.Float64bits(tick2.CostPerHour) != math.Float64bits(total) {
				t.Fatalf("%s tick %d: %v an hour in all, want %v", tc.name, tk, tick2.CostPerHour, total)
			}
		}
	}
	for _, k := range []Kind{KindQueue, KindLoadBalancer, KindServerless} {
		if !kinds[k] {
			t.Errorf("no %s priced beyond its units", k)
		}
	}
}
