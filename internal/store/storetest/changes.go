package storetest

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// replayChanges applies changes in order to a board held as entries in
// board order, the way a stream client does, checking each change's
// PreviousRank and Total against the board it is applied to.
func replayChanges(t *testing.T, board []game.Entry, changes []game.BoardChange) []game.Entry {
	t.Helper()
	for _, c := range changes {
		prev := int64(0)
		for i, e := range board {
			if e.PlayerID == c.PlayerID {
				prev = int64(i + 1)
				board = append(board[:i:i], board[i+1:]...)
				break
			}
		}
		if prev != c.PreviousRank {
			t.Errorf("change %d (%s): previous rank %d, the board had them at %d", c.Seq, c.PlayerName, c.PreviousRank, prev)
		}
		if c.Rank < 1 || c.Rank > int64(len(board))+1 {
			t.Fatalf("change %d (%s): rank %d on a board of %d others", c.Seq, c.PlayerName, c.Rank, len(board))
		}
		e := game.Entry{PlayerID: c.PlayerID, PlayerName: c.PlayerName, Score: c.Score,
			AchievedAt: c.AchievedAt, SubmissionID: c.SubmissionID}
		board = append(board[:c.Rank-1:c.Rank-1], append([]game.Entry{e}, board[c.Rank-1:]...)...)
		if c.Total != int64(len(board)) {
			t.Errorf("change %d: total %d, the board has %d entries", c.Seq, c.Total, len(board))
		}
	}
	for i := range board {
		board[i].Rank = int64(i + 1)
	}
	return board
}

func (f *fixture) changes(slug string, version int, after int64) ([]game.BoardChange, bool) {
	f.t.Helper()
	cs, ok, err := f.s.BoardChanges(f.ctx, slug, version, after, 0)
	if err != nil {
		f.t.Fatalf("BoardChanges(%s, %d, %d): %v", slug, version, after, err)
	}
	return cs, ok
}

// testBoardChanges: improvements, and only they, are numbered 1, 2, 3...
// per board, and replaying them gives the board.
func testBoardChanges(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	f.level("other", "h1")
	ps := f.players(4)
	steps := []struct {
		p      int
		score  int64
		passed bool
		change bool
	}{
		{0, 100, true, true},
		{1, 200, true, true},   // a newcomer above
		{0, 50, true, false},   // worse: no change
		{2, 300, false, false}, // failed: no change
		{2, 150, true, true},   // between
		{0, 250, true, true},   // from last to first
		{3, 10, true, true},
		{1, 200, true, false}, // the same score later: no change
	}
	var seq int64
	for i, st := range steps {
		rec, err := f.s.CreateSubmission(f.ctx, newSub(ps[st.p].ID, "lvl", 1, st.score, st.passed, at(i)), "", "")
		if err != nil {
			t.Fatal(err)
		}
		if rec.Improved != st.change {
			t.Errorf("step %d: improved %v, want %v", i, rec.Improved, st.change)
		}
		if st.change {
			seq++
			cs, ok := f.changes("lvl", 1, seq-1)
			if !ok || len(cs) != 1 {
				t.Fatalf("step %d: changes after %d: %v (ok %v), want one", i, seq-1, cs, ok)
			}
			c := cs[0]
			want := game.BoardChange{Seq: seq, Slug: "lvl", Version: 1, PlayerID: ps[st.p].ID, PlayerName: ps[st.p].Name,
				Score: st.score, Rank: rec.Rank, PreviousRank: c.PreviousRank, AchievedAt: at(i), SubmissionID: rec.Submission.ID,
				Total: c.Total}
			if diff := cmp.Diff(want, c); diff != "" {
				t.Errorf("step %d: change (-want +got):\n%s", i, diff)
			}
		}
		if page := f.board(game.BoardQuery{Slug: "lvl"}); page.Seq != seq {
			t.Errorf("step %d: page seq %d, want %d", i, page.Seq, seq)
		}
	}
	all, ok := f.changes("lvl", 1, 0)
	if !ok || int64(len(all)) != seq {
		t.Fatalf("changes after 0: %d (ok %v), want %d", len(all), ok, seq)
	}
	for i, c := range all {
		if c.Seq != int64(i+1) {
			t.Errorf("change %d has seq %d", i, c.Seq)
		}
	}
	if diff := cmp.Diff(f.wholeBoard("lvl", 1, 3), replayChanges(t, nil, all)); diff != "" {
		t.Errorf("replayed changes differ from the board (-board +replayed):\n%s", diff)
	}
	// Resuming from the middle onto the page as it was gives the board too.
	if cs, ok := f.changes("lvl", 1, 3); !ok || len(cs) != int(seq-3) || cs[0].Seq != 4 {
		t.Errorf("changes after 3: %v (ok %v)", cs, ok)
	}
	if cs, ok := f.changes("lvl", 1, seq); !ok || len(cs) != 0 {
		t.Errorf("changes after the latest: %v (ok %v), want none and ok", cs, ok)
	}
	for _, after := range []int64{seq + 1, -1} {
		if cs, ok := f.changes("lvl", 1, after); ok || len(cs) != 0 {
			t.Errorf("changes after %d (latest %d): %v (ok %v), want none and not ok", after, seq, cs, ok)
		}
	}
	if cs, _, err := f.s.BoardChanges(f.ctx, "lvl", 1, 0, 2); err != nil || len(cs) != 2 {
		t.Errorf("changes with limit 2: %d, %v", len(cs), err)
	}
	if cs, ok := f.changes("other", 1, 0); !ok || len(cs) != 0 {
		t.Errorf("another level's changes: %v (ok %v), want none", cs, ok)
	}
	if page := f.board(game.BoardQuery{Slug: "other"}); page.Seq != 0 {
		t.Errorf("another level's page seq %d, want 0", page.Seq)
	}
	for _, v := range []struct {
		slug    string
		version int
	}{{"nope", 1}, {"lvl", 2}, {"lvl", 0}} {
		_, _, err := f.s.BoardChanges(f.ctx, v.slug, v.version, 0, 0)
		wantCode(t, fmt.Sprintf("BoardChanges(%s, %d)", v.slug, v.version), err, game.ENOTFOUND)
	}
}

// testBoardChangesRetention: the latest game.ChangeRetention changes are
// kept; a reader further behind is told to start again from the page.
func testBoardChangesRetention(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	p := f.player("climber")
	n := game.ChangeRetention + 70
	for i := range n {
		f.submit(p.ID, "lvl", 1, int64(i+1), at(i))
	}
	last := int64(n)
	if cs, ok := f.changes("lvl", 1, 0); ok || len(cs) != 0 {
		t.Errorf("changes after 0 of %d: %d (ok %v), want none and not ok", n, len(cs), ok)
	}
	from := last - game.ChangeRetention
	cs, ok := f.changes("lvl", 1, from)
	if !ok || len(cs) != game.ChangeRetention || cs[0].Seq != from+1 || cs[len(cs)-1].Seq != last {
		t.Fatalf("changes after %d: %d (ok %v), want the last %d", from, len(cs), ok, game.ChangeRetention)
	}
	if cs[len(cs)-1].Score != int64(n) || cs[len(cs)-1].Rank != 1 || cs[len(cs)-1].PreviousRank != 1 {
		t.Errorf("last change: %+v", cs[len(cs)-1])
	}
}

// testBoardChangesConcurrent: changes stored concurrently are numbered
// without gaps in an order in which replaying them gives the board, every
// rank exact.
func testBoardChangesConcurrent(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(12)
	var wg sync.WaitGroup
	errs := make(chan error, len(ps)*6)
	for i, p := range ps {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for j := range 6 {
				sub := newSub(p.ID, "lvl", 1, int64(rng.IntN(5)*100), true, at(rng.IntN(20)))
				if _, err := f.s.CreateSubmission(f.ctx, sub, "", ""); err != nil {
					errs <- fmt.Errorf("submission %d of %s: %w", j, p.Name, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, ok := f.changes("lvl", 1, 0)
	if !ok {
		t.Fatal("changes after 0: not ok")
	}
	seen := map[uuid.UUID]bool{}
	for i, c := range all {
		if c.Seq != int64(i+1) {
			t.Fatalf("change %d has seq %d", i, c.Seq)
		}
		seen[c.PlayerID] = true
	}
	board := f.wholeBoard("lvl", 1, 5)
	if len(seen) != len(board) {
		t.Errorf("%d players in the changes, %d on the board", len(seen), len(board))
	}
	if diff := cmp.Diff(board, replayChanges(t, nil, all)); diff != "" {
		t.Errorf("replayed changes differ from the board (-board +replayed):\n%s", diff)
	}
	if page := f.board(game.BoardQuery{Slug: "lvl"}); page.Seq != int64(len(all)) {
		t.Errorf("page seq %d, %d changes", page.Seq, len(all))
	}
}
