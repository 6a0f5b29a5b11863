package api

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

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

// TestOpenAPIReferences checks that every $ref resolves, operation ids are
// unique, and every operation documents its errors as problem+json.
func TestOpenAPIReferences(t *testing.T) {
	doc := loadOpenAPI(t)
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Errorf("openapi version %q", v)
	}
	var walk func(at string, node any)
	walk = func(at string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				var cur any = doc
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, _ := cur.(map[string]any)
					cur = m[part]
				}
				if cur == nil {
					t.Errorf("%s: $ref %s does not resolve", at, ref)
				}
			}
			for k, v := range n {
				walk(at+"/"+k, v)
			}
		case []any:
			for _, v := range n {
				walk(at, v)
			}
		}
	}
	walk("#", doc)
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
