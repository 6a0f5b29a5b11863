package challenges

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"backpressure/internal/reference"
	"backpressure/internal/sim"
)

// verdictDesign is one design a level is judged on: its starting design, its reference
// solution, or the starting design with the fix hint's change.
type verdictDesign struct {
	name   string
	design sim.Design
}

// verdictDesigns are the designs of a level whose verdicts the reference must share.
func verdictDesigns(t *testing.T, l *Level) []verdictDesign {
	t.Helper()
	out := []verdictDesign{{"starting", l.StartingDesign}, {"solution", solution(t, l.Slug)}}
	h, err := l.Hint(t.Context(), l.StartingDesign)
	if err != nil {
		t.Fatalf("Hint: %v", err)
	}
	if h.Found {
		fix, err := ApplyPatch(l.StartingDesign, h.Change.Patch)
		if err != nil {
			t.Fatalf("hint's patch: %v", err)
		}
		out = append(out, verdictDesign{"hinted", fix})
	}
	return out
}

// referenceVerdict judges the reference's run of d as the level judges the engine's.
func (l *Level) referenceVerdict(ctx context.Context, d sim.Design, seeds []uint64) (*Evaluation, error) {
	eff, ps := l.c.prepareDesign(l, d, true)
	if len(ps) > 0 {
		return nil, ps
	}
	res, err := reference.Run(ctx, eff, l.c.cfg, reference.Options{Seeds: seeds})
	if err != nil {
		return nil, err
	}
	return l.judge(res), nil
}

// namedCause is the cause the "why" gives for most of a failing run's failing time in the
// evaluation window ("" for a run with none).
func namedCause(ev *Evaluation) sim.Cause {
	spans := map[sim.Cause]float64{}
	for _, w := range ev.Why {
		spans[w.Cause] += w.EndSec - max(w.StartSec, ev.Window.StartSec)
	}
	best := sim.Cause("")
	for _, c := range slices.Sorted(maps.Keys(spans)) {
		if best == "" || spans[c] > spans[best] {
			best = c
		}
	}
	return best
}

// failingConditions lists what failed, in the evaluation's order.
func failingConditions(ev *Evaluation) string {
	f := ev.Failing()
	if len(f) == 0 {
		return "-"
	}
	return strings.Join(f, ",")
}

func scoreText(ev *Evaluation) string {
	if ev.Score == nil {
		return "-"
	}
	return fmt.Sprint(*ev.Score)
}

// measured is a condition's measured value, for the table.
func measured(ev *Evaluation, name string) float64 {
	c, _ := ev.Condition(name)
	return c.Measured
}

// verdictSeeds are the reference's seeds for the campaign's verdicts, pooled tick by tick
// (reference.Run): three keep the test, with the designs judged on 24 (verdictSeedsFor), at
// about 80 s on two cores (two and a half minutes of CPU for 74 designs, with the engine's
// runs and hints); a tick's quantiles and the recovery's error rate are read from at least
// 2,000 answers whatever the seeds (reference.md, "The game's view").
var verdictSeeds = reference.DefaultSeeds[:3]

// verdictSeedsFor are the designs whose verdict or score moves with which three seeds are
// pooled, with the 24 seeds that settle it; four turn on a single tick's quantiles. With
// three seeds a tick holds a few hundred to a thousand answers, and the reference reads its
// quantiles over the ticks beside it too (reference.md, "The game's view"), so a burst of
// slow answers counts in one tick more on each side than a load test sees (BENCHMARKS.md,
// "The campaign's verdicts under the reference"). Ticket-drop's spikes are answered cold
// within one tick; storm-at-the-gate's storm saturates the balancer for a second, and the
// level reads its sixth slowest tick. Lose-a-node's starting design leaves one app about
// 94% busy for 30 s, whose queue wanders for seconds at a time: pooled over three seeds,
// one seed's excursion sets a tick's p99, and the level's fifth slowest tick reads 154 to
// 257 ms by which three seeds are pooled, either side of its 200 ms target; over 24 it
// reads 157 to 182 ms. Black-friday's solution leaves app-b 92% busy once app-a crashes,
// its queue draining the failover's burst for seconds, and the level's fourth slowest tick
// reads 109 to 208 ms over seeds 1 to 12, one at a time (scores 3,462 to 4,599 over eight
// sets of three). Heartbeat's hinted design fails about 5% of the outage's requests, more
// or less by when the health checks fall: its resilience usage reads 0.74 to 0.95 over
// eight sets of three (scores 2,931 to 3,633). A chaos event's recovery ends when 5 s of
// ticks stand within 0.1 points of the baseline's errors and 110% of its p99, which a run's
// noise can hold off (BENCHMARKS.md, "The recovery check reads a run's noise"): after
// gatekeeper's batch storm the reference's ticks still fail a request now and then, and its
// solution's recovery reads 0 to 12 s over seeds 13 to 24, one at a time, against the 10 s
// deadline, and 14.75 s pooled over seeds 16 to 18 (5.25 s over 24); the-queue-remembers'
// solution recovers at once from its partition in 10 of those 12 seeds and after 1.5 and
// 10.75 s in the others (against 10 s). Scale-sooner's starting design fails errors in two
// of eight sets of three (0.72% to 1.25%) and passes them over 24 (0.95%).
var verdictSeedsFor = map[string][]uint64{
	"ticket-drop/solution":         seedRange(24),
	"storm-at-the-gate/solution":   seedRange(24),
	"lose-a-node/starting":         seedRange(24),
	"black-friday/solution":        seedRange(24),
	"heartbeat/hinted":             seedRange(24),
	"gatekeeper/solution":          seedRange(24),
	"the-queue-remembers/solution": seedRange(24),
	"the-queue-remembers/hinted":   seedRange(24),
	"scale-sooner/starting":        seedRange(24),
}

// seedRange is seeds 1 to n.
func seedRange(n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// scoreTolerance is how far the reference's score of a passing design may be from the
// engine's: 300 of the 9,000 points the headrooms share. What stays inside it: the
// reference's p99 reads 5–10% above the engine's (a latency headroom 0.05 lower is 113
// points) and the engine's load-dependent error rate, which the reference does not model
// (0.03% of a 1% target is 54 points).
const scoreTolerance = 300

// knownVerdictGaps are the designs on which the engine's verdict is not yet the reference's,
// each with its measured reason (BENCHMARKS.md, "The campaign's verdicts under the
// reference"). A gap that closes fails the test until it is taken off the list.
var knownVerdictGaps = map[string]string{
	"scale-sooner/starting":   "the reference's runs spread with when the per-second autoscaler's wandering reading orders a fourth replica: 24 runs read 0.00–1.40% errors (median 0.90%, pooled 0.95%) and two of eight sets of three fail errors (0.72–1.25%), the engine 1.69%, above every run; in the runs that stand saturated, a full room's refusals retried at once: a fresh attempt refused 17% of the time and a retry 56%, the engine both 38%",
	"slow-neighbour/solution": "a full room's refusals retried at once: while the rooms stand full the engine offers 941 attempts/s and fails 0.51 of them, the reference 733 and 0.37 (both serve 461/s)",
	"slow-neighbour/hinted":   "a full room's refusals retried at once: while the rooms stand full the engine offers 818 attempts/s and fails 0.43 of them, the reference 694 and 0.32 (both serve 461/s)",
}

// verdictRow is one design judged on the engine's run and on the reference's.
type verdictRow struct {
	level, design      string
	eng, ref           *Evaluation
	engCause, refCause sim.Cause
}

// disagreements says how the reference's verdict differs from the engine's: pass or fail,
// the failing checks, the named cause, the score beyond its tolerance.
func (r verdictRow) disagreements() []string {
	var out []string
	if r.eng.Passed != r.ref.Passed {
		out = append(out, fmt.Sprintf("engine passed %v, reference %v", r.eng.Passed, r.ref.Passed))
	}
	if e, f := failingConditions(r.eng), failingConditions(r.ref); e != f {
		out = append(out, fmt.Sprintf("failing: engine %s, reference %s", e, f))
	}
	if r.engCause != r.refCause {
		out = append(out, fmt.Sprintf("cause: engine %q, reference %q", r.engCause, r.refCause))
	}
	if r.eng.Score != nil && r.ref.Score != nil && abs(*r.eng.Score-*r.ref.Score) > scoreTolerance {
		out = append(out, fmt.Sprintf("score: engine %d, reference %d, tolerance %d", *r.eng.Score, *r.ref.Score, scoreTolerance))
	}
	return out
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// The game's verdicts hold under the per-request reference: every level's starting design,
// reference solution and hinted design pass or fail alike on the engine's run and on the
// reference's, judged by the same level code, with the same failing checks and the same
// named cause, and a passing design scores alike.
func TestVerdictsUnderTheReference(t *testing.T) {
	if raceEnabled {
		t.Skip("75 designs, 3 reference seeds each: a measurement; .ci/run also runs this package without -race, where it is held")
	}
	levels := campaign(t)
	rows := make([][]verdictRow, len(levels))
	t.Run("level", func(t *testing.T) {
		for i, l := range levels {
			t.Run(l.Slug, func(t *testing.T) {
				t.Parallel()
				judged := map[string]*Evaluation{} // a hinted design is often the solution itself
				for _, vd := range verdictDesigns(t, l) {
					eng, err := l.Evaluate(t.Context(), vd.design)
					if err != nil {
						t.Fatalf("%s: Evaluate: %v", vd.name, err)
					}
					same, err := json.Marshal(vd.design)
					if err != nil {
						t.Fatal(err)
					}
					key := l.Slug + "/" + vd.name
					seeds, more := verdictSeedsFor[key]
					if !more {
						seeds = verdictSeeds
					}
					judgedKey := fmt.Sprint(string(same), seeds)
					ref := judged[judgedKey]
					if ref == nil {
						if ref, err = l.referenceVerdict(t.Context(), vd.design, seeds); err != nil {
							t.Fatalf("%s: the reference: %v", vd.name, err)
						}
						judged[judgedKey] = ref
					}
					r := verdictRow{l.Slug, vd.name, eng, ref, namedCause(eng), namedCause(ref)}
					rows[i] = append(rows[i], r)
					gap, known := knownVerdictGaps[key]
					switch d := r.disagreements(); {
					case len(d) > 0 && !known:
						t.Errorf("%s: the reference's verdict differs: %s", vd.name, strings.Join(d, "; "))
					case len(d) == 0 && known:
						t.Errorf("%s: the verdicts now agree; the known gap (%s) is gone: take it off knownVerdictGaps", vd.name, gap)
					case known:
						t.Logf("%s: known gap (%s): %s", vd.name, gap, strings.Join(d, "; "))
					}
				}
			})
		}
	})
	var b strings.Builder
	b.WriteString("| level | design | failing: engine / reference | cause | score | p99 ms | error rate | resilience | cost $/h |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, rs := range rows {
		for _, r := range rs {
			fmt.Fprintf(&b, "| %s | %s | %s / %s | %s / %s | %s / %s | %.1f / %.1f | %.4f / %.4f | %.2f / %.2f | %.3f / %.3f |\n",
				r.level, r.design, failingConditions(r.eng), failingConditions(r.ref), causeText(r.engCause), causeText(r.refCause),
				scoreText(r.eng), scoreText(r.ref), measured(r.eng, CondLatency), measured(r.ref, CondLatency),
				measured(r.eng, CondErrors), measured(r.ref, CondErrors), measured(r.eng, CondResilience), measured(r.ref, CondResilience),
				measured(r.eng, CondCost), measured(r.ref, CondCost))
		}
	}
	t.Logf("the engine's verdicts / the reference's (seeds %v):\n%s", verdictSeeds, b.String())
}

func causeText(c sim.Cause) string {
	if c == "" {
		return "-"
	}
	return string(c)
}
