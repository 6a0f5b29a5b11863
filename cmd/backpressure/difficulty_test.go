package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The difficulty table in challenges/README.md is what `backpressure difficulty` prints
// (go test ./cmd/backpressure -run TestDifficultyTable -update rewrites it).
func TestDifficultyTable(t *testing.T) {
	if testing.Short() {
		t.Skip("measures every level")
	}
	r := runCLI(t, "", "difficulty", solutionDir)
	if r.code != 0 {
		t.Fatalf("difficulty exited %d: %s", r.code, r.stderr)
	}
	const begin, end = "<!-- difficulty table: backpressure difficulty internal/challenges/testdata/solutions -->\n", "<!-- end of the difficulty table -->"
	path := filepath.Join("..", "..", "challenges", "README.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), begin)
	table, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("challenges/README.md has no difficulty table between %q and %q", begin, end)
	}
	if *update {
		if err := os.WriteFile(path, []byte(before+begin+r.stdout+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if table != r.stdout {
		t.Errorf("challenges/README.md's difficulty table is stale: run go test ./cmd/backpressure -run TestDifficultyTable -update\ngot:\n%s\nwant:\n%s", table, r.stdout)
	}
}
