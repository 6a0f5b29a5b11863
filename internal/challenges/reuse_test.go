package challenges

import (
	"bytes"
	"encoding/json"
	"testing"

	"backpressure/internal/sim"
)

// The engine repeats a tick that repeats the last one exactly instead of computing it. Every
// level's starting design, reference solution and fix-hint candidates give the same bytes
// (result and evaluation) with that reuse as with every tick computed, and the campaign
// reuses ticks.
func TestCampaignReuseIsExact(t *testing.T) {
	reused, ticks := 0, 0
	for _, l := range campaignSample(t) {
		designs := map[string]sim.Design{"starting": l.StartingDesign, "solution": solution(t, l.Slug)}
		ev, err := l.Evaluate(t.Context(), l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range l.candidates(l.StartingDesign, ev) {
			if i%8 == 0 { // a sample of the hint's candidates
				designs[c.change.Description] = c.design
			}
		}
		for name, d := range designs {
			var out [2][]byte
			for k, o := range []sim.RunOptions{{DisableReuse: true}, {}} {
				p, err := l.prepare(d)
				if err != nil {
					continue // a candidate the level refuses
				}
				ev, err := l.runWith(t.Context(), p, o)
				if err != nil {
					t.Fatal(err)
				}
				r, _ := json.Marshal(ev.Result)
				e, _ := json.Marshal(ev)
				out[k] = append(r, e...)
				if k == 1 {
					reused += p.Reused()
					ticks += len(ev.Result.Ticks)
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Errorf("%s %s: the run with tick reuse differs from the full computation", l.Slug, name)
			}
		}
	}
	t.Logf("%d of %d ticks reused", reused, ticks)
	if reused == 0 {
		t.Error("no tick of the campaign was reused")
	}
}
