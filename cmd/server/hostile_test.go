package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestHostileInput adds to TestBadInput the bodies an attacker would send:
// deeply nested, enormous, truncated, with hostile numbers, control
// characters and SQL. Each must be a 4xx problem (naming the field where
// there is one), the server must stay healthy and nothing may be written.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "eve")
	author := s.newAuthor(t, "author")
	submit := "/v1/challenges/" + tutorial + "/submissions"
	good, _ := json.Marshal(design(2))

	components := func(n int) map[string]any {
		cs := make([]any, n)
		for i := range cs {
			cs[i] = map[string]any{"id": fmt.Sprintf("c%d", i), "type": "app_service"}
		}
		return map[string]any{"components": cs, "edges": []any{}}
	}
	nested := func(depth int) string {
		return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	}
	withReplicas := func(v string) string {
		return `{"design": {"components": [{"id": "app", "type": "app_service", "params": {"replicas": ` + v + `}}, {"id": "db", "type": "database"}], "edges": [{"from": "app", "to": "db"}]}}`
	}
	sqlSlug := levelDoc(t, s, "x")
	sqlSlug["slug"] = "x'; DROP TABLE levels; --"
	ctrlTitle := levelDoc(t, s, "ctrl-title")
	ctrlTitle["slug"] = "bad\x00slug"

	tests := []struct {
		name   string
		rq     req
		status int
		field  string
	}{
		{"deeply nested design", req{method: "POST", path: submit, body: `{"design": ` + nested(100000) + `}`}, 400, ""},
		{"deeply nested array", req{method: "POST", path: submit, body: `{"design": ` + strings.Repeat("[", 50000) + strings.Repeat("]", 50000) + `}`}, 400, ""},
		{"deeply nested level", req{method: "POST", path: "/v1/challenges", body: `{"slug": "x", "traffic": ` + nested(10000) + `}`}, 400, ""},
		{"10,000 components", req{method: "POST", path: submit, body: map[string]any{"design": components(10000)}}, 422, "design"},
		{"10,000 components in a dry run", req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": components(10000)}}, 422, "design"},
		{"1,000 components", req{method: "POST", path: submit, body: map[string]any{"design": components(1000)}}, 422, "design.components"},
		{"truncated mid-string", req{method: "POST", path: submit, body: `{"design": {"components": [{"id": "ap`}, 400, ""},
		{"truncated after a key", req{method: "POST", path: submit, body: `{"design"`}, 400, ""},
		{"NaN as a bare word", req{method: "POST", path: submit, body: withReplicas("NaN")}, 400, "design.components[0].params.replicas"},
		{"-Infinity", req{method: "POST", path: submit, body: withReplicas("-Infinity")}, 400, "design.components[0].params.replicas"},
		{"NaN as a string", req{method: "POST", path: submit, body: withReplicas(`"NaN"`)}, 422, "design.components[0].params.replicas"},
		{"negative replicas", req{method: "POST", path: submit, body: withReplicas("-3")}, 422, "design.components[0].params.replicas"},
		{"enormous replicas", req{method: "POST", path: submit, body: withReplicas("1e308")}, 422, "design.components[0].params.replicas"},
		{"number beyond float64", req{method: "POST", path: submit, body: withReplicas("1e400")}, 422, "design.components[0].params.replicas"},
		{"fractional replicas", req{method: "POST", path: submit, body: withReplicas("2.5")}, 422, "design.components[0].params.replicas"},
		{"enormous version", req{method: "POST", path: submit, body: `{"design": ` + string(good) + `, "version": 99999999999999999999}`}, 400, "version"},
		{"version as a float", req{method: "POST", path: submit, body: `{"design": ` + string(good) + `, "version": 1.5}`}, 400, "version"},
		{"name with a NUL", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "ev\x00e"}}, 422, "name"},
		{"name with an escape sequence", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "\x1b[31mred"}}, 422, "name"},
		{"name with a right-to-left override", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "abc\u202edcb"}}, 422, "name"},
		{"name with a lone surrogate", req{method: "POST", path: "/v1/players", body: `{"name": "x\ud800y"}`}, 422, "name"},
		{"name of invalid UTF-8", req{method: "POST", path: "/v1/players", body: []byte("{\"name\": \"x\xff\xfey\"}")}, 400, ""},
		{"name too long in runes", req{method: "POST", path: "/v1/players", body: map[string]any{"name": strings.Repeat("é", 33)}}, 422, "name"},
		{"long name", req{method: "POST", path: "/v1/players", body: map[string]any{"name": strings.Repeat("a", 100000)}}, 422, "name"},
		{"huge name", req{method: "POST", path: "/v1/players", body: map[string]any{"name": strings.Repeat("a", 2<<20)}}, 413, ""},
		{"SQL in a level slug", req{method: "POST", path: "/v1/challenges", body: sqlSlug}, 422, "slug"},
		{"control character in a level slug", req{method: "POST", path: "/v1/challenges", body: ctrlTitle}, 422, "slug"},
		{"SQL in a board version", req{method: "GET", path: "/v1/challenges/" + tutorial + "/leaderboard?version=" + url.QueryEscape("1; DROP TABLE players")}, 400, "version"},
		{"SQL in a board cursor", req{method: "GET", path: "/v1/challenges/" + tutorial + "/leaderboard?cursor=" + url.QueryEscape("' OR 1=1 --")}, 400, "cursor"},
		{"enormous board limit", req{method: "GET", path: "/v1/leaderboard?limit=99999999999999999999"}, 400, "limit"},
		{"non-ASCII idempotency key", req{method: "POST", path: submit, body: map[string]any{"design": design(2)},
			header: map[string]string{"Idempotency-Key": "cl\xc3\xa9"}}, 400, "Idempotency-Key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rq := tt.rq
			switch {
			case rq.path == "/v1/players":
			case strings.HasPrefix(rq.path, "/v1/challenges") && rq.method != "GET" && !strings.Contains(rq.path, "/submissions"):
				rq.token = author.token
			default:
				rq.token = p.token
			}
			r := s.send(t, rq)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d; body %.500s", r.status, tt.status, r.body)
			}
			prob := r.problem(t)
			if tt.field != "" && !slices.Contains(prob.fields(), tt.field) {
				t.Errorf("fields %v, want %q among them; body %.500s", prob.fields(), tt.field, r.body)
			}
			if h := s.send(t, req{method: "GET", path: "/healthz"}); h.status != 200 {
				t.Fatalf("after this input /healthz is %d", h.status)
			}
		})
	}
	for table, want := range map[string]int{"submissions": 0, "submission_requests": 0, "players": 2, "board_entries": 0} {
		if n := s.count(t, table); n != want {
			t.Errorf("%d rows in %s, want %d", n, table, want)
		}
	}
	if n := s.count(t, "levels"); n != len(mustCampaign(t)) {
		t.Errorf("%d levels, want the campaign's %d", n, len(mustCampaign(t)))
	}
	if strings.Contains(s.logs.String(), `"status":500`) {
		t.Error("a hostile input caused a 500")
	}

	// SQL-looking text that is a valid name is stored verbatim, as data.
	var out struct {
		Player player `json:"player"`
	}
	name := "Robert'); DROP TABLE x;--"
	s.must(t, 201, req{method: "POST", path: "/v1/players", body: map[string]any{"name": name}}, &out)
	var got string
	if err := s.db(t).QueryRow(t.Context(), `SELECT name FROM players WHERE id = $1`, out.Player.ID).Scan(&got); err != nil || got != name {
		t.Errorf("stored name %q, %v; want %q", got, err, name)
	}
	key := "k'); DELETE FROM submissions; --"
	r := s.must(t, 201, req{method: "POST", path: submit, token: p.token, body: map[string]any{"design": design(2)},
		header: map[string]string{"Idempotency-Key": key}}, nil)
	if err := s.db(t).QueryRow(t.Context(), `SELECT idempotency_key FROM submission_requests`).Scan(&got); err != nil || got != key {
		t.Errorf("stored key %q, %v; want %q (%d)", got, err, key, r.status)
	}
	if n := s.count(t, "levels"); n != len(mustCampaign(t)) {
		t.Errorf("levels changed: %d", n)
	}
}
