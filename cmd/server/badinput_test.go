package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBadInput sends malformed and invalid bodies to every route that takes
// one: each must be a 4xx problem naming the field, never a 500, and must
// write nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "mallory")
	author := s.newAuthor(t, "author")
	submit := "/v1/challenges/" + tutorial + "/submissions"
	good, _ := json.Marshal(design(2))

	manyComponents := map[string]any{"components": func() []any {
		var cs []any
		for i := range 200 {
			cs = append(cs, map[string]any{"id": fmt.Sprintf("app%d", i), "type": "app_service"})
		}
		return cs
	}()}
	huge := `{"design": {"components": [], "edges": [], "pad": "` + strings.Repeat("x", 2<<20) + `"}}`

	tests := []struct {
		name   string
		rq     req
		status int
		field  string // one of the problem's fields
	}{
		{"malformed JSON", req{method: "POST", path: submit, body: `{"design": `}, 400, "design"},
		{"not an object", req{method: "POST", path: submit, body: `[1, 2]`}, 400, ""},
		{"two values", req{method: "POST", path: submit, body: `{"design": ` + string(good) + `} {}`}, 400, ""},
		{"empty body", req{method: "POST", path: submit, body: ``}, 400, ""},
		{"unknown field", req{method: "POST", path: submit, body: map[string]any{"design": design(2), "colour": "red"}}, 400, "colour"},
		{"client-supplied score", req{method: "POST", path: submit, body: map[string]any{"design": design(2), "score": 10000}}, 400, "score"},
		{"client-supplied rank", req{method: "POST", path: submit, body: map[string]any{"design": design(2), "rank": 1}}, 400, "rank"},
		{"wrong type", req{method: "POST", path: submit, body: map[string]any{"design": design(2), "version": "1"}}, 400, "version"},
		{"negative version", req{method: "POST", path: submit, body: map[string]any{"design": design(2), "version": -1}}, 422, "version"},
		{"NaN spelled out", req{method: "POST", path: submit,
			body: `{"design": {"components": [{"id": "app", "type": "app_service", "params": {"replicas": NaN}}], "edges": []}}`}, 400, "design.components[0].params.replicas"},
		{"Infinity", req{method: "POST", path: "/v1/simulations", body: `{"level": "first-request", "max_points": Infinity, "design": {}}`}, 400, "max_points"},
		{"missing design", req{method: "POST", path: submit, body: map[string]any{}}, 422, "design"},
		{"null design", req{method: "POST", path: submit, body: map[string]any{"design": nil}}, 422, "design"},
		{"design of the wrong type", req{method: "POST", path: submit, body: map[string]any{"design": "app,db"}}, 422, "design"},
		{"wrong type inside the design", req{method: "POST", path: submit, body: map[string]any{"design": map[string]any{"components": "app"}}}, 422, "design.components"},
		{"unknown field inside the design", req{method: "POST", path: submit, body: map[string]any{"design": map[string]any{"components": []any{}, "score": 1}}}, 422, "design.score"},
		{"unknown component type", req{method: "POST", path: submit, body: map[string]any{"design": map[string]any{
			"components": []any{map[string]any{"id": "x", "type": "mainframe"}}}}}, 422, "design.components[0].type"},
		{"parameter out of range", req{method: "POST", path: submit, body: map[string]any{"design": design(1000)}}, 422, "design.components[0].params.replicas"},
		{"too many components", req{method: "POST", path: submit, body: map[string]any{"design": manyComponents}}, 422, "design.components"},
		{"huge body", req{method: "POST", path: submit, body: huge}, 413, ""},
		{"not JSON content", req{method: "POST", path: submit, body: `{}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, ""},
		{"no content type", req{method: "POST", path: submit, body: `{}`, header: map[string]string{"Content-Type": ""}}, 415, ""},
		{"simulation: max_points too small", req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": design(2), "max_points": 1}}, 422, "max_points"},
		{"simulation: missing level", req{method: "POST", path: "/v1/simulations", body: map[string]any{"design": design(2)}}, 422, "level"},
		{"simulation: level of the wrong type", req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": 1, "design": design(2)}}, 400, "level"},
		{"hint: unknown field", req{method: "POST", path: "/v1/challenges/" + tutorial + "/hint", body: map[string]any{"design": design(1), "x": 1}}, 400, "x"},
		{"player: name of the wrong type", req{method: "POST", path: "/v1/players", body: map[string]any{"name": 7}}, 400, "name"},
		{"player: token supplied", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "x", "token": "bp_mine"}}, 400, "token"},
		{"level: unknown field", req{method: "POST", path: "/v1/challenges", body: map[string]any{"slug": "x", "frobnicate": true}}, 422, "frobnicate"},
		{"level: NaN", req{method: "POST", path: "/v1/challenges", body: `{"slug": "x", "budget_per_hour": NaN}`}, 400, "budget_per_hour"},
		{"duplicate key", req{method: "POST", path: submit, body: `{"design": ` + string(good) + `, "version": 0, "version": 7}`}, 400, "version"},
		{"field name in capitals", req{method: "POST", path: submit, body: `{"DESIGN": ` + string(good) + `}`}, 400, "DESIGN"},
		{"duplicate key inside the design", req{method: "POST", path: submit,
			body: `{"design": {"components": [{"id": "app", "type": "app_service", "type": "database"}], "edges": []}}`}, 400, "design.components[0].type"},
		{"player: name twice", req{method: "POST", path: "/v1/players", body: `{"name": "ada", "name": "eve"}`}, 400, "name"},
		{"simulation: Max_Points", req{method: "POST", path: "/v1/simulations", body: `{"level": "first-request", "design": {}, "Max_Points": 100000}`}, 400, "Max_Points"},
		{"level: duplicate slug", req{method: "POST", path: "/v1/challenges", body: `{"slug": "a", "slug": "b"}`}, 400, "slug"},
		{"role: wrong type", req{method: "PUT", path: "/v1/players/" + p.ID + "/role", body: map[string]any{"role": true}}, 400, "role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rq := tt.rq
			switch {
			case strings.HasPrefix(rq.path, "/v1/challenges") && !strings.Contains(rq.path, "/submissions") && !strings.Contains(rq.path, "/hint"):
				rq.token = author.token
			case strings.HasSuffix(rq.path, "/role"):
				rq.token = s.adminToken
			default:
				rq.token = p.token
			}
			if rq.path == "/v1/players" {
				rq.token = ""
			}
			r := s.do(t, rq)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %.500s", r.status, tt.status, r.body)
			}
			prob := r.problem(t)
			if tt.field != "" && !slices.Contains(prob.fields(), tt.field) {
				t.Errorf("fields %v, want %q among them; body %.500s", prob.fields(), tt.field, r.body)
			}
		})
	}
	for table, want := range map[string]int{"submissions": 0, "players": 2} {
		if n := s.count(t, table); n != want {
			t.Errorf("%d rows in %s, want %d", n, table, want)
		}
	}
	if n := s.count(t, "levels"); n != len(mustCampaign(t)) {
		t.Errorf("%d levels, want the campaign's %d", n, len(mustCampaign(t)))
	}
	if strings.Contains(s.logs.String(), `"status":500`) {
		t.Error("a bad input caused a 500")
	}
}
