package pgstore_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/store/pgstore"
)

// TestReversionScale measures what a new version of a level with many players costs the
// others: it seeds BP_REVERSION_PLAYERS (default 200,000) bests on one level and on the
// global board, then publishes a new version while another player keeps submitting
// improving scores on another level, and reports that player's latency before and during
// the drain. It runs only with BP_SCALE=1:
//
//	BP_SCALE=1 go test -run TestReversionScale -v ./internal/store/pgstore/
func TestReversionScale(t *testing.T) {
	if os.Getenv("BP_SCALE") != "1" {
		t.Skip("set BP_SCALE=1 to run the re-versioning benchmark")
	}
	players := 200_000
	if n, err := strconv.Atoi(os.Getenv("BP_REVERSION_PLAYERS")); err == nil && n > 0 {
		players = n
	}
	s := open(t, 0)
	ctx := t.Context()
	for _, slug := range []string{"popular", "other"} {
		if _, _, err := s.PutLevel(ctx, game.Level{Slug: slug, ContentHash: slug + "1", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for _, q := range []string{
		`INSERT INTO players (id, name, name_key, role, token_hash, created_at)
		 SELECT md5(i::text)::uuid, 'p' || i, 'p' || i, 'player', sha256(i::text::bytea), now()
		 FROM generate_series(1, $1) i`,
		`INSERT INTO submissions (id, player_id, slug, version, design, passed, score, created_at)
		 SELECT md5('s' || i)::uuid, md5(i::text)::uuid, 'popular', 1, '{}', true, i % 1000,
		        '2025-01-01'::timestamptz + (i % 5000) * interval '1 second'
		 FROM generate_series(1, $1) i`,
		`INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
		 SELECT b.board_id, s.player_id, s.score, s.created_at, s.id
		 FROM submissions s, (SELECT board_id FROM levels WHERE slug = 'popular') b WHERE $1 > 0`,
		`INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
		 SELECT 0, player_id, score, created_at, id FROM submissions WHERE $1 > 0`,
	} {
		if _, err := pgstore.Pool(s).Exec(ctx, q, players); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	if err := s.RebuildRanks(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pgstore.Pool(s).Exec(ctx, `VACUUM ANALYZE`); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d players in %v", players, time.Since(start).Round(time.Millisecond))

	victims := make([]uuid.UUID, 2000)
	for i := range victims {
		if err := pgstore.Pool(s).QueryRow(ctx, `SELECT md5($1::int::text)::uuid`, i+1).Scan(&victims[i]); err != nil {
			t.Fatal(err)
		}
	}
	score := int64(0)
	submit := func(i int) time.Duration {
		score++
		begin := time.Now()
		_, err := s.CreateSubmission(context.WithoutCancel(ctx), game.Submission{ID: uuid.Must(uuid.NewV7()),
			PlayerID: victims[i%len(victims)], Slug: "other", Version: 1, Design: []byte(`{}`), Passed: true,
			Score: 1000 + score, CreatedAt: time.Now()}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(begin)
	}
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		t.Logf("%-28s n=%5d p50 %8v  p99 %8v  max %8v", name, len(ds), ds[len(ds)/2].Round(time.Microsecond),
			ds[len(ds)*99/100].Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond))
	}
	var before []time.Duration
	for i := range 300 {
		before = append(before, submit(i))
	}
	report("improving submission, idle", before)

	done := make(chan time.Duration)
	go func() {
		begin := time.Now()
		if _, _, err := s.PutLevel(context.WithoutCancel(ctx), game.Level{Slug: "popular", ContentHash: "popular2", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
			t.Error(err)
		}
		done <- time.Since(begin)
	}()
	var during []time.Duration
	var took time.Duration
	for i := 0; ; i++ {
		select {
		case took = <-done:
		default:
			during = append(during, submit(i))
			continue
		}
		break
	}
	t.Logf("new version of a level with %d players: %v", players, took.Round(time.Millisecond))
	report("improving submission, during", during)
}
