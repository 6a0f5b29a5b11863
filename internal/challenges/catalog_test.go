package challenges

import (
	"slices"
	"testing"

	"backpressure/internal/sim"
)

func TestLevelKnobsAndFixed(t *testing.T) {
	l := mustLevel(t, "write-behind")
	if got, want := l.Knobs(sim.KindQueue), []string{"workers", "instance_type"}; !slices.Equal(got, want) {
		t.Errorf("queue knobs = %v, want %v (buffer is fixed here)", got, want)
	}
	fixed := l.Fixed(sim.KindQueue)
	if fixed["buffer"] != 100000.0 || fixed["job_time_ms"] != 10.0 {
		t.Errorf("queue fixed = %v", fixed)
	}
	if got := l.Knobs(sim.KindCDN); got != nil {
		t.Errorf("knobs of a kind not offered = %v", got)
	}
	if got, want := Knobs(sim.KindCache), []string{"instance_type"}; !slices.Equal(got, want) {
		t.Errorf("cache knobs = %v, want %v", got, want)
	}
	// Every knob is a parameter the engine knows.
	for k, names := range knobs {
		for _, n := range names {
			if !slices.ContainsFunc(sim.Params(k), func(s sim.ParamSpec) bool { return s.Name == n }) {
				t.Errorf("knob %s.%s is not an engine parameter", k, n)
			}
		}
	}
}
