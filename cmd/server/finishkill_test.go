package main

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/api"
	"backpressure/internal/rules"
	"backpressure/internal/store/pgstore"
)

// finishKillEntrants is how many entrants the event of
// TestEventFinishSurvivesKill has: enough that its final runs take a few
// seconds on one simulation worker (the race detector makes each run
// several times slower, so fewer do), and at least three batches of
// stored runs.
var finishKillEntrants = map[bool]int{false: 200, true: 75}[raceEnabled]

// TestEventFinishSurvivesKill runs two server processes on one database
// and an event with finishKillEntrants entrants. When the database shows
// that a replica is finishing it (its river job running, some final runs
// stored, not all), that replica is killed with SIGKILL. The other one
// finishes the event exactly once: every entrant has one final result,
// ranks run 1..N, the survivor alone logged the finish, the final runs the
// dead replica stored were used and not run again, and the results are
// byte for byte what running every final design again from nothing gives.
func TestEventFinishSurvivesKill(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["EVENT_FINISH_TIMEOUT"] = "6s"
	a := startServerProcess(t, maps.Clone(env))
	b := startServerProcess(t, maps.Clone(env))
	servers := []*testServer{a, b}

	players := make([]player, finishKillEntrants)
	for i := range players {
		players[i] = servers[i%2].newPlayer(t, fmt.Sprintf("finisher-%03d", i))
	}
	start := time.Now().Add(2 * time.Second)
	end := start.Add(30 * time.Second)
	var ev struct {
		ID string `json:"id"`
	}
	a.must(t, http.StatusCreated, req{method: "POST", path: "/v1/events", token: a.adminToken, body: map[string]any{
		"level": tutorial, "title": "Kill switch", "starts_at": start, "ends_at": end,
		"hidden_chaos": []any{map[string]any{"kind": "traffic_spike", "at_sec": 30, "duration_sec": 40, "params": map[string]any{"multiplier": 3}}},
		"resilience":   map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	}}, &ev)
	time.Sleep(time.Until(start))
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				// Designs of 1 to 4 replicas: some pass the hidden
				// spike, some do not.
				servers[i%2].must(t, http.StatusCreated, req{method: "POST", path: "/v1/events/" + ev.ID + "/submissions",
					token: players[i].token, body: map[string]any{"design": design(1 + i%4)}}, nil)
			}
		})
	}
	for i := range players {
		work <- i
	}
	close(work)
	wg.Wait()
	if time.Now().After(end) {
		t.Fatalf("the entrants' submissions took past the event's end; make the window longer")
	}
	db := a.db(t)

	// Watch the database for the finish: the job running on a replica,
	// some final runs stored and not all.
	pidOf := regexp.MustCompile(`-pid(\d+)-`)
	var victim *testServer
	var storedAtKill int
	for deadline := time.Now().Add(end.Sub(time.Now()) + 60*time.Second); victim == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no replica was seen finishing the event mid-way")
		}
		var state string
		var by []string
		var stored int
		err := db.QueryRow(t.Context(), `
			SELECT j.state, j.attempted_by, (SELECT count(*) FROM event_final_runs r WHERE r.event_id::text = $1)
			FROM river_job j WHERE j.kind = 'finish_event' AND j.args->>'event_id' = $1`, ev.ID).Scan(&state, &by, &stored)
		if err != nil {
			t.Fatal(err)
		}
		if state != "running" || stored == 0 || len(by) == 0 {
			continue
		}
		if stored >= finishKillEntrants {
			t.Fatalf("every final run was stored before the kill could happen (%d): make the finish longer", stored)
		}
		m := pidOf.FindStringSubmatch(by[len(by)-1])
		if m == nil {
			t.Fatalf("river_job.attempted_by %v names no process", by)
		}
		pid, _ := strconv.Atoi(m[1])
		for _, s := range servers {
			if s.pid == pid {
				victim, storedAtKill = s, stored
			}
		}
		if victim == nil {
			t.Fatalf("the job is held by process %d, neither replica (%d, %d)", pid, a.pid, b.pid)
		}
		victim.kill(t)
		<-victim.done // the process is gone
		close(victim.done)
	}
	survivor := a
	if victim == a {
		survivor = b
	}
	var stored int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM event_final_runs WHERE event_id = $1`, ev.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	var finished int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM events WHERE id = $1 AND finished_at IS NOT NULL`, ev.ID).Scan(&finished); err != nil {
		t.Fatal(err)
	}
	if stored < storedAtKill || stored >= finishKillEntrants || finished != 0 || survivor.count(t, "event_results") != 0 {
		t.Fatalf("after the kill: %d final runs stored (%d seen before it), finished %d, %d results; want a partial finish",
			stored, storedAtKill, finished, survivor.count(t, "event_results"))
	}
	t.Logf("killed the finishing replica (pid %d) with %d of %d final runs stored", victim.pid, stored, finishKillEntrants)
	// What the dead replica stored, to check it is reused, not run again.
	before := finalRunRows(t, db, `SELECT player_id, submission_id, passed, score, result::text FROM event_final_runs WHERE event_id = $1`, ev.ID)

	for deadline := time.Now().Add(180 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		var got struct {
			Phase string `json:"phase"`
		}
		survivor.must(t, http.StatusOK, req{method: "GET", path: "/v1/events/" + ev.ID}, &got)
		if got.Phase == "finished" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the survivor did not finish the event within 180 s (phase %s)", got.Phase)
		}
	}
	results := finalRunRows(t, db, `SELECT player_id, submission_id, passed, score, result::text FROM event_results WHERE event_id = $1 ORDER BY rank`, ev.ID)
	if len(results) != finishKillEntrants {
		t.Errorf("%d final results, want one for each of the %d entrants", len(results), finishKillEntrants)
	}
	seen := map[uuid.UUID]bool{}
	for _, r := range results {
		if seen[r.player] {
			t.Errorf("entrant %s has two results", r.player)
		}
		seen[r.player] = true
	}
	var maxRank, distinctRanks int
	if err := db.QueryRow(t.Context(), `SELECT max(rank), count(DISTINCT rank) FROM event_results WHERE event_id = $1`, ev.ID).Scan(&maxRank, &distinctRanks); err != nil {
		t.Fatal(err)
	}
	if maxRank != finishKillEntrants || distinctRanks != finishKillEntrants {
		t.Errorf("ranks: max %d, %d distinct; want 1..%d", maxRank, distinctRanks, finishKillEntrants)
	}
	if n := survivor.count(t, "event_final_runs"); n != 0 {
		t.Errorf("%d final runs left after the finish, want none (they are the results now)", n)
	}
	byPlayer := map[uuid.UUID]finalRunRow{}
	for _, r := range results {
		byPlayer[r.player] = r
	}
	for _, r := range before {
		if got := byPlayer[r.player]; got != r {
			t.Errorf("the dead replica's final run of %s is not the stored result: %+v, then %+v", r.player, r, got)
		}
	}
	if n := len(survivor.logs.records("event finished")); n != 1 {
		t.Errorf("the survivor logged %d finishes, want 1", n)
	}
	if n := len(victim.logs.records("event finished")); n != 0 {
		t.Errorf("the killed replica logged %d finishes", n)
	}
	var state string
	var attempt int
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := db.QueryRow(t.Context(), `SELECT state, attempt FROM river_job WHERE kind = 'finish_event' AND args->>'event_id' = $1`,
			ev.ID).Scan(&state, &attempt); err != nil {
			t.Fatal(err)
		}
		if state == "completed" || time.Now().After(end) {
			break
		}
	}
	if state != "completed" || attempt < 2 {
		t.Errorf("finish job: %s, attempt %d; want completed after the killed attempt", state, attempt)
	}

	// Byte for byte what a re-run from nothing gives.
	st, err := pgstore.Open(t.Context(), env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again, err := rules.New(rules.Deps{Store: st, Config: api.Config{SimWorkers: 2}.Rules()}).EventFinisher().Recompute(t.Context(), uuid.MustParse(ev.ID))
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(results) {
		t.Fatalf("a re-run gives %d results, the finish stored %d", len(again), len(results))
	}
	for i, r := range again {
		got := results[i]
		want := finalRunRow{player: r.PlayerID, submission: r.SubmissionID, passed: r.Passed, score: r.Score, result: string(r.Result)}
		if got != want {
			t.Errorf("rank %d: stored %s %s %v %d, a re-run gives %s %s %v %d (results equal: %v)", i+1,
				got.player, got.submission, got.passed, got.score, want.player, want.submission, want.passed, want.score,
				bytes.Equal([]byte(got.result), r.Result))
		}
	}

	// Both the survivor's standings and an entrant's page show it.
	var standings struct {
		Final   bool `json:"final"`
		Total   int  `json:"total"`
		Entries []struct {
			PlayerID string `json:"player_id"`
			Rank     int64  `json:"rank"`
		} `json:"entries"`
	}
	survivor.must(t, http.StatusOK, req{method: "GET", path: "/v1/events/" + ev.ID + "/standings"}, &standings)
	if !standings.Final || standings.Total != finishKillEntrants {
		t.Errorf("standings: final %v, total %d", standings.Final, standings.Total)
	}
	var profile struct {
		Events []struct {
			EventID string `json:"event_id"`
			Rank    int64  `json:"rank"`
			Total   int64  `json:"total"`
		} `json:"events"`
	}
	top := standings.Entries[0]
	survivor.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/" + top.PlayerID}, &profile)
	if len(profile.Events) != 1 || profile.Events[0].EventID != ev.ID || profile.Events[0].Rank != 1 || profile.Events[0].Total != int64(finishKillEntrants) {
		t.Errorf("the winner's page: %+v", profile.Events)
	}
}

type finalRunRow struct {
	player, submission uuid.UUID
	passed             bool
	score              int64
	result             string
}

func finalRunRows(t *testing.T, db *pgx.Conn, query, id string) []finalRunRow {
	t.Helper()
	rows, err := db.Query(t.Context(), query, id)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (finalRunRow, error) {
		var r finalRunRow
		err := row.Scan(&r.player, &r.submission, &r.passed, &r.score, &r.result)
		return r, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
