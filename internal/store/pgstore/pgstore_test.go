package pgstore_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
	"backpressure/internal/store/storetest"
	"backpressure/migrations"
)

// open returns a store on a fresh database. With bucketSize > 0 rank
// buckets split early, and the buckets' invariants are checked when t ends.
func open(t *testing.T, bucketSize int) *pgstore.Store {
	t.Helper()
	return openWith(t, bucketSize, pgstore.Options{})
}

func openWith(t *testing.T, bucketSize int, o pgstore.Options) *pgstore.Store {
	t.Helper()
	url := pgtest.NewDatabase(t)
	s, err := pgstore.OpenWith(t.Context(), url, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(s.Close)
	if bucketSize > 0 {
		pgstore.SetBucketSize(s, bucketSize)
		t.Cleanup(func() { checkBuckets(t, s, bucketSize) })
	}
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t, 0) })
}

// TestContractTinyBuckets runs the contract with buckets of at most 2
// entries, so nearly every write splits or deletes a bucket.
func TestContractTinyBuckets(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t, 2) })
}

// TestContractPoolerMode runs the contract in the query mode used behind
// PgBouncer in transaction mode (no named prepared statements: arguments
// are typed from cached descriptions), with a small pool and tiny buckets.
func TestContractPoolerMode(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Store {
		return openWith(t, 2, pgstore.Options{QueryMode: pgstore.QueryModeCacheDescribe, MaxConns: 4})
	})
}

// checkBuckets verifies that every bucket counts exactly the entries in its
// key range, that only sentinels are empty and that no bucket overflows.
func checkBuckets(t *testing.T, s *pgstore.Store, size int) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	rows, err := pgstore.Pool(s).Query(ctx, `
		WITH b AS (
			SELECT id, board_id, lo_neg_score, lo_achieved_at, lo_player_id, n,
				lo_neg_score = -9223372036854775808 AS sentinel,
				lead(lo_neg_score) OVER w AS hi_ns, lead(lo_achieved_at) OVER w AS hi_at,
				lead(lo_player_id) OVER w AS hi_pid
			FROM board_buckets
			WINDOW w AS (PARTITION BY board_id ORDER BY lo_neg_score, lo_achieved_at, lo_player_id))
		SELECT board_id, id, n, sentinel, (
			SELECT count(*) FROM board_entries e
			WHERE e.board_id = b.board_id
			  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
			  AND (b.hi_ns IS NULL OR (e.neg_score, e.achieved_at, e.player_id) < (b.hi_ns, b.hi_at, b.hi_pid)))
		FROM b ORDER BY board_id, lo_neg_score, lo_achieved_at, lo_player_id`)
	if err != nil {
		t.Errorf("check buckets: %v", err)
		return
	}
	defer rows.Close()
	sentinels := map[int64]int{}
	buckets := 0
	for rows.Next() {
		var board, id, n, actual int64
		var sentinel bool
		if err := rows.Scan(&board, &id, &n, &sentinel, &actual); err != nil {
			t.Errorf("check buckets: %v", err)
			return
		}
		buckets++
		if sentinel {
			sentinels[board]++
		}
		if n != actual {
			t.Errorf("board %d bucket %d: n = %d, holds %d entries", board, id, n, actual)
		}
		if n == 0 && !sentinel {
			t.Errorf("board %d bucket %d is empty but not deleted", board, id)
		}
		if n > int64(size) {
			t.Errorf("board %d bucket %d holds %d > %d entries", board, id, n, size)
		}
	}
	if err := rows.Err(); err != nil {
		t.Errorf("check buckets: %v", err)
	}
	var boards int
	if err := pgstore.Pool(s).QueryRow(ctx, `SELECT count(*) FROM boards`).Scan(&boards); err != nil {
		t.Errorf("count boards: %v", err)
	}
	if len(sentinels) != boards {
		t.Errorf("%d boards have a sentinel bucket, want all %d", len(sentinels), boards)
	}
	for board, n := range sentinels {
		if n != 1 {
			t.Errorf("board %d has %d sentinel buckets", board, n)
		}
	}
	t.Logf("%d boards, %d buckets consistent", boards, buckets)
	checkEventBuckets(t, s, size)
}

// checkEventBuckets verifies the events' rank buckets as checkBuckets does
// the boards': each counts exactly the ranked entrants in its key range,
// only sentinels are empty, none overflows, every event has one sentinel.
func checkEventBuckets(t *testing.T, s *pgstore.Store, size int) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var bad []string
	rows, err := pgstore.Pool(s).Query(ctx, `
		WITH b AS (
			SELECT id, event_id, lo_ns, lo_at, lo_player_id, n, lo_ns = -9223372036854775808 AS sentinel,
				lead(lo_ns) OVER w AS hi_ns, lead(lo_at) OVER w AS hi_at, lead(lo_player_id) OVER w AS hi_pid
			FROM event_buckets
			WINDOW w AS (PARTITION BY event_id ORDER BY lo_ns, lo_at, lo_player_id))
		SELECT format('event %s bucket %s: n %s, holds %s, sentinel %s', event_id, id, n, held, sentinel)
		FROM (SELECT b.*, (
			SELECT count(*) FROM event_entrants e
			WHERE e.event_id = b.event_id AND e.rank_ns IS NOT NULL
			  AND (e.rank_ns, e.rank_at, e.player_id) >= (b.lo_ns, b.lo_at, b.lo_player_id)
			  AND (b.hi_ns IS NULL OR (e.rank_ns, e.rank_at, e.player_id) < (b.hi_ns, b.hi_at, b.hi_pid))) AS held
			FROM b) c
		WHERE n <> held OR (n = 0 AND NOT sentinel) OR n > $1
		UNION ALL
		SELECT format('event %s has %s sentinel buckets', e.id, count(b.id)) FROM events e
		LEFT JOIN event_buckets b ON b.event_id = e.id AND b.lo_ns = -9223372036854775808
		GROUP BY e.id HAVING count(b.id) <> 1`, size)
	if err == nil {
		bad, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Errorf("check event buckets: %v", err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// TestHotBucketRace hammers the top of one board from many goroutines with
// tiny buckets, then checks the board against the best per player.
func TestHotBucketRace(t *testing.T) {
	t.Parallel()
	s := open(t, 3)
	ctx := t.Context()
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "hot", ContentHash: "h", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	const players, each = 40, 15
	ids := make([]uuid.UUID, players)
	for i := range ids {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("p%02d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.ID
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	best := map[uuid.UUID]int64{}
	var subs []game.Submission
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range players * each {
		p := ids[i%players]
		// Rising scores with ties across players: everyone keeps moving
		// into the top buckets.
		score := int64(i/players)*10 + int64(rng.IntN(3))
		subs = append(subs, game.Submission{
			ID: uuid.Must(uuid.NewV7()), PlayerID: p, Slug: "hot", Version: 1,
			Design: []byte(`{}`), Passed: true, Score: score,
			CreatedAt: base.Add(time.Duration(rng.IntN(5)) * time.Second),
		})
	}
	// Distinct best per player regardless of commit order.
	for i := range subs {
		subs[i].Score = subs[i].Score*1000 + int64(i)
		best[subs[i].PlayerID] = max(best[subs[i].PlayerID], subs[i].Score)
	}
	var wg sync.WaitGroup
	work := make(chan game.Submission)
	for range 8 {
		wg.Go(func() {
			for sub := range work {
				if _, err := s.CreateSubmission(ctx, sub, "", ""); err != nil {
					t.Errorf("CreateSubmission: %v", err)
				}
			}
		})
	}
	for _, sub := range subs {
		work <- sub
	}
	close(work)
	wg.Wait()

	var want []int64
	for _, v := range best {
		want = append(want, v)
	}
	slices.Sort(want)
	slices.Reverse(want)
	var got []int64
	for _, slug := range []string{"hot", ""} {
		got = got[:0]
		q := game.BoardQuery{Slug: slug, Limit: 7}
		for {
			page, err := s.Board(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page.Entries {
				if e.Rank != int64(len(got)+1) {
					t.Errorf("board %q: rank %d at position %d", slug, e.Rank, len(got)+1)
				}
				got = append(got, e.Score)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("board %q scores (-want +got):\n%s", slug, diff)
		}
	}
}

func TestRebuildRanks(t *testing.T) {
	t.Parallel()
	s := open(t, 4)
	ctx := t.Context()
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "l", ContentHash: "h", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for i := range 25 {
		p, err := s.CreatePlayer(ctx, fmt.Sprint("p", i), game.RolePlayer, game.HashToken(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
		sub := game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: "l", Version: 1,
			Design: []byte(`{}`), Passed: true, Score: int64(i % 4), CreatedAt: time.Now()}
		if _, err := s.CreateSubmission(ctx, sub, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	before := map[uuid.UUID]game.Entry{}
	for _, id := range ids {
		e, err := s.PlayerRank(ctx, "l", 0, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = e
	}
	if err := s.RebuildRanks(ctx); err != nil {
		t.Fatalf("RebuildRanks: %v", err)
	}
	for _, id := range ids {
		e, err := s.PlayerRank(ctx, "l", 0, id)
		if err != nil || !cmp.Equal(before[id], e) {
			t.Errorf("after rebuild: %+v, %v; want %+v", e, err, before[id])
		}
	}
}

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	ctx := t.Context()
	tables := func() []string {
		t.Helper()
		s, err := pgstore.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rows, err := pgstore.Pool(s).Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			out = append(out, name)
		}
		return out
	}
	all := []string{"board_buckets", "board_changes", "board_entries", "boards", "duels", "event_buckets", "event_counts", "event_entrants", "event_final_runs", "event_results", "event_submissions", "events", "global_drains", "levels", "players", "rating_pairs", "ratings", "schema_migrations", "season_bests", "seasons", "submission_requests", "submissions"}
	for i, step := range []struct {
		name string
		run  func(context.Context, string) error
		want []string
	}{
		{"up", pgstore.Migrate, all},
		{"up again (no change)", pgstore.Migrate, all},
		{"down", pgstore.MigrateDown, []string{"schema_migrations"}},
		{"up after down", pgstore.Migrate, all},
	} {
		if err := step.run(ctx, url); err != nil {
			t.Fatalf("step %d %s: %v", i, step.name, err)
		}
		if diff := cmp.Diff(step.want, tables()); diff != "" {
			t.Errorf("tables after %s (-want +got):\n%s", step.name, diff)
		}
	}
	// The schema works after the round trip.
	s, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "l", ContentHash: "h", Definition: []byte(`{}`), CreatedAt: time.Now()}); err != nil {
		t.Errorf("PutLevel after up/down/up: %v", err)
	}
}

// TestMigrateConcurrently checks that replicas may migrate at once:
// golang-migrate's advisory lock lets one migrate while the others wait.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { errs[i] = pgstore.Migrate(t.Context(), url) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	s, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var version int
	var dirty bool
	if err := pgstore.Pool(s).QueryRow(t.Context(), `SELECT version, dirty FROM schema_migrations`).Scan(&version, &dirty); err != nil {
		t.Fatal(err)
	}
	if want := latestMigration(t); version != want || dirty {
		t.Errorf("schema_migrations = %d dirty=%v, want %d clean", version, dirty, want)
	}
}

// latestMigration is the highest migration number embedded in the binary.
func latestMigration(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.up.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded migrations: %v %v", files, err)
	}
	latest := 0
	for _, f := range files {
		n, err := strconv.Atoi(strings.SplitN(f, "_", 2)[0])
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		latest = max(latest, n)
	}
	return latest
}

func TestMigrateBadURL(t *testing.T) {
	if err := pgstore.Migrate(t.Context(), "mysql://x"); err == nil {
		t.Error("Migrate(mysql://) succeeded")
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	s := open(t, 0)
	s.Close()
	err := s.Ping(t.Context())
	if err == nil {
		t.Fatal("Ping on a closed store succeeded")
	}
	_, err = s.PlayerByID(t.Context(), uuid.New())
	if code := game.ErrorCode(err); code == game.ENOTFOUND || code == "" {
		t.Errorf("PlayerByID on a closed store: %v (%s)", err, code)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s2 := open(t, 0)
	if _, err := s2.PlayerByID(ctx, uuid.New()); !errorsIsCanceled(err) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}
