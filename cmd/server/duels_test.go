package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"backpressure/internal/challenges"
)

// TestDuelDecidedOnceAcrossReplicas runs two servers on one database. A
// challenge made on one is accepted on both at once (one accept wins, the
// other is told duel_state), both designs arrive at once, one on each:
// the duel is decided once, its ratings move once, both replicas serve the
// result, and a player following the duel on the other replica sees every
// change live (LISTEN/NOTIFY), up to the result.
func TestDuelDecidedOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	a := startServer(t, maps.Clone(env))
	b := startServer(t, maps.Clone(env))
	ada, bob := a.newPlayer(t, "ada"), b.newPlayer(t, "bob")
	const level = "lose-a-node"
	pass, err := os.ReadFile("../../internal/challenges/testdata/solutions/" + level + ".json")
	if err != nil {
		t.Fatal(err)
	}
	l, err := challenges.CampaignLevel(level)
	if err != nil {
		t.Fatal(err)
	}
	fail, _ := json.Marshal(l.StartingDesign)

	var duel struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	a.must(t, http.StatusCreated, req{method: "POST", path: "/v1/duels", token: ada.token,
		body: map[string]any{"level": level, "opponent": bob.ID}}, &duel)
	stream, stop := b.openSSE(t, "/v1/duels/"+duel.ID+"/stream", map[string]string{"Authorization": "Bearer " + ada.token})
	defer stop()
	if e := nextEvent(t, "the challenge", stream); e.name != "duel" || e.id != "1" {
		t.Fatalf("first event: %+v", e)
	}

	race := func(servers []*testServer, rqs []req) []*response {
		var wg sync.WaitGroup
		out := make([]*response, len(rqs))
		for i := range rqs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = servers[i].do(t, rqs[i])
			}()
		}
		wg.Wait()
		return out
	}
	accept := req{method: "POST", path: "/v1/duels/" + duel.ID + "/accept", token: bob.token}
	accepted, refused := 0, 0
	for _, r := range race([]*testServer{a, b}, []req{accept, accept}) {
		switch {
		case r.status == http.StatusOK:
			accepted++
		case r.status == http.StatusConflict && r.problem(t).Code == "duel_state":
			refused++
		default:
			t.Errorf("accept: %d %s", r.status, r.body)
		}
	}
	if accepted != 1 || refused != 1 {
		t.Fatalf("%d accepts succeeded and %d were refused; want one each", accepted, refused)
	}
	if e := nextEvent(t, "the accept", stream); e.id != "2" || !strings.Contains(e.data, `"state":"active"`) {
		t.Fatalf("after the accept: %+v", e)
	}

	path := "/v1/duels/" + duel.ID + "/design"
	for _, r := range race([]*testServer{a, b}, []req{
		{method: "POST", path: path, token: ada.token, body: map[string]any{"design": json.RawMessage(pass)}},
		{method: "POST", path: path, token: bob.token, body: map[string]any{"design": json.RawMessage(fail)}},
	}) {
		if r.status != http.StatusOK {
			t.Errorf("design: %d %s", r.status, r.body)
		}
	}
	var last sseEvent
	for last.id != "5" {
		last = nextEvent(t, "the designs and the result", stream)
	}
	if !strings.Contains(last.data, `"state":"finished"`) || !strings.Contains(last.data, `"surprise_chaos":[{"id":"surprise"`) {
		t.Errorf("the last event: %.300s", last.data)
	}
	for _, s := range []*testServer{a, b} {
		var got struct {
			State  string `json:"state"`
			Result struct {
				Winner  string           `json:"winner"`
				Ratings []map[string]any `json:"ratings"`
			} `json:"result"`
		}
		s.must(t, http.StatusOK, req{method: "GET", path: "/v1/duels/" + duel.ID}, &got)
		if got.State != "finished" || got.Result.Winner != ada.ID || len(got.Result.Ratings) != 2 {
			t.Errorf("the duel on %s: %+v", s.base, got)
		}
	}
	if n := len(a.logs.records("duel ended")) + len(b.logs.records("duel ended")); n != 1 {
		t.Errorf("%d replicas logged ending the duel, want 1", n)
	}
	var duels int
	if err := a.db(t).QueryRow(t.Context(), `SELECT sum(duels) FROM ratings`).Scan(&duels); err != nil || duels != 2 {
		t.Errorf("ratings count %d duels (%v), want 2 (one each)", duels, err)
	}
	var board struct {
		Total   int              `json:"total"`
		Entries []map[string]any `json:"entries"`
	}
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/ratings"}, &board)
	if board.Total != 2 || board.Entries[0]["player_id"] != ada.ID {
		t.Errorf("ratings board: %+v", board)
	}
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/" + ada.ID}, nil)
}
