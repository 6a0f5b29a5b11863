package main

import (
	"net/url"
	"testing"
)

// The studio's server routes against the real server and PostgreSQL, every
// response checked against openapi.json: a level checked with a reference
// design (nothing stored, the check charged like an upload), its problems
// at once, and a player found by name.
func TestLevelCheckAndPlayerByName(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	author := s.newAuthor(t, "Studio Author")
	doc := levelDoc(t, s, "checked-level")

	var check struct {
		Ready bool `json:"ready"`
		Start struct {
			Passed bool `json:"passed"`
		} `json:"starting_design"`
		Reference *struct {
			Passed bool `json:"passed"`
		} `json:"reference_design"`
	}
	s.must(t, 200, req{method: "POST", path: "/v1/challenges/check", token: author.token,
		body: map[string]any{"level": doc, "reference_design": design(3)}}, &check)
	if !check.Ready || check.Start.Passed || check.Reference == nil || !check.Reference.Passed {
		t.Errorf("check: %+v", check)
	}
	if n := s.count(t, "levels"); n != len(mustCampaign(t)) {
		t.Errorf("%d levels after a check, want the campaign's %d", n, len(mustCampaign(t)))
	}
	doc["budget_per_hour"] = -1
	r := s.do(t, req{method: "POST", path: "/v1/challenges/check", token: author.token,
		body: map[string]any{"level": doc, "reference_design": map[string]any{"edges": 1}}})
	if f := r.problem(t).fields(); r.status != 422 || len(f) != 2 || f[0] != "level.budget_per_hour" || f[1] != "reference_design.edges" {
		t.Errorf("invalid check: %d %v", r.status, f)
	}

	var found struct {
		ID string `json:"id"`
	}
	s.must(t, 200, req{method: "GET", path: "/v1/players?name=" + url.QueryEscape("studio author")}, &found)
	if found.ID != author.ID {
		t.Errorf("found %q, want %q", found.ID, author.ID)
	}
	found.ID = ""
	s.must(t, 200, req{method: "GET", path: "/v1/players?name=" + url.QueryEscape("STUDIO AUTHOR")}, &found)
	if found.ID != author.ID {
		t.Errorf("found %q by the name in capitals, want %q", found.ID, author.ID)
	}
	s.must(t, 404, req{method: "GET", path: "/v1/players?name=nobody"}, nil)
	s.must(t, 422, req{method: "GET", path: "/v1/players"}, nil)
}
