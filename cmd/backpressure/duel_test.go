package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// finishedDuel is a finished duel as the server's API documents it (the
// timelines left out).
const finishedDuel = `{"id":"d1","level":"lose-a-node","version":1,"state":"finished",
	"players":[{"id":"p-ada","name":"ada","rating":1662.3,"submitted":true},{"id":"p-bob","name":"bob","rating":1337.7,"submitted":true}],
	"created_at":"2030-01-01T12:00:00Z","accept_by":"2030-01-02T12:00:00Z","submit_by":"2030-01-01T12:30:00Z","ended_at":"2030-01-01T12:10:00Z","seq":5,
	"surprise_chaos":[{"id":"surprise","kind":"node_failure","at_sec":99,"duration_sec":30,"target":"app-b"}],
	"result":{"winner":"p-ada","draw":false,"reason":"passed",
		"surprise_chaos":[{"id":"surprise","kind":"node_failure","at_sec":99,"duration_sec":30,"target":"app-b"}],
		"sides":[
			{"player_id":"p-ada","passed":true,"score":3510,"failed_at_sec":null,"error_rate":0.0087,"submitted":true,"design":{},
			 "evaluation":{"conditions":[{"name":"latency","passed":true,"measured":120,"target":250,"unit":"ms"},{"name":"errors","passed":true,"measured":0.0087,"target":0.02,"unit":"ratio"}]},
			 "summary":{},"components":[],"ticks":[],"every":2,"total_ticks":600},
			{"player_id":"p-bob","passed":false,"score":0,"failed_at_sec":60,"error_rate":0.25,"submitted":true,"design":{},
			 "evaluation":{"conditions":[{"name":"latency","passed":true,"measured":140,"target":250,"unit":"ms"},{"name":"errors","passed":false,"measured":0.25,"target":0.02,"unit":"ratio"}]},
			 "summary":{},"components":[],"ticks":[],"every":2,"total_ticks":600}],
		"ratings":[{"player_id":"p-ada","before":1500,"after":1662.3},{"player_id":"p-bob","before":1500,"after":1337.7}]}}`

const pendingDuel = `{"id":"d2","level":"lose-a-node","version":1,"state":"active",
	"players":[{"id":"p-ada","name":"ada","rating":1500,"submitted":true},{"id":"p-bob","name":"bob","rating":1500,"submitted":false}],
	"created_at":"2030-01-01T12:00:00Z","accept_by":"2030-01-02T12:00:00Z","submit_by":"2030-01-01T12:30:00Z","ended_at":null,"seq":3,
	"surprise_chaos":null,"result":null}`

// fakeDuelServer answers the duel routes with fixed documents and records
// what each request sent.
func fakeDuelServer(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	record := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
	}
	mux := http.NewServeMux()
	reply := func(doc string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { record(r); w.Write([]byte(doc)) }
	}
	mux.HandleFunc("POST /v1/duels", reply(pendingDuel))
	mux.HandleFunc("POST /v1/duels/d2/accept", reply(pendingDuel))
	mux.HandleFunc("POST /v1/duels/d2/design", reply(pendingDuel))
	mux.HandleFunc("GET /v1/duels/d1", reply(finishedDuel))
	mux.HandleFunc("GET /v1/duels/d2", reply(pendingDuel))
	mux.HandleFunc("GET /v1/duels", reply(`{"duels":[`+pendingDuel+`,`+finishedDuel+`]}`))
	mux.HandleFunc("POST /v1/duels/d1/accept", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"status":409,"code":"duel_state","detail":"the duel is finished; only a challenge can be accepted"}`))
	})
	mux.HandleFunc("GET /v1/ratings", reply(`{"total":2,"next":"","entries":[
		{"rank":1,"player_id":"p-ada","player_name":"ada","rating":1662.3,"deviation":290.3,"volatility":0.06,"duels":1,"wins":1,"losses":0,"draws":0},
		{"rank":2,"player_id":"p-bob","player_name":"bob","rating":1337.7,"deviation":290.3,"volatility":0.06,"duels":1,"wins":0,"losses":1,"draws":0}]}`))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

func TestDuelCommands(t *testing.T) {
	srv, seen := fakeDuelServer(t)
	designFile := filepath.Join(t.TempDir(), "design.json")
	if err := os.WriteFile(designFile, []byte(`{"components": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := []string{"--server", srv.URL, "--token", "bp_secret"}
	tests := []struct {
		args     []string
		code     int
		want     []string
		wantSent string
	}{
		{[]string{"duel", "challenge", "p-bob", "lose-a-node"}, 0, []string{"duel d2  lose-a-node v1  [active]", "ada (1500) vs bob (1500)", "design in", "waiting for a design"},
			`POST /v1/duels Bearer bp_secret {"level":"lose-a-node","opponent":"p-bob"}`},
		{[]string{"duel", "match", "lose-a-node"}, 0, nil, `POST /v1/duels Bearer bp_secret {"level":"lose-a-node"}`},
		{[]string{"duel", "accept", "d2"}, 0, nil, `POST /v1/duels/d2/accept Bearer bp_secret `},
		{[]string{"duel", "submit", "d2", designFile}, 0, nil, `POST /v1/duels/d2/design Bearer bp_secret {"design":{"components":[]}}`},
		{[]string{"duel", "show", "d1"}, 0, []string{"winner: ada (passed)", "surprise chaos: node_failure at 99 s for 30 s on app-b",
			"verdict       passes                        fails\n", "failed at     -                             60 s\n",
			"errors        ✓ 0.0087 / 0.02 ratio         ✗ 0.25 / 0.02 ratio\n", "rating        1500 → 1662                   1500 → 1338\n"}, ""},
		{[]string{"duel", "list"}, 0, []string{"d2  active", "d1  finished", "ada (1662) vs bob (1338)"}, ""},
		{[]string{"duel", "show", "d1", "--json"}, 0, []string{`"reason": "passed"`}, ""},
		{[]string{"ratings"}, 0, []string{"ratings (2 players):", "1  ada", "1662 ± 581", "1-0-0", "2  bob"}, ""},
		{[]string{"duel", "accept", "d1"}, exitInvalid, nil, ""},
		{[]string{"duel", "submit", "d2", "/nonexistent.json"}, exitInvalid, nil, ""},
		{[]string{"duel", "dance"}, exitInvalid, nil, ""},
		{[]string{"duel", "challenge", "p-bob"}, exitInvalid, nil, ""},
		{[]string{"duel"}, exitInvalid, nil, ""},
	}
	for _, tt := range tests {
		before := len(seen())
		r := runCLI(t, "", append(tt.args, tok...)...)
		if r.code != tt.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, r.code, tt.code, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, w, r.stdout)
			}
		}
		if tt.wantSent != "" {
			got := seen()
			if len(got) != before+1 || got[before] != tt.wantSent {
				t.Errorf("%v sent %q, want %q", tt.args, got[before:], tt.wantSent)
			}
		}
	}
	// Without a token, the duel commands that act refuse before asking.
	before := len(seen())
	if r := runCLI(t, "", "duel", "accept", "d2", "--server", srv.URL); r.code != exitInvalid || len(seen()) != before {
		t.Errorf("accept without a token: exit %d, %d requests", r.code, len(seen())-before)
	}
	// A problem's code reaches the user.
	r := runCLI(t, "", append([]string{"duel", "accept", "d1"}, tok...)...)
	err := run(t.Context(), append([]string{"duel", "accept", "d1"}, tok...), func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "duel_state") {
		t.Errorf("accept of a finished duel: %v (exit %d)", err, r.code)
	}
	var doc map[string]any
	if json.Unmarshal([]byte(finishedDuel), &doc) != nil {
		t.Fatal("the fixture is not JSON")
	}
}
