package challenges

import (
	"bytes"
	"context"
	"testing"
)

// A hint's Yield is called before each of its runs (the design, every candidate tried,
// every run set aside and taken up again, the patched design) and within each after every
// yieldWork path-ticks of it, and changes nothing in what the hint finds.
func TestHintYieldsBeforeAndWithinEachRun(t *testing.T) {
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
		if between := yields - int(yielded.yieldsWithin); between != want {
			t.Errorf("%s: Yield called %d times between runs, want %d (the design, %d candidates, %d runs taken up again, the patched design: %v)",
				slug, between, want, yielded.Tried, yielded.Resumed, yielded.Found)
		}
		// The design's own run goes to its end: it alone yields once every so many ticks.
		p, err := l.prepare(l.StartingDesign)
		if err != nil {
			t.Fatal(err)
		}
		perTick := int64(p.Paths()) + l.tickOverhead()
		every := (yieldWork + perTick - 1) / perTick
		if least := l.Ticks() / every; yielded.yieldsWithin < least || least == 0 {
			t.Errorf("%s: Yield called %d times within runs; the design's run alone should call it %d times (every %d ticks)",
				slug, yielded.yieldsWithin, least, every)
		}
	}
}
