package challenges

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"backpressure/internal/sim"
)

// The floor a candidate's run is ended on never exceeds what the finished run gives: on
// every level, for the starting design, the reference solution and every candidate of the
// hint's search, run to the end, the floor after each tick is at most the violation of the
// evaluation, never falls, and is above 0 only for a run that does not pass with headroom.
// And it does bite: most failing runs have a floor above 0 before their last tick.
func TestHintFloorBelowViolation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every candidate of every level")
	}
	failing, early := 0, 0
	for _, l := range campaignSample(t) {
		before, err := l.Evaluate(t.Context(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		designs := []sim.Design{l.StartingDesign, solution(t, l.Slug)}
		names := []string{"starting design", "solution"}
		for _, c := range l.candidates(l.StartingDesign, before) {
			designs = append(designs, c.design)
			names = append(names, c.change.Description)
		}
		for i, d := range designs {
			p, err := l.prepare(d)
			if err != nil {
				continue
			}
			var fb *violationBound
			last, firstAbove := 0.0, -1
			res, err := p.RunWith(t.Context(), sim.RunOptions{Points: -1, Stop: func(res *sim.Result, k int) bool {
				if fb == nil {
					fb = newViolationBound(l, res)
				}
				v := fb.add(res, k)
				if v < last {
					t.Errorf("%s, %s: the floor fell from %v to %v at tick %d", l.Slug, names[i], last, v, k)
				}
				if v > 0 && firstAbove < 0 {
					firstAbove = k
				}
				last = v
				return false
			}})
			if err != nil {
				t.Fatal(err)
			}
			ev := l.judge(res)
			if v := violation(ev); last > v {
				t.Errorf("%s, %s: floor %v above the violation %v", l.Slug, names[i], last, v)
			}
			if withHeadroom(ev) && last > 0 {
				t.Errorf("%s, %s: passes with headroom, yet its floor is %v", l.Slug, names[i], last)
			}
			if !withHeadroom(ev) {
				failing++
				if firstAbove >= 0 && firstAbove < len(res.Ticks)-1 {
					early++
				}
			}
		}
	}
	if early*2 < failing {
		t.Errorf("the floor rose above 0 before the last tick in %d of %d failing runs", early, failing)
	}
	t.Logf("%d of %d failing runs certain to fail before their last tick", early, failing)
}

// Runs set aside and taken up again, runs ended early, runs in parallel: the hint is the
// same. On a level where nothing passes the runs set aside are taken up again; with no
// room to set any aside, none is.
func TestHintSetAsideChangesNothing(t *testing.T) {
	for _, slug := range []string{"first-request", "cache-me-if-you-can", "lose-a-node", "ticket-drop"} {
		l := mustLevel(t, slug)
		var first []byte
		for _, lim := range []HintLimits{
			{Parallelism: 1},
			{Parallelism: 1, asideBytes: -1},
			{Parallelism: 1, asideBytes: 1 << 20},
			{Parallelism: 3},
			{Parallelism: 3, asideBytes: -1},
		} {
			h, err := l.HintWithin(t.Context(), l.StartingDesign, lim)
			if err != nil {
				t.Fatal(err)
			}
			if b := mustJSON(h); first == nil {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Errorf("%s: the hint within %+v differs", slug, lim)
			}
			switch {
			case lim.asideBytes < 0 && h.Resumed != 0:
				t.Errorf("%s within %+v: %d runs taken up again, none set aside", slug, lim, h.Resumed)
			case lim.asideBytes == 0 && !h.Found && h.Resumed == 0:
				t.Errorf("%s within %+v: nothing passes, yet no run was taken up again", slug, lim)
			case h.Found && h.Resumed != 0:
				t.Errorf("%s within %+v: found, yet %d runs taken up again", slug, lim, h.Resumed)
			}
		}
	}
}

// A hint cancelled while runs are set aside returns the context's error and leaves none of
// them waiting.
func TestHintCancelledEndsRunsSetAside(t *testing.T) {
	l := mustLevel(t, "lose-a-node")
	for _, after := range []int{5, 40, 70} {
		base := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(t.Context())
		yields := 0
		_, err := l.HintWithin(ctx, l.StartingDesign, HintLimits{Parallelism: 1, Yield: func(context.Context) {
			if yields++; yields == after {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled at yield %d: error %v, want context.Canceled", after, err)
		}
		for range 100 {
			if runtime.NumGoroutine() <= base {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			t.Errorf("cancelled at yield %d: %d goroutines left, %d before", after, n, base)
		}
	}
}
