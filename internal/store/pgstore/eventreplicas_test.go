package pgstore_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// Two stores on one database (two replicas) take a crowd's attempts at one
// event concurrently, with tiny buckets so that they split under the race;
// then every page of the standings, live and final, around every entrant
// too, is byte for byte the same JSON from either.
func TestEventStandingsAgreeAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	var replicas [2]*pgstore.Store
	for i := range replicas {
		s, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		pgstore.SetBucketSize(s, 3)
		replicas[i] = s
	}
	t.Cleanup(func() { checkEventBuckets(t, replicas[0], 3) })
	a := replicas[0]
	if _, _, err := a.PutLevel(ctx, game.Level{Slug: "replicated", ContentHash: "h", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	e, err := a.CreateEvent(ctx, game.Event{ID: uuid.Must(uuid.NewV7()), Slug: "replicated", Version: 1, Title: "Two",
		StartsAt: t0, EndsAt: t0.Add(time.Hour), Final: game.FinalBest, HiddenChaos: json.RawMessage(`[]`), CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	const players, each = 30, 4
	ids := make([]uuid.UUID, players)
	for i := range ids {
		_, hash := game.NewToken()
		p, err := a.CreatePlayer(ctx, fmt.Sprintf("r%02d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.ID
	}
	rng := rand.New(rand.NewPCG(2, 2))
	var wg sync.WaitGroup
	for i := range players * each {
		sub := game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: ids[i%players],
			Design: json.RawMessage(`{}`), Passed: rng.IntN(5) > 0, Score: int64(10 * rng.IntN(4)),
			CreatedAt: t0.Add(time.Duration(rng.IntN(60)) * time.Second)}
		s := replicas[i%2]
		wg.Go(func() {
			if _, err := s.CreateEventSubmission(ctx, sub); err != nil {
				t.Errorf("attempt: %v", err)
			}
		})
	}
	wg.Wait()
	// Each replica's announcer numbers what it committed within its delay;
	// the pages compared carry the number of the latest change.
	if _, err := a.AnnounceEvents(ctx); err != nil {
		t.Fatal(err)
	}
	agree := func(phase string) {
		t.Helper()
		queries := []game.EventStandingsQuery{{Limit: 100}}
		for _, id := range ids {
			queries = append(queries, game.EventStandingsQuery{Limit: 5, AroundPlayer: &id})
		}
		for q := (game.EventStandingsQuery{Limit: 4}); ; {
			queries = append(queries, q)
			page, err := a.EventStandingsPage(ctx, e.ID, q)
			if err != nil {
				t.Fatal(err)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		for _, q := range queries {
			var got [2][]byte
			for i, s := range replicas {
				page, err := s.EventStandingsPage(ctx, e.ID, q)
				if err != nil {
					t.Fatal(err)
				}
				if got[i], err = json.Marshal(page); err != nil {
					t.Fatal(err)
				}
			}
			if string(got[0]) != string(got[1]) {
				t.Errorf("%s, %+v: replicas differ\n%s\n%s", phase, q, got[0], got[1])
			}
		}
	}
	agree("live")
	finals, err := a.EventFinals(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var results []game.EventResult
	for _, f := range finals {
		results = append(results, game.EventResult{PlayerID: f.PlayerID, SubmissionID: f.ID, Passed: f.Passed, Score: f.Score, Result: json.RawMessage(`{}`)})
	}
	if ok, err := replicas[1].FinishEvent(ctx, e.ID, results, t0.Add(time.Hour)); !ok || err != nil {
		t.Fatalf("FinishEvent: %v, %v", ok, err)
	}
	agree("final")
}
