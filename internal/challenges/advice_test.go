package challenges

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"backpressure/internal/sim"
)

// brokenDesigns are the mistakes a new player makes, built from a level's starting design:
// no database, services that call nothing (dead ends), everything on one tier (services
// alone), and services that call each other in a cycle. Variants the level refuses are left
// out by the caller.
func brokenDesigns(d sim.Design) map[string]sim.Design {
	kinds := map[string]sim.Kind{}
	for _, c := range d.Components {
		kinds[c.ID] = c.Type
	}
	keep := func(name string, comp func(sim.Component) bool, edge func(sim.Edge) bool) (string, sim.Design) {
		var out sim.Design
		for _, c := range d.Components {
			if comp(c) {
				out.Components = append(out.Components, c)
			}
		}
		for _, e := range d.Edges {
			if comp(sim.Component{ID: e.From, Type: kinds[e.From]}) && comp(sim.Component{ID: e.To, Type: kinds[e.To]}) && edge(e) {
				out.Edges = append(out.Edges, e)
			}
		}
		return name, out
	}
	all := func(sim.Component) bool { return true }
	out := map[string]sim.Design{}
	add := func(name string, d sim.Design) { out[name] = d }
	add(keep("no database", func(c sim.Component) bool { return c.Type != sim.KindDatabase }, func(sim.Edge) bool { return true }))
	add(keep("dead ends", all, func(e sim.Edge) bool { return !isCompute(kinds[e.From]) }))
	add(keep("one tier", func(c sim.Component) bool { return isCompute(c.Type) }, func(sim.Edge) bool { return false }))
	cyc := sim.Design{Components: d.Components, Edges: slices.Clone(d.Edges)}
	for _, a := range d.Components {
		for _, b := range d.Components {
			if a.ID != b.ID && isCompute(a.Type) && isCompute(b.Type) {
				cyc.Edges = append(cyc.Edges, sim.Edge{From: a.ID, To: b.ID})
			}
		}
	}
	add("cycle", cyc)
	return out
}

// Every "why it happened" advice names only changes the level allows: each suggested change,
// applied to the design, is a design the level accepts, and the design it makes costs no
// more than the budget before any request. Where the level allows none, the advice says so
// and points at the hint. On every starting design whose hint finds a fix, that fix is a
// change the advice counts as addressing the failure: advice and hint point the same way.
func TestAdviceFitsTheLevel(t *testing.T) {
	if raceEnabled {
		t.Skip("hundreds of sequential runs per level; the same code runs in the suite without -race")
	}
	for _, l := range campaign(t) {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			designs := brokenDesigns(l.StartingDesign)
			designs["starting"] = l.StartingDesign
			checked := 0
			for name, d := range designs {
				ev, err := l.Evaluate(t.Context(), d)
				if _, invalid := AsProblems(err); invalid {
					continue // a variant this level refuses
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				cands := l.candidates(d, ev)
				for _, w := range ev.Why {
					checked++
					switch {
					case strings.HasPrefix(w.Advice, "try "), w.Advice == noSingleChange,
						w.Cause == sim.CauseNoRoute && (strings.HasPrefix(w.Advice, "connect ") || strings.HasPrefix(w.Advice, "add a ")):
					default:
						t.Errorf("%s: %s %s: advice %q is not the level's", name, w.Component, w.Cause, w.Advice)
					}
					if w.Cause == sim.CauseNoRoute && w.Advice != noSingleChange {
						routed, ok := followNoRouteAdvice(d, w.Advice)
						if !ok {
							t.Errorf("%s: %s: no_route advice %q is neither a connection nor an addition", name, w.Component, w.Advice)
						} else if _, err := l.prepare(routed); err != nil {
							t.Errorf("%s: advice %q makes a design the level refuses: %v", name, w.Advice, err)
						} else if c := l.fixedHourly(routed); c > l.BudgetPerHour {
							t.Errorf("%s: advice %q makes a design costing $%.3f/h before any request, over the budget $%.3f/h", name, w.Advice, c, l.BudgetPerHour)
						}
					}
					for _, ch := range l.suggestions(d, ev, &w, cands) {
						changed, err := applyPatch(d, ch.Patch)
						if err != nil {
							t.Errorf("%s: %s: %v", name, ch.Description, err)
							continue
						}
						if _, err := l.prepare(changed); err != nil {
							t.Errorf("%s: advice %q makes a design the level refuses: %v", name, ch.Description, err)
						}
						if c := l.fixedHourly(changed); c > l.BudgetPerHour {
							t.Errorf("%s: advice %q makes a design costing $%.3f/h before any request, over the budget $%.3f/h", name, ch.Description, c, l.BudgetPerHour)
						}
					}
				}
			}
			if checked == 0 {
				t.Error("no design of this level had a failing stretch to advise on")
			}

			ev, err := l.Evaluate(t.Context(), l.StartingDesign)
			if err != nil {
				t.Fatal(err)
			}
			h, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{Parallelism: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !h.Found || len(ev.Why) == 0 {
				return // no fix to point at, or no stretch of failing ticks to advise on
			}
			fix, err := applyPatch(l.StartingDesign, h.Change.Patch)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]sim.Component{}
			for _, c := range l.StartingDesign.Components {
				byID[c.ID] = c
			}
			for _, w := range ev.Why {
				target, ok := byID[w.Component]
				if !ok {
					continue
				}
				if _, ok := l.relevance(l.StartingDesign, byID, target, &w)(candidate{change: *h.Change, design: fix}); ok {
					return
				}
			}
			t.Errorf("the hint's fix %q addresses none of the stretches the advice explains: %+v", h.Change.Description, ev.Why)
		})
	}
}

// A design with nowhere to send its requests is told so, and its latency is not a pass:
// nothing was answered, so nothing was fast.
func TestNoRouteIsDiagnosedAndLatencyIsNotAPass(t *testing.T) {
	l := mustLevel(t, "first-request")
	d := design(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":6}}],"edges":[]}`)
	ev, err := l.Evaluate(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Why) == 0 || ev.Why[0].Cause != sim.CauseNoRoute || ev.Why[0].Component != "app" {
		t.Fatalf("why = %+v, want no_route at app", ev.Why)
	}
	if want := "add a database from the catalog and connect app to it"; !strings.HasPrefix(ev.Why[0].Advice, want) {
		t.Errorf("advice %q, want it to start %q", ev.Why[0].Advice, want)
	}
	lat, _ := ev.Condition(CondLatency)
	if lat.Passed || !lat.Unmeasured {
		t.Errorf("latency = %+v, want a failure with nothing measured", lat)
	}
}

// A call back up a request's own path closes a cycle that carries nothing: the evaluation
// warns about it, and about nothing in a design without one.
func TestCycleIsWarned(t *testing.T) {
	l := mustLevel(t, "lose-a-node")
	ev, err := l.Evaluate(t.Context(), solution(t, l.Slug))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Warnings) != 0 {
		t.Errorf("reference solution warned: %+v", ev.Warnings)
	}
	d := solution(t, l.Slug)
	d.Edges = append(slices.Clone(d.Edges), sim.Edge{From: "app-a", To: "app-b"}, sim.Edge{From: "app-b", To: "app-a"})
	ev, err = l.Evaluate(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	n := len(d.Edges)
	if len(ev.Warnings) != 2 || ev.Warnings[0].Path != index("edges", n-2) || !strings.Contains(ev.Warnings[0].Reason, "closes a cycle") {
		t.Errorf("warnings = %+v, want the two edges of the cycle", ev.Warnings)
	}
}

// followNoRouteAdvice applies the change a no_route advice names to d: "connect A to B"
// adds that edge; "add a KIND from the catalog and connect A to it" adds a component of
// that kind, with the level's defaults, called by A.
func followNoRouteAdvice(d sim.Design, advice string) (sim.Design, bool) {
	out := cloneDesign(d)
	if m := regexp.MustCompile(`^connect (\S+) to (\S+) `).FindStringSubmatch(advice); m != nil {
		out.Edges = append(out.Edges, sim.Edge{From: m[1], To: m[2]})
		return out, true
	}
	if m := regexp.MustCompile(`^add a (\S+) from the catalog and connect (\S+) to it`).FindStringSubmatch(advice); m != nil {
		id := "added-" + m[1]
		out.Components = append(out.Components, sim.Component{ID: id, Type: sim.Kind(m[1])})
		out.Edges = append(out.Edges, sim.Edge{From: m[2], To: id})
		return out, true
	}
	return d, false
}

func applyPatch(d sim.Design, ops []PatchOp) (sim.Design, error) {
	return newCandidatePatcher(d).apply(ops)
}
