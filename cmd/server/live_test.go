package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/challenges"
)

type sseEvent struct {
	name, id, data string
	at             time.Time
}

// openStream follows a level's board stream on s; stop ends it.
func (s *testServer) openStream(t *testing.T, slug string, header map[string]string) (events <-chan sseEvent, stop func()) {
	t.Helper()
	return s.openSSE(t, "/v1/challenges/"+slug+"/leaderboard/stream", header)
}

// openEventStream follows an event's standings on s.
func (s *testServer) openEventStream(t *testing.T, id string) <-chan sseEvent {
	t.Helper()
	events, _ := s.openSSE(t, "/v1/events/"+id+"/stream", nil)
	return events
}

func (s *testServer) openSSE(t *testing.T, path string, header map[string]string) (events <-chan sseEvent, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.base+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("stream on %s: %d %s", s.base, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 256)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && e.name != "":
				e.at = time.Now()
				out <- e
				e = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				e.name = line[7:]
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
	}()
	t.Cleanup(cancel)
	return out, cancel
}

func nextEvent(t *testing.T, what string, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatalf("%s: the stream ended", what)
		}
		return e
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no event within 30 s", what)
	}
	return sseEvent{}
}

type boardChange struct {
	Version      int64  `json:"version"`
	Seq          int64  `json:"seq"`
	PlayerID     string `json:"player_id"`
	PlayerName   string `json:"player_name"`
	Score        int64  `json:"score"`
	Rank         int64  `json:"rank"`
	PreviousRank int64  `json:"previous_rank"`
	AchievedAt   string `json:"achieved_at"`
	SubmissionID string `json:"submission_id"`
	Total        int64  `json:"total"`
}

func decodeChange(t *testing.T, e sseEvent) boardChange {
	t.Helper()
	var c boardChange
	if e.name != "change" {
		t.Fatalf("event %q (%s), want a change", e.name, e.data)
	}
	if err := json.Unmarshal([]byte(e.data), &c); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d-%d", c.Version, c.Seq); e.id != want {
		t.Errorf("change %d has id %q, want %q", c.Seq, e.id, want)
	}
	return c
}

// applyChange moves c's player to c.Rank on board, as a stream client does.
func applyChange(board []entry, c boardChange) []entry {
	for i, e := range board {
		if e.PlayerID == c.PlayerID {
			board = append(board[:i:i], board[i+1:]...)
			break
		}
	}
	e := entry{PlayerID: c.PlayerID, PlayerName: c.PlayerName, Score: c.Score, AchievedAt: c.AchievedAt, SubmissionID: c.SubmissionID}
	board = append(board[:c.Rank-1:c.Rank-1], append([]entry{e}, board[c.Rank-1:]...)...)
	for i := range board {
		board[i].Rank = int64(i + 1)
	}
	return board
}

// TestLiveStandingsAcrossReplicas runs two server processes on one
// database: a submission stored through either reaches the streams of
// both, in the same order with the same ranks, and applying the changes to
// the snapshot gives the board that both serve. A client that disconnects
// and reconnects to the other replica with Last-Event-ID gets exactly what
// it missed.
func TestLiveStandingsAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	a := startServerProcess(t, maps.Clone(env))
	b := startServerProcess(t, maps.Clone(env))
	servers := []*testServer{a, b}

	var streams []<-chan sseEvent
	var boards [][]entry
	for _, s := range servers {
		events, _ := s.openStream(t, tutorial, nil)
		snap := nextEvent(t, "snapshot", events)
		var page struct {
			Entries []entry `json:"entries"`
			Seq     int64   `json:"seq"`
		}
		want := fmt.Sprintf("%d-0", tutorialVersion(t)) // the board of the level's current version, from its start
		if err := json.Unmarshal([]byte(snap.data), &page); err != nil || snap.name != "snapshot" || snap.id != want || page.Seq != 0 {
			t.Fatalf("first event on %s: %+v (%v), want the snapshot %s", s.base, snap, err, want)
		}
		streams = append(streams, events)
		boards = append(boards, page.Entries)
	}

	var ps []player
	for i := range 4 {
		ps = append(ps, servers[i%2].newPlayer(t, fmt.Sprintf("watcher%d", i)))
	}
	steps := []struct{ player, server, replicas int }{
		{0, 0, 2}, {1, 1, 3}, {2, 0, 3}, {0, 1, 3}, {3, 1, 2}, {1, 0, 2},
	}
	var seq int64
	var delays []time.Duration
	for i, st := range steps {
		var res submitResult
		via := servers[st.server]
		via.must(t, http.StatusCreated, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions",
			token: ps[st.player].token, body: map[string]any{"design": design(st.replicas)}}, &res)
		stored := time.Now()
		if !res.Improved {
			continue
		}
		seq++
		for j, events := range streams {
			e := nextEvent(t, fmt.Sprintf("step %d on %s", i, servers[j].base), events)
			c := decodeChange(t, e)
			if c.Seq != seq || c.SubmissionID != res.Submission.ID || res.Rank == nil || c.Rank != *res.Rank {
				t.Fatalf("step %d on %s: change %+v, want change %d of submission %s at rank %v", i, servers[j].base, c, seq, res.Submission.ID, res.Rank)
			}
			boards[j] = applyChange(boards[j], c)
			if j != st.server {
				// Negative when the event beat the response.
				delays = append(delays, e.at.Sub(stored).Round(time.Microsecond))
			}
		}
	}
	if seq < 3 {
		t.Fatalf("only %d changes; the test needs more", seq)
	}
	t.Logf("acknowledged by one replica to received from the other: %v", delays)
	for j, s := range servers {
		served := s.wholeBoard(t, tutorial, 100)
		for i := range served {
			served[i].AchievedAt = boards[j][i].AchievedAt // the same instant, formatted by two encoders
		}
		if diff := cmp.Diff(served, boards[j]); diff != "" {
			t.Errorf("board served by %s vs the stream's snapshot and changes (-served +streamed):\n%s", s.base, diff)
		}
	}

	// Resume: leave a, miss a change, come back on b.
	_, leave := a.openStream(t, tutorial, map[string]string{"Last-Event-ID": fmt.Sprintf("%d-%d", tutorialVersion(t), seq)})
	leave()
	missed := a.newPlayer(t, "latecomer")
	var res submitResult
	a.must(t, http.StatusCreated, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions",
		token: missed.token, body: map[string]any{"design": design(3)}}, &res)
	if !res.Improved {
		t.Fatal("the latecomer's first pass did not improve their best")
	}
	events, _ := b.openStream(t, tutorial, map[string]string{"Last-Event-ID": fmt.Sprintf("%d-%d", tutorialVersion(t), seq)})
	if c := decodeChange(t, nextEvent(t, "resumed", events)); c.Seq != seq+1 || c.SubmissionID != res.Submission.ID {
		t.Errorf("resumed on the other replica: %+v, want change %d of the missed submission", c, seq+1)
	}
}

// tutorialVersion is the built-in tutorial level's version: its file's.
func tutorialVersion(t *testing.T) int {
	t.Helper()
	l, err := challenges.CampaignLevel(tutorial)
	if err != nil {
		t.Fatal(err)
	}
	return l.Version
}
