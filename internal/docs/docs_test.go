package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// root is the module's root, where go.mod is.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The documents that publish figures and promises quote only commands that run.
func TestDocumentsQuoteWhatExists(t *testing.T) {
	dir := root(t)
	r := newReader(dir)
	for _, name := range []string{"BENCHMARKS.md", "RELIABILITY.md", "docs/architecture.md"} {
		t.Run(name, func(t *testing.T) {
			md := read(t, filepath.Join(dir, name))
			if len(quotes(md)) == 0 {
				t.Fatalf("%s quotes no command", name)
			}
			for _, p := range r.check(name, md) {
				t.Error(p)
			}
		})
	}
}

// Every figure on BENCHMARKS.md's front page says when it was taken and how.
func TestBenchmarksFrontPageRowsCarryDateAndCommand(t *testing.T) {
	for _, p := range frontPage("BENCHMARKS.md", read(t, filepath.Join(root(t), "BENCHMARKS.md"))) {
		t.Error(p)
	}
}

// Every figure in the documents was taken at a known load average.
func TestFiguresCarryTheirLoad(t *testing.T) {
	for _, name := range []string{"BENCHMARKS.md", "RELIABILITY.md"} {
		for _, p := range unrecordedLoads(name, read(t, filepath.Join(root(t), name))) {
			t.Error(p)
		}
	}
}

// Every promise, bound and attack of RELIABILITY.md names the test or script that holds it.
func TestReliabilityRowsNameTheirEvidence(t *testing.T) {
	md := read(t, filepath.Join(root(t), "RELIABILITY.md"))
	for _, section := range []string{"Promises", "Bounds on a client's cost", "Attacks and their bounds"} {
		for _, p := range evidence("RELIABILITY.md", md, section) {
			t.Error(p)
		}
	}
}

// A section that code or another document cites by name is a heading of the document.
func TestCitedSectionsExist(t *testing.T) {
	dir := root(t)
	docs := map[string]string{}
	for _, name := range []string{"BENCHMARKS.md", "RELIABILITY.md"} {
		docs[name] = read(t, filepath.Join(dir, name))
	}
	cited := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// This package's own tests cite sections that do not exist, on purpose.
			if name := d.Name(); path != dir && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor" || path == filepath.Join(dir, "internal", "docs")) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" && ext != ".sh" {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		for doc, names := range citations(read(t, path)) {
			for _, name := range names {
				cited++
				if !hasSection(docs[doc], name) {
					t.Errorf("%s cites %q in %s, which has no such heading", rel, name, doc)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Error("no file cites a section of BENCHMARKS.md or RELIABILITY.md; the citation patterns no longer find them")
	}
}

// The reader itself: each document below names something that is missing (or does not),
// checked against this tree.
func TestReaderFindsWhatIsMissing(t *testing.T) {
	r := newReader(root(t))
	tests := []struct {
		name string
		md   string
		want []string // substrings of the problems, in order; none: no problem
	}{
		{
			name: "scripts and tests that exist",
			md: "Run `scripts/load.sh` or `PLAYERS=8 bash scripts/fault.sh all`.\n\n" +
				"    go test -run 'TestImportRules|^TestImport' -v ./internal/layering/\n" +
				"    go test -run '^$' -bench '^BenchmarkRun$/components=20/ticks=6000$' \\\n" +
				"        -benchtime 3x ./internal/sim/ | tee engine.txt\n\n" +
				"| attack | command |\n|---|---|\n| x | `go test -run 'TestImportRules\\|TestImportRules' ./internal/...` |\n",
		},
		{
			name: "a missing script in prose",
			md:   "The crowd is measured by scripts/crowd-that-is-not-here.sh every night.\n",
			want: []string{"scripts/crowd-that-is-not-here.sh does not exist"},
		},
		{
			name: "a missing test",
			md:   "`go test -run TestNoSuchTestAnywhere ./internal/layering`\n",
			want: []string{`no Test, Fuzz, Example matching "TestNoSuchTestAnywhere" in ./internal/layering`},
		},
		{
			name: "one alternative missing",
			md:   "`go test -run 'TestImportRules|TestGone' ./internal/layering/`\n",
			want: []string{`matching "TestGone"`},
		},
		{
			name: "a test named in the wrong package",
			md:   "`go test -run TestImportRules ./internal/game`\n",
			want: []string{`matching "TestImportRules" in ./internal/game`},
		},
		{
			name: "a missing benchmark in a fenced block",
			md:   "```\ngo test -run '^$' -bench=BenchmarkNoSuchThing/x=1 ./internal/sim\n```\n",
			want: []string{`no Benchmark matching "BenchmarkNoSuchThing"`},
		},
		{
			name: "a missing package",
			md:   "`go test -run TestImportRules ./internal/nothing-here/`\n",
			want: []string{"package ./internal/nothing-here/ does not exist"},
		},
		{
			name: "a test binary",
			md:   "    ./sim.test -test.run '^$' -test.bench BenchmarkRun\n",
			want: []string{"runs a test binary"},
		},
		{
			name: "a pipe that splits a table's cell",
			md:   "| attack | command |\n|---|---|\n| x | `go test -run 'TestImportRules|TestImportRules' ./internal/layering` |\n",
			want: []string{"a table row with 4 cell separators where its header has 3"},
		},
		{
			name: "go test without a package",
			md:   "`go test -run TestImportRules`\n",
			want: []string{"names no package"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.check("doc.md", tt.md)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d %q", len(got), got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d: got %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestFrontPageNeedsDateAndCommand(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want int
	}{
		{"dated, with a command and a load", "# B\n\n| figure | command | date | load |\n|---|---|---|---|\n| 540/s | `scripts/load.sh` | 2026-11-30 | 1.12 |\n", 0},
		{"not a timing", "| figure | command | date | load |\n|---|---|---|---|\n| 68 of 74 | `go test ./x` | 2026-11-30 | — (exact) |\n", 0},
		{"no date", "| figure | command | date | load |\n|---|---|---|---|\n| 540/s | `scripts/load.sh` | last week | 0.9 |\n", 1},
		{"no command", "| figure | command | date | load |\n|---|---|---|---|\n| 540/s | see below | 2026-11-30 | 0.9 |\n", 1},
		{"no load", "| figure | command | date | load |\n|---|---|---|---|\n| 540/s | `scripts/load.sh` | 2026-11-30 | not recorded |\n", 1},
		{"none of them, twice", "| f | c |\n|---|---|\n| a | b |\n| c | d |\n", 6},
		{"no table", "# B\n\nprose only\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := frontPage("B.md", tt.md); len(got) != tt.want {
				t.Errorf("got %d problems %q, want %d", len(got), got, tt.want)
			}
		})
	}
}

func TestUnrecordedLoadsAreFound(t *testing.T) {
	md := "# B\n\n520/s (2026-12-01, load 0.9).\n\n440/s (2026-12-02, load not recorded).\n| a | 2026-12-01, Not recorded |\n"
	got := unrecordedLoads("B.md", md)
	if len(got) != 2 || !strings.Contains(got[0], "B.md:5:") || !strings.Contains(got[1], "B.md:6:") {
		t.Errorf("got %q, want problems on lines 5 and 6", got)
	}
}

func TestEvidenceNeedsACommandInEveryRow(t *testing.T) {
	md := "# R\n\n## Promises\n\n| promise | held by |\n|---|---|\n| durable | `scripts/fault.sh` |\n" +
		"| fair | the scheduler |\n\n## Other\n\n| a | b |\n|---|---|\n| x | y |\n"
	if got := evidence("R.md", md, "Promises"); len(got) != 1 || !strings.Contains(got[0], "R.md:8:") {
		t.Errorf("got %q, want one problem on line 8", got)
	}
	if got := evidence("R.md", md, "Missing"); len(got) != 1 {
		t.Errorf("a missing section: got %q, want one problem", got)
	}
	if got := evidence("R.md", "## Promises\n\nno table\n\n## Other\n\n| a |\n|---|\n| b |\n", "Promises"); len(got) != 1 {
		t.Errorf("a section without a table (the next section's table is not its own): got %q", got)
	}
}

func TestCitationsAreFound(t *testing.T) {
	text := "// bounded as in\n// RELIABILITY.md (\"Attacks and their bounds\", scripts/flood.sh).\n" +
		"see \"Query mode\" in BENCHMARKS.md for what that costs"
	got := citations(text)
	if len(got["RELIABILITY.md"]) != 1 || got["RELIABILITY.md"][0] != "Attacks and their bounds" {
		t.Errorf("RELIABILITY.md citations: got %q", got["RELIABILITY.md"])
	}
	if len(got["BENCHMARKS.md"]) != 1 || got["BENCHMARKS.md"][0] != "Query mode" {
		t.Errorf("BENCHMARKS.md citations: got %q", got["BENCHMARKS.md"])
	}
	if !hasSection("# B\n## Query mode behind PgBouncer\n", "query mode") || hasSection("# B\nQuery mode\n", "Query mode") {
		t.Error("hasSection must find headings, and only headings")
	}
}
