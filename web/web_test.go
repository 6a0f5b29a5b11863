package web

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"backpressure/internal/challenges"
	"backpressure/internal/sim"
)

// TestFS checks that the embedded client is complete: every local file that index.html,
// the stylesheets and the modules refer to is embedded.
func TestFS(t *testing.T) {
	fsys := FS()
	if _, err := fs.Stat(fsys, "index.html"); err != nil {
		t.Fatalf("index.html: %v", err)
	}
	refs := regexp.MustCompile(`(?:href|src)="([^"#:]+)"|from '([^']+)'|import\('([^']+)'\)|url\(([^)'"]+)\)`)
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if strings.HasPrefix(path, "vendor/") || (ext != ".html" && ext != ".js" && ext != ".css") {
			return nil
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		for _, m := range refs.FindAllStringSubmatch(string(data), -1) {
			ref := m[1] + m[2] + m[3] + m[4]
			if ref == "" || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") {
				continue
			}
			target := filepath.ToSlash(filepath.Join(filepath.Dir(path), ref))
			if _, err := fs.Stat(fsys, target); err != nil {
				t.Errorf("%s refers to %s, which is not embedded", path, ref)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestThresholds keeps the client's healthy limit and the hint's headroom equal to the ones
// the server judges by, so that the legend, the charts and the tables say what the verdict
// means.
func TestThresholds(t *testing.T) {
	data, err := fs.ReadFile(FS(), "js/util.js")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{
		"HEALTHY_UTILIZATION": challenges.HealthyUtilization,
		"HINT_HEADROOM":       challenges.HeadroomUtilization,
	} {
		m := regexp.MustCompile(`export const ` + name + ` = ([0-9.]+);`).FindSubmatch(data)
		if m == nil {
			t.Errorf("js/util.js does not define %s", name)
			continue
		}
		got, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("the client's %s is %g, the server's %g", name, got, want)
		}
	}
}

// TestCallees keeps the client's rule of what may call what (CALLEES in js/catalog.js, which
// lets the editor refuse a connection at once) equal to the engine's: for every pair of
// kinds, the client allows the call exactly when the engine does not refuse it.
func TestCallees(t *testing.T) {
	data, err := fs.ReadFile(FS(), "js/catalog.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	list := func(s string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	consts := map[string][]string{}
	for _, m := range regexp.MustCompile(`const ([A-Z_]+) = \[([^\]]*)\];`).FindAllStringSubmatch(src, -1) {
		consts[m[1]] = list(m[2])
	}
	block := regexp.MustCompile(`(?s)export const CALLEES = \{(.*?)\n\};`).FindStringSubmatch(src)
	if block == nil {
		t.Fatal("js/catalog.js does not define CALLEES")
	}
	client := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([a-z_]+): (\[[^\]]*\]|[A-Z_]+),`).FindAllStringSubmatch(block[1], -1) {
		if strings.HasPrefix(m[2], "[") {
			client[m[1]] = list(m[2])
		} else {
			client[m[1]] = consts[m[2]]
		}
	}
	if len(client) != len(sim.Kinds()) {
		t.Fatalf("CALLEES lists %d kinds, the engine has %d", len(client), len(sim.Kinds()))
	}
	cfg := sim.Config{DurationSec: 10, Traffic: sim.Traffic{Kind: "constant", RPS: 10}, Mix: sim.Mix{Read: 1}}
	for _, from := range sim.Kinds() {
		for _, to := range sim.Kinds() {
			d := sim.Design{
				Components: []sim.Component{{ID: "a", Type: from}, {ID: "b", Type: to}},
				Edges:      []sim.Edge{{From: "a", To: "b"}},
			}
			refused := false
			var ps sim.Problems
			if err := sim.Validate(d, cfg); errors.As(err, &ps) {
				for _, p := range ps {
					refused = refused || (p.Path == "edges[0]" && strings.Contains(p.Reason, "cannot call"))
				}
			}
			allowed := slices.Contains(client[string(from)], string(to))
			if allowed == refused {
				t.Errorf("%s → %s: the client allows it: %v, the engine refuses it: %v", from, to, allowed, refused)
			}
		}
	}
}

// TestLevelSchema: the studio checks levels against the schema the server's level format is
// generated from, byte for byte (copy challenges/level.schema.json to web/dist when it changes).
func TestLevelSchema(t *testing.T) {
	served, err := fs.ReadFile(FS(), "level.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../challenges/level.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, want) {
		t.Error("web/dist/level.schema.json differs from challenges/level.schema.json: copy it again")
	}
}

// TestStylesheetBlocks checks that every block of app.css closes: a rule block or an
// @media left open makes every rule after it apply inside it (on phones only, say).
func TestStylesheetBlocks(t *testing.T) {
	css, err := fs.ReadFile(FS(), "app.css")
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?s)/\*.*?\*/|"[^"\n]*"`).ReplaceAllString(string(css), "")
	depth, line := 0, 1
	for _, c := range text {
		switch c {
		case '\n':
			line++
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				t.Fatalf("app.css: a } at line %d (comments and strings taken out) closes nothing", line)
			}
		}
	}
	if depth != 0 {
		t.Errorf("app.css: %d block(s) left open at the end", depth)
	}
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "@media") && nestedAt(text, i) {
			t.Errorf("app.css: the @media at line %d (comments and strings taken out) opens inside another block", i+1)
		}
	}
}

// nestedAt says whether line i of text starts inside a block.
func nestedAt(text string, i int) bool {
	before := strings.Join(strings.Split(text, "\n")[:i], "\n")
	return strings.Count(before, "{") > strings.Count(before, "}")
}
