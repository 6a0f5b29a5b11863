package challenges

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/sim"
)

func TestLevelKnobsAndFixed(t *testing.T) {
	l := mustLevel(t, "write-behind")
	if got, want := l.Knobs(sim.KindQueue), []string{"workers", "instance_type"}; !slices.Equal(got, want) {
		t.Errorf("queue knobs = %v, want %v (buffer is fixed here)", got, want)
	}
	fixed := l.Fixed(sim.KindQueue)
	if fixed["buffer"] != 100000.0 || fixed["job_time_ms"] != 10.0 {
		t.Errorf("queue fixed = %v", fixed)
	}
	if got := l.Knobs(sim.KindCDN); got != nil {
		t.Errorf("knobs of a kind not offered = %v", got)
	}
	if got, want := Knobs(sim.KindCache), []string{"instance_type"}; !slices.Equal(got, want) {
		t.Errorf("cache knobs = %v, want %v", got, want)
	}
	// Every knob is a parameter the engine knows.
	for k, names := range knobs {
		for _, n := range names {
			if !slices.ContainsFunc(sim.Params(k), func(s sim.ParamSpec) bool { return s.Name == n }) {
				t.Errorf("knob %s.%s is not an engine parameter", k, n)
			}
		}
	}
}

// A parameter that is a plain number is read without a decoder: it must read as the
// decoder reads it, and anything else must still go to the decoder.
func TestJSONValueAsDecoded(t *testing.T) {
	for _, raw := range []string{"5", "-0", "0.25", "1.5e3", "2E-2", "1e400", "-1e400", "01", "1.", "-", " 5", "5 ",
		`"5"`, "true", "null", "[1]", "5x", "1e", "123456789012345678901234567890"} {
		var want any
		wantErr := json.NewDecoder(bytes.NewReader([]byte(raw))).Decode(&want)
		got, ok := jsonValue(json.RawMessage(raw))
		if ok != (wantErr == nil) {
			t.Errorf("jsonValue(%q) ok = %v; the decoder's error is %v", raw, ok, wantErr)
		} else if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("jsonValue(%q) (-decoder +got):\n%s", raw, diff)
		}
	}
}
