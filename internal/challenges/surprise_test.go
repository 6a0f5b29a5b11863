package challenges

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/sim"
)

func TestSurprise(t *testing.T) {
	levels, err := Campaign()
	if err != nil {
		t.Fatal(err)
	}
	withChaos := 0
	for _, l := range levels {
		t.Run(l.Slug, func(t *testing.T) {
			first := Surprise(l, 42)
			if diff := cmp.Diff(first, Surprise(l, 42)); diff != "" {
				t.Fatalf("the same seed drew different surprises:\n%s", diff)
			}
			if len(l.Run.Chaos) == 0 {
				if first != nil {
					t.Fatalf("a level without chaos got a surprise: %+v", first)
				}
				return
			}
			withChaos++
			seen := map[float64]bool{}
			for seed := uint64(0); seed < 40; seed++ {
				s := Surprise(l, seed)
				if len(s) != 1 || s[0].ID != SurpriseID {
					t.Fatalf("seed %d: %+v, want one event with id %q", seed, s, SurpriseID)
				}
				kindOK := false
				for _, e := range l.Run.Chaos {
					kindOK = kindOK || (e.Kind == s[0].Kind && e.Target == s[0].Target && e.From == s[0].From && e.To == s[0].To)
				}
				if !kindOK {
					t.Fatalf("seed %d: %+v is not one of the level's chaos kinds", seed, s[0])
				}
				seen[s[0].AtSec] = true
				full, err := WithChaos(l, s)
				if err != nil {
					t.Fatalf("seed %d: the level with the surprise is invalid: %v", seed, err)
				}
				if got := len(full.Run.Chaos); got != len(l.Run.Chaos)+1 {
					t.Fatalf("seed %d: %d chaos events, want %d", seed, got, len(l.Run.Chaos)+1)
				}
			}
			if len(seen) < 2 {
				t.Errorf("40 seeds struck at %d distinct times; the seed should move the surprise", len(seen))
			}
		})
	}
	if withChaos == 0 {
		t.Fatal("no campaign level has chaos; the test checked nothing")
	}
}

// A level with its surprise runs the same design to the same bytes every time.
func TestWithChaosDeterministic(t *testing.T) {
	l, err := CampaignLevel("lose-a-node")
	if err != nil {
		t.Fatal(err)
	}
	run := func() []byte {
		full, err := WithChaos(l, Surprise(l, 7))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := full.Evaluate(context.Background(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(struct {
			Ev    *Evaluation
			Ticks any
		}{ev, ev.Result.Ticks})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := run(), run(); string(a) != string(b) {
		t.Error("two runs of the same design on the same surprise differ")
	}
}

// WithHidden appends the extra chaos after the level's own and puts the
// resilience rule in place of the level's; the result is checked like any
// level, so a chaos event on no component is a problem at its place in
// run.chaos, and nothing to add is the level itself.
func TestWithHidden(t *testing.T) {
	l, err := CampaignLevel("first-request")
	if err != nil {
		t.Fatal(err)
	}
	own := len(l.Run.Chaos)
	spike := sim.ChaosEvent{Kind: sim.ChaosTrafficSpike, AtSec: 30, DurationSec: 40, Params: sim.ChaosParams{Multiplier: 3}}
	rule := &Resilience{ErrorCeiling: 0.05, RecoveryDeadlineSec: 30}
	for _, tt := range []struct {
		name      string
		extra     []sim.ChaosEvent
		rule      *Resilience
		wantChaos int
		wantRule  *Resilience
		problem   string
	}{
		{"nothing added", nil, nil, own, l.Resilience, ""},
		{"a spike and a rule", []sim.ChaosEvent{spike}, rule, own + 1, rule, ""},
		{"a failure of no component", []sim.ChaosEvent{{Kind: sim.ChaosNodeFailure, AtSec: 30, DurationSec: 10, Target: "ghost"}}, rule, 0, nil,
			fmt.Sprintf("run.chaos[%d].target", own)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			full, err := WithHidden(l, tt.extra, tt.rule)
			if tt.problem != "" {
				ps, _ := AsProblems(err)
				if !slices.ContainsFunc(ps, func(p Problem) bool { return strings.HasPrefix(p.Path, tt.problem) }) {
					t.Fatalf("got %v, want a problem at %s", err, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(full.Run.Chaos) != tt.wantChaos {
				t.Errorf("chaos events: got %d, want %d", len(full.Run.Chaos), tt.wantChaos)
			}
			if diff := cmp.Diff(tt.wantRule, full.Resilience); diff != "" {
				t.Errorf("resilience (-want +got):\n%s", diff)
			}
			if len(l.Run.Chaos) != own {
				t.Error("the level itself changed")
			}
		})
	}
}
