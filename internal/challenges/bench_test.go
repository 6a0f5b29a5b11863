package challenges

import (
	"context"
	"testing"

	"backpressure/internal/sim"
)

// BenchmarkEvaluateCampaign times one server-side evaluation (run, conditions, score) of
// each level's starting design, its result kept.
func BenchmarkEvaluateCampaign(b *testing.B) { benchmarkCampaign(b, (*Level).Evaluate) }

// BenchmarkDryRunCampaign is BenchmarkEvaluateCampaign as a dry run (or a duel's run) runs
// it: the result written out, then its tick records given back to the level.
func BenchmarkDryRunCampaign(b *testing.B) {
	benchmarkCampaign(b, func(l *Level, ctx context.Context, d sim.Design) (*Evaluation, error) {
		ev, err := l.Evaluate(ctx, d)
		l.Release(ev)
		return ev, err
	})
}

// BenchmarkVerdictCampaign is BenchmarkEvaluateCampaign as a scored submission runs it: the
// verdict alone, the run's tick records given back to the level for its next run.
func BenchmarkVerdictCampaign(b *testing.B) { benchmarkCampaign(b, (*Level).Verdict) }

// BenchmarkHint times the fix-hint search on each level's starting design: the simulations
// a hint costs the server (run it with -cpu 1 for one run at a time).
func BenchmarkHint(b *testing.B) { benchmarkCampaign(b, (*Level).Hint) }

// benchmarkCampaign times run on each level's starting design, a sub-benchmark a level.
func benchmarkCampaign[T any](b *testing.B, run func(*Level, context.Context, sim.Design) (T, error)) {
	levels, err := Campaign()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range levels {
		b.Run(l.Slug, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := run(l, context.Background(), l.StartingDesign); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
