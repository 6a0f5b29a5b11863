package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

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
	// Two new players rate nobody (game.RateDuel): the board stays empty.
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/ratings"}, &board)
	if board.Total != 0 || len(board.Entries) != 0 {
		t.Errorf("ratings board: %+v", board)
	}
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/" + ada.ID}, nil)
}

// TestDuelDeadlineJobs: with PostgreSQL the deadlines are river jobs, one
// per duel and deadline: an unanswered challenge expires, and a duel with
// one design in is forfeited to it, each by the server's clock.
func TestDuelDeadlineJobs(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["DUEL_CHALLENGE_TTL"] = "2s"
	env["DUEL_SUBMIT_WINDOW"] = "3s"
	s := startServer(t, env)
	ada, bob := s.newPlayer(t, "ada"), s.newPlayer(t, "bob")
	challenge := func() string {
		var d struct {
			ID string `json:"id"`
		}
		s.must(t, http.StatusCreated, req{method: "POST", path: "/v1/duels", token: ada.token,
			body: map[string]any{"level": tutorial, "opponent": bob.ID}}, &d)
		return d.ID
	}
	type ended struct {
		State  string `json:"state"`
		Result *struct {
			Winner *string `json:"winner"`
			Reason string  `json:"reason"`
		} `json:"result"`
	}
	waitEnd := func(id string) ended {
		deadline := time.Now().Add(90 * time.Second)
		for {
			var got ended
			s.must(t, http.StatusOK, req{method: "GET", path: "/v1/duels/" + id, token: ada.token}, &got)
			if got.Result != nil || time.Now().After(deadline) {
				return got
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	unanswered := challenge()
	if got := waitEnd(unanswered); got.State != "expired" || got.Result == nil || got.Result.Reason != "unanswered" {
		t.Errorf("an unanswered challenge: %+v", got)
	}

	forfeit := challenge()
	s.must(t, http.StatusOK, req{method: "POST", path: "/v1/duels/" + forfeit + "/accept", token: bob.token}, nil)
	s.must(t, http.StatusOK, req{method: "POST", path: "/v1/duels/" + forfeit + "/design", token: ada.token,
		body: map[string]any{"design": design(2)}}, nil)
	got := waitEnd(forfeit)
	if got.State != "forfeited" || got.Result == nil || got.Result.Winner == nil || *got.Result.Winner != ada.ID {
		t.Errorf("a duel bob never submitted to: %+v", got)
	}
	var jobs int
	if err := s.db(t).QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'settle_duel' AND args->>'duel_id' = $1`,
		forfeit).Scan(&jobs); err != nil || jobs != 2 {
		t.Errorf("%d settle jobs for the forfeited duel (%v), want 2 (accept_by, submit_by)", jobs, err)
	}
}
