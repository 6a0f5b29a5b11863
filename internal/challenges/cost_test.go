package challenges

import (
	"encoding/json"
	"strings"
	"testing"
)

// A level's cost counts, every tick, its traffic points, chaos events and retries as well
// as the request paths. Issue 25: at the same paths × ticks, a level with a 1,000-step
// traffic curve ran 8 times and one with 100 chaos events 20 times longer than one with
// constant traffic, so a bound on paths × ticks alone did not bound a run.
func TestLevelCostCountsEverythingATickWorksThrough(t *testing.T) {
	parse := func(t *testing.T, edit func(m map[string]any)) *Level {
		t.Helper()
		m := baseLevel(t)
		edit(m)
		data, _ := json.Marshal(m)
		l, err := Parse(data)
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		return l
	}
	steps := func(n int, every float64) func(m map[string]any) {
		return func(m map[string]any) {
			tr := at(m, "run", "traffic")
			tr["kind"] = "step"
			var s []any
			for i := range n {
				s = append(s, map[string]any{"at_sec": float64(i) * every, "rps": 200.0 + 100*float64(i%2)})
			}
			tr["steps"] = s
		}
	}
	plain := parse(t, func(map[string]any) {})
	ticks, allowance := plain.Ticks(), int64(plain.componentAllowance())
	plainRun, err := plain.RunCost(plain.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		edit  func(m map[string]any)
		extra int64 // units a tick beyond the plain level's
	}{
		{"100 traffic steps", steps(100, 1), 100},
		{"40 traffic spikes", func(m map[string]any) {
			var s []any
			for i := range 40 {
				s = append(s, map[string]any{"at_sec": float64(i), "duration_sec": 0.5, "rps": 50.0})
			}
			at(m, "run", "traffic")["spikes"] = s
		}, 40},
		{"20 chaos events", func(m map[string]any) {
			var c []any
			for i := range 20 {
				c = append(c, map[string]any{"kind": "traffic_spike", "at_sec": 50 + 2*float64(i), "duration_sec": 1.0, "params": map[string]any{"multiplier": 1.5}})
			}
			at(m, "run")["chaos"] = c
			m["resilience"] = map[string]any{"error_ceiling": 0.5, "recovery_deadline_sec": 10.0}
			delete(m, "starting_fails") // the spikes add a failing check of their own
		}, 20},
		{"three more retries", func(m map[string]any) { at(m, "run", "client")["max_retries"] = 4.0 }, 3 * allowance},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := parse(t, tt.edit)
			if got, want := l.WorstCaseCost()-plain.WorstCaseCost(), ticks*tt.extra; got != want {
				t.Errorf("worst case grew by %d, want %d (%d ticks × %d)", got, want, ticks, tt.extra)
			}
			run, err := l.RunCost(l.StartingDesign)
			if got, want := run-plainRun, ticks*tt.extra; err != nil || got != want {
				t.Errorf("the starting design's run grew by %d (%v), want %d", got, err, want)
			}
		})
	}

	// 3,000 ticks of the level's 32 paths pass; with a 1,000-step curve they do not.
	short := func(m map[string]any) { at(m, "run")["tick_ms"] = 40.0 }
	parse(t, short)
	m := baseLevel(t)
	short(m)
	steps(1000, 0.1)(m)
	data, _ := json.Marshal(m)
	_, err = Parse(data)
	ps, _ := AsProblems(err)
	if len(ps) != 1 || ps[0].Path != "run.duration_sec" || !strings.Contains(ps[0].Reason, "traffic points") {
		t.Errorf("Parse of 3,000 ticks with 1,000 traffic steps = %v, want the worst-case cost refused, naming the traffic points", err)
	}
}
