package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestTwoServersOneDatabase runs two server processes on loopback sharing
// one database, fires concurrent submissions from many players at both, and
// checks that both serve the same leaderboard, equal to one computed by
// brute force from the submissions: no lost or duplicated entries, and
// ranks agree.
func TestTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	a := startServerProcess(t, maps.Clone(env))
	b := startServerProcess(t, maps.Clone(env))
	servers := []*testServer{a, b}

	const players, perPlayer = 24, 4
	var ps []player
	for i := range players {
		ps = append(ps, servers[i%2].newPlayer(t, fmt.Sprintf("racer%02d", i)))
	}

	type job struct {
		p        player
		server   *testServer
		replicas int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var jobs []job
	for _, p := range ps {
		for range perPlayer {
			// 1 fails, 2 and 3 pass with different scores: many ties.
			jobs = append(jobs, job{p, servers[rng.IntN(2)], 1 + rng.IntN(3)})
		}
	}
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })

	results := make([]submitResult, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := j.server.send(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: j.p.token,
				body: map[string]any{"design": design(j.replicas)}})
			if r.status != http.StatusCreated {
				t.Errorf("submission: %d %s", r.status, r.body)
				return
			}
			r.decode(t, &results[i])
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Brute force: each player's best is their highest passing score,
	// reached earliest (by the submission's time, whatever order the
	// player's concurrent submissions committed in). That submission's
	// response must say it improved the player's best: either it was
	// stored first, or it replaced a later equal score.
	type best struct {
		score    int64
		at       time.Time
		sub      string
		improved bool
	}
	bests := map[string]best{}
	names := map[string]string{}
	ids := map[string]bool{}
	for _, r := range results {
		sub := r.Submission
		if ids[sub.ID] {
			t.Errorf("submission %s returned twice", sub.ID)
		}
		ids[sub.ID] = true
		names[sub.PlayerID] = sub.PlayerName
		if !sub.Passed {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, sub.CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := bests[sub.PlayerID]
		if !ok || sub.Score > b.score || (sub.Score == b.score && at.Before(b.at)) {
			bests[sub.PlayerID] = best{sub.Score, at, sub.ID, r.Improved}
		}
	}
	for id, b := range bests {
		if !b.improved {
			t.Errorf("player %s: the submission that reached their best first (%s) did not report improved", names[id], b.sub)
		}
	}
	var want []entry
	for id, bst := range bests {
		want = append(want, entry{PlayerID: id, PlayerName: names[id], Score: bst.score,
			AchievedAt: bst.at.UTC().Format(time.RFC3339Nano), SubmissionID: bst.sub})
	}
	sort.Slice(want, func(i, j int) bool {
		x, y := want[i], want[j]
		if x.Score != y.Score {
			return x.Score > y.Score
		}
		if ax, ay := bests[x.PlayerID].at, bests[y.PlayerID].at; !ax.Equal(ay) {
			return ax.Before(ay)
		}
		return x.PlayerID < y.PlayerID
	})
	for i := range want {
		want[i].Rank = int64(i + 1)
	}
	if len(want) < players/2 {
		t.Fatalf("only %d players passed; the test needs more", len(want))
	}

	if n := a.count(t, "submissions"); n != len(jobs) {
		t.Errorf("%d submissions stored, want %d", n, len(jobs))
	}
	normalise := func(es []entry) []entry {
		for i := range es {
			at, err := time.Parse(time.RFC3339Nano, es[i].AchievedAt)
			if err != nil {
				t.Fatal(err)
			}
			es[i].AchievedAt = at.UTC().Format(time.RFC3339Nano)
		}
		return es
	}
	for _, s := range servers {
		got := normalise(s.wholeBoard(t, tutorial, 7))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("board on %s (-brute force +served):\n%s", s.base, diff)
		}
		global := normalise(s.wholeBoard(t, "", 5))
		if diff := cmp.Diff(want, global); diff != "" {
			t.Errorf("global board on %s (-brute force +served):\n%s", s.base, diff)
		}
	}
	// Each player's page around them shows the same rank on both servers.
	for _, p := range ps {
		wantRank := int64(0)
		for _, e := range want {
			if e.PlayerID == p.ID {
				wantRank = e.Rank
			}
		}
		for _, s := range servers {
			r := s.do(t, req{method: "GET", path: boardPath(tutorial, url.Values{"around": {"me"}, "limit": {"5"}}), token: p.token})
			if wantRank == 0 {
				if r.status != 404 {
					t.Errorf("%s is on no board, around=me: %d", p.Name, r.status)
				}
				continue
			}
			var page boardPage
			r.decode(t, &page)
			found := false
			for _, e := range page.Entries {
				if e.PlayerID == p.ID {
					found = true
					if e.Rank != wantRank {
						t.Errorf("%s on %s: rank %d, want %d", p.Name, s.base, e.Rank, wantRank)
					}
				}
			}
			if !found {
				t.Errorf("%s not on their own around=me page on %s", p.Name, s.base)
			}
		}
	}
}
