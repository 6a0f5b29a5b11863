package challenges

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	campaignfiles "backpressure/challenges"
)

var update = flag.Bool("update", false, "rewrite golden files (challenges/level.schema.json, cmd output)")

var schemaFile = filepath.Join("..", "..", "challenges", "level.schema.json")

// The published schema is exactly what GenerateSchema builds from the Go types and the
// engine's parameter tables.
func TestSchemaGolden(t *testing.T) {
	got, err := GenerateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("challenges/level.schema.json is stale: run go test ./internal/challenges -run TestSchemaGolden -update")
	}
	if !bytes.Equal(Schema(), want) {
		t.Errorf("embedded schema differs from the file (rebuild)")
	}
}

// Every campaign level validates against the published schema, and so does every
// reference solution against its Design definition.
func TestCampaignMatchesSchema(t *testing.T) {
	schema := loadSchema(t)
	names, _ := filepathGlob(campaignfiles.Levels)
	if len(names) == 0 {
		t.Fatal("no campaign files")
	}
	for _, name := range names {
		data, _ := campaignfiles.Levels.ReadFile(name)
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range validateSchema(schema, schema, doc, "") {
			t.Errorf("%s: %s", name, e)
		}
	}
	design := map[string]any{"$ref": "#/$defs/Design"}
	sols, _ := filepath.Glob(filepath.Join("testdata", "solutions", "*.json"))
	for _, f := range sols {
		data, _ := os.ReadFile(f)
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range validateSchema(schema, design, doc, "") {
			t.Errorf("%s: %s", f, e)
		}
	}
}

// The schema catches what it should: a broken level fails it where Parse does.
func TestSchemaRejects(t *testing.T) {
	schema := loadSchema(t)
	tests := []struct {
		name   string
		break_ func(m map[string]any)
		path   string
	}{
		{"unknown field", func(m map[string]any) { m["budget"] = 1 }, "budget"},
		{"missing field", func(m map[string]any) { delete(m, "sla") }, ""},
		{"bad slug", func(m map[string]any) { m["slug"] = "Bad Slug" }, "slug"},
		{"bad difficulty", func(m map[string]any) { m["difficulty"] = "legendary" }, "difficulty"},
		{"unknown param", func(m map[string]any) {
			comps := at(m, "starting_design")["components"].([]any)
			comps[0].(map[string]any)["params"] = map[string]any{"warp": 9}
		}, "starting_design.components[0].params.warp"},
		{"param out of range", func(m map[string]any) {
			comps := at(m, "starting_design")["components"].([]any)
			comps[0].(map[string]any)["params"] = map[string]any{"replicas": 0}
		}, "starting_design.components[0].params.replicas"},
		{"unknown kind in catalog", func(m map[string]any) { at(m, "catalog", "components")["teleporter"] = map[string]any{"max_count": 1} },
			"catalog.components.teleporter"},
		{"limit on a world parameter", func(m map[string]any) {
			at(m, "catalog", "components", "app_service")["limits"] = map[string]any{"service_time_ms": map[string]any{"max": 1}}
		}, "catalog.components.app_service.limits.service_time_ms"},
	}
	for _, tt := range tests {
		m := baseLevel(t)
		tt.break_(m)
		var doc any
		b, _ := json.Marshal(m)
		json.Unmarshal(b, &doc)
		errs := validateSchema(schema, schema, doc, "")
		found := false
		for _, e := range errs {
			found = found || strings.HasPrefix(e, tt.path+":") || (tt.path == "" && strings.HasPrefix(e, ":"))
		}
		if !found {
			t.Errorf("%s: schema errors %v, want one at %q", tt.name, errs, tt.path)
		}
	}
}

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	var schema map[string]any
	if err := json.Unmarshal(Schema(), &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	return schema
}

func filepathGlob(fsys interface {
	ReadDir(string) ([]os.DirEntry, error)
}) ([]string, error) {
	entries, err := fsys.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out, err
}

// validateSchema is a small JSON Schema validator for the keywords GenerateSchema emits:
// $ref (local), type, properties, additionalProperties, required, enum, const, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, items,
// allOf, if/then, propertyNames, minProperties, maxProperties. It returns "path: reason"
// strings.
func validateSchema(root, s map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		def, ok := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok {
			fail("unresolved $ref %s", ref)
			return errs
		}
		return validateSchema(root, def, v, path)
	}
	if typ, ok := s["type"].(string); ok && !hasType(v, typ) {
		fail("want %s, got %T", typ, v)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(e, v) }) {
		fail("%v is not one of %v", v, enum)
	}
	if c, ok := s["const"]; ok && !jsonEqual(c, v) {
		fail("%v is not %v", v, c)
	}
	if x, ok := v.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && x < m {
			fail("%g < minimum %g", x, m)
		}
		if m, ok := s["maximum"].(float64); ok && x > m {
			fail("%g > maximum %g", x, m)
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok && x <= m {
			fail("%g ≤ exclusiveMinimum %g", x, m)
		}
		if m, ok := s["exclusiveMaximum"].(float64); ok && x >= m {
			fail("%g ≥ exclusiveMaximum %g", x, m)
		}
	}
	if str, ok := v.(string); ok {
		if m, ok := s["minLength"].(float64); ok && float64(len([]rune(str))) < m {
			fail("shorter than %g", m)
		}
		if m, ok := s["maxLength"].(float64); ok && float64(len([]rune(str))) > m {
			fail("longer than %g", m)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			fail("%q does not match %s", str, p)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range arr {
				errs = append(errs, validateSchema(root, items, item, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, key := range sortedKeys(obj) {
			sub := join(path, key)
			if ps, ok := props[key].(map[string]any); ok {
				errs = append(errs, validateSchema(root, ps, obj[key], sub)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, sub+": not allowed")
				}
			case map[string]any:
				errs = append(errs, validateSchema(root, ap, obj[key], sub)...)
			}
			if pn, ok := s["propertyNames"].(map[string]any); ok {
				errs = append(errs, validateSchema(root, pn, key, sub)...)
			}
		}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					fail("%s is required", r)
				}
			}
		}
		if m, ok := s["minProperties"].(float64); ok && float64(len(obj)) < m {
			fail("fewer than %g properties", m)
		}
		if m, ok := s["maxProperties"].(float64); ok && float64(len(obj)) > m {
			fail("more than %g properties", m)
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			sm := sub.(map[string]any)
			if cond, ok := sm["if"].(map[string]any); ok {
				if len(validateSchema(root, cond, v, path)) == 0 {
					errs = append(errs, validateSchema(root, sm["then"].(map[string]any), v, path)...)
				}
				continue
			}
			errs = append(errs, validateSchema(root, sm, v, path)...)
		}
	}
	return errs
}

func hasType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		x, ok := v.(float64)
		return ok && x == math.Trunc(x)
	}
	return false
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
