package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/challenges"
	"backpressure/internal/sim"
)

// The tutorial level and designs for it: with 2 or 3 app replicas it
// passes (3 costs more, so scores less); with 1 it fails.
const tutorial = "first-request"

func design(replicas int) map[string]any {
	return map[string]any{
		"components": []any{
			map[string]any{"id": "app", "type": "app_service", "params": map[string]any{"replicas": replicas}},
			map[string]any{"id": "db", "type": "database"},
		},
		"edges": []any{map[string]any{"from": "app", "to": "db"}},
	}
}

type player struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	token string
}

func (s *testServer) newPlayer(t *testing.T, name string) player {
	t.Helper()
	var out struct {
		Player player `json:"player"`
		Token  string `json:"token"`
	}
	s.must(t, http.StatusCreated, req{method: "POST", path: "/v1/players", body: map[string]any{"name": name}}, &out)
	out.Player.token = out.Token
	return out.Player
}

func (s *testServer) newAuthor(t *testing.T, name string) player {
	t.Helper()
	p := s.newPlayer(t, name)
	s.must(t, http.StatusOK, req{method: "PUT", path: "/v1/players/" + p.ID + "/role", token: s.adminToken,
		body: map[string]any{"role": "author"}}, nil)
	p.Role = "author"
	return p
}

type submitResult struct {
	Submission struct {
		ID         string          `json:"id"`
		PlayerID   string          `json:"player_id"`
		PlayerName string          `json:"player_name"`
		Slug       string          `json:"slug"`
		Version    int             `json:"version"`
		Passed     bool            `json:"passed"`
		Score      int64           `json:"score"`
		CreatedAt  string          `json:"created_at"`
		Design     json.RawMessage `json:"design"`
		Evaluation json.RawMessage `json:"evaluation"`
	} `json:"submission"`
	Improved bool   `json:"improved"`
	Rank     *int64 `json:"rank"`
	Replayed bool   `json:"replayed"`
}

func (s *testServer) submit(t *testing.T, p player, slug string, d any) submitResult {
	t.Helper()
	var out submitResult
	s.must(t, http.StatusCreated, req{method: "POST", path: "/v1/challenges/" + slug + "/submissions", token: p.token,
		body: map[string]any{"design": d}}, &out)
	return out
}

type entry struct {
	Rank         int64  `json:"rank"`
	PlayerID     string `json:"player_id"`
	PlayerName   string `json:"player_name"`
	Score        int64  `json:"score"`
	AchievedAt   string `json:"achieved_at"`
	SubmissionID string `json:"submission_id"`
}

type boardPage struct {
	Slug    string  `json:"slug"`
	Version int     `json:"version"`
	Entries []entry `json:"entries"`
	Next    string  `json:"next"`
	Prev    string  `json:"prev"`
	Total   int64   `json:"total"`
}

// boardPath is a board's path: slug "" is the global board.
func boardPath(slug string, q url.Values) string {
	p := "/v1/leaderboard"
	if slug != "" {
		p = "/v1/challenges/" + slug + "/leaderboard"
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// wholeBoard reads every page of a board.
func (s *testServer) wholeBoard(t *testing.T, slug string, limit int) []entry {
	t.Helper()
	var all []entry
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	for {
		var page boardPage
		s.must(t, http.StatusOK, req{method: "GET", path: boardPath(slug, q)}, &page)
		all = append(all, page.Entries...)
		if page.Next == "" {
			return all
		}
		q.Set("cursor", page.Next)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	var st struct{ Status string }
	s.must(t, http.StatusOK, req{method: "GET", path: "/healthz"}, &st)
	s.must(t, http.StatusOK, req{method: "GET", path: "/readyz"}, &st)
	if st.Status != "ready" {
		t.Errorf("readyz status %q", st.Status)
	}
	s.must(t, http.StatusOK, req{method: "GET", path: "/v1/challenges"}, nil)
	p := s.newPlayer(t, "metrics")
	s.submit(t, p, tutorial, design(2))
	resp := s.must(t, http.StatusOK, req{method: "GET", path: "/metrics"}, nil)
	for _, want := range []string{
		`backpressure_http_requests_total{method="GET",route="/v1/challenges",status="200"} 1`,
		`backpressure_http_request_duration_seconds_bucket{method="POST",route="/v1/challenges/{slug}/submissions",status="201"`,
		`backpressure_simulations_total{kind="submission",outcome="ok"} 1`,
		`backpressure_simulation_duration_seconds_count{kind="submission"} 1`,
		`backpressure_sim_pool_queue_depth 0`,
		`backpressure_sim_pool_rejections_total 0`,
	} {
		if !strings.Contains(string(resp.body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Every request is logged with its request id; the id is returned.
	resp = s.must(t, http.StatusOK, req{method: "GET", path: "/healthz", header: map[string]string{"X-Request-Id": "abc-123"}}, nil)
	if got := resp.header.Get("X-Request-Id"); got != "abc-123" {
		t.Errorf("X-Request-Id = %q", got)
	}
	found := false
	for _, rec := range s.logs.records("request") {
		found = found || (rec["request_id"] == "abc-123" && rec["route"] == "/healthz")
	}
	if !found {
		t.Error("no access log line with request_id abc-123")
	}
}

func TestPlayers(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	ada := s.newPlayer(t, "Ada")
	if !strings.HasPrefix(ada.token, "bp_") || ada.Role != "player" {
		t.Fatalf("new player %+v", ada)
	}
	var me player
	resp := s.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/me", token: ada.token}, &me)
	if me.ID != ada.ID || me.Name != "Ada" {
		t.Errorf("me = %+v, want %+v", me, ada)
	}
	if strings.Contains(string(resp.body), "token") {
		t.Errorf("GET /v1/players/me shows a token: %s", resp.body)
	}
	// Another player's profile carries no token.
	bob := s.newPlayer(t, "Bob")
	resp = s.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/" + ada.ID, token: bob.token}, nil)
	if strings.Contains(string(resp.body), ada.token) || strings.Contains(string(resp.body), "token") {
		t.Errorf("profile shows a token: %s", resp.body)
	}
	// The token is stored only as a hash.
	var stored []byte
	if err := s.db(t).QueryRow(t.Context(), "SELECT token_hash FROM players WHERE id = $1", ada.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if len(stored) != 32 || strings.Contains(string(stored), ada.token) {
		t.Errorf("stored token hash %x", stored)
	}

	for _, tt := range []struct {
		name   string
		rq     req
		status int
		field  string
	}{
		{"taken, other case", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "ADA"}}, 409, ""},
		{"empty name", req{method: "POST", path: "/v1/players", body: map[string]any{"name": ""}}, 422, "name"},
		{"long name", req{method: "POST", path: "/v1/players", body: map[string]any{"name": strings.Repeat("x", 33)}}, 422, "name"},
		// PRECIS drops surrounding spaces: this is ada's name again.
		{"spaces", req{method: "POST", path: "/v1/players", body: map[string]any{"name": " ada"}}, 409, ""},
		{"choose own role", req{method: "POST", path: "/v1/players", body: map[string]any{"name": "eve", "role": "admin"}}, 400, "role"},
		{"me anonymous", req{method: "GET", path: "/v1/players/me"}, 401, ""},
		{"bad token", req{method: "GET", path: "/v1/players/me", token: "bp_nope"}, 401, ""},
		{"bad scheme", req{method: "GET", path: "/v1/players/me", header: map[string]string{"Authorization": "Basic " + ada.token}}, 401, ""},
		{"bad token on a public route", req{method: "GET", path: "/v1/challenges", token: "bp_nope"}, 401, ""},
		{"unknown player", req{method: "GET", path: "/v1/players/0195d1c2-0000-7000-8000-000000000000"}, 404, ""},
		{"malformed id", req{method: "GET", path: "/v1/players/zzz"}, 404, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := s.do(t, tt.rq)
			if resp.status != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.status, tt.status, resp.body)
			}
			p := resp.problem(t)
			if tt.field != "" && !cmp.Equal(p.fields(), []string{tt.field}) {
				t.Errorf("fields %v, want [%s]", p.fields(), tt.field)
			}
			if tt.status == 401 && resp.header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	if n := s.count(t, "players"); n != 2 {
		t.Errorf("%d players stored, want 2", n)
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "carol")
	other := s.newPlayer(t, "dave")
	role := func(token, id, role string) *response {
		return s.do(t, req{method: "PUT", path: "/v1/players/" + id + "/role", token: token, body: map[string]any{"role": role}})
	}
	// Players cannot grant roles, not even to themselves.
	if r := role(p.token, p.ID, "author"); r.status != 403 {
		t.Fatalf("player grants itself author: %d", r.status)
	}
	if r := role("", p.ID, "author"); r.status != 401 {
		t.Fatalf("anonymous grants author: %d", r.status)
	}
	// The configured admin can; the admin sees itself as admin.
	var me player
	s.must(t, 200, req{method: "GET", path: "/v1/players/me", token: s.adminToken}, &me)
	if me.Role != "admin" {
		t.Errorf("admin token: role %q", me.Role)
	}
	var got player
	s.must(t, 200, req{method: "PUT", path: "/v1/players/" + p.ID + "/role", token: s.adminToken, body: map[string]any{"role": "admin"}}, &got)
	if got.Role != "admin" {
		t.Fatalf("role %q", got.Role)
	}
	// A stored admin can grant and revoke too.
	s.must(t, 200, req{method: "PUT", path: "/v1/players/" + other.ID + "/role", token: p.token, body: map[string]any{"role": "author"}}, nil)
	s.must(t, 200, req{method: "GET", path: "/v1/players/me", token: other.token}, &me)
	if me.Role != "author" {
		t.Errorf("role after grant %q", me.Role)
	}
	s.must(t, 200, req{method: "PUT", path: "/v1/players/" + other.ID + "/role", token: p.token, body: map[string]any{"role": "player"}}, nil)
	if r := role(s.adminToken, other.ID, "superuser"); r.status != 422 || !cmp.Equal(r.problem(t).fields(), []string{"role"}) {
		t.Errorf("unknown role: %d %s", r.status, r.body)
	}
	if r := role(s.adminToken, "0195d1c2-0000-7000-8000-000000000000", "author"); r.status != 404 {
		t.Errorf("unknown player: %d", r.status)
	}
	// The configured admin is not a player: it cannot submit.
	r := s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: s.adminToken,
		body: map[string]any{"design": design(2)}})
	if r.status != 403 {
		t.Errorf("admin submits: %d", r.status)
	}
}

type challenge struct {
	Slug       string                     `json:"slug"`
	Version    int                        `json:"version"`
	Title      string                     `json:"title"`
	Builtin    bool                       `json:"builtin"`
	Definition map[string]any             `json:"definition"`
	PriceList  map[string]json.RawMessage `json:"price_list"`
	Knobs      map[string][]string        `json:"knobs"`
}

func TestChallenges(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	var list struct {
		Challenges []challenge `json:"challenges"`
		Next       string      `json:"next"`
	}
	// The campaign (30 levels) fits one page of 100, the largest.
	s.must(t, 200, req{method: "GET", path: "/v1/challenges?limit=100"}, &list)
	if list.Next != "" {
		t.Errorf("a page of 100 holds the campaign, yet next is %q", list.Next)
	}
	campaign, err := challenges.Campaign()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	versions := map[string]int{}
	for _, l := range campaign {
		want = append(want, l.Slug)
		versions[l.Slug] = l.Version
	}
	for _, c := range list.Challenges {
		got = append(got, c.Slug)
		// One version number everywhere: a built-in level is stored under its file's.
		if !c.Builtin || c.Version != versions[c.Slug] {
			t.Errorf("%s: builtin %v version %d, want the file's version %d", c.Slug, c.Builtin, c.Version, versions[c.Slug])
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("challenges in campaign order (-want +got):\n%s", diff)
	}

	var c challenge
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/" + tutorial}, &c)
	for _, key := range []string{"briefing", "sla", "budget_per_hour", "catalog", "run", "starting_design"} {
		if _, ok := c.Definition[key]; !ok {
			t.Errorf("definition lacks %s", key)
		}
	}
	if _, ok := c.PriceList["app.small"]; !ok || len(c.Knobs["app_service"]) == 0 {
		t.Errorf("price list %v, knobs %v", c.PriceList, c.Knobs)
	}
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/" + tutorial + "?version=" + strconv.Itoa(versions[tutorial])}, nil)
	for _, path := range []string{"/v1/challenges/nope", "/v1/challenges/" + tutorial + "?version=" + strconv.Itoa(versions[tutorial]+4)} {
		if r := s.do(t, req{method: "GET", path: path}); r.status != 404 {
			t.Errorf("GET %s: %d", path, r.status)
		}
	}
	if r := s.do(t, req{method: "GET", path: "/v1/challenges/" + tutorial + "?version=x"}); r.status != 400 || !cmp.Equal(r.problem(t).fields(), []string{"version"}) {
		t.Errorf("version=x: %d %s", r.status, r.body)
	}
	// Unknown routes and methods are problems too.
	if r := s.send(t, req{method: "GET", path: "/v1/nothing"}); r.status != 404 {
		t.Errorf("unknown route: %d", r.status)
	} else {
		r.problem(t)
	}
	if r := s.send(t, req{method: "DELETE", path: "/v1/challenges"}); r.status != 405 || strings.Join(r.header.Values("Allow"), ",") != "GET,POST" {
		t.Errorf("DELETE: %d, Allow %v", r.status, r.header.Values("Allow"))
	} else {
		r.problem(t)
	}
}

// levelDoc is a copy of the tutorial level under another slug.
func levelDoc(t *testing.T, s *testServer, slug string) map[string]any {
	t.Helper()
	var c challenge
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/" + tutorial}, &c)
	doc := c.Definition
	doc["slug"] = slug
	doc["title"] = "Custom " + slug
	// A new level: its first version, with no history yet.
	doc["version"] = 1
	delete(doc, "history")
	return doc
}

func TestLevelUpload(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	author := s.newAuthor(t, "author")
	p := s.newPlayer(t, "player")
	doc := levelDoc(t, s, "my-level")

	type upload struct {
		Outcome   string    `json:"outcome"`
		Challenge challenge `json:"challenge"`
	}
	// Players without the author role cannot upload or change levels.
	if r := s.do(t, req{method: "POST", path: "/v1/challenges", token: p.token, body: doc}); r.status != 403 {
		t.Fatalf("player uploads: %d", r.status)
	}
	if r := s.do(t, req{method: "PUT", path: "/v1/challenges/my-level", token: p.token, body: doc}); r.status != 403 {
		t.Fatalf("player puts: %d", r.status)
	}
	if r := s.do(t, req{method: "POST", path: "/v1/challenges", body: doc}); r.status != 401 {
		t.Fatalf("anonymous uploads: %d", r.status)
	}
	if n := s.count(t, "levels"); n != len(mustCampaign(t)) {
		t.Fatalf("%d levels after refused uploads", n)
	}

	var up upload
	r := s.must(t, 201, req{method: "POST", path: "/v1/challenges", token: author.token, body: doc}, &up)
	if up.Outcome != "created" || up.Challenge.Version != 1 || up.Challenge.Builtin || r.header.Get("Location") != "/v1/challenges/my-level" {
		t.Fatalf("upload: %+v %v", up, r.header)
	}
	if r := s.do(t, req{method: "POST", path: "/v1/challenges", token: author.token, body: doc}); r.status != 409 {
		t.Errorf("second POST: %d", r.status)
	}
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/my-level", token: author.token, body: doc}, &up)
	if up.Outcome != "unchanged" || up.Challenge.Version != 1 {
		t.Errorf("same content: %+v", up)
	}
	// A stored version never changes: even with no submissions, a change
	// is version 2.
	doc["title"] = "Renamed"
	doc["version"] = 2
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/my-level", token: author.token, body: doc}, &up)
	if up.Outcome != "new_version" || up.Challenge.Version != 2 || up.Challenge.Title != "Renamed" {
		t.Errorf("change without scores: %+v", up)
	}
	// With a score on it, a change starts version 3 with its own board.
	first := s.submit(t, p, "my-level", design(2))
	if !first.Submission.Passed || first.Submission.Version != 2 {
		t.Fatalf("submission on the new level: %+v", first)
	}
	doc["budget_per_hour"] = 0.5
	doc["version"] = 3
	s.must(t, 200, req{method: "PUT", path: "/v1/challenges/my-level", token: author.token, body: doc}, &up)
	if up.Outcome != "new_version" || up.Challenge.Version != 3 {
		t.Errorf("change with scores: %+v", up)
	}
	var v2, v3 boardPage
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/my-level/leaderboard?version=2"}, &v2)
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/my-level/leaderboard"}, &v3)
	if v2.Total != 1 || v2.Version != 2 || v3.Total != 0 || v3.Version != 3 {
		t.Errorf("boards after new version: v2 %+v, v3 %+v", v2, v3)
	}
	second := s.submit(t, p, "my-level", design(2))
	if second.Submission.Version != 3 || second.Rank == nil || *second.Rank != 1 {
		t.Errorf("submission after new version: %+v", second)
	}
	// Submitting against a version that is no longer current is a conflict.
	if r := s.do(t, req{method: "POST", path: "/v1/challenges/my-level/submissions", token: p.token,
		body: map[string]any{"design": design(2), "version": 2}}); r.status != 409 {
		t.Errorf("stale version: %d", r.status)
	}

	// Built-in levels change only with a release.
	builtin := levelDoc(t, s, tutorial)
	builtin["title"] = "Hijacked"
	if r := s.do(t, req{method: "PUT", path: "/v1/challenges/" + tutorial, token: author.token, body: builtin}); r.status != 403 {
		t.Errorf("PUT built-in: %d", r.status)
	}
	// The path's slug and the document's must agree.
	if r := s.do(t, req{method: "PUT", path: "/v1/challenges/other", token: author.token, body: doc}); r.status != 422 || !cmp.Equal(r.problem(t).fields(), []string{"slug"}) {
		t.Errorf("slug mismatch: %d %s", r.status, r.body)
	}

	// Invalid levels: every problem, with the same JSON paths as the CLI.
	bad := levelDoc(t, s, "Bad Slug")
	bad["budget_per_hour"] = -1
	bad["sla"] = map[string]any{"p99_latency_ms": 150, "error_rate": 2}
	raw, _ := json.Marshal(bad)
	_, parseErr := challenges.Parse(raw)
	ps, _ := challenges.AsProblems(parseErr)
	var want []string
	for _, p := range ps {
		want = append(want, p.Path)
	}
	r = s.do(t, req{method: "POST", path: "/v1/challenges", token: author.token, body: bad})
	if r.status != 422 {
		t.Fatalf("invalid level: %d %s", r.status, r.body)
	}
	if diff := cmp.Diff(want, r.problem(t).fields()); diff != "" || len(want) < 3 {
		t.Errorf("invalid level fields (-cli +api):\n%s", diff)
	}
	r = s.do(t, req{method: "POST", path: "/v1/challenges", token: author.token, body: `{"slug": "x",`})
	if r.status != 400 {
		t.Errorf("malformed level: %d", r.status)
	}
	r = s.do(t, req{method: "POST", path: "/v1/challenges", token: author.token, body: strings.Repeat(" ", 2<<20)})
	if r.status != 413 {
		t.Errorf("huge level: %d", r.status)
	}
}

func mustCampaign(t *testing.T) []*challenges.Level {
	t.Helper()
	levels, err := challenges.Campaign()
	if err != nil {
		t.Fatal(err)
	}
	return levels
}

type simulation struct {
	Slug       string          `json:"slug"`
	Version    int             `json:"version"`
	Evaluation json.RawMessage `json:"evaluation"`
	Result     struct {
		Ticks []struct {
			T float64 `json:"t"`
		} `json:"ticks"`
	} `json:"result"`
	Every      int `json:"every"`
	TotalTicks int `json:"total_ticks"`
}

func TestSimulationsAndHints(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	var full, small simulation
	s.must(t, 200, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": design(1)}}, &full)
	if full.Every != 1 || len(full.Result.Ticks) != full.TotalTicks || full.TotalTicks < 100 {
		t.Errorf("full result: every %d, %d of %d ticks", full.Every, len(full.Result.Ticks), full.TotalTicks)
	}
	s.must(t, 200, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": design(1), "max_points": 50}}, &small)
	if n := len(small.Result.Ticks); n > 50 || n < 40 || small.Every < 2 {
		t.Errorf("downsampled to %d ticks, every %d", n, small.Every)
	}
	if last, want := small.Result.Ticks[len(small.Result.Ticks)-1].T, full.Result.Ticks[len(full.Result.Ticks)-1].T; last != want {
		t.Errorf("downsampled result ends at %g, want %g", last, want)
	}
	if string(small.Evaluation) != string(full.Evaluation) {
		t.Error("downsampling changed the evaluation")
	}
	// The verdict says why the run failed: the one app server is saturated.
	var verdict struct {
		Why []struct {
			Component string `json:"component"`
			Cause     string `json:"cause"`
		} `json:"why"`
		Busiest string `json:"busiest"`
	}
	if err := json.Unmarshal(full.Evaluation, &verdict); err != nil || len(verdict.Why) == 0 ||
		verdict.Why[0].Component != "app" || verdict.Why[0].Cause != "saturated" || verdict.Busiest != "app" {
		t.Errorf("evaluation's why %+v, busiest %q (%v): want app saturated", verdict.Why, verdict.Busiest, err)
	}
	// Nothing is stored by a dry run.
	if n := s.count(t, "submissions"); n != 0 {
		t.Errorf("%d submissions after dry runs", n)
	}
	// The hint fixes the failing design.
	var h struct {
		Hint struct {
			Found  bool `json:"found"`
			Change struct {
				Patch []any `json:"patch"`
			} `json:"change"`
		} `json:"hint"`
	}
	s.must(t, 200, req{method: "POST", path: "/v1/challenges/" + tutorial + "/hint", body: map[string]any{"design": design(1)}}, &h)
	if !h.Hint.Found || len(h.Hint.Change.Patch) == 0 {
		t.Errorf("hint: %+v", h)
	}
	if r := s.do(t, req{method: "POST", path: "/v1/challenges/nope/hint", body: map[string]any{"design": design(1)}}); r.status != 404 {
		t.Errorf("hint on unknown level: %d", r.status)
	}
	r := s.do(t, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": "nope", "design": design(1)}})
	if r.status != 422 || !cmp.Equal(r.problem(t).fields(), []string{"level"}) {
		t.Errorf("unknown level: %d %s", r.status, r.body)
	}
}

func TestSubmissions(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "erin")

	if r := s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", body: map[string]any{"design": design(2)}}); r.status != 401 {
		t.Fatalf("anonymous submission: %d", r.status)
	}
	failed := s.submit(t, p, tutorial, design(1))
	if failed.Submission.Passed || failed.Submission.Score != 0 || failed.Improved || failed.Rank != nil {
		t.Errorf("failing submission: %+v", failed)
	}
	best := s.submit(t, p, tutorial, design(2))
	if !best.Submission.Passed || best.Submission.Score < 1000 || !best.Improved || best.Rank == nil || *best.Rank != 1 {
		t.Fatalf("passing submission: %+v", best)
	}
	worse := s.submit(t, p, tutorial, design(3))
	if !worse.Submission.Passed || worse.Submission.Score >= best.Submission.Score || worse.Improved || *worse.Rank != 1 {
		t.Errorf("worse submission: %+v (best %d)", worse, best.Submission.Score)
	}
	// Every submission is kept; the board shows the best.
	if n := s.count(t, "submissions"); n != 3 {
		t.Errorf("%d submissions stored, want 3", n)
	}
	var page boardPage
	s.must(t, 200, req{method: "GET", path: boardPath(tutorial, nil)}, &page)
	if len(page.Entries) != 1 || page.Entries[0].SubmissionID != best.Submission.ID || page.Entries[0].Score != best.Submission.Score || page.Entries[0].PlayerName != "erin" {
		t.Errorf("board: %+v", page)
	}

	// The stored submission, re-run, gives the same verdict.
	var stored struct {
		Design     json.RawMessage `json:"design"`
		Evaluation json.RawMessage `json:"evaluation"`
		Score      int64           `json:"score"`
		PlayerName string          `json:"player_name"`
	}
	s.must(t, 200, req{method: "GET", path: "/v1/submissions/" + best.Submission.ID}, &stored)
	var rerun simulation
	s.must(t, 200, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": stored.Design}}, &rerun)
	if diff := cmp.Diff(canonical(t, stored.Evaluation), canonical(t, rerun.Evaluation)); diff != "" {
		t.Errorf("re-run differs (-stored +rerun):\n%s", diff)
	}
	if stored.Score != best.Submission.Score || stored.PlayerName != "erin" {
		t.Errorf("stored submission: %+v", stored)
	}
	for _, path := range []string{"/v1/submissions/0195d1c2-0000-7000-8000-000000000000", "/v1/submissions/x"} {
		if r := s.do(t, req{method: "GET", path: path}); r.status != 404 {
			t.Errorf("GET %s: %d", path, r.status)
		}
	}
	if r := s.do(t, req{method: "POST", path: "/v1/challenges/nope/submissions", token: p.token, body: map[string]any{"design": design(2)}}); r.status != 404 {
		t.Errorf("submission to unknown level: %d", r.status)
	}
}

func canonical(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "frank")
	post := func(key string, d any) *response {
		return s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: p.token,
			header: map[string]string{"Idempotency-Key": key}, body: map[string]any{"design": d}})
	}
	first := post("k1", design(2))
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// Retries, sequential and concurrent, get the first answer.
	var wg sync.WaitGroup
	replies := make([]*response, 8)
	for i := range replies {
		wg.Go(func() {
			replies[i] = s.send(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: p.token,
				header: map[string]string{"Idempotency-Key": "k1"}, body: map[string]any{"design": design(2)}})
		})
	}
	wg.Wait()
	var a submitResult
	first.decode(t, &a)
	for _, r := range replies {
		var b submitResult
		r.decode(t, &b)
		if r.status != 201 || !b.Replayed || b.Submission.ID != a.Submission.ID || r.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry: %d %+v", r.status, b)
		}
	}
	if n := s.count(t, "submissions"); n != 1 {
		t.Errorf("%d submissions after retries, want 1", n)
	}
	// The same key for another request is a conflict; another key is new.
	if r := post("k1", design(3)); r.status != 409 {
		t.Errorf("key reuse with another design: %d", r.status)
	}
	if r := post("k2", design(3)); r.status != 201 {
		t.Errorf("new key: %d", r.status)
	}
	if r := post(strings.Repeat("k", 256), design(3)); r.status != 400 {
		t.Errorf("long key: %d", r.status)
	}
	// Keys are per player.
	q := s.newPlayer(t, "grace")
	r := s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: q.token,
		header: map[string]string{"Idempotency-Key": "k1"}, body: map[string]any{"design": design(2)}})
	var c submitResult
	r.decode(t, &c)
	if r.status != 201 || c.Replayed {
		t.Errorf("other player's key: %d %+v", r.status, c)
	}
}

func TestLeaderboards(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	const n = 7
	var players []player
	for i := range n {
		p := s.newPlayer(t, fmt.Sprintf("p%d", i))
		players = append(players, p)
		// Two scores: 2 replicas beats 3. Among equal scores, the earlier wins.
		s.submit(t, p, tutorial, design(2+i%2))
	}
	all := s.wholeBoard(t, tutorial, 100)
	if len(all) != n {
		t.Fatalf("%d entries, want %d", len(all), n)
	}
	var order []string
	for i, e := range all {
		if e.Rank != int64(i+1) {
			t.Errorf("entry %d has rank %d", i, e.Rank)
		}
		if i > 0 && (e.Score > all[i-1].Score || (e.Score == all[i-1].Score && e.AchievedAt < all[i-1].AchievedAt)) {
			t.Errorf("entries %d and %d out of order: %+v %+v", i-1, i, all[i-1], e)
		}
		order = append(order, e.PlayerName)
	}
	if want := []string{"p0", "p2", "p4", "p6", "p1", "p3", "p5"}; !cmp.Equal(order, want) {
		t.Errorf("board order %v, want %v", order, want)
	}
	// Pages of 3 forward, then back from the end, give the same entries.
	paged := s.wholeBoard(t, tutorial, 3)
	if diff := cmp.Diff(all, paged); diff != "" {
		t.Errorf("paged board (-whole +paged):\n%s", diff)
	}
	var back []entry
	cursor := ""
	q := url.Values{"limit": {"3"}}
	// Walk to the last page, then back.
	for {
		var page boardPage
		s.must(t, 200, req{method: "GET", path: boardPath(tutorial, q)}, &page)
		if page.Next == "" {
			back = page.Entries
			cursor = page.Prev
			break
		}
		q.Set("cursor", page.Next)
	}
	for cursor != "" {
		var page boardPage
		s.must(t, 200, req{method: "GET", path: boardPath(tutorial, url.Values{"limit": {"3"}, "cursor": {cursor}})}, &page)
		back = append(page.Entries, back...)
		cursor = page.Prev
	}
	if diff := cmp.Diff(all, back); diff != "" {
		t.Errorf("board paged backwards (-whole +paged):\n%s", diff)
	}
	// around=me centres the caller.
	var around boardPage
	s.must(t, 200, req{method: "GET", path: boardPath(tutorial, url.Values{"around": {"me"}, "limit": {"3"}}), token: players[3].token}, &around)
	if len(around.Entries) != 3 || around.Entries[1].PlayerName != "p3" {
		t.Errorf("around p3: %+v", around.Entries)
	}
	stranger := s.newPlayer(t, "stranger")
	for _, tt := range []struct {
		name   string
		rq     req
		status int
		field  string
	}{
		{"around anonymous", req{method: "GET", path: boardPath(tutorial, url.Values{"around": {"me"}})}, 401, ""},
		{"around, not on board", req{method: "GET", path: boardPath(tutorial, url.Values{"around": {"me"}}), token: stranger.token}, 404, ""},
		{"around someone else", req{method: "GET", path: boardPath(tutorial, url.Values{"around": {players[0].ID}})}, 400, "around"},
		{"around and cursor", req{method: "GET", path: boardPath(tutorial, url.Values{"around": {"me"}, "cursor": {"abc"}}), token: players[0].token}, 400, "around"},
		{"limit 101", req{method: "GET", path: boardPath(tutorial, url.Values{"limit": {"101"}})}, 400, "limit"},
		{"limit x", req{method: "GET", path: boardPath(tutorial, url.Values{"limit": {"x"}})}, 400, "limit"},
		{"bad cursor", req{method: "GET", path: boardPath(tutorial, url.Values{"cursor": {"!!"}})}, 400, "cursor"},
		{"global version", req{method: "GET", path: boardPath("", url.Values{"version": {"1"}})}, 400, "version"},
		{"unknown level", req{method: "GET", path: boardPath("nope", nil)}, 404, ""},
		{"unknown version", req{method: "GET", path: boardPath(tutorial, url.Values{"version": {"9"}})}, 404, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, tt.rq)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if p := r.problem(t); tt.field != "" && !cmp.Equal(p.fields(), []string{tt.field}) {
				t.Errorf("fields %v, want [%s]", p.fields(), tt.field)
			}
		})
	}

	// The global board sums each player's bests over levels: p6 also
	// passes the second level, with the design the hint proposes.
	second := mustCampaign(t)[1]
	fixed := passingDesign(t, s, second)
	extra := s.submit(t, players[6], second.Slug, fixed)
	if !extra.Submission.Passed {
		t.Fatalf("hinted design fails %s", second.Slug)
	}
	want := map[string]int64{}
	for _, e := range all {
		want[e.PlayerID] = e.Score
	}
	want[players[6].ID] += extra.Submission.Score
	global := s.wholeBoard(t, "", 2)
	if len(global) != n {
		t.Fatalf("global board has %d entries, want %d", len(global), n)
	}
	if global[0].PlayerID != players[6].ID {
		t.Errorf("global leader %s, want p6", global[0].PlayerName)
	}
	for i, e := range global {
		if e.Score != want[e.PlayerID] || e.Rank != int64(i+1) {
			t.Errorf("global entry %d: %+v, want score %d", i, e, want[e.PlayerID])
		}
	}
}

// passingDesign asks the server's hint how to fix a level's starting
// design and applies its patch.
func passingDesign(t *testing.T, s *testServer, l *challenges.Level) sim.Design {
	t.Helper()
	var h struct {
		Hint struct {
			Found  bool `json:"found"`
			Change struct {
				Patch []challenges.PatchOp `json:"patch"`
			} `json:"change"`
		} `json:"hint"`
	}
	s.must(t, 200, req{method: "POST", path: "/v1/challenges/" + l.Slug + "/hint", body: map[string]any{"design": l.StartingDesign}}, &h)
	if !h.Hint.Found {
		t.Fatalf("no hint for %s", l.Slug)
	}
	d, err := challenges.ApplyPatch(l.StartingDesign, h.Hint.Change.Patch)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
