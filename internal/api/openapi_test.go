package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"backpressure/internal/store/memstore"
)

func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc
}

// TestOpenAPICoversRoutes walks the registered routes: each must be
// documented, and each documented operation must be registered.
func TestOpenAPICoversRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	paths := doc["paths"].(map[string]any)
	documented := map[string]bool{}
	for path, item := range paths {
		for method := range item.(map[string]any) {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	mux := newServer(Deps{Store: memstore.New()}).routes()
	registered := map[string]bool{}
	err := chi.Walk(mux, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(route, "/") // chi reports "/v1/*/players" etc. without a trailing slash
		route = strings.ReplaceAll(route, "/*/", "/")
		registered[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var missing, stale []string
	for r := range registered {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !registered[d] {
			stale = append(stale, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	for _, r := range missing {
		t.Errorf("route %s is not in openapi.json", r)
	}
	for _, d := range stale {
		t.Errorf("openapi.json documents %s, which is not a route", d)
	}
	if len(registered) < 18 {
		t.Errorf("walked only %d routes: %v", len(registered), registered)
	}
}

// TestOpenAPIReferences checks the document with a maintained OpenAPI 3.1
// implementation (pb33f/libopenapi): it must be valid against the OpenAPI 3.1
// schema and every $ref must resolve. Then the project's own rules: operation
// ids are unique, and every /v1 operation documents its errors as
// problem+json.
func TestOpenAPIReferences(t *testing.T) {
	doc := loadOpenAPI(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi version %q", v)
	}
	parsed, err := libopenapi.NewDocument(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsed.BuildV3Model(); err != nil {
		t.Errorf("the document does not build (unresolved references?): %v", err)
	}
	v, errs := validator.NewValidator(parsed)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("not valid OpenAPI 3.1: %s: %s", e.Message, e.Reason)
		}
	}
	ids := map[string]string{}
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			o := op.(map[string]any)
			id, _ := o["operationId"].(string)
			if prev, dup := ids[id]; dup || id == "" {
				t.Errorf("%s %s: operationId %q (also %s)", method, path, id, prev)
			}
			ids[id] = method + " " + path
			if strings.HasPrefix(path, "/v1/") {
				responses := o["responses"].(map[string]any)
				for _, code := range []string{"429", "500", "503"} {
					if _, ok := responses[code]; !ok {
						t.Errorf("%s %s does not document %s", method, path, code)
					}
				}
			}
		}
	}
}

// The document check catches a reference that resolves to nothing.
func TestOpenAPIReferencesCatchesBrokenRef(t *testing.T) {
	broken := bytes.Replace(openAPIDocument, []byte(`"#/components/schemas/Player"`), []byte(`"#/components/schemas/Nobody"`), 1)
	if bytes.Equal(broken, openAPIDocument) {
		t.Fatal("no reference to break")
	}
	parsed, err := libopenapi.NewDocument(broken)
	if err != nil {
		t.Logf("refused outright: %v", err)
		return
	}
	if _, err := parsed.BuildV3Model(); err == nil {
		t.Error("a reference to a missing schema was not reported")
	}
}
