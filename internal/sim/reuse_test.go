package sim

import (
	"bytes"
	"context"
	"testing"
)

// runReuse runs d both ways: every tick computed, and repeated ticks reused.
func runReuse(t *testing.T, d Design, cfg Config) (full, reused []byte, n int) {
	t.Helper()
	for _, disable := range []bool{true, false} {
		p, err := Prepare(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.RunWith(context.Background(), RunOptions{DisableReuse: disable})
		if err != nil {
			t.Fatal(err)
		}
		if disable {
			full = encode(t, r)
			if p.m.reused != 0 {
				t.Fatalf("reuse disabled, yet %d ticks reused", p.m.reused)
			}
		} else {
			reused, n = encode(t, r), p.m.reused
		}
	}
	return full, reused, n
}

// A reused tick is exactly what the full computation gives: every golden case, run both ways,
// gives the same bytes, and the constant-traffic ones do reuse ticks.
func TestReuseIsExact(t *testing.T) {
	total := 0
	for name, mk := range goldenCases() {
		d, cfg := mk()
		full, reused, n := runReuse(t, d, cfg)
		if !bytes.Equal(full, reused) {
			t.Errorf("%s: the result with tick reuse (%d ticks reused) differs from the full computation", name, n)
		}
		total += n
		t.Logf("%s: %d ticks reused", name, n)
	}
	if total == 0 {
		t.Error("no tick was reused in any case")
	}
}
