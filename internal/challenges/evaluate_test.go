package challenges

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/sim"
)

func mustLevel(t *testing.T, slug string) *Level {
	t.Helper()
	l, err := CampaignLevel(slug)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func design(t *testing.T, doc string) sim.Design {
	t.Helper()
	d, err := ParseDesign([]byte(doc))
	if err != nil {
		t.Fatalf("ParseDesign: %v", err)
	}
	return d
}

// The verdict's JSON is byte-identical however often and however concurrently it is
// computed.
func TestEvaluateDeterministic(t *testing.T) {
	for _, l := range campaign(t) {
		d := solution(t, l.Slug)
		first, err := l.Evaluate(t.Context(), d)
		if err != nil {
			t.Fatal(err)
		}
		want := mustJSON(first)
		var wg sync.WaitGroup
		got := make([][]byte, 4)
		for i := range got {
			wg.Go(func() {
				ev, err := l.Evaluate(t.Context(), d)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = mustJSON(ev)
			})
		}
		wg.Wait()
		for i, g := range got {
			if !bytes.Equal(g, want) {
				t.Errorf("%s: run %d differs from the first", l.Slug, i)
			}
		}
	}
}

func TestEvaluateJSONShape(t *testing.T) {
	l := mustLevel(t, "thundering-herd")
	ev, err := l.Evaluate(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(mustJSON(ev), &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"level", "version", "passed", "score", "conditions", "failures", "events",
		"why", "busiest", "healthy", "components", "window"} {
		if _, ok := m[key]; !ok {
			t.Errorf("evaluation JSON lacks %q", key)
		}
	}
	if m["score"] != nil {
		t.Errorf("failing run has score %v", m["score"])
	}
	var names []string
	for _, c := range ev.Conditions {
		names = append(names, c.Name)
		if c.Margin != c.Target-c.Measured {
			t.Errorf("%s: margin %g != target %g − measured %g", c.Name, c.Margin, c.Target, c.Measured)
		}
	}
	if diff := cmp.Diff([]string{CondLatency, CondErrors, CondCost, CondResilience}, names); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if len(ev.Events) != 1 || ev.Events[0].ID != "flush" {
		t.Errorf("events = %+v, want the flush", ev.Events)
	}
}

// A design that breaks the level's rules is invalid, with every problem and its path.
func TestEvaluateRules(t *testing.T) {
	tests := []struct {
		slug, design string
		want         []string
	}{
		{"first-request", `{"components":[{"id":"app","type":"app_service"},{"id":"c","type":"cache"},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"db"},{"from":"app","to":"c"}]}`, []string{"components[1].type"}},
		{"first-request", `{"components":[{"id":"app","type":"app_service","params":{"replicas":7,"concurrency":60,"instance_type":"app.large"}},{"id":"db","type":"database","params":{"read_replicas":1}}],
			"edges":[{"from":"app","to":"db"}]}`, []string{"components[0].params.concurrency", "components[0].params.instance_type",
			"components[0].params.replicas", "components[1].params.read_replicas"}},
		{"lose-a-node", `{"components":[{"id":"lb","type":"load_balancer"},{"id":"a1","type":"app_service"},{"id":"a2","type":"app_service"},
			{"id":"a3","type":"app_service"},{"id":"a4","type":"app_service"},{"id":"db","type":"database"}],
			"edges":[{"from":"lb","to":"a1"},{"from":"lb","to":"a2"},{"from":"lb","to":"a3"},{"from":"lb","to":"a4"},
			{"from":"a1","to":"db"},{"from":"a2","to":"db"},{"from":"a3","to":"db"},{"from":"a4","to":"db"}]}`,
			[]string{"components", "components"}}, // four app services (at most three); no app-b for the chaos
		{"lose-a-node", `{"components":[{"id":"lb","type":"load_balancer"},{"id":"app-a","type":"app_service"},{"id":"app-b","type":"app_service"},
			{"id":"db","type":"database","params":{"read_replicas":1,"read_from":"replicas","replica_instance_type":"db.large"}}],
			"edges":[{"from":"lb","to":"app-a"},{"from":"lb","to":"app-b"},{"from":"app-a","to":"db"},{"from":"app-b","to":"db"}]}`,
			[]string{"components[3].params.replica_instance_type"}}, // a replica type the level does not offer
		{"lose-a-node", `{"components":[{"id":"lb","type":"load_balancer"},{"id":"app-a","type":"app_service"},{"id":"app-b","type":"app_service"},
			{"id":"db","type":"database","params":{"read_from":"replicas"}}],
			"edges":[{"from":"lb","to":"app-a"},{"from":"lb","to":"app-b"},{"from":"app-a","to":"db"},{"from":"app-b","to":"db"}]}`,
			[]string{"components[3].params.read_from"}}, // reads to replicas the database does not have
		{"the-queue-remembers", `{"components":[{"id":"app","type":"app_service"},{"id":"jobs","type":"queue"},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"jobs"},{"from":"app","to":"db"}]}`, []string{"edges"}},
		{"cache-me-if-you-can", `{"components":[{"id":"app","type":"app_service","params":{"replicas":8}},{"id":"c","type":"cache","params":{"memory_gb":64}},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"db"},{"from":"app","to":"c"}]}`, []string{"components[1].params.memory_gb"}},
		{"first-request", `{"components":[{"id":"app","type":"app_service","params":{"replicas":"two","bogus":1}},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"db"}]}`, []string{"components[0].params.bogus", "components[0].params.replicas"}},
	}
	for _, tt := range tests {
		l := mustLevel(t, tt.slug)
		_, err := l.Evaluate(t.Context(), design(t, tt.design))
		ps, ok := AsProblems(err)
		if !ok {
			t.Errorf("%s: Evaluate = %v, want Problems", tt.slug, err)
			continue
		}
		if diff := cmp.Diff(tt.want, paths(ps)); diff != "" {
			t.Errorf("%s: problem paths (-want +got):\n%s\n%v", tt.slug, diff, ps)
		}
	}
}

func TestEvaluateNotParsed(t *testing.T) {
	var l Level
	if _, err := l.Evaluate(t.Context(), sim.Design{}); err != ErrNotParsed {
		t.Errorf("Evaluate on a zero Level = %v, want ErrNotParsed", err)
	}
}

// judge on a synthetic run: the window, the percentile, the means and the resilience rule.
func TestJudgeSynthetic(t *testing.T) {
	l := &Level{Slug: "synthetic", Version: 1, Run: Run{DurationSec: 10, Mix: sim.Mix{Read: 1}},
		SLA: SLA{P99LatencyMs: 100, ErrorRate: 0.02}, BudgetPerHour: 1,
		Resilience: &Resilience{ErrorCeiling: 0.1, RecoveryDeadlineSec: 2}}
	res := &sim.Result{TickMs: 1000, Components: []sim.ComponentInfo{{ID: "app", Type: sim.KindAppService}}}
	for k := range 10 {
		tick := sim.Tick{T: float64(k + 1), P99Ms: float64(10 * (k + 1)), ErrorRate: 0.01 * float64(k%2),
			CostPerHour: 0.5, FreshRPS: 100,
			Components: []sim.ComponentTick{{Utilization: 0.1 * float64(k)}}}
		res.Ticks = append(res.Ticks, tick)
	}
	rec := 1.5
	res.Summary.Events = []sim.EventImpact{{ID: "e", Kind: "node_failure", StartSec: 5, EndSec: 6, ErrorRate: 0.05, RecoverySec: &rec}}
	ev := l.judge(res)
	// Warm-up: the first 2 of 10 ticks. p99s in the window are 30..100: nearest rank 99% of 8 is the 8th.
	if ev.Window.Ticks != 8 || ev.Window.StartSec != 2 || ev.Window.EndSec != 10 {
		t.Errorf("window = %+v", ev.Window)
	}
	lat, _ := ev.Condition(CondLatency)
	errs, _ := ev.Condition(CondErrors)
	cost, _ := ev.Condition(CondCost)
	resil, _ := ev.Condition(CondResilience)
	if lat.Measured != 100 || !lat.Passed {
		t.Errorf("latency = %+v", lat)
	}
	if errs.Measured != 0.005 || !errs.Passed {
		t.Errorf("errors = %+v", errs)
	}
	if cost.Measured != 0.5 || !cost.Passed {
		t.Errorf("cost = %+v", cost)
	}
	// Usage: max(0.05/0.1, 1.5/2) = 0.75.
	if resil.Measured != 0.75 || !resil.Passed || !ev.Events[0].Passed {
		t.Errorf("resilience = %+v, event %+v", resil, ev.Events[0])
	}
	// Peaks leave out the event's window plus its deadline (ticks ending 6..8 s).
	if p := ev.Components[0]; math.Abs(p.PeakUtilization-0.9) > 1e-12 || math.Abs(p.ChaosPeakUtilization-0.7) > 1e-12 || p.Healthy {
		t.Errorf("component peak = %+v", p)
	}
	if !ev.Passed || ev.Score == nil {
		t.Errorf("passed=%v score=%v", ev.Passed, ev.Score)
	}

	// Never recovering fails, counting the time to the end of the run.
	res.Summary.Events[0].RecoverySec = nil
	res.Summary.DurationSec = 10
	ev = l.judge(res)
	if e := ev.Events[0]; e.Passed || e.Recovered || e.Usage != 2 {
		t.Errorf("never recovered: %+v", e)
	}
	if ev.Passed || ev.Score != nil {
		t.Errorf("passed=%v score=%v, want a failure", ev.Passed, ev.Score)
	}
}

func TestPercentile(t *testing.T) {
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = float64(200 - i) // 200..1, unsorted
	}
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{nil, 0.99, 0},
		{[]float64{7}, 0.99, 7},
		{xs, 0.99, 198},
		{xs, 0.5, 100},
		{xs, 1, 200},
	}
	for _, tt := range tests {
		if got := percentile(tt.xs, tt.p); got != tt.want {
			t.Errorf("percentile(%d values, %g) = %g, want %g", len(tt.xs), tt.p, got, tt.want)
		}
	}
}

// Why it happened names what made the run fail, and nothing for a run that passed.
func TestEvaluateWhy(t *testing.T) {
	l := mustLevel(t, "lose-a-node")
	ev, err := l.Evaluate(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	// The dead app server behind a balancer without health checks, not the database.
	if len(ev.Why) == 0 || ev.Why[0].Component != "app-b" || ev.Why[0].Cause != sim.CauseNodeFailed {
		t.Fatalf("why = %+v, want app-b node_failed first", ev.Why)
	}
	for _, w := range ev.Why {
		if w.Component == "db" {
			t.Errorf("why names the database: %+v", w)
		}
	}
	for _, slug := range []string{"lose-a-node", "thundering-herd"} {
		l := mustLevel(t, slug)
		ev, err := l.Evaluate(t.Context(), solution(t, slug))
		if err != nil {
			t.Fatal(err)
		}
		if !ev.Passed || ev.Why == nil || len(ev.Why) != 0 || ev.Busiest == "" {
			t.Errorf("%s: passed %v, why %#v, busiest %q: want a passing run with an empty timeline and the busiest named",
				slug, ev.Passed, ev.Why, ev.Busiest)
		}
	}
}

// A queue still holding acknowledged writes at the end is the level's own structural
// failure; the timeline names it as lost writes from when the queue last stood empty.
func TestEvaluateWhyUndrainedQueue(t *testing.T) {
	l := mustLevel(t, "the-queue-remembers")
	ev, err := l.Evaluate(t.Context(), design(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},
	 {"id":"jobs","type":"queue","params":{"workers":8,"buffer":20000}},{"id":"db","type":"database"}],
	 "edges":[{"from":"app","to":"jobs"},{"from":"jobs","to":"db"},{"from":"app","to":"db"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"undrained:jobs"}, ev.Failing()); diff != "" {
		t.Fatalf("failing (-want +got):\n%s", diff)
	}
	if len(ev.Why) != 1 {
		t.Fatalf("why = %+v, want the undrained queue", ev.Why)
	}
	w := ev.Why[0]
	if w.Component != "jobs" || w.Cause != sim.CauseLostWrites || w.StartSec < 60 || w.StartSec > 61 || w.EndSec != 240 ||
		!strings.Contains(w.Detail, "acknowledged writes") {
		t.Errorf("why %+v, want jobs lost_writes from the partition at 60 s to the end", w)
	}
}

// A level's runs lend each other their carried-state buffers (compiled.scratch), and, once
// released, their tick records: a design evaluated after other designs of the same level,
// sharing that memory, gets the verdict and the result, tick by tick, that it got first.
func TestEvaluateAfterOtherDesignsIsTheSame(t *testing.T) {
	for _, release := range []bool{false, true} {
		for _, l := range campaign(t) {
			full := func(d sim.Design) []byte {
				ev, err := l.Evaluate(t.Context(), d)
				if err != nil {
					t.Fatal(err)
				}
				out := append(mustJSON(ev), mustJSON(ev.Result)...)
				if release {
					l.Release(ev)
					if ev.Result != nil {
						t.Fatalf("%s: a released evaluation keeps its result", l.Slug)
					}
				}
				return out
			}
			want := full(l.StartingDesign)
			full(solution(t, l.Slug))
			if got := full(l.StartingDesign); !bytes.Equal(got, want) {
				t.Errorf("%s (released %v): the starting design's evaluation differs after the solution's", l.Slug, release)
			}
		}
	}
}

// Verdict is Evaluate's verdict byte for byte, with no Result, and giving its tick records
// back to the level changes nothing: verdicts kept while the level runs other designs in
// the memory they gave back stay as they were.
func TestVerdictIsEvaluatesVerdict(t *testing.T) {
	for _, l := range campaign(t) {
		var kept []*Evaluation
		var keptJSON [][]byte
		for _, d := range []sim.Design{l.StartingDesign, solution(t, l.Slug), l.StartingDesign} {
			ev, err := l.Evaluate(t.Context(), d)
			if err != nil {
				t.Fatal(err)
			}
			v, err := l.Verdict(t.Context(), d)
			if err != nil {
				t.Fatal(err)
			}
			if v.Result != nil {
				t.Errorf("%s: a verdict keeps the result", l.Slug)
			}
			if got, want := mustJSON(v), mustJSON(ev); !bytes.Equal(got, want) {
				t.Errorf("%s: verdict\n%s\nwant Evaluate's\n%s", l.Slug, got, want)
			}
			kept, keptJSON = append(kept, v), append(keptJSON, mustJSON(v))
		}
		for i, v := range kept {
			if !bytes.Equal(mustJSON(v), keptJSON[i]) {
				t.Errorf("%s: verdict %d changed when later runs reused its ticks' memory", l.Slug, i)
			}
		}
	}
}
