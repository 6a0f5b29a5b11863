package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// Every response the API tests receive is checked against the served
// OpenAPI 3.1 document by a maintained validator (pb33f/libopenapi-validator):
// the operation and its status must be documented, the Content-Type must be
// one the status declares, and the body must match its JSON Schema.

// oaDoc is the served document's validator.
type oaDoc struct {
	mu sync.Mutex // the validator caches schemas; calls are serialised
	v  validator.Validator
}

var (
	oaMu   sync.Mutex
	oaDocs = map[*testServer]*oaDoc{}
)

// openAPI fetches (once per server) /openapi.json and builds its validator.
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
	d, err := newOADoc(resp.body)
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	oaDocs[s] = d
	return d
}

func newOADoc(spec []byte) (*oaDoc, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, err
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		return nil, errorString("version " + v + ", want 3.1.x")
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		var b strings.Builder
		for _, e := range verrs {
			b.WriteString(e.Error() + "; ")
		}
		return nil, errorString("the document is not a valid OpenAPI 3.1 document: " + b.String())
	}
	return &oaDoc{v: v}, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// problems validates one response and returns what is wrong with it.
func (d *oaDoc) problems(method, path string, status int, header http.Header, body []byte) []string {
	rq := httptest.NewRequest(method, path, nil)
	resp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), Request: rq}
	d.mu.Lock()
	defer d.mu.Unlock()
	ok, errs := d.v.ValidateHttpResponse(rq, resp)
	if ok {
		return nil
	}
	var out []string
	for _, e := range errs {
		msg := e.Message
		if e.Reason != "" {
			msg += ": " + e.Reason
		}
		for _, se := range e.SchemaValidationErrors {
			msg += " [" + se.FieldPath + ": " + se.Reason + "]"
		}
		out = append(out, msg)
	}
	return out
}

// check validates one response.
func (d *oaDoc) check(t *testing.T, method, path string, resp *response) {
	t.Helper()
	for _, p := range d.problems(method, path, resp.status, resp.header, resp.body) {
		t.Errorf("openapi: %s %s %d: %s (body %.300s)", method, path, resp.status, p, resp.body)
	}
}

// TestOpenAPIValidatorCatchesErrors checks the checker: responses that break
// the document are reported, and a good one is not.
func TestOpenAPIValidatorCatchesErrors(t *testing.T) {
	spec := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {"/p/{id}": {"get": {
	  "operationId": "getP", "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	  "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/P"}}}}}}}},
	  "components": {"schemas": {"P": {"type": "object", "required": ["id"], "additionalProperties": false, "properties": {
	    "id": {"type": "integer"}, "role": {"type": "string", "enum": ["a", "b"]}, "rank": {"type": ["integer", "null"]},
	    "items": {"type": "array", "items": {"$ref": "#/components/schemas/P"}}}}}}}`
	d, err := newOADoc([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	for _, tt := range []struct {
		status int
		header http.Header
		body   string
		bad    bool
	}{
		{200, jsonHeader, `{"id": 1, "role": "a", "rank": null, "items": [{"id": 2}]}`, false},
		{200, jsonHeader, `{"role": "a"}`, true},
		{200, jsonHeader, `{"id": 1.5}`, true},
		{200, jsonHeader, `{"id": 1, "role": "c"}`, true},
		{200, jsonHeader, `{"id": 1, "extra": true}`, true},
		{200, jsonHeader, `{"id": 1, "items": [{"id": "x"}]}`, true},
		{200, jsonHeader, `{"id": 1, "rank": "first"}`, true},
		{500, jsonHeader, `{"id": 1}`, true},
		{200, http.Header{"Content-Type": {"text/plain"}}, `{"id": 1}`, true},
	} {
		got := d.problems("GET", "/p/x", tt.status, tt.header, []byte(tt.body))
		if (len(got) > 0) != tt.bad {
			t.Errorf("%d %s: problems %v, want invalid=%v", tt.status, tt.body, got, tt.bad)
		}
	}
}
