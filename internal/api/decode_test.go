package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
	"backpressure/internal/store/memstore"
	"backpressure/internal/strictjson"
)

func TestUnmarshalStrict(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type body struct {
		Name  string  `json:"name"`
		Inner inner   `json:"inner"`
		X     float64 `json:"x"`
	}
	for _, tt := range []struct {
		body  string
		code  string
		field string
	}{
		{`{"name": "a", "inner": {"n": 1}}`, "", ""},
		{`{"name": 1}`, eBadRequest, "name"},
		{`{"inner": {"n": "1"}}`, eBadRequest, "inner.n"},
		{`{"inner": {"n": 1.5}}`, eBadRequest, "inner.n"},
		{`{"score": 1}`, eBadRequest, "score"},
		{`{"x": NaN}`, eBadRequest, "x"},
		{`{"name": "a"} x`, eBadRequest, ""},
		{`{"name": "a"`, eBadRequest, "name"},
		{`[]`, eBadRequest, ""},
		// encoding/json alone would take the last duplicate and ignore case.
		{`{"name": "a", "name": "b"}`, eBadRequest, "name"},
		{`{"Name": "a"}`, eBadRequest, "Name"},
		{`{"NAME": "a", "name": "b"}`, eBadRequest, "NAME"},
		{`{"inner": {"n": 1, "n": 2}}`, eBadRequest, "inner.n"},
		{`{"inner": {"N": 1}}`, eBadRequest, "inner.N"},
		{`{"name": "a", "x": 1, "inner": {"n": 1}, "x": 2}`, eBadRequest, "x"},
	} {
		var v body
		err := strictjson.Unmarshal([]byte(tt.body), &v)
		if got := code(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.body, got, tt.code, err)
			continue
		}
		if err != nil {
			fields := game.ErrorFields(err)
			if len(fields) != 1 || fields[0].Field != tt.field || fields[0].Reason == "" {
				t.Errorf("%s: fields %+v, want one for %q", tt.body, fields, tt.field)
			}
		}
	}
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return game.ErrorCode(err)
}

func TestValidate(t *testing.T) {
	one := 1
	err := strictjson.Validate(&simulationRequest{Version: -1, MaxPoints: &one})
	var got []game.FieldError
	got = append(got, game.ErrorFields(err)...)
	want := []game.FieldError{
		{Field: "level", Reason: "is required"},
		{Field: "version", Reason: "must be at least 0"},
		{Field: "design", Reason: "is required"},
		{Field: "max_points", Reason: "must be at least 2"},
	}
	if game.ErrorCode(err) != game.EINVALID {
		t.Errorf("code %q", game.ErrorCode(err))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestDownsample(t *testing.T) {
	res := &sim.Result{}
	for i := range 480 {
		res.Ticks = append(res.Ticks, sim.Tick{T: float64(i + 1)})
	}
	for _, tt := range []struct{ max, n, every int }{
		{0, 480, 1}, {480, 480, 1}, {1000, 480, 1}, {100, 96, 5}, {50, 48, 10}, {7, 7, 69}, {2, 2, 240},
	} {
		out, every := rules.Downsample(res, tt.max)
		if len(out.Ticks) != tt.n || every != tt.every {
			t.Errorf("max %d: %d ticks every %d, want %d every %d", tt.max, len(out.Ticks), every, tt.n, tt.every)
		}
		if last := out.Ticks[len(out.Ticks)-1].T; last != 480 {
			t.Errorf("max %d: ends at %g", tt.max, last)
		}
	}
	if len(res.Ticks) != 480 {
		t.Error("downsample changed its input")
	}
}

// TestErrorTable checks that every code has a status and a title, and that
// an error that is not a *game.Error is shown as "internal" only.
func TestErrorTable(t *testing.T) {
	for code := range statusOf {
		if titleOf[code] == "" {
			t.Errorf("code %s has no title", code)
		}
	}
	s := newServer(Deps{Store: memstore.New()})
	for _, tt := range []struct {
		err    error
		status int
		detail string
	}{
		{errors.New("pq: password authentication failed for user secret"), 500, "internal error"},
		{game.Errorf(game.ENOTFOUND, "level not found"), 404, "level not found"},
		{game.Errorf("made_up", "x"), 500, "internal error"},
		{scheduler.ErrBusy, 503, scheduler.ErrBusy.Error()[len("busy: "):]},
	} {
		w := httptest.NewRecorder()
		s.writeError(w, httptest.NewRequest("GET", "/v1/x", nil), tt.err)
		var p problem
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if w.Code != tt.status || p.Status != tt.status || p.Detail != tt.detail || !strings.HasPrefix(p.Type, problemTypePrefix) {
			t.Errorf("%v: %d %+v", tt.err, w.Code, p)
		}
		if strings.Contains(w.Body.String(), "secret") {
			t.Errorf("internal detail leaked: %s", w.Body)
		}
	}
}

// TestWebRoot checks the seam for the web client: files at / for GET, the
// API and problems everywhere else.
func TestWebRoot(t *testing.T) {
	web := fstest.MapFS{"index.html": {Data: []byte("<h1>Backpressure</h1>")}, "js/app.js": {Data: []byte("//")}}
	h := NewServer(Deps{Store: memstore.New(), Web: web})
	get := func(method, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		return w
	}
	if w := get("GET", "/"); w.Code != 200 || !strings.Contains(w.Body.String(), "Backpressure") {
		t.Errorf("GET /: %d %s", w.Code, w.Body)
	}
	if w := get("GET", "/js/app.js"); w.Code != 200 {
		t.Errorf("GET /js/app.js: %d", w.Code)
	}
	if w := get("GET", "/v1/nope"); w.Code != 404 || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET /v1/nope: %d %v", w.Code, w.Header())
	}
	if w := get("GET", "/healthz"); w.Code != 200 {
		t.Errorf("GET /healthz: %d", w.Code)
	}
	if w := get("POST", "/"); w.Code != http.StatusMethodNotAllowed && w.Code != http.StatusNotFound {
		t.Errorf("POST /: %d", w.Code)
	}
	// Without a web root, / is a problem 404.
	h = NewServer(Deps{Store: memstore.New()})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 404 || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("GET / without web: %d %v", w.Code, w.Header())
	}
}

// TestPanicIs500 checks that a panic in a handler becomes a logged 500
// problem, not a dropped connection.
func TestPanicIs500(t *testing.T) {
	s := newServer(Deps{Store: memstore.New()})
	h := s.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/x", nil))
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"code":"internal"`) || strings.Contains(w.Body.String(), "boom") {
		t.Errorf("panic: %d %s", w.Code, w.Body)
	}
}

// Every request type refuses duplicate and mis-cased keys, at any depth of
// the body (inside a design too), with a 400 naming the key.
func TestDecodeAmbiguousKeys(t *testing.T) {
	tests := []struct {
		name, body, field string
		v                 any
	}{
		{"duplicate name", `{"name": "ada", "name": "eve"}`, "name", &createPlayerRequest{}},
		{"name in capitals", `{"NAME": "ada"}`, "NAME", &createPlayerRequest{}},
		{"role in mixed case", `{"Role": "admin"}`, "Role", &setRoleRequest{}},
		{"duplicate version", `{"design": {}, "version": 1, "version": 2}`, "version", &submitRequest{}},
		{"version in capitals", `{"design": {}, "Version": 2}`, "Version", &submitRequest{}},
		{"duplicate inside the design", `{"design": {"components": [{"id": "a", "id": "b"}]}}`, "design.components[0].id", &submitRequest{}},
		{"max_points twice", `{"level": "x", "design": {}, "max_points": 2, "max_points": 100000}`, "max_points", &simulationRequest{}},
		{"Level", `{"Level": "x", "design": {}}`, "Level", &simulationRequest{}},
		{"hint design twice", `{"design": {}, "design": {"components": []}}`, "design", &hintRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", "application/json")
			err := decode(httptest.NewRecorder(), r, 1<<20, tt.v)
			if code(err) != eBadRequest {
				t.Fatalf("decode(%s): %v, want a 400", tt.body, err)
			}
			fields := game.ErrorFields(err)
			if len(fields) != 1 || fields[0].Field != tt.field {
				t.Errorf("fields %+v, want %q", fields, tt.field)
			}
		})
	}
}
