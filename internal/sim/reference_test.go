package sim_test

import (
	"testing"

	"backpressure/internal/reference"
	"backpressure/internal/sim"
)

// The engine against the per-request reference (internal/reference): the overload table and
// the breaker's sweep. They run from here because the reference imports package sim.

func referenceRun(d sim.Design, cfg sim.Config, seed uint64, slowDatabase bool) (sim.ReferenceTrace, error) {
	tr, err := reference.Simulate(d, cfg, seed, slowDatabase)
	if err != nil {
		return sim.ReferenceTrace{}, err
	}
	out := sim.ReferenceTrace{TickSec: tr.TickSec, Offered: tr.Offered, Fresh: tr.Fresh, Served: tr.Served,
		Failed: tr.Failed, TimedOut: tr.TimedOut, Fill: tr.Fill, Out: tr.Out, P99Sec: tr.P99Sec,
		Breakers: map[string][]sim.BreakerChange{}}
	for id, h := range tr.Breakers {
		for _, c := range h {
			out.Breakers[id] = append(out.Breakers[id], sim.BreakerChange{AtSec: c.AtSec, State: c.State})
		}
	}
	return out, nil
}

func TestOverloadScenarios(t *testing.T) { sim.OverloadScenarios(t, referenceRun) }

func TestBreakerSweepOverASlowCall(t *testing.T) { sim.BreakerSweep(t, referenceRun) }
