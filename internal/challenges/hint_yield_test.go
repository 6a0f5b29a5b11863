package challenges

import (
	"bytes"
	"context"
	"testing"
)

// A hint's Yield is called before each of its runs (the design, every candidate tried,
// every run set aside and taken up again, the patched design) and changes nothing in what
// the hint finds.
func TestHintYieldsBeforeEachRun(t *testing.T) {
	for _, slug := range []string{"first-request", "lose-a-node"} {
		l := mustLevel(t, slug)
		plain, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		yields := 0
		yielded, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{Parallelism: 1,
			Yield: func(context.Context) { yields++ }})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustJSON(plain), mustJSON(yielded)) {
			t.Errorf("%s: the hint with Yield differs from the one without", slug)
		}
		want := 1 + yielded.Tried + yielded.Resumed
		if yielded.Found {
			want++
		}
		if yields != want {
			t.Errorf("%s: Yield called %d times, want %d (the design, %d candidates, %d runs taken up again, the patched design: %v)",
				slug, yields, want, yielded.Tried, yielded.Resumed, yielded.Found)
		}
	}
}
