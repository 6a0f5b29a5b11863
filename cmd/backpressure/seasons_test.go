package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeSeasonServer answers the season and player routes with documents
// shaped as the server's API documents them.
func fakeSeasonServer(t *testing.T) *httptest.Server {
	t.Helper()
	past := `{"id":"2026-11","name":"November 2026","starts_at":"2026-11-01T00:00:00Z","ends_at":"2026-12-01T00:00:00Z","current":false}`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/seasons", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"seasons":[{"id":"2026-12","name":"December 2026","starts_at":"2026-12-01T00:00:00Z",
			"ends_at":"2027-01-01T00:00:00Z","current":true},` + past + `]}`))
	})
	mux.HandleFunc("GET /v1/seasons/2026-11", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(past)) })
	mux.HandleFunc("GET /v1/seasons/2026-11/leaderboard", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"slug":"","version":0,"season":"2026-11","total":2,"seq":0,"next":"","prev":"","entries":[
			{"rank":1,"player_id":"p1","player_name":"alice","score":9100},
			{"rank":2,"player_id":"p2","player_name":"bob","score":4000}]}`))
	})
	mux.HandleFunc("GET /v1/players/p1", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":"p1","name":"alice","role":"player","created_at":"2026-10-01T00:00:00Z",
			"seasons":[{"season_id":"2026-11","name":"November 2026","current":false,"rank":1,"score":9100,"total":2}],
			"events":[{"event_id":"e1","title":"Spike night","rank":3,"score":700,"passed":true,"total":40,"finished_at":"2026-11-20T20:00:00Z"}]}`))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestSeasonCommands(t *testing.T) {
	srv := fakeSeasonServer(t)
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"seasons", "--server", srv.URL}, 0, []string{"2026-12", "current", "2026-11", "final", "November 2026"}},
		{[]string{"season", "2026-11", "--server", srv.URL}, 0, []string{"November 2026  [final]", "final ranks (2 players):", "1  alice", "9100"}},
		{[]string{"season", "2026-11", "--json", "--server", srv.URL}, 0, []string{`"leaderboard"`, `"player_name": "bob"`}},
		{[]string{"player", "p1", "--server", srv.URL}, 0, []string{"alice  (player)", "November 2026", "rank 1 of 2", "Spike night", "rank 3 of 40", "passes"}},
		{[]string{"season", "nope", "--server", srv.URL}, exitInvalid, nil},
		{[]string{"season", "--server", srv.URL}, exitInvalid, nil},
		{[]string{"player", "--server", srv.URL}, exitInvalid, nil},
	}
	for _, tt := range tests {
		r := runCLI(t, "", tt.args...)
		if r.code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, r.code, tt.code, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, w, r.stdout)
			}
		}
	}
}
