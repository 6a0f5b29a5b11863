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

// BenchmarkVerdictCampaign is BenchmarkEvaluateCampaign as a scored submission runs it: the
// verdict alone, the run's tick records given back to the level for its next run.
func BenchmarkVerdictCampaign(b *testing.B) {
	levels, err := Campaign()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range levels {
		b.Run(l.Slug, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Verdict(context.Background(), l.StartingDesign); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHint times the fix-hint search on each level's starting design: the simulations
// a hint costs the server (run it with -cpu 1 for one run at a time).
func BenchmarkHint(b *testing.B) {
	levels, err := Campaign()
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range levels {
		b.Run(l.Slug, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.Hint(context.Background(), l.StartingDesign); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
