package pgstore_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// TestMeasureStoreCosts reports the PostgreSQL CPU (its one backend's user and system
// time, from /proc, so the database must run on this machine) and the wall time of each
// store call a submission's request makes, one call at a time on one connection, for
// BENCHMARKS.md: the idempotency key's check, the write of a submission that does not
// improve the player's best (the common case), one that does, and the board reads the
// load generator makes; then both writes again while a season runs. It runs only with BP_MEASURE=1:
//
//	BP_MEASURE=1 go test -run TestMeasureStoreCosts -v ./internal/store/pgstore/
func TestMeasureStoreCosts(t *testing.T) {
	if os.Getenv("BP_MEASURE") != "1" {
		t.Skip("set BP_MEASURE=1 to measure the store's costs per call")
	}
	const players, calls = 64, 2000
	ctx := t.Context()
	s, err := pgstore.OpenWith(ctx, pgtest.NewDatabase(t), pgstore.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	var backend int
	if err := pgstore.Pool(s).QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	if _, err := backendCPU(backend); err != nil {
		t.Skipf("the database's backend is not on this machine: %v", err)
	}
	l, _, err := s.PutLevel(ctx, game.Level{Slug: "cost", Title: "C", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	// A design and a verdict of the sizes the campaign's first level gives.
	design := json.RawMessage(`{"components":[{"id":"lb","type":"load_balancer"},{"id":"app","type":"app_server","replicas":2}],"links":[{"from":"lb","to":"app"}]}`)
	verdict := json.RawMessage(`{"passed":true,"notes":"` + strings.Repeat("x", 1200) + `"}`)
	ids := make([]uuid.UUID, players)
	for i := range ids {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("cost-%d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.ID
	}
	t0 := time.Now()
	n := 0
	submit := func(i int, score int64) {
		n++
		sub := game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: ids[i%players], Slug: l.Slug, Version: l.Version,
			Design: design, Result: verdict, Passed: true, Score: score, CreatedAt: t0.Add(time.Duration(n) * time.Millisecond)}
		if _, err := s.CreateSubmission(ctx, sub, "key-"+strconv.Itoa(n), "hash"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range players {
		submit(i, 100)
	}
	measure := func(name string, fn func(i int)) {
		c0, _ := backendCPU(backend)
		w0 := time.Now()
		for i := range calls {
			fn(i)
		}
		wall := time.Since(w0)
		c1, _ := backendCPU(backend)
		t.Logf("%-44s PostgreSQL CPU %6.3f ms/call, wall %6.3f ms/call", name,
			float64(c1-c0)/float64(time.Millisecond)/calls, float64(wall)/float64(time.Millisecond)/calls)
	}
	measure("idempotency key check (unused key)", func(i int) {
		if _, err := s.SubmissionByIdempotencyKey(ctx, ids[i%players], "unused-"+strconv.Itoa(i), "hash"); game.ErrorCode(err) != game.ENOTFOUND {
			t.Fatal(err)
		}
	})
	measure("submission, not better than the best", func(i int) { submit(i, 50) })
	measure("submission, a new best", func(i int) { submit(i, int64(200+i)) })
	measure("top-20 page of the level board", func(i int) {
		if _, err := s.Board(ctx, game.BoardQuery{Slug: l.Slug, Limit: 20}); err != nil {
			t.Fatal(err)
		}
	})
	measure("20 around a player, level board", func(i int) {
		if _, err := s.Board(ctx, game.BoardQuery{Slug: l.Slug, Limit: 20, AroundPlayer: &ids[i%players]}); err != nil {
			t.Fatal(err)
		}
	})
	measure("top-20 page of the global board", func(i int) {
		if _, err := s.Board(ctx, game.BoardQuery{Limit: 20}); err != nil {
			t.Fatal(err)
		}
	})
	// The same writes while a season runs: what the season's trigger adds to a submission
	// (its bests, its total and the total's rank buckets).
	schedule, err := game.ParseSeasonSchedule("monthly", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnsureSeasons(ctx, schedule); err != nil {
		t.Fatal(err)
	}
	measure("submission, a new best, in a season", func(i int) { submit(i, int64(200+calls+i)) })
	measure("submission, not better, in a season", func(i int) { submit(i, 50) })
}

// backendCPU returns the user and system time a local process has used.
func backendCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command name (which may hold spaces) in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read /proc/%d/stat: %v %v", pid, err1, err2)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}
