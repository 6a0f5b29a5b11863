package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const (
	tutorialFile = "../../challenges/01-first-request.json"
	solutionDir  = "../../internal/challenges/testdata/solutions"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(key string) string {
		if key == "COLUMNS" {
			return "82" // a fixed chart width, whatever the terminal running the tests
		}
		return ""
	}
	err := run(t.Context(), args, getenv, strings.NewReader(stdin), &out, &errOut)
	return result{exitCode(err), out.String(), errOut.String()}
}

// startingDesign writes a level's starting design to a file and returns its path.
func startingDesign(t *testing.T, levelFile string) string {
	t.Helper()
	data, err := os.ReadFile(levelFile)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		StartingDesign json.RawMessage `json:"starting_design"`
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "start.json")
	if err := os.WriteFile(path, l.StartingDesign, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExitCodes(t *testing.T) {
	start := startingDesign(t, tutorialFile)
	solution := filepath.Join(solutionDir, "first-request.json")
	badLevel := writeFile(t, "bad.json", `{"slug": "Bad", "extra": 1}`)
	badDesign := writeFile(t, "design.json", `{"components": [{"id": "app", "type": "cache"}], "edges": []}`)
	notJSON := writeFile(t, "broken.json", `{"components": [`)
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  int
	}{
		{"no command", "", nil, exitInvalid},
		{"help", "", []string{"help"}, exitPass},
		{"unknown command", "", []string{"frobnicate"}, exitInvalid},
		{"unknown flag", "", []string{"run", "--fast"}, exitInvalid},
		{"validate a campaign file", "", []string{"validate", tutorialFile}, exitPass},
		{"validate every campaign file", "", append([]string{"validate"}, campaignFiles(t)...), exitPass},
		{"validate an invalid level", "", []string{"validate", badLevel}, exitInvalid},
		{"validate a missing file", "", []string{"validate", "/nonexistent.json"}, exitInvalid},
		{"validate nothing", "", []string{"validate"}, exitInvalid},
		{"run a failing design", "", []string{"run", "--level", "first-request", "--design", start}, exitFail},
		{"run a passing design", "", []string{"run", "--level", "first-request", "--design", solution}, exitPass},
		{"run a level file", "", []string{"run", "--level", tutorialFile, "--design", solution}, exitPass},
		{"run from stdin", mustRead(t, solution), []string{"run", "--level", "first-request", "--design", "-"}, exitPass},
		{"run an invalid design", "", []string{"run", "--level", "first-request", "--design", badDesign}, exitInvalid},
		{"run broken JSON", "", []string{"run", "--level", "first-request", "--design", notJSON}, exitInvalid},
		{"run an unknown level", "", []string{"run", "--level", "no-such-level", "--design", solution}, exitInvalid},
		{"run an invalid level file", "", []string{"run", "--level", badLevel, "--design", solution}, exitInvalid},
		{"run without a design", "", []string{"run", "--level", "first-request"}, exitInvalid},
		{"hint on a failing design", "", []string{"hint", "--level", "first-request", "--design", start}, exitFail},
		{"hint on a passing design", "", []string{"hint", "--level", "first-request", "--design", solution}, exitPass},
		{"hint on an invalid design", "", []string{"hint", "--level", "first-request", "--design", badDesign}, exitInvalid},
		{"levels", "", []string{"levels"}, exitPass},
		{"level", "", []string{"level", "first-request"}, exitPass},
		{"level as JSON", "", []string{"level", "--json", "first-request"}, exitPass},
		{"level unknown", "", []string{"level", "no-such-level"}, exitInvalid},
		{"init without a level", "", []string{"init"}, exitInvalid},
		{"init an unknown level", "", []string{"init", "no-such-level", filepath.Join(t.TempDir(), "d.json")}, exitInvalid},
		{"init with too many arguments", "", []string{"init", "first-request", "a.json", "b.json"}, exitInvalid},
		{"json after a positional argument", "", []string{"validate", tutorialFile, "--json"}, exitPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.stdin, tt.args...)
			if r.code != tt.want {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tt.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	bad := writeFile(t, "bad.json", `{"slug": "Bad Slug", "version": 0, "Title": "x", "run": {"tick_ms": 5}}`)
	r := runCLI(t, "", "validate", bad)
	for _, want := range []string{"slug:", "version:", "Title:", "run.tick_ms:", "did you mean \"title\""} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "", "validate", "--json", bad)
	var got []struct {
		File     string `json:"file"`
		Valid    bool   `json:"valid"`
		Problems []struct {
			Path, Reason string
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, r.stdout)
	}
	if len(got) != 1 || got[0].Valid || len(got[0].Problems) < 4 {
		t.Errorf("--json = %+v", got)
	}
}

func TestRunJSON(t *testing.T) {
	r := runCLI(t, "", "run", "--json", "--level", "first-request", "--design", filepath.Join(solutionDir, "first-request.json"))
	var ev struct {
		Passed     bool   `json:"passed"`
		Score      *int64 `json:"score"`
		Conditions []struct {
			Name     string  `json:"name"`
			Measured float64 `json:"measured"`
			Target   float64 `json:"target"`
			Margin   float64 `json:"margin"`
		} `json:"conditions"`
		Components []struct {
			ID              string  `json:"id"`
			PeakUtilization float64 `json:"peak_utilization"`
		} `json:"components"`
		Healthy bool `json:"healthy"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if !ev.Passed || ev.Score == nil || len(ev.Conditions) != 4 || len(ev.Components) != 2 || !ev.Healthy {
		t.Errorf("unexpected result: %+v", ev)
	}
	// Byte-identical on a second run.
	again := runCLI(t, "", "run", "--json", "--level", "first-request", "--design", filepath.Join(solutionDir, "first-request.json"))
	if again.stdout != r.stdout {
		t.Errorf("two runs printed different JSON")
	}
}

func TestHintJSON(t *testing.T) {
	r := runCLI(t, "", "hint", "--json", "--level", "first-request", "--design", startingDesign(t, tutorialFile))
	var h struct {
		Found  bool `json:"found"`
		Change struct {
			Description string `json:"description"`
			Patch       []struct {
				Op, Path string
				Value    json.RawMessage
			} `json:"patch"`
		} `json:"change"`
		Before struct{ Passed bool } `json:"before"`
		After  struct{ Passed bool } `json:"after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if !h.Found || h.Before.Passed || !h.After.Passed || len(h.Change.Patch) != 1 {
		t.Errorf("hint = %+v", h)
	}
}

func TestInvalidDesignJSON(t *testing.T) {
	bad := writeFile(t, "design.json", `{"components": [{"id": "app", "type": "cache"}], "edges": [], "x": 1}`)
	r := runCLI(t, "", "run", "--json", "--level", "first-request", "--design", bad)
	var got struct {
		Valid    bool                    `json:"valid"`
		Problems []struct{ Path string } `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if got.Valid || len(got.Problems) == 0 || got.Problems[0].Path != "x" {
		t.Errorf("got %+v", got)
	}
}

// The text output of run and hint, pinned (go test ./cmd/backpressure -update rewrites it).
func TestGoldenOutput(t *testing.T) {
	start := startingDesign(t, tutorialFile)
	tests := []struct {
		golden string
		args   []string
	}{
		{"run-first-request-start.golden", []string{"run", "--level", "first-request", "--design", start}},
		{"run-thundering-herd-solution.golden", []string{"run", "--level", "thundering-herd", "--design", filepath.Join(solutionDir, "thundering-herd.json")}},
		{"hint-first-request-start.golden", []string{"hint", "--level", "first-request", "--design", start}},
		{"hint-lose-a-node-start.golden", []string{"hint", "--level", "lose-a-node", "--design", startingDesign(t, "../../challenges/08-lose-a-node.json")}},
		{"level-thundering-herd.golden", []string{"level", "thundering-herd"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := runCLI(t, "", tt.args...)
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.stdout != string(want) {
				t.Errorf("output differs from %s (run with -update after checking it):\ngot:\n%s", path, r.stdout)
			}
		})
	}
}

// init writes the level's starting design, which runs (and fails, as every starting design
// does), and never overwrites a file.
func TestInitWritesTheStartingDesign(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.json")
	r := runCLI(t, "", "init", "first-request", path)
	if r.code != exitPass {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"wrote " + path, "backpressure run --level first-request --design " + path} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("init output lacks %q:\n%s", want, r.stdout)
		}
	}
	var got, want any
	if err := json.Unmarshal([]byte(mustRead(t, path)), &got); err != nil {
		t.Fatalf("the written design is not JSON: %v", err)
	}
	var level struct {
		StartingDesign any `json:"starting_design"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, tutorialFile)), &level); err != nil {
		t.Fatal(err)
	}
	want = level.StartingDesign
	if gb, wb := mustJSON(t, got), mustJSON(t, want); gb != wb {
		t.Errorf("wrote %s, want the level's starting design %s", gb, wb)
	}
	if r := runCLI(t, "", "run", "--level", "first-request", "--design", path); r.code != exitFail {
		t.Errorf("running the starting design: exit %d, want %d (it fails)", r.code, exitFail)
	}

	if err := os.WriteFile(path, []byte("my work"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"init", "first-request", path}, func(string) string { return "" },
		strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	if exitCode(err) != exitInvalid || !strings.Contains(err.Error(), path+" exists") {
		t.Errorf("init over an existing file: %v (exit %d), want exit %d naming the file", err, exitCode(err), exitInvalid)
	}
	if mustRead(t, path) != "my work" {
		t.Errorf("init overwrote an existing file")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// level prints the briefing as text; --json prints the level document.
func TestLevelBriefing(t *testing.T) {
	r := runCLI(t, "", "level", "--json", "thundering-herd")
	var l struct {
		Slug           string `json:"slug"`
		StartingDesign struct {
			Components []any `json:"components"`
		} `json:"starting_design"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || l.Slug != "thundering-herd" || len(l.StartingDesign.Components) == 0 {
		t.Errorf("level --json = %+v (%v)\n%s", l, err, r.stdout)
	}
	r = runCLI(t, "", "level", "first-request")
	for _, want := range []string{"no chaos in this level", "give up after 1,000 ms, retry up to 1 time at once (no backoff)", "app.small          $0.055/h per replica", "limit replicas: at most 6"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("level first-request lacks %q:\n%s", want, r.stdout)
		}
	}
}

func campaignFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../challenges/[0-9][0-9]-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("campaign files: %v", err)
	}
	return files
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSwappedFilesAreNamed: a level file passed as the design (or a design as the level)
// is named as such in one line, not reported as a dozen unknown fields.
func TestSwappedFilesAreNamed(t *testing.T) {
	solution := filepath.Join(solutionDir, "first-request.json")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a level as the design", []string{"run", "--level", "first-request", "--design", tutorialFile}, "is a level file, not a design: pass it as --level"},
		{"a level as the hint's design", []string{"hint", "--level", "first-request", "--design", tutorialFile}, "is a level file, not a design"},
		{"a design as the level", []string{"run", "--level", solution, "--design", solution}, "is a design, not a level file: pass it as --design"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
			if code := exitCode(err); code != exitInvalid {
				t.Errorf("exit code %d, want %d", code, exitInvalid)
			}
			out := fmt.Sprint(err) + stdout.String() + stderr.String()
			if !strings.Contains(out, tt.want) {
				t.Errorf("output does not say %q:\n%s", tt.want, out)
			}
			if strings.Contains(out, "unknown field") {
				t.Errorf("output lists unknown fields:\n%s", out)
			}
		})
	}
}
