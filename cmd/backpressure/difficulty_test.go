package main

import (
	"os"
	"path/filepath"
	"strconv"
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
	checkCurveRises(t, r.stdout)
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

// checkCurveRises reads the chapter table of the difficulty command's output: from one
// chapter to the next the median of single changes that pass never grows (fewer is
// harder), and in the last chapter it is 0: every final level needs two ideas at once.
func checkCurveRises(t *testing.T, table string) {
	t.Helper()
	_, chapters, ok := strings.Cut(table, "| chapter | difficulty | levels | median single changes that pass |\n|---|---|---|---|\n")
	if !ok {
		t.Fatalf("the difficulty table has no chapter table:\n%s", table)
	}
	var medians []float64
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(chapters), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 4 {
			t.Fatalf("chapter row %q has %d cells, want 4", line, len(cells))
		}
		m, err := strconv.ParseFloat(cells[3], 64)
		if err != nil {
			t.Fatalf("chapter row %q: %v", line, err)
		}
		medians = append(medians, m)
		names = append(names, cells[1])
	}
	if len(medians) < 2 {
		t.Fatalf("%d chapters, want several", len(medians))
	}
	for i := 1; i < len(medians); i++ {
		if medians[i] > medians[i-1] {
			t.Errorf("chapter %s's median of single changes that pass is %g, above chapter %s's %g: the curve falls",
				names[i], medians[i], names[i-1], medians[i-1])
		}
	}
	if last := medians[len(medians)-1]; last != 0 {
		t.Errorf("the last chapter's median of single changes that pass is %g, want 0", last)
	}
}
