package challenges

import (
	"context"
	"testing"
)

// BenchmarkEvaluateCampaign times one server-side evaluation (run, conditions, score) of
// each level's starting design: what a dry run or a submission costs the server.
func BenchmarkEvaluateCampaign(b *testing.B) {
	levels, err := Campaign()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range levels {
		b.Run(l.Slug, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Evaluate(context.Background(), l.StartingDesign); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHint times the fix-hint search on each level's starting design, one run at a
// time (Parallelism 1): the simulations a hint costs the server.
func BenchmarkHint(b *testing.B) {
	levels, err := Campaign()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range levels {
		b.Run(l.Slug, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.HintWithin(context.Background(), l.StartingDesign, HintLimits{Parallelism: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
