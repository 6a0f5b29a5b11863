package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

// checkFinite fails for NaN or infinities anywhere in the result: encoding/json refuses them.
func checkFinite(r *Result) error {
	if _, err := json.Marshal(r); err != nil {
		return fmt.Errorf("result does not encode: %w", err)
	}
	return nil
}

func encode(t testing.TB, r *Result) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("encode result: %v", err)
	}
	return b
}

func TestDeterministicAcrossRunsAndGoroutines(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		d, cfg := randomDesign(seed)
		want := encode(t, mustRun(t, d, cfg))
		var wg sync.WaitGroup
		got := make([][]byte, 8)
		for g := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := Run(context.Background(), d, cfg)
				if err != nil {
					t.Error(err)
					return
				}
				got[g], _ = json.Marshal(r)
			}()
		}
		wg.Wait()
		for g := range got {
			if !bytes.Equal(got[g], want) {
				t.Fatalf("seed %d: run in goroutine %d differs from the first run", seed, g)
			}
		}
	}
}

// The golden file pins the JSON form and the numbers of a small run with every feature:
// a change to either shows up in review as a diff of testdata/golden_run.json.
func TestGoldenRun(t *testing.T) {
	d, cfg := randomDesign(7)
	cfg.TickMs = 1000 // 30 ticks: small enough to review
	r := mustRun(t, d, cfg)
	got, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden_run.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s; if the change is intended, run go test -update and review the diff", path)
	}
}
