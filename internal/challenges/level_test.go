package challenges

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/sim"
)

// baseLevel is a valid level document as a generic value, for tests to break.
func baseLevel(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "challenges", "01-first-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a generic document by a path of keys and indices ("run", "traffic").
func at(m map[string]any, keys ...string) map[string]any {
	cur := m
	for _, k := range keys {
		cur = cur[k].(map[string]any)
	}
	return cur
}

func paths(ps Problems) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Path
	}
	slices.Sort(out)
	return out
}

func TestParseValidCampaignFile(t *testing.T) {
	doc := baseLevel(t)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if l.Slug != "first-request" || float64(l.Version) != doc["version"] || l.Difficulty != Tutorial {
		t.Errorf("got %s v%d %s", l.Slug, l.Version, l.Difficulty)
	}
}

// Every problem of a level is reported at once, each with its JSON path.
func TestParseReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(m map[string]any)
		want   []string // problem paths, sorted
	}{
		{"unknown top-level field", func(m map[string]any) { m["budget"] = 1 }, []string{"budget"}},
		{"wrong case", func(m map[string]any) { m["Slug"] = m["slug"]; delete(m, "slug") }, []string{"Slug", "slug"}},
		{"unknown nested field", func(m map[string]any) { at(m, "run", "traffic")["rate"] = 5 }, []string{"run.traffic.rate"}},
		{"wrong types", func(m map[string]any) {
			m["version"] = "one"
			at(m, "sla")["p99_latency_ms"] = true
			at(m, "run")["chaos"] = map[string]any{}
		}, []string{"run.chaos", "sla.p99_latency_ms", "version"}},
		{"fractional integer", func(m map[string]any) { at(m, "run", "client")["max_retries"] = 1.5 }, []string{"run.client.max_retries"}},
		{"semantic problems together", func(m map[string]any) {
			m["slug"] = "Not A Slug"
			m["difficulty"] = "legendary"
			m["budget_per_hour"] = -1
			at(m, "sla")["error_rate"] = 1.5
			at(m, "run", "traffic")["kind"] = "sawtooth"
		}, []string{"budget_per_hour", "difficulty", "run.traffic.kind", "sla.error_rate", "slug"}},
		{"engine problems are prefixed", func(m map[string]any) {
			at(m, "run")["tick_ms"] = 5
			at(m, "run", "mix")["read"] = 0.5
			comps := at(m, "starting_design")["components"].([]any)
			comps[0].(map[string]any)["params"] = map[string]any{"replicas": 0}
		}, []string{"run.duration_sec", "run.mix", "run.tick_ms", "starting_design.components[0].params.replicas"}},
		{"catalog rules", func(m map[string]any) {
			cat := at(m, "catalog", "components")
			cat["teleporter"] = map[string]any{"max_count": 1}
			app := cat["app_service"].(map[string]any)
			app["max_count"] = 0
			app["instance_types"] = []any{"app.huge"}
			app["fixed"] = map[string]any{"service_time_ms": -1, "warp": 1}
			app["limits"] = map[string]any{"replicas": map[string]any{"min": 4, "max": 2}, "service_time_ms": map[string]any{"max": 3}}
		}, []string{"catalog.components.app_service.fixed.service_time_ms", "catalog.components.app_service.fixed.warp",
			"catalog.components.app_service.instance_types[0]", "catalog.components.app_service.limits.replicas",
			"catalog.components.app_service.limits.service_time_ms", "catalog.components.app_service.max_count",
			"catalog.components.teleporter"}},
		{"starting design breaks the catalog", func(m map[string]any) {
			comps := at(m, "starting_design")["components"].([]any)
			comps[0].(map[string]any)["params"] = map[string]any{"replicas": 9, "service_time_ms": 1}
			comps = append(comps, map[string]any{"id": "cache", "type": "cache"})
			at(m, "starting_design")["components"] = comps
			edges := at(m, "starting_design")["edges"].([]any)
			at(m, "starting_design")["edges"] = append(edges, map[string]any{"from": "app", "to": "cache"})
		}, []string{"starting_design.components[0].params.replicas", "starting_design.components[0].params.service_time_ms",
			"starting_design.components[2].type"}},
		{"chaos without resilience, in the warm-up", func(m map[string]any) {
			at(m, "run")["chaos"] = []any{map[string]any{"kind": "node_failure", "at_sec": 1, "duration_sec": 5, "target": "db"}}
		}, []string{"resilience", "run.chaos[0].at_sec"}},
		{"chaos too late to recover", func(m map[string]any) {
			at(m, "run")["chaos"] = []any{map[string]any{"kind": "node_failure", "at_sec": 100, "duration_sec": 10, "target": "db"}}
			m["resilience"] = map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 20}
		}, []string{"run.chaos[0]"}},
		{"chaos target missing", func(m map[string]any) {
			at(m, "run")["chaos"] = []any{map[string]any{"kind": "node_failure", "at_sec": 40, "duration_sec": 10, "target": "ghost"}}
			m["resilience"] = map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 20}
		}, []string{"run.chaos[0].target"}},
		{"history out of order, empty and not ending at the version", func(m map[string]any) {
			m["history"] = []any{
				map[string]any{"version": 2, "change": "second"},
				map[string]any{"version": 1, "change": "first"},
				map[string]any{"version": 2, "change": "  "},
			}
		}, []string{"history[1].version", "history[2].change", "history[2].version"}},
		{"stars out of order", func(m map[string]any) {
			m["stars"] = map[string]any{"two": 1000, "three": 900}
		}, []string{"stars.three", "stars.two"}},
		{"stars above the best score", func(m map[string]any) {
			m["stars"] = map[string]any{"two": 5000, "three": 10001}
		}, []string{"stars.three"}},
		{"too many ticks", func(m map[string]any) {
			at(m, "run")["tick_ms"] = 10
		}, []string{"run.duration_sec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := baseLevel(t)
			tt.break_(m)
			data, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data)
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("Parse error = %v, want Problems", err)
			}
			if diff := cmp.Diff(tt.want, paths(ps)); diff != "" {
				t.Errorf("problem paths (-want +got):\n%s\nproblems: %v", diff, ps)
			}
			for _, p := range ps {
				if strings.TrimSpace(p.Reason) == "" {
					t.Errorf("%s: empty reason", p.Path)
				}
			}
		})
	}
}

func TestParseSyntax(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "is empty"},
		{"broken", "{\n  \"slug\": \"x\",\n  oops\n}", "line 3"},
		{"truncated", `{"slug": "x"`, "ends in the middle"},
		{"two values", `{} {}`, "more than one JSON value"},
		{"duplicate key", `{"slug": "a", "slug": "b"}`, "appears more than once"},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), "nests deeper"},
		{"not an object", `[1, 2]`, "must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tt.doc, err, tt.want)
			}
		})
	}
}

func TestParseRejectsPassingStart(t *testing.T) {
	m := baseLevel(t)
	sol, err := os.ReadFile(filepath.Join("testdata", "solutions", "first-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(sol, &d); err != nil {
		t.Fatal(err)
	}
	m["starting_design"] = d
	data, _ := json.Marshal(m)
	_, err = Parse(data)
	ps, _ := AsProblems(err)
	if len(ps) != 1 || ps[0].Path != "starting_design" || !strings.Contains(ps[0].Reason, "passes every condition") {
		t.Errorf("Parse = %v, want one problem: the starting design passes", err)
	}
}

func TestParseTooLarge(t *testing.T) {
	_, err := Parse(make([]byte, MaxLevelBytes+1))
	if ps, ok := AsProblems(err); !ok || len(ps) != 1 {
		t.Errorf("Parse(huge) = %v, want one problem", err)
	}
}

func TestParseDesignStrict(t *testing.T) {
	_, err := ParseDesign([]byte(`{"components":[{"id":"a","type":"app_service","kind":"x"}],"edges":[{"from":"a","to":"b","weight":2}],"extra":1}`))
	ps, ok := AsProblems(err)
	if !ok {
		t.Fatalf("ParseDesign = %v, want Problems", err)
	}
	want := []string{"components[0].kind", "edges[0].weight", "extra"}
	if diff := cmp.Diff(want, paths(ps)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// The level format leaves out nothing of the engine's configuration but the catalog, which
// the level's own catalog replaces.
func TestRunMirrorsEngineConfig(t *testing.T) {
	run := jsonNames(Run{})
	for _, name := range jsonNames(sim.Config{}) {
		if name == "catalog" {
			continue
		}
		if !slices.Contains(run, name) {
			t.Errorf("sim.Config has %q, which the level's run does not offer", name)
		}
	}
}

func jsonNames(v any) []string {
	var names []string
	for name := range jsonFields(reflect.TypeOf(v)) {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
