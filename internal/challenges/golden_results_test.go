package challenges

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestGoldenCampaignResults pins, byte for byte, the engine's full result (every tick, every
// component), the evaluation and the fix hint of every level's starting design and reference
// solution, as SHA-256 digests of their JSON in testdata/results.sha256. A change to the
// engine that should not move any number (a faster tick loop) must leave every digest as it
// is; one that changes the model shows up here and is regenerated with -update once its
// diff is understood.
func TestGoldenCampaignResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the fix hint of every level")
	}
	got := map[string]string{}
	digest := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	for _, l := range campaign(t) {
		for _, which := range []string{"starting", "solution"} {
			d := l.StartingDesign
			if which == "solution" {
				d = solution(t, l.Slug)
			}
			ev, err := l.Evaluate(t.Context(), d)
			if err != nil {
				t.Fatalf("%s %s: %v", l.Slug, which, err)
			}
			got[l.Slug+"/"+which+"/result"] = digest(ev.Result)
			got[l.Slug+"/"+which+"/evaluation"] = digest(ev)
		}
		h, err := l.HintWithin(t.Context(), l.StartingDesign, HintLimits{Parallelism: 1})
		if err != nil {
			t.Fatalf("%s hint: %v", l.Slug, err)
		}
		got[l.Slug+"/hint"] = digest(h)
		if h.After != nil {
			got[l.Slug+"/hint/after/result"] = digest(h.After.Result)
		}
	}
	path := filepath.Join("testdata", "results.sha256")
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s  %s\n", got[k], k)
	}
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if ok {
			want[name] = sum
		}
	}
	for _, k := range keys {
		if want[k] != got[k] {
			t.Errorf("%s: digest %s, golden %s", k, got[k], want[k])
		}
	}
	if len(want) != len(got) {
		t.Errorf("%d digests, golden has %d", len(got), len(want))
	}
}
