package layering

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// imports lists every package of the module with its direct imports.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "backpressure/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkgs[fields[0]] = fields[1:]
	}
	return pkgs
}

// httpAllowed are the packages (besides cmd/) that may import net/http.
var httpAllowed = map[string]bool{"backpressure/internal/api": true, "backpressure/internal/live": true}

func TestImportRules(t *testing.T) {
	pkgs := imports(t)
	if len(pkgs) < 5 {
		t.Fatalf("go list found %d packages; expected the whole module", len(pkgs))
	}
	// The engine is a leaf and pure: nothing of ours, no I/O, no clock, no randomness.
	simForbidden := []string{"backpressure/", "net", "os", "time", "database/sql", "math/rand", "io", "sync"}
	for _, imp := range pkgs["backpressure/internal/sim"] {
		for _, f := range simForbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(imp, f)) {
				t.Errorf("internal/sim imports %s", imp)
			}
		}
	}
	// The per-request reference is as pure as the engine, its randomness seeded per run,
	// and only tests import it.
	refForbidden := []string{"net", "os", "time", "database/sql", "math/rand", "io", "sync"}
	for _, imp := range pkgs["backpressure/internal/reference"] {
		for _, f := range refForbidden {
			if imp == f || strings.HasPrefix(imp, f+"/") && imp != "math/rand/v2" {
				t.Errorf("internal/reference imports %s", imp)
			}
		}
	}
	allowed := map[string][]string{
		"backpressure/internal/reference":      {"backpressure/internal/sim"},
		"backpressure/internal/challenges":     {"backpressure/internal/sim", "backpressure/challenges"},
		"backpressure/internal/game":           {},
		"backpressure/internal/live":           {"backpressure/internal/game"},
		"backpressure/internal/store/memstore": {"backpressure/internal/game"},
		"backpressure/internal/store/pgstore":  {"backpressure/internal/game", "backpressure/migrations"},
		"backpressure/internal/strictjson":     {"backpressure/internal/game"},
		// The scheduler knows levels only to label a run's outcome.
		"backpressure/internal/scheduler": {"backpressure/internal/game", "backpressure/internal/challenges"},
		// The game's rules over time: levels, the engine, the domain, the
		// scheduler; the stores only through interfaces declared in rules.
		"backpressure/internal/rules": {"backpressure/internal/challenges", "backpressure/internal/sim",
			"backpressure/internal/game", "backpressure/internal/scheduler"},
	}
	for pkg, ok := range allowed {
		for _, imp := range pkgs[pkg] {
			if !strings.HasPrefix(imp, "backpressure/") {
				continue
			}
			found := false
			for _, a := range ok {
				found = found || imp == a
			}
			if !found {
				t.Errorf("%s imports %s; it may import only %v of ours", pkg, imp, ok)
			}
		}
	}
	for pkg, imps := range pkgs {
		cmd := strings.HasPrefix(pkg, "backpressure/cmd/")
		for _, imp := range imps {
			// The reference is a yardstick for tests, never part of the game.
			if imp == "backpressure/internal/reference" {
				t.Errorf("%s imports internal/reference; only tests may", pkg)
			}
			// The transport sits on top: only the commands wire it in.
			if imp == "backpressure/internal/api" && !cmd {
				t.Errorf("%s imports internal/api; nothing but cmd/ may", pkg)
			}
			// HTTP is the transport's and the live streams' alone: the
			// rules and the scheduler are reached through calls, never
			// requests.
			if (imp == "net/http" || strings.HasPrefix(imp, "net/http/")) && !cmd && !httpAllowed[pkg] {
				t.Errorf("%s imports %s; only %v (and cmd/) may", pkg, imp, slices.Sorted(maps.Keys(httpAllowed)))
			}
		}
	}
}
