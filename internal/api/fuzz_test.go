package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/strictjson"
)

// clientError reports whether err is one the transport answers with a 4xx
// (a *game.Error with a client code), which every decoder error must be.
func clientError(err error) bool {
	var ge *game.Error
	if !errors.As(err, &ge) {
		return false
	}
	switch ge.Code {
	case game.EINVALID, eBadRequest, eTooLarge, eUnsupportedMedia, game.ENOTFOUND, game.EUNAUTHORIZED:
		return true
	}
	return false
}

var fuzzBodies = []string{
	`{"design": {"components": [{"id": "app", "type": "app_service", "params": {"replicas": 2}}, {"id": "db", "type": "database"}], "edges": [{"from": "app", "to": "db"}]}}`,
	`{"name": "ada"}`, `{"role": "author"}`, `{"level": "first-request", "design": {}, "max_points": 100}`,
	`{"design": {"components": "x"}}`, `{"design": NaN}`, `[`, `{"a":{"a":{"a":1}}}`, "{\"name\": \"\xff\"}",
	`{"version": 1e400, "design": {}}`, `{"design": {"components": [], "edges": []}} {}`,
}

// FuzzDecode feeds arbitrary bodies to the one decode path with every
// request type: it must never panic, and every error must be a client error.
func FuzzDecode(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		targets := []func() any{
			func() any { return &submitRequest{} },
			func() any { return &createPlayerRequest{} },
			func() any { return &setRoleRequest{} },
			func() any { return &simulationRequest{} },
			func() any { return &hintRequest{} },
		}
		for _, newV := range targets {
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			if err := decode(httptest.NewRecorder(), r, 64<<10, newV()); err != nil && !clientError(err) {
				t.Fatalf("decode(%q) into %T: %v is not a client error", body, newV(), err)
			}
		}
	})
}

// FuzzParseDesign: a design is untrusted input; parsing it must never
// panic and must fail only with a client error.
func FuzzParseDesign(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	f.Add([]byte(`{"components": [{"id": "app", "type": "app_service", "params": {"replicas": 1e308}}], "edges": []}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, _, err := rules.ParseDesign(raw); err != nil && !clientError(err) {
			t.Fatalf("rules.ParseDesign(%q): %v is not a client error", raw, err)
		}
	})
}

// FuzzBoardQuery: leaderboard query strings are untrusted; reading them
// must never panic and must fail only with a client error.
func FuzzBoardQuery(f *testing.F) {
	for _, q := range []string{"limit=10", "limit=-1&version=2", "cursor=abc", "around=me", "around=you&cursor=x",
		"limit=99999999999999999999", "version=1;DROP", "limit=%00"} {
		f.Add(q, "first-request")
		f.Add(q, "")
	}
	s := &server{}
	f.Fuzz(func(t *testing.T, query, slug string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawQuery = query
		if _, err := url.ParseQuery(query); err != nil {
			r.URL.RawQuery = url.Values{"cursor": {query}}.Encode()
		}
		if _, err := s.boardQuery(r, slug); err != nil && !clientError(err) {
			t.Fatalf("boardQuery(%q): %v is not a client error", query, err)
		}
	})
}

// FuzzCheckKeys: the duplicate-key pre-pass never panics, refuses only with
// a 400, and whatever object body is, the same object with its first key
// repeated is refused.
func FuzzCheckKeys(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	f.Add([]byte(`{"name": "a", "NAME": "b"}`))
	f.Add([]byte(`{"design": {"components": [{"id": "a", "id": "b"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, typ := range []reflect.Type{reflect.TypeFor[submitRequest](), reflect.TypeFor[createPlayerRequest](), reflect.TypeFor[any]()} {
			if err := strictjson.CheckKeys(body, typ); err != nil && game.ErrorCode(err) != eBadRequest {
				t.Fatalf("strictjson.CheckKeys(%q): %v is not a 400", body, err)
			}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil || len(obj) == 0 || strictjson.CheckKeys(body, reflect.TypeFor[any]()) != nil {
			return
		}
		for k, v := range obj {
			key, _ := json.Marshal(k)
			doubled := append(append(append([]byte(`{`), key...), ':'), v...)
			doubled = append(append(doubled, ','), bytes.TrimPrefix(bytes.TrimSpace(body), []byte("{"))...)
			if err := strictjson.CheckKeys(doubled, reflect.TypeFor[any]()); err == nil {
				t.Fatalf("strictjson.CheckKeys(%q) accepted the key %s twice", doubled, key)
			}
			break
		}
	})
}
