package pgstore_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/store/pgstore"
)

// TestEventScale measures an event's standings at BP_EVENT_SCALE entrants
// (a sixth of them joined only), one attempt at a time against the store:
// an attempt (its whole write, the rank from the buckets and the notice),
// the first page and the page around an entrant. It checks the ranks
// against a recount at the end. Seeding takes seconds, so it runs only on
// demand:
//
//	BP_EVENT_SCALE=60000 go test -run TestEventScale -v ./internal/store/pgstore/
func TestEventScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BP_EVENT_SCALE"))
	if n <= 0 {
		t.Skip("set BP_EVENT_SCALE=60000 to measure an event's standings at 60,000 entrants")
	}
	s := open(t, 0)
	ctx := t.Context()
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "crowd", ContentHash: "h", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	e, err := s.CreateEvent(ctx, game.Event{ID: uuid.Must(uuid.NewV7()), Slug: "crowd", Version: 1, Title: "Crowd",
		StartsAt: t0, EndsAt: t0.Add(time.Hour), Final: game.FinalBest, HiddenChaos: json.RawMessage(`[]`), CreatedAt: t0})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Entrants 1..n; every sixth only joined, the rest have one attempt
	// with scores 0..499 (heavy ties), one in ten failed.
	for _, q := range []string{
		`INSERT INTO players (id, name, name_key, role, token_hash, created_at)
		 SELECT md5(i::text)::uuid, 'e' || i, 'e' || i, 'player', sha256(i::text::bytea), now()
		 FROM generate_series(1, $2) i WHERE $1::uuid IS NOT NULL`,
		`INSERT INTO event_submissions (id, event_id, player_id, design, passed, score, created_at)
		 SELECT md5('s' || i)::uuid, $1, md5(i::text)::uuid, '{}', i % 10 <> 0, i % 500,
		        '2026-12-06T12:00:00Z'::timestamptz + (i % 3000) * interval '1 second'
		 FROM generate_series(1, $2) i WHERE i % 6 <> 0`,
		`INSERT INTO event_entrants (event_id, player_id, joined_at, attempts, best_submission_id, best_score, best_at, last_submission_id)
		 SELECT $1, md5(i::text)::uuid, '2026-12-06T12:00:00Z', 0, NULL, NULL, NULL, NULL FROM generate_series(1, $2) i`,
		`UPDATE event_entrants n SET attempts = 1, last_submission_id = s.id,
			best_submission_id = CASE WHEN s.passed THEN s.id END, best_score = CASE WHEN s.passed THEN s.score END,
			best_at = CASE WHEN s.passed THEN s.created_at END
		 FROM event_submissions s WHERE s.event_id = $1 AND n.event_id = $1 AND s.player_id = n.player_id AND $2::int > 0`,
		`UPDATE events SET entrants = $2 WHERE id = $1`,
	} {
		if _, err := pgstore.Pool(s).Exec(ctx, q, e.ID, n); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	if err := s.RebuildEventRanks(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Pool(s).Exec(ctx, `VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d entrants in %v", n, time.Since(start))

	rng := rand.New(rand.NewPCG(6, 12))
	entrant := func() uuid.UUID {
		i := 1 + rng.IntN(n)
		if i%6 == 0 {
			i++ // one with an attempt
		}
		var id uuid.UUID
		if err := pgstore.Pool(s).QueryRow(ctx, `SELECT md5($1::text)::uuid`, strconv.Itoa(i)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	measure := func(what string, runs int, fn func()) {
		t.Helper()
		d := make([]time.Duration, runs)
		for i := range d {
			begin := time.Now()
			fn()
			d[i] = time.Since(begin)
		}
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		t.Logf("%-28s %d runs: mean %v, p50 %v, p99 %v (%.0f/s one at a time)", what, runs, sum/time.Duration(runs),
			d[runs/2], d[runs*99/100], float64(runs)/sum.Seconds())
	}
	ids := make([]uuid.UUID, 300)
	for i := range ids {
		ids[i] = entrant()
	}
	i := 0
	measure("attempt", len(ids), func() {
		sub := game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: ids[i], Design: json.RawMessage(`{}`),
			Passed: true, Score: int64(rng.IntN(600)), CreatedAt: t0.Add(time.Duration(rng.IntN(3_000_000)) * time.Millisecond)}
		i++
		if _, err := s.CreateEventSubmission(ctx, sub); err != nil {
			t.Fatal(err)
		}
	})
	// The store's ceiling per event: 16 attempts in flight at once (the
	// serialised part of each is what bounds it).
	const inFlight, perWorker = 16, 50
	crowd := make([]uuid.UUID, inFlight*perWorker)
	for i := range crowd {
		crowd[i] = entrant()
	}
	begin := time.Now()
	var wg sync.WaitGroup
	for w := range inFlight {
		wg.Go(func() {
			for j := range perWorker {
				sub := game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: crowd[w*perWorker+j],
					Design: json.RawMessage(`{}`), Passed: true, Score: int64(j * 7 % 600), CreatedAt: t0.Add(time.Duration(w*perWorker+j) * time.Millisecond)}
				if _, err := s.CreateEventSubmission(ctx, sub); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%-28s %d attempts, %d in flight: %.0f/s", "concurrent attempts", len(crowd), inFlight, float64(len(crowd))/time.Since(begin).Seconds())
	measure("first page", 200, func() {
		if _, err := s.EventStandingsPage(ctx, e.ID, game.EventStandingsQuery{}); err != nil {
			t.Fatal(err)
		}
	})
	i = 0
	measure("page around an entrant", 200, func() {
		if _, err := s.EventStandingsPage(ctx, e.ID, game.EventStandingsQuery{AroundPlayer: &ids[i]}); err != nil {
			t.Fatal(err)
		}
		i++
	})
	// Exact: the standings' ranks are a recount's.
	var wrong int
	if err := pgstore.Pool(s).QueryRow(ctx, `
		WITH r AS (SELECT player_id, rank_ns, rank_at,
			row_number() OVER (ORDER BY rank_ns, rank_at, player_id) AS rank
			FROM event_entrants WHERE event_id = $1 AND rank_ns IS NOT NULL)
		SELECT count(*) FROM r WHERE player_id = ANY($2) AND rank <> bp_event_rank($1, rank_ns, rank_at, player_id)`,
		e.ID, append(ids, crowd...)).Scan(&wrong); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 {
		t.Errorf("%d of %d ranks differ from a recount", wrong, len(ids)+len(crowd))
	}
	checkEventBuckets(t, s, pgstore.DefaultBucketSize)
}
