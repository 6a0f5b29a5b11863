package challenges

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHintSmallestChange(t *testing.T) {
	l := mustLevel(t, "first-request")
	h, err := l.Hint(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	// One more replica is the smallest change; two more would also pass.
	want := Change{Kind: ChangeParam, Component: "app", Param: "replicas", From: []byte("1"), To: []byte("2"),
		Description: "app: replicas 1 → 2",
		Patch:       []PatchOp{{Op: "replace", Path: "/components/0/params/replicas", Value: []byte("2")}}}
	if diff := cmp.Diff(want, *h.Change); diff != "" {
		t.Errorf("change (-want +got):\n%s", diff)
	}
	if h.Before == nil || h.After == nil || h.Before.Passed || !h.After.Passed {
		t.Errorf("want both runs, failing then passing")
	}
}

func TestHintDeterministic(t *testing.T) {
	for _, slug := range []string{"cache-me-if-you-can", "lose-a-node"} {
		l := mustLevel(t, slug)
		a, err := l.Hint(t.Context(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		b, err := l.Hint(t.Context(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustJSON(a), mustJSON(b)) {
			t.Errorf("%s: two hints differ", slug)
		}
	}
}

func TestHintOnPassingDesign(t *testing.T) {
	l := mustLevel(t, "first-request")
	h, err := l.Hint(t.Context(), solution(t, l.Slug))
	if err != nil {
		t.Fatal(err)
	}
	if h.Found || h.Change != nil || h.After != nil || !h.Before.Passed || !strings.Contains(h.Message, "already passes") {
		t.Errorf("hint on a passing design = %+v", h)
	}
}

// When no single change passes, the hint says so and names the binding constraint.
func TestHintNamesBindingConstraint(t *testing.T) {
	l := mustLevel(t, "lose-a-node")
	h, err := l.Hint(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	if h.Found || h.Change != nil || h.After != nil {
		t.Fatalf("found %+v; the level needs two changes", h.Change)
	}
	// Turning the health checks on is the closest single change, but with the default checks
	// (10 s to notice) half the requests still fail for 10 s: the error budget binds.
	if h.Binding == nil || h.Binding.Check != CondErrors || !strings.Contains(h.Message, "binding constraint") ||
		!strings.Contains(h.Message, "health_checks false → true") {
		t.Errorf("binding = %+v, message %q", h.Binding, h.Message)
	}
	if h.Tried == 0 || h.Tried > MaxHintRuns {
		t.Errorf("tried %d candidates", h.Tried)
	}
}

func TestHintInvalidDesign(t *testing.T) {
	l := mustLevel(t, "first-request")
	_, err := l.Hint(t.Context(), design(t, `{"components":[{"id":"x","type":"cdn"}],"edges":[]}`))
	if _, ok := AsProblems(err); !ok {
		t.Errorf("Hint(invalid design) = %v, want Problems", err)
	}
}

// Candidates come in order of size, and every one is a design the level's rules accept.
func TestHintCandidates(t *testing.T) {
	for _, l := range campaignSample(t) {
		before, err := l.Evaluate(t.Context(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		cands := l.candidates(l.StartingDesign, before)
		if len(cands) == 0 {
			t.Errorf("%s: no candidates", l.Slug)
		}
		for i, c := range cands {
			if i > 0 && (c.class < cands[i-1].class || c.class == cands[i-1].class && c.magnitude < cands[i-1].magnitude) {
				t.Errorf("%s: candidate %d (%s) is out of order", l.Slug, i, c.change.Description)
			}
			eff, ps := l.c.prepareDesign(l, c.design, true)
			if len(ps) > 0 {
				t.Errorf("%s: candidate %q breaks the rules: %v", l.Slug, c.change.Description, ps)
			}
			_ = eff
		}
	}
}

// A hint's search is bounded by the simulation work it does, not by time: with a bound
// below what the full search costs, it stops within the bound, says so, and gives the
// same answer on every run and at every parallelism.
func TestHintBoundedByCost(t *testing.T) {
	l := mustLevel(t, "lose-a-node")
	full, err := l.Hint(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	if full.Cost <= 0 {
		t.Fatalf("full hint cost = %d, want the path-ticks it ran", full.Cost)
	}
	bound := full.Cost / 3
	var first []byte
	for _, width := range []int{1, 4} {
		h, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{MaxCost: bound, Parallelism: width})
		if err != nil {
			t.Fatal(err)
		}
		if h.Cost > bound || !h.CostBound || h.Tried >= full.Tried {
			t.Errorf("width %d: cost %d (bound %d), stopped at bound %v, tried %d of %d", width, h.Cost, bound, h.CostBound, h.Tried, full.Tried)
		}
		if !strings.Contains(h.Message, "bound") {
			t.Errorf("width %d: message %q does not say the search was bounded", width, h.Message)
		}
		if first == nil {
			first = mustJSON(h)
		} else if !bytes.Equal(first, mustJSON(h)) {
			t.Errorf("width %d: the bounded hint differs from width 1", width)
		}
	}
	c, err := l.HintCost(l.StartingDesign)
	if err != nil || c < full.Cost || c > MaxHintCost {
		t.Errorf("HintCost = %d, %v; want at least the full hint's %d and at most %d", c, err, full.Cost, MaxHintCost)
	}
}
