package challenges

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

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
	schema := levelSchema(t, "")
	names, _ := filepathGlob(campaignfiles.Levels)
	if len(names) == 0 {
		t.Fatal("no campaign files")
	}
	for _, name := range names {
		data, _ := campaignfiles.Levels.ReadFile(name)
		for _, e := range validateSchema(schema, instance(t, data)) {
			t.Errorf("%s: %s", name, e)
		}
	}
	design := levelSchema(t, "#/$defs/Design")
	sols, _ := filepath.Glob(filepath.Join("testdata", "solutions", "*.json"))
	for _, f := range sols {
		data, _ := os.ReadFile(f)
		for _, e := range validateSchema(design, instance(t, data)) {
			t.Errorf("%s: %s", f, e)
		}
	}
}

// The schema catches what it should: a broken level fails it where Parse does.
func TestSchemaRejects(t *testing.T) {
	schema := levelSchema(t, "")
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
		b, _ := json.Marshal(m)
		errs := validateSchema(schema, instance(t, b))
		found := false
		for _, e := range errs {
			found = found || strings.HasPrefix(e, tt.path+":") || (tt.path == "" && strings.HasPrefix(e, ":"))
		}
		if !found {
			t.Errorf("%s: schema errors %v, want one at %q", tt.name, errs, tt.path)
		}
	}
}

// levelSchema compiles the published schema with a maintained JSON Schema
// 2020-12 validator (santhosh-tekuri/jsonschema/v6); ref selects a
// definition inside it ("" for the whole level).
func levelSchema(t *testing.T, ref string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const url = "https://backpressure.invalid/level.schema.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url + ref)
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return sch
}

// validateSchema returns "path: reason" for every error of v against sch,
// paths in the problems' notation (a.b[2].c).
func validateSchema(sch *jsonschema.Schema, v any) []string {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{": " + err.Error()}
	}
	// The leaves of the error tree are the failed keywords, each at the
	// value it failed on; additionalProperties fails on the object and
	// names the property.
	var out []string
	var walk func(e, parent *jsonschema.ValidationError)
	walk = func(e, parent *jsonschema.ValidationError) {
		at := pointerToPath("/" + strings.Join(e.InstanceLocation, "/"))
		if k, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			// jsonschema v6.0.3 reports a propertyNames failure at a
			// location it has since overwritten; rebuild it from the
			// parent's location and the properties between the two
			// schema locations.
			if parent != nil {
				at = pointerToPath("/" + strings.Join(parent.InstanceLocation, "/"))
				rest := strings.Split(strings.TrimPrefix(e.SchemaURL, parent.SchemaURL), "/")
				for i := 0; i+1 < len(rest); i++ {
					if rest[i] == "properties" {
						at = join(at, rest[i+1])
						i++
					}
				}
			}
			out = append(out, join(at, k.Property)+": is not an allowed name")
			return
		}
		if len(e.Causes) == 0 {
			if k, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				// Reported at the object; the property is the path.
				for _, p := range k.Properties {
					out = append(out, join(at, p)+": is not allowed")
				}
				return
			}
			out = append(out, at+": "+e.Error())
			return
		}
		for _, c := range e.Causes {
			walk(c, e)
		}
	}
	walk(ve, nil)
	return out
}

// pointerToPath turns a JSON pointer (/a/b/2/c) into a.b[2].c.
func pointerToPath(ptr string) string {
	var b strings.Builder
	for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(part); err == nil {
			b.WriteString("[" + part + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(part)
	}
	return b.String()
}

// instance decodes a JSON document as the validator expects it.
func instance(t *testing.T, data []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return v
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
