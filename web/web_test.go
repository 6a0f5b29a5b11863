package web

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backpressure/internal/challenges"
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
