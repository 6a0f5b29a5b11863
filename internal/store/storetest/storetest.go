// Package storetest is the contract every Backpressure store must meet:
// memstore and pgstore run the same Run suite, so they behave identically.
//
// It is imported only by tests.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// Store is what the suite exercises: the store contract that the API uses.
type Store interface {
	CreatePlayer(ctx context.Context, name string, role game.Role, tokenHash []byte) (game.Player, error)
	PlayerByTokenHash(ctx context.Context, hash []byte) (game.Player, error)
	PlayerByID(ctx context.Context, id uuid.UUID) (game.Player, error)
	PlayerByName(ctx context.Context, name string) (game.Player, error)
	SetRole(ctx context.Context, playerID uuid.UUID, role game.Role) error

	PutLevel(ctx context.Context, l game.Level) (game.Level, bool, error)
	CreateLevel(ctx context.Context, l game.Level) (game.Level, error)
	Level(ctx context.Context, slug string, version int) (game.Level, error)
	Levels(ctx context.Context) ([]game.LevelSummary, error)
	CurrentLevels(ctx context.Context, slugs []string) ([]game.LevelSummary, error)
	LevelsAfter(ctx context.Context, after string, skip []string, limit int) ([]game.LevelSummary, error)

	CreateSubmission(ctx context.Context, sub game.Submission, idempotencyKey, requestHash string) (game.SubmissionReceipt, error)
	SubmissionByIdempotencyKey(ctx context.Context, playerID uuid.UUID, key, requestHash string) (game.SubmissionReceipt, error)
	Submission(ctx context.Context, id uuid.UUID) (game.Submission, error)

	Board(ctx context.Context, q game.BoardQuery) (game.BoardPage, error)
	PlayerRank(ctx context.Context, slug string, version int, playerID uuid.UUID) (game.Entry, error)
	PlayerBests(ctx context.Context, playerID uuid.UUID) ([]game.LevelBest, error)
	BoardChanges(ctx context.Context, slug string, version int, after int64, limit int) ([]game.BoardChange, bool, error)

	CreateEvent(ctx context.Context, e game.Event) (game.Event, error)
	Event(ctx context.Context, id uuid.UUID) (game.Event, error)
	JoinEvent(ctx context.Context, eventID, playerID uuid.UUID, at time.Time) error
	IsEntrant(ctx context.Context, eventID, playerID uuid.UUID) (bool, error)
	CreateEventSubmission(ctx context.Context, sub game.EventSubmission) (int, error)
	EventStandingsPage(ctx context.Context, id uuid.UUID, q game.EventStandingsQuery) (game.EventBoard, error)
	EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error)
	EventFinals(ctx context.Context, id uuid.UUID) ([]game.EventSubmission, error)
	FinishEvent(ctx context.Context, id uuid.UUID, results []game.EventResult, at time.Time) (bool, error)
	EventResult(ctx context.Context, id, playerID uuid.UUID) (game.EventResult, game.EventSubmission, error)

	Duels

	Ping(ctx context.Context) error
}

// Run runs the whole contract suite. newStore must return a new, empty store
// for each call; the subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *fixture)
	}{
		{"Players", testPlayers},
		{"PlayerNamesUniqueUnderConcurrency", testPlayerNamesConcurrent},
		{"PlayerNamesAlike", testPlayerNamesAlike},
		{"Levels", testLevels},
		{"LevelVersioning", testLevelVersioning},
		{"LevelOwnVersionNumbers", testLevelOwnVersionNumbers},
		{"LevelsConcurrentLoad", testLevelsConcurrentLoad},
		{"LevelPages", testLevelPages},
		{"Submissions", testSubmissions},
		{"Idempotency", testIdempotency},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"BoardOrderAndTies", testBoardOrder},
		{"BoardPagination", testBoardPagination},
		{"BoardAroundPlayer", testBoardAround},
		{"BoardQueryValidation", testBoardValidation},
		{"GlobalBoard", testGlobalBoard},
		{"GlobalBoardNewVersion", testGlobalBoardNewVersion},
		{"PlayerBests", testPlayerBests},
		{"ConcurrentSubmissions", testConcurrentSubmissions},
		{"EqualScoreEarlierReachWins", testEqualScoreTies},
		{"IdempotencyLookup", testIdempotencyLookup},
		{"CreateLevelInsertOnly", testCreateLevel},
		{"CreateLevelConcurrent", testCreateLevelConcurrent},
		{"BoardChanges", testBoardChanges},
		{"BoardChangesRetention", testBoardChangesRetention},
		{"BoardChangesConcurrent", testBoardChangesConcurrent},
		{"Events", testEvents},
		{"EventRules", testEventRules},
		{"EventStandingsAndFinish", testEventStandingsAndFinish},
		{"EventStandingsPages", testEventStandingsPages},
		{"EventRanksEqualRecount", testEventRanksRecount},
		{"EventConcurrentAttempts", testEventConcurrentAttempts},
		{"EventLateCommits", testEventLateCommits},
		{"EventCapUnderACrowd", testEventCapUnderACrowd},
		{"EventList", testEventList},
	}
	tests = append(tests, duelTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, &fixture{t: t, s: newStore(t), ctx: t.Context()})
		})
	}
}

// t0 is the suite's epoch: submissions are stamped t0 + n seconds.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

type fixture struct {
	t   *testing.T
	s   Store
	ctx context.Context
}

func (f *fixture) player(name string) game.Player {
	f.t.Helper()
	_, hash := game.NewToken()
	p, err := f.s.CreatePlayer(f.ctx, name, game.RolePlayer, hash)
	if err != nil {
		f.t.Fatalf("CreatePlayer(%q): %v", name, err)
	}
	return p
}

func (f *fixture) players(n int) []game.Player {
	f.t.Helper()
	ps := make([]game.Player, n)
	for i := range ps {
		ps[i] = f.player(fmt.Sprintf("player-%03d", i))
	}
	return ps
}

func level(slug, hash string) game.Level {
	return game.Level{
		Slug:        slug,
		Title:       "Level " + slug,
		Difficulty:  "easy",
		Definition:  json.RawMessage(`{"slug": "` + slug + `", "hash": "` + hash + `"}`),
		ContentHash: hash,
		CreatedAt:   t0,
		Builtin:     true,
	}
}

func (f *fixture) level(slug, hash string) game.Level {
	f.t.Helper()
	l, _, err := f.s.PutLevel(f.ctx, level(slug, hash))
	if err != nil {
		f.t.Fatalf("PutLevel(%q): %v", slug, err)
	}
	return l
}

func newSub(p uuid.UUID, slug string, version int, score int64, passed bool, when time.Time) game.Submission {
	return game.Submission{
		ID:        uuid.Must(uuid.NewV7()),
		PlayerID:  p,
		Slug:      slug,
		Version:   version,
		Design:    json.RawMessage(`{"components": []}`),
		Result:    json.RawMessage(fmt.Sprintf(`{"score": %d}`, score)),
		Passed:    passed,
		Score:     score,
		CreatedAt: when,
	}
}

func (f *fixture) submit(p uuid.UUID, slug string, version int, score int64, when time.Time) game.SubmissionReceipt {
	f.t.Helper()
	rec, err := f.s.CreateSubmission(f.ctx, newSub(p, slug, version, score, true, when), "", "")
	if err != nil {
		f.t.Fatalf("CreateSubmission(%s, %d): %v", slug, score, err)
	}
	return rec
}

func (f *fixture) board(q game.BoardQuery) game.BoardPage {
	f.t.Helper()
	page, err := f.s.Board(f.ctx, q)
	if err != nil {
		f.t.Fatalf("Board(%+v): %v", q, err)
	}
	return page
}

// wholeBoard reads a board through pages of limit entries, forwards via
// Next and then backwards via Prev from the last page, and checks that both
// walks agree, ranks run 1..Total and every page's Total is the same.
func (f *fixture) wholeBoard(slug string, version, limit int) []game.Entry {
	f.t.Helper()
	var fwd []game.Entry
	var pages []game.BoardPage
	q := game.BoardQuery{Slug: slug, Version: version, Limit: limit}
	for i := 0; ; i++ {
		page := f.board(q)
		if i == 0 && page.Prev != "" {
			f.t.Errorf("first page: Prev = %q, want none", page.Prev)
		}
		pages = append(pages, page)
		fwd = append(fwd, page.Entries...)
		if page.Next == "" {
			break
		}
		if len(page.Entries) != limit {
			f.t.Errorf("page %d has %d entries and a Next cursor, want %d", i, len(page.Entries), limit)
		}
		if i > 10000 {
			f.t.Fatal("pagination does not end")
		}
		q.Cursor = page.Next
	}
	total := pages[0].Total
	for i, page := range pages {
		if page.Total != total {
			f.t.Errorf("page %d: Total = %d, first page said %d", i, page.Total, total)
		}
	}
	if int64(len(fwd)) != total {
		f.t.Errorf("forward walk found %d entries, Total = %d", len(fwd), total)
	}
	for i, e := range fwd {
		if e.Rank != int64(i+1) {
			f.t.Errorf("forward walk: entry %d (%s) has rank %d", i, e.PlayerName, e.Rank)
		}
	}
	// Backwards from the last page.
	back := slices.Clone(pages[len(pages)-1].Entries)
	q.Cursor = pages[len(pages)-1].Prev
	for i := 0; q.Cursor != ""; i++ {
		page := f.board(q)
		back = append(slices.Clone(page.Entries), back...)
		q.Cursor = page.Prev
		if i > 10000 {
			f.t.Fatal("backward pagination does not end")
		}
	}
	if diff := cmp.Diff(fwd, back); diff != "" {
		f.t.Errorf("backward walk differs from forward walk (-fwd +back):\n%s", diff)
	}
	return fwd
}

// wantCode fails the test unless err has the given game error code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := game.ErrorCode(err); got != code {
		t.Errorf("%s: error code = %q (%v), want %q", what, got, err, code)
	}
}
