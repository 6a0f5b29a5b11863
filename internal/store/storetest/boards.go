package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

func testBoardOrder(t *testing.T, f *fixture) {
	ps := f.players(6)
	f.level("lvl", "h1")
	m := newModel(ps)
	m.addLevel("lvl")
	// Equal scores rank by who reached them first; equal times by player
	// ID; later equal scores do not move anyone, an equal score reached
	// earlier (stored late: requests commit in any order) does.
	subs := []game.Submission{
		newSub(ps[0].ID, "lvl", 1, 100, true, at(10)),
		newSub(ps[1].ID, "lvl", 1, 100, true, at(5)),
		newSub(ps[2].ID, "lvl", 1, 100, true, at(5)),
		newSub(ps[3].ID, "lvl", 1, 300, true, at(20)),
		newSub(ps[4].ID, "lvl", 1, 0, true, at(1)),
		newSub(ps[1].ID, "lvl", 1, 100, true, at(1)), // equal, earlier: the new best
		newSub(ps[2].ID, "lvl", 1, 100, true, at(7)), // equal, later: not an improvement
		newSub(ps[5].ID, "lvl", 1, 100, true, at(5)),
		newSub(ps[0].ID, "lvl", 1, 50, true, at(30)),
	}
	for _, s := range subs {
		rec, err := f.s.CreateSubmission(f.ctx, s, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if improved := m.submit(s); rec.Improved != improved {
			t.Errorf("submission %d by %s: Improved = %v, want %v", s.Score, m.names[s.PlayerID], rec.Improved, improved)
		}
	}
	want := m.board("lvl", 1)
	got := f.board(game.BoardQuery{Slug: "lvl"}).Entries
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("board (-want +got):\n%s", diff)
	}
	// Spot-check the rule itself, independently of the model.
	tied := []uuid.UUID{ps[2].ID, ps[5].ID}
	slices.SortFunc(tied, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
	wantOrder := append([]uuid.UUID{ps[3].ID, ps[1].ID}, tied...)
	wantOrder = append(wantOrder, ps[0].ID, ps[4].ID)
	var gotOrder []uuid.UUID
	for _, e := range got {
		gotOrder = append(gotOrder, e.PlayerID)
	}
	if diff := cmp.Diff(wantOrder, gotOrder); diff != "" {
		t.Errorf("board order (-want +got):\n%s", diff)
	}
	for _, e := range want {
		r, err := f.s.PlayerRank(f.ctx, "lvl", 1, e.PlayerID)
		if err != nil || !cmp.Equal(e, r) {
			t.Errorf("PlayerRank(%s) = %+v, %v; want %+v", e.PlayerName, r, err, e)
		}
	}
}

// seedBoard gives n players random scores on "lvl" (with many ties) and
// returns the model.
func seedBoard(f *fixture, n int, seed uint64) (*model, []game.Player) {
	f.t.Helper()
	ps := f.players(n)
	f.level("lvl", "h1")
	m := newModel(ps)
	m.addLevel("lvl")
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range 3 * n {
		p := ps[rng.IntN(n)]
		s := newSub(p.ID, "lvl", 1, int64(rng.IntN(8))*10, rng.IntN(5) > 0, at(rng.IntN(4)))
		if _, err := f.s.CreateSubmission(f.ctx, s, "", ""); err != nil {
			f.t.Fatalf("submission %d: %v", i, err)
		}
		m.submit(s)
	}
	return m, ps
}

func testBoardPagination(t *testing.T, f *fixture) {
	m, _ := seedBoard(f, 37, 1)
	want := m.board("lvl", 1)
	if len(want) < 20 {
		t.Fatalf("seed made only %d entries", len(want))
	}
	for _, limit := range []int{1, 4, 7, len(want) - 1, len(want), 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			got := f.wholeBoard("lvl", 0, limit)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("walked board (-want +got):\n%s", diff)
			}
		})
	}

	// Cursors are positions, not offsets: an entry inserted above a cursor
	// does not repeat or skip entries after it.
	first := f.board(game.BoardQuery{Slug: "lvl", Limit: 5})
	newcomer := f.player("newcomer")
	m.names[newcomer.ID] = newcomer.Name
	s := newSub(newcomer.ID, "lvl", 1, 1000, true, at(0))
	if _, err := f.s.CreateSubmission(f.ctx, s, "", ""); err != nil {
		t.Fatal(err)
	}
	m.submit(s)
	want = m.board("lvl", 1)
	second := f.board(game.BoardQuery{Slug: "lvl", Limit: 5, Cursor: first.Next})
	if diff := cmp.Diff(want[6:11], second.Entries); diff != "" {
		t.Errorf("page after cursor, after an insert above it (-want +got):\n%s", diff)
	}
	prev := f.board(game.BoardQuery{Slug: "lvl", Limit: 5, Cursor: second.Prev})
	if diff := cmp.Diff(want[1:6], prev.Entries); diff != "" {
		t.Errorf("page before cursor (-want +got):\n%s", diff)
	}
	if prev.Prev == "" || prev.Next == "" {
		t.Errorf("page 2..6: Prev %q, Next %q; want both", prev.Prev, prev.Next)
	}
	top := f.board(game.BoardQuery{Slug: "lvl", Limit: 5, Cursor: prev.Prev})
	if diff := cmp.Diff(want[:1], top.Entries); diff != "" {
		t.Errorf("page before rank 2 (-want +got):\n%s", diff)
	}
	if top.Prev != "" {
		t.Errorf("page with rank 1: Prev = %q, want none", top.Prev)
	}

	// Empty boards.
	f.level("empty", "h")
	page := f.board(game.BoardQuery{Slug: "empty"})
	wantPage := game.BoardPage{Slug: "empty", Version: 1, Entries: []game.Entry{}}
	if diff := cmp.Diff(wantPage, page); diff != "" {
		t.Errorf("empty board (-want +got):\n%s", diff)
	}
}

func testBoardAround(t *testing.T, f *fixture) {
	m, ps := seedBoard(f, 30, 2)
	want := m.board("lvl", 1)
	n := len(want)
	for _, limit := range []int{1, 2, 5, 6, n, 100} {
		for i, e := range want {
			page := f.board(game.BoardQuery{Slug: "lvl", Limit: limit, AroundPlayer: &e.PlayerID})
			// The player is in the middle (at index (limit-1)/2) unless
			// the page meets an end of the board.
			size := min(limit, n)
			from := min(max(0, i-(limit-1)/2), n-size)
			if diff := cmp.Diff(want[from:from+size], page.Entries); diff != "" {
				t.Errorf("limit %d, around rank %d (-want +got):\n%s", limit, i+1, diff)
				continue
			}
			if (page.Prev != "") != (from > 0) || (page.Next != "") != (from+size < n) {
				t.Errorf("limit %d, around rank %d: Prev %q, Next %q", limit, i+1, page.Prev, page.Next)
			}
			if page.Total != int64(n) {
				t.Errorf("Total = %d, want %d", page.Total, n)
			}
		}
	}
	// Cursors from an around page continue seamlessly.
	mid := want[n/2].PlayerID
	page := f.board(game.BoardQuery{Slug: "lvl", Limit: 4, AroundPlayer: &mid})
	next := f.board(game.BoardQuery{Slug: "lvl", Limit: 4, Cursor: page.Next})
	prev := f.board(game.BoardQuery{Slug: "lvl", Limit: 4, Cursor: page.Prev})
	if len(next.Entries) == 0 || next.Entries[0].Rank != page.Entries[3].Rank+1 ||
		len(prev.Entries) == 0 || prev.Entries[3].Rank != page.Entries[0].Rank-1 {
		t.Errorf("around page %v: next starts %v, prev ends %v", page.Entries, next.Entries, prev.Entries)
	}

	var absent uuid.UUID
	for _, p := range ps {
		if _, ok := m.boards[boardRef{"lvl", 1}][p.ID]; !ok {
			absent = p.ID
		}
	}
	if absent == uuid.Nil {
		absent = uuid.New()
	}
	_, err := f.s.Board(f.ctx, game.BoardQuery{Slug: "lvl", AroundPlayer: &absent})
	wantCode(t, "around a player not on the board", err, game.ENOTFOUND)
}

func testBoardValidation(t *testing.T, f *fixture) {
	ada := f.player("ada")
	f.level("lvl", "h1")
	f.submit(ada.ID, "lvl", 1, 10, at(1))
	cursor := game.Cursor{Key: game.BoardKey{Score: 10, AchievedAt: at(1), PlayerID: ada.ID}}.String()
	tests := []struct {
		name string
		q    game.BoardQuery
		code string
	}{
		{"default limit", game.BoardQuery{Slug: "lvl"}, ""},
		{"max limit", game.BoardQuery{Slug: "lvl", Limit: 100}, ""},
		{"limit too big", game.BoardQuery{Slug: "lvl", Limit: 101}, game.EINVALID},
		{"negative limit", game.BoardQuery{Slug: "lvl", Limit: -1}, game.EINVALID},
		{"negative version", game.BoardQuery{Slug: "lvl", Version: -1}, game.EINVALID},
		{"garbage cursor", game.BoardQuery{Slug: "lvl", Cursor: "not a cursor"}, game.EINVALID},
		{"truncated cursor", game.BoardQuery{Slug: "lvl", Cursor: cursor[:10]}, game.EINVALID},
		{"cursor and around", game.BoardQuery{Slug: "lvl", Cursor: cursor, AroundPlayer: &ada.ID}, game.EINVALID},
		{"valid cursor", game.BoardQuery{Slug: "lvl", Cursor: cursor}, ""},
		{"unknown level", game.BoardQuery{Slug: "nope"}, game.ENOTFOUND},
		{"global", game.BoardQuery{}, ""},
		{"global ignores version", game.BoardQuery{Version: 7}, ""},
	}
	for _, tt := range tests {
		_, err := f.s.Board(f.ctx, tt.q)
		wantCode(t, tt.name, err, tt.code)
	}
}

func testGlobalBoard(t *testing.T, f *fixture) {
	ps := f.players(5)
	m := newModel(ps)
	for _, slug := range []string{"a", "b", "c"} {
		f.level(slug, "h1")
		m.addLevel(slug)
	}
	type s struct {
		p     int
		slug  string
		score int64
	}
	steps := []s{
		{0, "a", 10}, {1, "a", 20}, {0, "b", 15}, {2, "c", 25}, {3, "a", 0},
		{1, "b", 5}, {0, "a", 12}, {4, "c", 25}, {2, "a", 0}, {3, "b", 25},
	}
	for i, st := range steps {
		sub := newSub(ps[st.p].ID, st.slug, 1, st.score, true, at(i))
		if _, err := f.s.CreateSubmission(f.ctx, sub, "", ""); err != nil {
			t.Fatal(err)
		}
		m.submit(sub)
		if diff := cmp.Diff(m.board("", 0), f.wholeBoard("", 0, 2)); diff != "" {
			t.Fatalf("after step %d: global board (-want +got):\n%s", i, diff)
		}
	}
	// Sums, independently of the model: ada 12+15, bob 20+5, player-2 25+0,
	// player-3 0+25 (tied 25, player-2 first at step 3), player-4 25 at step 7.
	wantScores := map[uuid.UUID]int64{ps[0].ID: 27, ps[1].ID: 25, ps[2].ID: 25, ps[3].ID: 25, ps[4].ID: 25}
	page := f.board(game.BoardQuery{})
	for _, e := range page.Entries {
		if e.Score != wantScores[e.PlayerID] {
			t.Errorf("global score of %s = %d, want %d", e.PlayerName, e.Score, wantScores[e.PlayerID])
		}
	}
	if page.Entries[0].PlayerID != ps[0].ID || page.Entries[1].PlayerID != ps[2].ID {
		t.Errorf("global top two = %s, %s; want player-000, player-002", page.Entries[0].PlayerName, page.Entries[1].PlayerName)
	}
	for _, e := range page.Entries {
		r, err := f.s.PlayerRank(f.ctx, "", 0, e.PlayerID)
		if err != nil || !cmp.Equal(e, r) {
			t.Errorf("PlayerRank global %s = %+v, %v; want %+v", e.PlayerName, r, err, e)
		}
	}
	// A failed or non-improving submission does not touch the global board.
	if _, err := f.s.CreateSubmission(f.ctx, newSub(ps[0].ID, "a", 1, 500, false, at(50)), "", ""); err != nil {
		t.Fatal(err)
	}
	f.submit(ps[0].ID, "a", 1, 1, at(51))
	if diff := cmp.Diff(page, f.board(game.BoardQuery{})); diff != "" {
		t.Errorf("global board changed (-before +after):\n%s", diff)
	}
}

func testGlobalBoardNewVersion(t *testing.T, f *fixture) {
	ps := f.players(4)
	m := newModel(ps)
	for _, slug := range []string{"a", "b"} {
		f.level(slug, "h1")
		m.addLevel(slug)
	}
	for i, st := range []struct {
		p     int
		slug  string
		score int64
	}{{0, "a", 10}, {0, "b", 30}, {1, "a", 50}, {2, "b", 5}, {3, "a", 7}, {1, "b", 1}} {
		sub := newSub(ps[st.p].ID, st.slug, 1, st.score, true, at(10-i)) // times need not be monotonic
		if _, err := f.s.CreateSubmission(f.ctx, sub, "", ""); err != nil {
			t.Fatal(err)
		}
		m.submit(sub)
	}
	// Level a changes: its scores leave the global board; player-003, who
	// only played a, leaves it entirely.
	if l, _, err := f.s.PutLevel(f.ctx, level("a", "h2")); err != nil || l.Version != 2 {
		t.Fatalf("PutLevel = %+v, %v", l, err)
	}
	m.newVersion("a")
	want := m.board("", 0)
	if diff := cmp.Diff(want, f.wholeBoard("", 0, 2)); diff != "" {
		t.Errorf("global board after new version (-want +got):\n%s", diff)
	}
	if len(want) != 3 {
		t.Errorf("model has %d global entries, want 3", len(want))
	}
	// Old-version submissions no longer count globally; new-version ones do.
	for _, sub := range []game.Submission{
		newSub(ps[3].ID, "a", 1, 99, true, at(20)),
		newSub(ps[3].ID, "a", 2, 3, true, at(21)),
		newSub(ps[0].ID, "a", 2, 40, true, at(22)),
	} {
		if _, err := f.s.CreateSubmission(f.ctx, sub, "", ""); err != nil {
			t.Fatal(err)
		}
		m.submit(sub)
	}
	if diff := cmp.Diff(m.board("", 0), f.wholeBoard("", 0, 3)); diff != "" {
		t.Errorf("global board (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m.board("a", 1), f.wholeBoard("a", 1, 3)); diff != "" {
		t.Errorf("old version board (-want +got):\n%s", diff)
	}
}

// testConcurrentSubmissions races 20 players x 10 submissions (and one
// player against themself) and checks the boards against a brute-force
// recomputation.
func testConcurrentSubmissions(t *testing.T, f *fixture) {
	const players, each = 20, 10
	ps := f.players(players)
	slugs := []string{"a", "b"}
	for _, slug := range slugs {
		f.level(slug, "h1")
	}
	// Per player and level, scores are distinct, so the best does not
	// depend on commit order; times are not monotonic.
	var subs []game.Submission
	rng := rand.New(rand.NewPCG(3, 4))
	for pi, p := range ps {
		scores := rng.Perm(each * 4)
		for j := range each {
			s := newSub(p.ID, slugs[j%2], 1, int64(scores[j]%7*10+scores[j]/7), rng.IntN(6) > 0, at(rng.IntN(50)))
			if pi == 0 {
				s.Score = int64(scores[j]) // still distinct
			}
			subs = append(subs, s)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	improved := make([]bool, len(subs))
	for i := range subs {
		wg.Go(func() {
			rec, err := f.s.CreateSubmission(f.ctx, subs[i], "", "")
			errs[i], improved[i] = err, rec.Improved
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("submission %d: %v", i, err)
		}
	}
	// Brute force: per player and level the best passing submission.
	m := newModel(ps)
	best := map[boardRef]map[uuid.UUID]game.Submission{}
	for _, slug := range slugs {
		m.addLevel(slug)
		best[boardRef{slug, 1}] = map[uuid.UUID]game.Submission{}
	}
	for _, s := range subs {
		if b := best[boardRef{s.Slug, 1}]; s.Passed && (b[s.PlayerID].ID == uuid.Nil || s.Score > b[s.PlayerID].Score) {
			b[s.PlayerID] = s
		}
	}
	sums := map[uuid.UUID]int64{}
	for _, slug := range slugs {
		var want []game.Entry
		for p, s := range best[boardRef{slug, 1}] {
			want = append(want, game.Entry{PlayerID: p, PlayerName: m.names[p], Score: s.Score, AchievedAt: s.CreatedAt, SubmissionID: s.ID})
			sums[p] += s.Score
		}
		sortEntries(want)
		if diff := cmp.Diff(want, f.wholeBoard(slug, 0, 7)); diff != "" {
			t.Errorf("board %s (-want +got):\n%s", slug, diff)
		}
	}
	// The global board's times depend on commit order; its sums and its
	// order by its own keys do not.
	global := f.wholeBoard("", 0, 6)
	if len(global) != len(sums) {
		t.Errorf("global board has %d players, want %d", len(global), len(sums))
	}
	for _, e := range global {
		if e.Score != sums[e.PlayerID] {
			t.Errorf("global score of %s = %d, want %d", e.PlayerName, e.Score, sums[e.PlayerID])
		}
	}
	resorted := slices.Clone(global)
	sortEntries(resorted)
	if diff := cmp.Diff(resorted, global); diff != "" {
		t.Errorf("global board out of order (-sorted +got):\n%s", diff)
	}
	for _, e := range global {
		r, err := f.s.PlayerRank(f.ctx, "", 0, e.PlayerID)
		if err != nil || r.Rank != e.Rank {
			t.Errorf("PlayerRank global %s = %d, %v; want %d", e.PlayerName, r.Rank, err, e.Rank)
		}
	}
}

// A player's bests are their entries on the level boards: the best passing
// score on each version they passed, an old version's kept when a new one
// starts, failures and other players' scores left out, by slug and version.
func testPlayerBests(t *testing.T, f *fixture) {
	ps := f.players(2)
	f.level("b", "h1")
	f.level("a", "h1")
	for _, s := range []game.Submission{
		newSub(ps[0].ID, "a", 1, 300, true, at(1)),
		newSub(ps[0].ID, "a", 1, 200, true, at(2)),  // lower: not the best
		newSub(ps[0].ID, "b", 1, 900, false, at(3)), // failed: no best
		newSub(ps[1].ID, "b", 1, 700, true, at(4)),
	} {
		if _, err := f.s.CreateSubmission(f.ctx, s, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := f.s.PutLevel(f.ctx, level("a", "h2")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateSubmission(f.ctx, newSub(ps[0].ID, "a", 2, 100, true, at(5)), "", ""); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.PlayerBests(f.ctx, ps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []game.LevelBest{{Slug: "a", Version: 1, Score: 300}, {Slug: "a", Version: 2, Score: 100}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PlayerBests (-want +got):\n%s", diff)
	}
	if got, err := f.s.PlayerBests(f.ctx, uuid.New()); err != nil || len(got) != 0 || got == nil {
		t.Errorf("PlayerBests of nobody = %#v, %v; want an empty list", got, err)
	}
}
