package challenges

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChapters(t *testing.T) {
	rows := []Curve{
		{Slug: "a", Difficulty: "tutorial", SingleFixes: 2},
		{Slug: "b", Difficulty: "tutorial", SingleFixes: 1},
		{Slug: "c", Difficulty: "easy", SingleFixes: 6},
		{Slug: "d", Difficulty: "easy", SingleFixes: 1},
		{Slug: "e", Difficulty: "easy", SingleFixes: 0},
		{Slug: "f", Difficulty: "expert", SingleFixes: 0},
	}
	want := []Chapter{
		{Difficulty: "tutorial", Levels: 2, MedianSingleFixes: 1.5},
		{Difficulty: "easy", Levels: 3, MedianSingleFixes: 1},
		{Difficulty: "expert", Levels: 1, MedianSingleFixes: 0},
	}
	if diff := cmp.Diff(want, Chapters(rows)); diff != "" {
		t.Errorf("Chapters (-want +got):\n%s", diff)
	}
}
