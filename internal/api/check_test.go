package api

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// studioLevel is the tutorial level under a new slug, as an author starts one.
func studioLevel(t *testing.T, f *eventFixture, slug string) map[string]any {
	t.Helper()
	status, c := f.do("GET", "/v1/challenges/first-request", "", nil)
	if status != 200 {
		t.Fatalf("GET tutorial: %d", status)
	}
	doc := c["definition"].(map[string]any)
	doc["slug"] = slug
	return doc
}

// problemFields lists a problem+json body's field paths.
func problemFields(body map[string]any) []string {
	var fields []string
	errs, _ := body["errors"].([]any)
	for _, e := range errs {
		fields = append(fields, e.(map[string]any)["field"].(string))
	}
	return fields
}

// Checking a level runs the upload's checks and stores nothing: the starting
// design's verdict says why it fails, a reference design's says whether it
// passes and by how much, and the cost bound is against the server's ceiling.
func TestCheckChallenge(t *testing.T) {
	f := newEventFixture(t)
	f.player("reader")
	doc := studioLevel(t, f, "studio-level")

	for _, tt := range []struct {
		name      string
		token     string
		reference any
		status    int
		ready     bool
		refPassed bool
	}{
		{"anonymous", "", nil, 401, false, false},
		{"player", f.tokens["reader"], nil, 403, false, false},
		{"no reference", f.admin, nil, 200, true, false},
		{"passing reference", f.admin, testDesign(3), 200, true, true},
		{"failing reference", f.admin, testDesign(1), 200, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{"level": doc}
			if tt.reference != nil {
				body["reference_design"] = tt.reference
			}
			status, out := f.do("POST", "/v1/challenges/check", tt.token, body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, out)
			}
			if status != 200 {
				return
			}
			if out["ready"] != tt.ready || out["slug"] != "studio-level" {
				t.Errorf("ready %v slug %v, want %v studio-level", out["ready"], out["slug"], tt.ready)
			}
			start := out["starting_design"].(map[string]any)
			if start["passed"] != false || !strings.HasPrefix(start["summary"].(string), "fails ") || start["run_cost"].(float64) <= 0 {
				t.Errorf("starting design: %v", start)
			}
			cost := out["cost"].(map[string]any)
			if w, c := cost["worst_case_cost"].(float64), cost["ceiling"].(float64); w <= 0 || w > c {
				t.Errorf("cost bound %v against ceiling %v", w, c)
			}
			ref, _ := out["reference_design"].(map[string]any)
			switch {
			case tt.reference == nil && ref != nil:
				t.Errorf("reference without one: %v", ref)
			case tt.reference != nil && (ref == nil || ref["passed"] != tt.refPassed):
				t.Errorf("reference: %v, want passed %v", ref, tt.refPassed)
			case tt.refPassed && !strings.HasPrefix(ref["summary"].(string), "passes every condition; the tightest is "):
				t.Errorf("passing reference's summary: %q", ref["summary"])
			case tt.reference != nil && !tt.refPassed && !strings.HasPrefix(ref["summary"].(string), "fails "):
				t.Errorf("failing reference's summary: %q", ref["summary"])
			}
		})
	}
	if status, _ := f.do("GET", "/v1/challenges/studio-level", "", nil); status != 404 {
		t.Errorf("a checked level was stored: GET %d", status)
	}
}

// Every problem of the level and of the reference design comes back at once,
// each under its own field of the request.
func TestCheckChallengeProblems(t *testing.T) {
	f := newEventFixture(t)
	passingStart := studioLevel(t, f, "too-easy")
	passingStart["starting_design"] = testDesign(3)
	broken := studioLevel(t, f, "Bad Slug")
	broken["budget_per_hour"] = -1
	wrongType := testDesign(3)
	wrongType["components"].([]any)[1].(map[string]any)["type"] = "warp_drive"

	for _, tt := range []struct {
		name string
		body map[string]any
		want []string
	}{
		{"level and reference decoding", map[string]any{"level": broken, "reference_design": map[string]any{"components": "x"}},
			[]string{"level.budget_per_hour", "level.slug", "reference_design.components"}},
		{"starting design passes", map[string]any{"level": passingStart}, []string{"level.starting_design"}},
		{"reference against the level's rules", map[string]any{"level": studioLevel(t, f, "ok-level"), "reference_design": wrongType},
			[]string{"reference_design.components[1].type", "reference_design.edges[0]"}},
		{"no level", map[string]any{"reference_design": testDesign(3)}, []string{"level"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, out := f.do("POST", "/v1/challenges/check", f.admin, tt.body)
			got := problemFields(out)
			slices.Sort(got)
			if status != 422 {
				t.Fatalf("status %d, want 422: %v", status, out)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

// A lesson that can be skipped is a warning, never a refusal: the check and
// the upload run the campaign's lesson search (from the reference design, or
// without one from the starting design) and name the mechanic a passing
// design can leave out; a level whose lesson holds has no warning.
func TestLessonWarnings(t *testing.T) {
	f := newEventFixture(t)
	_, rr := f.do("GET", "/v1/challenges/read-replicas", "", nil)
	skippable := rr["definition"].(map[string]any)
	skippable["slug"] = "skippable"
	// Every database type of the price list: a single larger node replaces the replicas.
	delete(skippable["catalog"].(map[string]any)["components"].(map[string]any)["database"].(map[string]any), "instance_types")
	ref, err := os.ReadFile("../challenges/testdata/solutions/read-replicas.json")
	if err != nil {
		t.Fatal(err)
	}
	var refDesign any
	if err := json.Unmarshal(ref, &refDesign); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name, method, path string
		body               any
		status             int
		from               string
		warned             bool
	}{
		{"check with a reference", "POST", "/v1/challenges/check", map[string]any{"level": skippable, "reference_design": refDesign}, 200, "reference_design", true},
		{"check, lesson holds", "POST", "/v1/challenges/check", map[string]any{"level": studioLevel(t, f, "holds")}, 200, "starting_design", false},
		{"upload", "POST", "/v1/challenges", skippable, 201, "starting_design", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, out := f.do(tt.method, tt.path, f.admin, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %v", status, tt.status, out)
			}
			lesson := out["lesson"].(map[string]any)
			if lesson["from"] != tt.from || lesson["cost"].(float64) <= 0 || lesson["cost"].(float64) > lesson["max_cost"].(float64) {
				t.Errorf("lesson from %v cost %v of %v, want from %s", lesson["from"], lesson["cost"], lesson["max_cost"], tt.from)
			}
			warnings := out["warnings"].([]any)
			if !tt.warned {
				if len(warnings) != 0 {
					t.Errorf("warnings on a level whose lesson holds: %v", warnings)
				}
				return
			}
			prefix := "lesson.mechanics[0]"
			if tt.path == "/v1/challenges/check" {
				prefix = "level." + prefix
			}
			if len(warnings) != 1 || warnings[0].(map[string]any)["field"] != prefix ||
				!strings.HasPrefix(warnings[0].(map[string]any)["reason"].(string), "the lesson can be skipped: a design without database read replicas passes") {
				t.Errorf("warnings %v, want one at %s that the lesson can be skipped", warnings, prefix)
			}
			if skips := lesson["skips"].([]any); skips[0].(map[string]any)["passed"] != true {
				t.Errorf("skips %v", skips)
			}
		})
	}
}
