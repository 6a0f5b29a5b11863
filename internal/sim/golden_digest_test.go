package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// goldenCases are runs whose full results (every tick, every component) are pinned by
// digest in testdata/results.sha256: the benchmark designs, and random designs under their
// own traffic and under constant traffic (where ticks repeat), with and without chaos.
func goldenCases() map[string]func() (Design, Config) {
	cases := map[string]func() (Design, Config){}
	for _, n := range []int{20, 64} {
		cases[fmt.Sprintf("service/%d", n)] = func() (Design, Config) {
			cfg := benchConfig(6000)
			cfg.Chaos = benchChaos()
			return serviceDesign(n), cfg
		}
		cases[fmt.Sprintf("service/%d/constant", n)] = func() (Design, Config) {
			cfg := benchConfig(6000)
			cfg.Traffic = Traffic{Kind: "constant", RPS: 2500}
			cfg.Chaos = benchChaos()[1:]
			return serviceDesign(n), cfg
		}
		cases[fmt.Sprintf("flat/%d", n)] = func() (Design, Config) { return benchDesign(n), benchConfig(3000) }
	}
	for seed := uint64(1); seed <= 24; seed++ {
		cases[fmt.Sprintf("random/%d", seed)] = func() (Design, Config) { return randomDesign(seed) }
		cases[fmt.Sprintf("random/%d/constant", seed)] = func() (Design, Config) {
			d, cfg := randomDesign(seed)
			cfg.Traffic = Traffic{Kind: "constant", RPS: cfg.Traffic.RPS}
			cfg.DurationSec *= 4
			return d, cfg
		}
	}
	return cases
}

func TestGoldenDigests(t *testing.T) {
	got := map[string]string{}
	for name, mk := range goldenCases() {
		d, cfg := mk()
		s := sha256.Sum256(encode(t, mustRun(t, d, cfg)))
		got[name] = hex.EncodeToString(s[:])
	}
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s  %s\n", got[k], k)
	}
	path := filepath.Join("testdata", "results.sha256")
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
		if sum, name, ok := strings.Cut(line, "  "); ok {
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
