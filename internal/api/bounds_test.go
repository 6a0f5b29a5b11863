package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// integerField is an integer a route reads from its query string or its JSON body, with
// the bounds the contract declares.
type integerField struct {
	method, path, in, name string
	min, max               *float64
}

// contractIntegers lists every integer query parameter and top-level body property of
// every operation in openapi.json.
func contractIntegers(t *testing.T) []integerField {
	doc := loadOpenAPI(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			return schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return s
	}
	isInteger := func(s map[string]any) bool {
		switch ty := s["type"].(type) {
		case string:
			return ty == "integer"
		case []any:
			for _, x := range ty {
				if x == "integer" {
					return true
				}
			}
		}
		return false
	}
	bound := func(s map[string]any, key string) *float64 {
		if v, ok := s[key].(float64); ok {
			return &v
		}
		return nil
	}
	var out []integerField
	for path, ops := range doc["paths"].(map[string]any) {
		for method, raw := range ops.(map[string]any) {
			op, ok := raw.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if s, ok := p["schema"].(map[string]any); ok && p["in"] == "query" && isInteger(s) {
					out = append(out, integerField{strings.ToUpper(method), path, "query", p["name"].(string), bound(s, "minimum"), bound(s, "maximum")})
				}
			}
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			jsonBody, _ := content["application/json"].(map[string]any)
			schema, _ := jsonBody["schema"].(map[string]any)
			if schema == nil {
				continue
			}
			props, _ := resolve(schema)["properties"].(map[string]any)
			for name, s := range props {
				if s := resolve(s.(map[string]any)); isInteger(s) {
					out = append(out, integerField{strings.ToUpper(method), path, "body", name, bound(s, "minimum"), bound(s, "maximum")})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return fmt.Sprint(out[i]) < fmt.Sprint(out[j])
	})
	return out
}

// Every integer in every request body and query parameter is checked against the
// contract before it reaches a store: each value out of the declared range (0, -1, 2^31,
// 2^63, one past either bound, a number too large for any integer) is a 4xx naming the
// field, never a 500, and writes nothing; so is a forged or huge cursor.
func TestEveryRouteRefusesOutOfRangeIntegers(t *testing.T) {
	f := newEventFixture(t)
	f.player("walker")
	player := f.tokens["walker"]
	start := f.clock.Now().Add(time.Hour)
	// A valid body for each operation that takes integers in its body; the walk changes one
	// field at a time. Operations whose body is a level document are walked by the level
	// decoder's own tests (internal/challenges), which name the same fields.
	bodies := map[string]map[string]any{
		"POST /v1/challenges/{slug}/hint":        {"design": testDesign(1), "version": 1},
		"POST /v1/challenges/{slug}/submissions": {"design": testDesign(1), "version": 1},
		"POST /v1/simulations":                   {"level": "first-request", "design": testDesign(1), "version": 1, "max_points": 10},
		"POST /v1/events": {"level": "first-request", "title": "Bounds", "starts_at": start, "ends_at": start.Add(time.Hour),
			"version": 1, "attempt_limit": 1, "max_entrants": 10, "hidden_chaos": json.RawMessage(hiddenSpike),
			"resilience": map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30}},
	}
	levelDocuments := map[string]bool{"POST /v1/challenges": true, "PUT /v1/challenges/{slug}": true}
	tokens := map[string]string{"POST /v1/events": f.admin}
	pathValues := strings.NewReplacer("{slug}", "first-request", "{id}", "00000000-0000-7000-8000-000000000000")

	written := func() string {
		_, events := f.do("GET", "/v1/events", "", nil)
		_, board := f.do("GET", "/v1/challenges/first-request/leaderboard", "", nil)
		return fmt.Sprint(events, board)
	}
	before := written()
	walked := 0
	for _, field := range contractIntegers(t) {
		op := field.method + " " + field.path
		if field.in == "body" && levelDocuments[op] {
			continue
		}
		if field.max == nil {
			t.Errorf("%s: the contract gives integer %s %q no maximum", op, field.in, field.name)
			continue
		}
		for _, v := range []string{"-1", "0", "2147483648", "9223372036854775808", "100000000000000000000000",
			fmt.Sprint(*field.max + 1), fmt.Sprint(minOr(field.min) - 1)} {
			var x float64
			fmt.Sscan(v, &x)
			if field.min != nil && x >= *field.min && x <= *field.max {
				continue
			}
			walked++
			token := tokens[op]
			if token == "" {
				token = player
			}
			path := pathValues.Replace(field.path)
			var body []byte
			if field.in == "query" {
				path += "?" + url.Values{field.name: {v}}.Encode()
			} else {
				base, ok := bodies[op]
				if !ok {
					t.Errorf("%s: no valid body to walk %q from", op, field.name)
					break
				}
				b, _ := json.Marshal(base)
				var m map[string]json.RawMessage
				_ = json.Unmarshal(b, &m)
				m[field.name] = json.RawMessage(v)
				body, _ = json.Marshal(m)
			}
			status, problem := f.rawDo(field.method, path, token, body)
			if status < 400 || status >= 500 || !problemNames(problem, field.name) {
				t.Errorf("%s with %s %s=%s: %d %.300s; want a 4xx naming %q", op, field.in, field.name, v, status, problem, field.name)
			}
		}
	}
	// Cursors are opaque strings: a forged or huge one, or one of another
	// list, is a 400 naming it, on every route that takes one.
	cursors := 0
	for _, op := range contractLists(t) {
		if !op.cursor {
			continue
		}
		route := pathValues.Replace(op.path)
		for _, v := range forgedCursors {
			cursors++
			status, problem := f.rawDo("GET", route+"?"+url.Values{"cursor": {v}}.Encode(), player, nil)
			if status != http.StatusBadRequest || !problemNames(problem, "cursor") {
				t.Errorf("GET %s with cursor %.20q…: %d %.200s; want a 400 naming the cursor", route, v, status, problem)
			}
		}
	}
	if cursors < 9*len(forgedCursors) {
		t.Errorf("walked %d cursors; the contract's cursors were not found", cursors)
	}
	if walked < 30 {
		t.Errorf("walked %d values; the contract's integers were not found", walked)
	}
	if after := written(); after != before {
		t.Errorf("refused requests wrote something:\nbefore %s\nafter  %s", before, after)
	}
}

func minOr(p *float64) float64 {
	if p == nil {
		return math.Inf(-1)
	}
	return *p
}

// rawDo sends body as it is (nil: none) and returns the status and the response.
func (f *eventFixture) rawDo(method, path, token string, body []byte) (int, []byte) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, f.http.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// problemNames reports whether a problem+json body names field among its errors.
func problemNames(raw []byte, field string) bool {
	var p struct {
		Errors []struct {
			Field string `json:"field"`
		} `json:"errors"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	for _, e := range p.Errors {
		if e.Field == field {
			return true
		}
	}
	return false
}

// forgedCursors are cursors no route returns: too long, not base64, a
// number, and one of each list's kinds sent to every other list (a list's
// own kind fails elsewhere: the same bytes are another list's position).
var forgedCursors = []string{
	strings.Repeat("A", 5000), "!!", "MTAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAw",
	// game.LevelListCursor past any campaign, and after an impossible slug.
	"BGP__w", "BG8tLQ",
	// game.SeasonListCursor and game.DuelListCursor in the year 300,000.
	"BYKFqxqzXxAA", "BoKFqxqzXxAAAAAAAAAAAAAAAAAAAAAAAA",
	// game.RatingsCursor ranked 0, and at rating NaN.
	"B0CXcAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "B3_4AAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",
}

// listOperation is a GET operation of the contract whose answer holds a
// list.
type listOperation struct {
	path string
	// limit: its ?limit= maximum (0: none); cursor: it takes ?cursor=;
	// next: its answer has a next cursor.
	limit        float64
	cursor, next bool
	// unbounded names its top-level arrays that declare no maxItems.
	unbounded []string
}

// contractLists finds every GET operation of openapi.json whose JSON answer
// has a top-level array.
func contractLists(t *testing.T) []listOperation {
	doc := loadOpenAPI(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var properties func(s map[string]any) map[string]any
	properties = func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			s = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out[name] = p
		}
		parts, _ := s["allOf"].([]any)
		for _, part := range parts {
			for name, p := range properties(part.(map[string]any)) {
				out[name] = p
			}
		}
		return out
	}
	var out []listOperation
	for path, ops := range doc["paths"].(map[string]any) {
		op, ok := ops.(map[string]any)["get"].(map[string]any)
		if !ok {
			continue
		}
		schema := dig(op, "responses", "200", "content", "application/json", "schema")
		if schema == nil {
			continue
		}
		l := listOperation{path: path}
		lists := false
		for name, p := range properties(schema) {
			p := p.(map[string]any)
			if p["type"] == "array" {
				lists = true
				if _, ok := p["maxItems"]; !ok {
					l.unbounded = append(l.unbounded, name)
				}
			}
			l.next = l.next || name == "next"
		}
		if !lists {
			continue
		}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			p := p.(map[string]any)
			if p["in"] != "query" {
				continue
			}
			switch p["name"] {
			case "limit":
				l.limit, _ = p["schema"].(map[string]any)["maximum"].(float64)
			case "cursor":
				l.cursor = true
			}
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// Every list in the contract is bounded: a list route takes ?limit= of at
// most 100 and a cursor it returns as next, and any other array in an
// answer declares its maxItems.
func TestEveryListIsBounded(t *testing.T) {
	// Arrays bounded by what one request could send, not by what is
	// stored.
	sent := map[string]string{
		"GET /v1/events/{id}/results/{player_id}": "hidden_chaos", // the event's, bounded by the level format
	}
	lists := contractLists(t)
	paged := 0
	for _, l := range lists {
		l.unbounded = slices.DeleteFunc(l.unbounded, func(name string) bool { return sent["GET "+l.path] == name })
		if l.limit == 0 {
			if len(l.unbounded) > 0 {
				t.Errorf("GET %s: %v may grow without bound: page it (limit, cursor, next) or declare maxItems", l.path, l.unbounded)
			}
			continue
		}
		paged++
		if l.limit > 100 {
			t.Errorf("GET %s: limit up to %v, want at most 100", l.path, l.limit)
		}
		if !l.cursor || !l.next {
			t.Errorf("GET %s: pages without a cursor to the next page (cursor %v, next %v)", l.path, l.cursor, l.next)
		}
	}
	if paged < 9 {
		t.Errorf("%d paged lists found in the contract, want every list route", paged)
	}
}

// dig follows keys through nested JSON objects; nil where one is missing.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m, _ = m[k].(map[string]any)
	}
	return m
}
