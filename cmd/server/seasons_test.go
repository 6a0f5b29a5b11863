package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"testing"
	"time"
)

// TestSeasonsAPI runs two replicas on one database with a weekly schedule:
// both store the current week and the next at start (once: the database
// refuses overlaps), submissions through either count on the week's board,
// which both serve with the same exact ranks, cursors and around=me, and a
// player's page lists their season.
func TestSeasonsAPI(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["SEASON_SCHEDULE"] = "weekly"
	a := startServer(t, maps.Clone(env))
	b := startServer(t, maps.Clone(env))

	var list struct {
		Seasons []struct {
			ID       string    `json:"id"`
			Name     string    `json:"name"`
			StartsAt time.Time `json:"starts_at"`
			EndsAt   time.Time `json:"ends_at"`
			Current  bool      `json:"current"`
		} `json:"seasons"`
	}
	resp := b.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons"}, &list)
	t.Logf("GET /v1/seasons: %s", resp.body)
	if len(list.Seasons) != 2 || !list.Seasons[1].Current || list.Seasons[0].Current ||
		!list.Seasons[0].StartsAt.Equal(list.Seasons[1].EndsAt) || list.Seasons[1].EndsAt.Sub(list.Seasons[1].StartsAt) != 7*24*time.Hour {
		t.Fatalf("seasons after two replicas started: %+v; want this week (current) and the next", list.Seasons)
	}
	week := list.Seasons[1].ID
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week}, nil)

	ps := []player{a.newPlayer(t, "season-one"), b.newPlayer(t, "season-two"), a.newPlayer(t, "season-three")}
	for i, p := range ps {
		s := []*testServer{a, b}[i%2]
		for _, replicas := range []int{2, 2 + i} {
			s.must(t, http.StatusCreated, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: p.token,
				body: map[string]any{"design": design(replicas)}}, nil)
		}
	}
	type page struct {
		Season  string `json:"season"`
		Total   int64  `json:"total"`
		Next    string `json:"next"`
		Entries []struct {
			Rank       int64  `json:"rank"`
			PlayerName string `json:"player_name"`
			Score      int64  `json:"score"`
		} `json:"entries"`
	}
	var global page
	a.must(t, http.StatusOK, req{method: "GET", path: "/v1/leaderboard"}, &global)
	var onA, onB page
	resp = a.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard"}, &onA)
	t.Logf("GET /v1/seasons/%s/leaderboard: %s", week, resp.body)
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard"}, &onB)
	if onA.Season != week || onA.Total != 3 || len(onA.Entries) != 3 {
		t.Fatalf("season board: %+v", onA)
	}
	for i, e := range onA.Entries {
		// One level played: the season board is the global board.
		if e.Rank != int64(i+1) || e != onB.Entries[i] || e != global.Entries[i] {
			t.Errorf("entry %d: %+v on A, %+v on B, %+v on the global board", i, e, onB.Entries[i], global.Entries[i])
		}
	}
	var first, second page
	a.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard?limit=2"}, &first)
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard?limit=2&cursor=" + first.Next}, &second)
	if len(first.Entries) != 2 || len(second.Entries) != 1 || second.Entries[0] != onA.Entries[2] {
		t.Errorf("pages of 2: %+v then %+v", first, second)
	}
	var around page
	b.must(t, http.StatusOK, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard?around=me&limit=1", token: ps[1].token}, &around)
	if len(around.Entries) != 1 || around.Entries[0].PlayerName != ps[1].Name {
		t.Errorf("around me: %+v", around)
	}

	var profile struct {
		ID      string `json:"id"`
		Seasons []struct {
			SeasonID string `json:"season_id"`
			Rank     int64  `json:"rank"`
			Score    int64  `json:"score"`
			Total    int64  `json:"total"`
			Current  bool   `json:"current"`
		} `json:"seasons"`
		Events []json.RawMessage `json:"events"`
	}
	resp = b.must(t, http.StatusOK, req{method: "GET", path: "/v1/players/" + ps[1].ID}, &profile)
	t.Logf("GET /v1/players/%s: %s", ps[1].ID, resp.body)
	if profile.ID != ps[1].ID || len(profile.Seasons) != 1 || profile.Seasons[0].SeasonID != week || !profile.Seasons[0].Current ||
		profile.Seasons[0].Total != 3 || profile.Events == nil || len(profile.Events) != 0 {
		t.Errorf("player page: %+v", profile)
	}
	for _, e := range onA.Entries {
		if e.PlayerName == ps[1].Name && (e.Rank != profile.Seasons[0].Rank || e.Score != profile.Seasons[0].Score) {
			t.Errorf("player page says rank %d score %d, the board %+v", profile.Seasons[0].Rank, profile.Seasons[0].Score, e)
		}
	}

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/v1/seasons/1999-W01/leaderboard", http.StatusNotFound},
		{"/v1/seasons/not.an.id", http.StatusNotFound},
		{"/v1/seasons/" + week + "/leaderboard?version=1", http.StatusBadRequest},
		{"/v1/seasons/" + week + "/leaderboard?limit=101", http.StatusBadRequest},
		{"/v1/seasons/" + week + "/leaderboard?around=me", http.StatusUnauthorized},
	} {
		a.must(t, c.status, req{method: "GET", path: c.path}, nil)
	}
	// Not on the board: a 404 that says so.
	outsider := a.newPlayer(t, "season-outsider")
	p := a.must(t, http.StatusNotFound, req{method: "GET", path: "/v1/seasons/" + week + "/leaderboard?around=me", token: outsider.token}, nil).problem(t)
	if p.Detail == "season not found" {
		t.Errorf("around=me for a player not on the board: %+v", p)
	}
}
