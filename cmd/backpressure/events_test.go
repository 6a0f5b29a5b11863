package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeEventServer answers the event routes with fixed documents, as the
// server's API documents them.
func fakeEventServer(t *testing.T) *httptest.Server {
	t.Helper()
	event := `{"id":"e1","title":"Spike night","briefing":"Something will happen.","phase":"finished",
		"starts_at":"2030-01-01T13:00:00Z","ends_at":"2030-01-01T14:00:00Z","attempt_limit":2,"join_required":true,
		"max_entrants":50,"final":"best","entrants":2,"level":"first-request","version":1,
		"hidden_chaos":[{"kind":"traffic_spike","at_sec":30}],"resilience":null,"finished_at":"2030-01-01T14:00:05Z"}`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"events":[` + event + `]}`))
	})
	mux.HandleFunc("GET /v1/events/e1", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(event)) })
	mux.HandleFunc("GET /v1/events/e1/standings", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"event_id":"e1","seq":4,"final":true,"total":2,"entries":[
			{"rank":1,"player_name":"alice","score":5100,"passed":true,"attempts":2},
			{"rank":2,"player_name":"bob","score":0,"passed":false,"attempts":1}]}`))
	})
	mux.HandleFunc("GET /v1/events/nope", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"status":404,"code":"not_found","detail":"event not found"}`))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestEventsCommands(t *testing.T) {
	srv := fakeEventServer(t)
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"events", "--server", srv.URL}, 0, []string{"e1", "finished", "2030-01-01 13:00 → 2030-01-01 14:00", "2 entrants", "Spike night"}},
		{[]string{"event", "e1", "--server", srv.URL}, 0, []string{"Spike night  [finished]", "level: first-request",
			"rules: final design: best, 2 attempts, join before submitting, at most 50 entrants", "hidden chaos: [{",
			"final standings (2 entrants):", "1  alice", "5100  passes", "2  bob"}},
		{[]string{"event", "e1", "--json", "--server", srv.URL}, 0, []string{`"standings"`, `"player_name": "alice"`}},
		{[]string{"event", "nope", "--server", srv.URL}, exitInvalid, nil},
		{[]string{"event", "--server", srv.URL}, exitInvalid, nil},
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
