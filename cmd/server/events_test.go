package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventFinishedOnceAcrossReplicas runs two server processes on one
// database. An event scheduled through one ends; its finish job is made to
// look taken by a replica that then died mid-finish (running, attempted,
// nothing written); river rescues it and one of the live replicas
// finishes the event: the final standings are written once, both replicas
// serve them, and the hidden chaos is published.
func TestEventFinishedOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["EVENT_FINISH_TIMEOUT"] = "3s"
	a := startServerProcess(t, maps.Clone(env))
	b := startServerProcess(t, maps.Clone(env))

	// The entrants exist before the event opens, and it stays open long enough for both
	// attempts on a loaded machine (under -race beside the rest of the suite, a 3 s window
	// closed before the second one was in).
	players := []player{a.newPlayer(t, "entrant-a"), b.newPlayer(t, "entrant-b")}
	start := time.Now().Add(2 * time.Second)
	var ev struct {
		ID string `json:"id"`
	}
	a.must(t, http.StatusCreated, req{method: "POST", path: "/v1/events", token: a.adminToken, body: map[string]any{
		"level": tutorial, "title": "Vanishing act", "starts_at": start, "ends_at": start.Add(10 * time.Second),
		"hidden_chaos": []any{map[string]any{"kind": "traffic_spike", "at_sec": 30, "duration_sec": 40, "params": map[string]any{"multiplier": 3}}},
		"resilience":   map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	}}, &ev)
	// Before anyone can work it: the job is "running" on a worker that
	// will never finish it. (River's scheduler may already have made a job
	// due within a few seconds "available"; no worker takes it before its
	// time, the event's end.)
	tag, err := a.db(t).Exec(t.Context(), `
		UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = '{dead-replica}'
		WHERE kind = 'finish_event' AND args->>'event_id' = $1 AND state IN ('scheduled', 'available')`, ev.ID)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("taking the finish job for a dead replica: %v, %v", tag, err)
	}
	var jobs int
	if err := a.db(t).QueryRow(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'finish_event' AND args->>'event_id' = $1`, ev.ID).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("%d finish jobs (%v), want exactly 1 though both replicas scheduled unfinished events at start", jobs, err)
	}

	// B streams the standings of the event, whose attempts go through both.
	stream := b.openEventStream(t, ev.ID)
	if e := nextEvent(t, "snapshot", stream); e.name != "standings" || e.id != "0" {
		t.Fatalf("first event of the event stream: %+v", e)
	}

	time.Sleep(time.Until(start))
	for i, p := range players {
		s := []*testServer{a, b}[i]
		s.must(t, http.StatusCreated, req{method: "POST", path: "/v1/events/" + ev.ID + "/submissions", token: p.token,
			body: map[string]any{"design": design(2 + i)}}, nil)
		e := nextEvent(t, "attempt", stream)
		var c struct {
			Seq      int64 `json:"seq"`
			Kind     string
			Standing struct {
				PlayerName string `json:"player_name"`
				Rank       int64  `json:"rank"`
			}
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil || e.name != "change" || c.Seq != int64(i+1) ||
			c.Kind != "attempt" || c.Standing.PlayerName != p.Name || c.Standing.Rank < 1 {
			t.Errorf("attempt %d on the other replica's stream: %+v (%v)", i, e, err)
		}
	}

	deadline := time.Now().Add(120 * time.Second)
	for {
		var got struct {
			Phase       string `json:"phase"`
			HiddenChaos []any  `json:"hidden_chaos"`
		}
		b.must(t, http.StatusOK, req{method: "GET", path: "/v1/events/" + ev.ID}, &got)
		if got.Phase == "finished" {
			if len(got.HiddenChaos) != 1 {
				t.Errorf("finished event's hidden chaos: %v", got.HiddenChaos)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the event was not finished within 120 s (phase %s)", got.Phase)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if e := nextEvent(t, "final", stream); e.name != "change" || !strings.Contains(e.data, `"kind":"final"`) || e.id != "3" {
		t.Errorf("after the finish, the stream sent %+v, want change 3 of kind final", e)
	}
	// River records the job's completion just after the finish commits.
	var state string
	var attempt int
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := a.db(t).QueryRow(t.Context(), `SELECT state, attempt FROM river_job WHERE kind = 'finish_event' AND args->>'event_id' = $1`,
			ev.ID).Scan(&state, &attempt)
		if err != nil {
			t.Fatal(err)
		}
		if state == "completed" || time.Now().After(end) {
			break
		}
	}
	if state != "completed" || attempt < 2 {
		t.Errorf("finish job: %s, attempt %d; want completed on an attempt after the dead one", state, attempt)
	}
	if n := a.count(t, "event_results"); n != len(players) {
		t.Errorf("%d final results stored, want %d", n, len(players))
	}
	finished := len(a.logs.records("event finished")) + len(b.logs.records("event finished"))
	if finished != 1 {
		t.Errorf("%d replicas logged finishing the event, want 1", finished)
	}
	for _, s := range []*testServer{a, b} {
		var standings struct {
			Final   bool             `json:"final"`
			Entries []map[string]any `json:"entries"`
		}
		s.must(t, http.StatusOK, req{method: "GET", path: "/v1/events/" + ev.ID + "/standings"}, &standings)
		if !standings.Final || len(standings.Entries) != len(players) {
			t.Errorf("standings on %s: %+v", s.base, standings)
		}
	}
}
