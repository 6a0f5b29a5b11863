package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// oaDoc is the served OpenAPI document, used to check every response the
// API tests receive: status documented, body valid against its schema.
type oaDoc struct {
	root  map[string]any
	paths map[string]any
}

var (
	oaMu   sync.Mutex
	oaDocs = map[*testServer]*oaDoc{}
)

// openAPI fetches (once per server) and parses /openapi.json.
func openAPI(t *testing.T, s *testServer) *oaDoc {
	t.Helper()
	oaMu.Lock()
	defer oaMu.Unlock()
	if d, ok := oaDocs[s]; ok {
		return d
	}
	resp := s.send(t, req{method: http.MethodGet, path: "/openapi.json"})
	if resp.status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d", resp.status)
	}
	d := &oaDoc{}
	dec := json.NewDecoder(bytes.NewReader(resp.body))
	dec.UseNumber()
	if err := dec.Decode(&d.root); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if v, _ := d.root["openapi"].(string); !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi.json: version %q, want 3.1.x", v)
	}
	d.paths, _ = d.root["paths"].(map[string]any)
	oaDocs[s] = d
	return d
}

// operation finds the documented operation for a concrete path: the
// template with the fewest parameters that matches it.
func (d *oaDoc) operation(method, path string) (string, map[string]any) {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	best, bestParams := "", -1
	for tpl := range d.paths {
		tsegs := strings.Split(tpl, "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params, ok := 0, true
		for i, ts := range tsegs {
			switch {
			case strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}"):
				params++
				ok = ok && segs[i] != ""
			default:
				ok = ok && ts == segs[i]
			}
		}
		if ok && (bestParams < 0 || params < bestParams) {
			best, bestParams = tpl, params
		}
	}
	if best == "" {
		return "", nil
	}
	item, _ := d.paths[best].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return best, op
}

// check validates one response.
func (d *oaDoc) check(t *testing.T, method, path string, resp *response) {
	t.Helper()
	tpl, op := d.operation(method, path)
	if op == nil {
		t.Errorf("openapi: %s %s is not documented", method, path)
		return
	}
	responses, _ := op["responses"].(map[string]any)
	r, ok := responses[strconv.Itoa(resp.status)]
	if !ok {
		r, ok = responses["default"]
	}
	if !ok {
		t.Errorf("openapi: %s %s: status %d is not documented (body %s)", method, tpl, resp.status, resp.body)
		return
	}
	rm := d.resolve(r)
	content, _ := rm["content"].(map[string]any)
	if len(content) == 0 {
		return
	}
	ct, _, _ := mime.ParseMediaType(resp.header.Get("Content-Type"))
	media, ok := content[ct].(map[string]any)
	if !ok {
		t.Errorf("openapi: %s %s %d: Content-Type %q is not documented", method, tpl, resp.status, ct)
		return
	}
	if !strings.HasSuffix(ct, "json") {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(resp.body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Errorf("openapi: %s %s %d: body is not JSON: %v", method, tpl, resp.status, err)
		return
	}
	var errs []string
	d.validate(media["schema"], v, "$", &errs)
	for _, e := range errs {
		t.Errorf("openapi: %s %s %d: %s", method, tpl, resp.status, e)
	}
}

// resolve follows a $ref to #/components/...
func (d *oaDoc) resolve(node any) map[string]any {
	m, _ := node.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cm, _ := cur.(map[string]any)
			cur = cm[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			panic("openapi: unresolvable $ref " + ref)
		}
		m = next
	}
	return m
}

// validate checks v against a JSON Schema subset: $ref, oneOf, type
// (a name or a list), enum, required, properties, additionalProperties,
// items, minimum and maximum.
func (d *oaDoc) validate(schemaNode any, v any, at string, errs *[]string) {
	s := d.resolve(schemaNode)
	if s == nil {
		return // {} accepts anything
	}
	fail := func(format string, args ...any) {
		*errs = append(*errs, at+": "+fmt.Sprintf(format, args...))
	}
	if alts, ok := s["oneOf"].([]any); ok {
		matched := 0
		for _, alt := range alts {
			var sub []string
			d.validate(alt, v, at, &sub)
			if len(sub) == 0 {
				matched++
			}
		}
		if matched != 1 {
			fail("matches %d of the oneOf alternatives, want exactly 1", matched)
		}
	}
	if typ, ok := s["type"]; ok {
		var types []string
		switch tt := typ.(type) {
		case string:
			types = []string{tt}
		case []any:
			for _, x := range tt {
				types = append(types, x.(string))
			}
		}
		if !hasType(v, types) {
			fail("is %s, want %s", jsonKind(v), strings.Join(types, " or "))
			return
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || reflect.DeepEqual(e, v)
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	if n, ok := v.(json.Number); ok {
		x, _ := n.Float64()
		if lo, ok := s["minimum"].(json.Number); ok {
			if l, _ := lo.Float64(); x < l {
				fail("%v is below the minimum %v", n, lo)
			}
		}
		if hi, ok := s["maximum"].(json.Number); ok {
			if h, _ := hi.Float64(); x > h {
				fail("%v is above the maximum %v", n, hi)
			}
		}
	}
	switch val := v.(type) {
	case map[string]any:
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := val[r.(string)]; !ok {
				fail("lacks the required property %q", r)
			}
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(val))
		for k := range val {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k]; ok {
				d.validate(ps, val[k], at+"."+k, errs)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("has the undocumented property %q", k)
				}
			case map[string]any:
				d.validate(ap, val[k], at+"."+k, errs)
			}
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, item := range val {
				d.validate(items, item, fmt.Sprintf("%s[%d]", at, i), errs)
			}
		}
	}
}

func hasType(v any, types []string) bool {
	for _, t := range types {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok {
				if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
					return true
				}
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		}
	}
	return false
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number (" + v.String() + ")"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// TestOpenAPIValidatorCatchesErrors checks the checker: a response that
// breaks its schema must be reported.
func TestOpenAPIValidatorCatchesErrors(t *testing.T) {
	d := &oaDoc{root: map[string]any{"components": map[string]any{"schemas": map[string]any{
		"P": map[string]any{"type": "object", "required": []any{"id"}, "properties": map[string]any{
			"id":    map[string]any{"type": "integer"},
			"role":  map[string]any{"type": "string", "enum": []any{"a", "b"}},
			"rank":  map[string]any{"type": []any{"integer", "null"}},
			"items": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/P"}},
		}, "additionalProperties": false},
	}}}}
	ref := map[string]any{"$ref": "#/components/schemas/P"}
	for _, tt := range []struct {
		body string
		bad  bool
	}{
		{`{"id": 1, "role": "a", "rank": null, "items": [{"id": 2}]}`, false},
		{`{"role": "a"}`, true},
		{`{"id": 1.5}`, true},
		{`{"id": 1, "role": "c"}`, true},
		{`{"id": 1, "extra": true}`, true},
		{`{"id": 1, "items": [{"id": "x"}]}`, true},
		{`{"id": 1, "rank": "first"}`, true},
	} {
		var v any
		dec := json.NewDecoder(strings.NewReader(tt.body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		var errs []string
		d.validate(ref, v, "$", &errs)
		if got := len(errs) > 0; got != tt.bad {
			t.Errorf("%s: errors %v, want invalid=%v", tt.body, errs, tt.bad)
		}
	}
}
