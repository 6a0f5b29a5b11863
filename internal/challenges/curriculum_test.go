package challenges

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"backpressure/internal/sim"
)

// The campaign's order teaches: each level's lesson is one mechanic no earlier level
// taught (alone, or beside mechanics already met), or a combination, two or more
// mechanics all met before that no earlier level combined. A level repeating an earlier
// lesson, or bringing two new mechanics at once, breaks the order.
func TestLessonsAreNewOrCombineEarlierOnes(t *testing.T) {
	if problems := lessonOrderProblems(campaign(t)); len(problems) > 0 {
		t.Error(strings.Join(problems, "\n"))
	}
}

// lessonOrderProblems says where a campaign breaks the lesson order, one line a level.
func lessonOrderProblems(levels []*Level) []string {
	var problems []string
	taught := map[string]string{} // mechanic → the first level that taught it
	var combined [][]string       // earlier levels' lessons, sorted
	for i, l := range levels {
		if l.Lesson == nil {
			problems = append(problems, fmt.Sprintf("%d %s: declares no lesson", i+1, l.Slug))
			continue
		}
		ms := slices.Sorted(slices.Values(l.Lesson.Mechanics))
		var fresh []string
		for _, m := range slices.Compact(ms) {
			if _, ok := taught[m]; !ok {
				fresh = append(fresh, m)
			}
		}
		switch {
		case len(fresh) > 1:
			problems = append(problems, fmt.Sprintf("%d %s: teaches %s at once; a level brings one new mechanic", i+1, l.Slug, strings.Join(fresh, " and ")))
		case len(fresh) == 0 && len(ms) < 2:
			problems = append(problems, fmt.Sprintf("%d %s: %s was already taught by %s; teach a new mechanic or combine two met before", i+1, l.Slug, ms[0], taught[ms[0]]))
		case len(fresh) == 0 && slices.ContainsFunc(combined, func(c []string) bool { return slices.Equal(c, ms) }):
			problems = append(problems, fmt.Sprintf("%d %s: an earlier level already combines %s", i+1, l.Slug, strings.Join(ms, " and ")))
		}
		for _, m := range ms {
			if _, ok := taught[m]; !ok {
				taught[m] = l.Slug
			}
		}
		combined = append(combined, ms)
	}
	return problems
}

// The order rule itself: a repeat, two new mechanics at once and a combination made twice
// are each named; a new mechanic beside an old one, and a new combination, are not.
func TestLessonOrderRule(t *testing.T) {
	level := func(slug string, ms ...string) *Level {
		return &Level{Slug: slug, Lesson: &Lesson{Mechanics: ms}}
	}
	tests := []struct {
		name   string
		levels []*Level
		want   []string // the slugs named, in order
	}{
		{"each new", []*Level{level("a", "cache"), level("b", "cdn")}, nil},
		{"new beside old", []*Level{level("a", "cache"), level("b", "cache", "cdn")}, nil},
		{"combination", []*Level{level("a", "cache"), level("b", "cdn"), level("c", "cdn", "cache")}, nil},
		{"repeat", []*Level{level("a", "scale_out"), level("b", "scale_out")}, []string{"b"}},
		{"two new at once", []*Level{level("a", "cache", "cdn")}, []string{"a"}},
		{"combination twice", []*Level{level("a", "cache"), level("b", "cdn"), level("c", "cache", "cdn"), level("d", "cdn", "cache")}, []string{"d"}},
		{"no lesson", []*Level{{Slug: "a"}}, []string{"a"}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range lessonOrderProblems(tt.levels) {
			got = append(got, strings.TrimSuffix(strings.Fields(p)[1], ":"))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: named %v, want %v (%v)", tt.name, got, tt.want, lessonOrderProblems(tt.levels))
		}
	}
}

// Every component kind, chaos kind and client behaviour appears in some lesson, measured
// on the best-known way to fail it: the reference solution with a declared mechanic taken
// out. A component kind is in a lesson when taking the mechanic out changes or removes a
// component of that kind; a chaos kind when the design without it fails during an event
// of that kind (failsDuring); a client behaviour when the design without it makes the
// clients use it more than the reference does (more attempts missing their deadline, more
// retries, more retries from clients that back off or keep to a retry budget).
func TestLessonsCoverTheGame(t *testing.T) {
	if raceEnabled {
		t.Skip("runs every level's reference without each mechanic; the same code runs in the suite without -race")
	}
	kinds := map[sim.Kind]string{}
	chaos := map[string]string{}
	client := map[string]string{}
	for _, l := range campaign(t) {
		if l.Lesson == nil {
			continue
		}
		ref := solution(t, l.Slug)
		c := l.Run.Client
		passing, err := l.Evaluate(t.Context(), ref)
		if err != nil {
			t.Fatalf("%s: %v", l.Slug, err)
		}
		base := passing.Result.Summary
		l.Release(passing)
		for _, m := range l.Lesson.Mechanics {
			without := mechanics[m].strip(l, l.StartingDesign, ref)
			for _, k := range changedKinds(ref, without) {
				kinds[k] = l.Slug
			}
			ev, err := l.Evaluate(t.Context(), without)
			if err != nil {
				t.Fatalf("%s without %s: %v", l.Slug, m, err)
			}
			for _, e := range ev.Events {
				if failsDuring(ev, e) {
					chaos[e.Kind] = l.Slug
				}
			}
			s := ev.Result.Summary
			if s.TimedOut > base.TimedOut {
				client["timeouts"] = l.Slug
			}
			if s.Retries > base.Retries {
				client["retries"] = l.Slug
				if c.BackoffMs > 0 {
					client["backoff"] = l.Slug
				}
				if c.RetryBudget > 0 {
					client["retry budget"] = l.Slug
				}
			}
			l.Release(ev)
		}
	}
	for _, k := range sim.Kinds() {
		if kinds[k] == "" {
			t.Errorf("no lesson is about a %s: no level's mechanic changes one in its reference solution", k)
		}
	}
	for _, k := range []sim.ChaosKind{sim.ChaosNodeFailure, sim.ChaosTrafficSpike, sim.ChaosCacheFlush,
		sim.ChaosNetworkPartition, sim.ChaosLatencyInjection} {
		if chaos[string(k)] == "" {
			t.Errorf("no lesson is about a %s: no level's reference fails one with a mechanic taken out", k)
		}
	}
	for _, b := range []string{"timeouts", "retries", "backoff", "retry budget"} {
		if client[b] == "" {
			t.Errorf("no lesson makes clients' %s work harder when its mechanic is taken out", b)
		}
	}
	t.Logf("kinds %v\nchaos %v\nclients %v", kinds, chaos, client)
}

// failsDuring: ev fails event e's resilience verdict, or a stretch of its "why it
// happened" begins while e acts or before e's recovery deadline has passed.
func failsDuring(ev *Evaluation, e EventCheck) bool {
	if !e.Passed {
		return true
	}
	return slices.ContainsFunc(ev.Why, func(w sim.Why) bool {
		return w.StartSec >= e.StartSec && w.StartSec <= e.EndSec+e.RecoveryDeadlineSec
	})
}

// changedKinds lists the kinds of d's components that without removes or changes.
func changedKinds(d, without sim.Design) []sim.Kind {
	after := map[string]string{}
	for _, c := range without.Components {
		after[c.ID] = string(mustJSON(c))
	}
	var out []sim.Kind
	for _, c := range d.Components {
		if got, ok := after[c.ID]; !ok || got != string(mustJSON(c)) {
			out = append(out, c.Type)
		}
	}
	return out
}

// The starting design fails for the reason its level states: every built-in level says
// which checks it fails and what "why it happened" names, and the verdict agrees exactly
// (Parse refuses a level whose starting design fails another way; this holds the campaign
// to stating it).
func TestStartingDesignsFailForTheirStatedReason(t *testing.T) {
	for _, l := range campaign(t) {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			if l.StartingFails == nil {
				t.Fatal("a built-in level states why its starting design fails (starting_fails)")
			}
			ev, err := l.Evaluate(t.Context(), l.StartingDesign)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release(ev)
			var ps Problems
			l.checkStartingFails(ev, &ps)
			for _, p := range ps {
				t.Errorf("%s: %s", p.Path, p.Reason)
			}
		})
	}
}

// A level whose starting design fails otherwise than it says is refused, and the problem
// names the field and what the verdict says instead.
func TestParseRefusesAWrongStartingFailure(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "challenges", "01-first-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		fails      StartingFails
		wantInText string
	}{
		{"another check", "starting_fails.checks",
			StartingFails{Checks: []string{"cost"}, Causes: []FailCause{{"app", sim.CauseSaturated}}}, `"latency", "errors"`},
		{"another cause", "starting_fails.causes",
			StartingFails{Checks: []string{"latency", "errors"}, Causes: []FailCause{{"db", sim.CauseSaturated}}}, "app saturated"},
		{"no cause", "starting_fails.causes",
			StartingFails{Checks: []string{"latency", "errors"}}, "app saturated"},
		{"no such component", "starting_fails.causes[0].component",
			StartingFails{Checks: []string{"latency", "errors"}, Causes: []FailCause{{"cache", sim.CauseSaturated}}}, `"cache"`},
	}
	for _, tt := range tests {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		doc["starting_fails"] = tt.fails
		raw, _ := json.Marshal(doc)
		_, err := Parse(raw)
		ps, ok := AsProblems(err)
		if !ok || !slices.ContainsFunc(ps, func(p Problem) bool { return p.Path == tt.path && strings.Contains(p.Reason, tt.wantInText) }) {
			t.Errorf("%s: Parse = %v, want a problem at %s naming %s", tt.name, err, tt.path, tt.wantInText)
		}
	}
}

// The hint teaches the lesson: on every level's starting design, the change the hint
// suggests (its fix, or where no single change passes, the closest it found) uses the
// level's declared mechanic; a fix uses every mechanic of the lesson, a closest change at
// least one of them (a combination needs more than one change).
func TestHintTeachesTheLesson(t *testing.T) {
	for _, l := range campaignSample(t) {
		t.Run(l.Slug, func(t *testing.T) {
			t.Parallel()
			h, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{Parallelism: 1})
			if err != nil {
				t.Fatal(err)
			}
			var what string
			var d sim.Design
			switch {
			case h.Found:
				what = h.Change.Description
				if d, err = ApplyPatch(l.StartingDesign, h.Change.Patch); err != nil {
					t.Fatal(err)
				}
			case h.closest != nil:
				what, d = h.closest.change.Description, h.closest.design
			default:
				t.Fatalf("the hint points nowhere: %s", h.Message)
			}
			var used []string
			for _, m := range l.Lesson.Mechanics {
				if mechanics[m].uses(l, l.StartingDesign, d) {
					used = append(used, m)
				}
			}
			switch {
			case h.Found && len(used) < len(l.Lesson.Mechanics):
				t.Errorf("the hint's fix %q uses %v of the lesson %v", what, used, l.Lesson.Mechanics)
			case len(used) == 0:
				t.Errorf("the hint's closest change %q uses none of the lesson %v", what, l.Lesson.Mechanics)
			}
			t.Logf("found %v: %s uses %v", h.Found, what, used)
		})
	}
}

// Resilience on a level without chaos is not applicable: the condition passes with nothing
// measured, says so, and earns no part of the score; on a level with chaos it is scored.
func TestResilienceWithoutChaosIsNotScored(t *testing.T) {
	for _, slug := range []string{"first-request", "heartbeat"} {
		l := mustLevel(t, slug)
		ev, err := l.Evaluate(t.Context(), solution(t, slug))
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := ev.Condition(CondResilience)
		chaos := len(l.Run.Chaos) > 0
		if rc.NotApplicable == chaos || !rc.Passed {
			t.Errorf("%s (chaos %v): resilience %+v, want not applicable exactly without chaos, and passed", slug, chaos, rc)
		}
		scored := slices.ContainsFunc(ev.ScoreParts, func(p ScorePart) bool { return p.Condition == CondResilience })
		if scored != chaos {
			t.Errorf("%s (chaos %v): resilience has a score part: %v; want one exactly with chaos", slug, chaos, scored)
		}
		l.Release(ev)
	}
}
