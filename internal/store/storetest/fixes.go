package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// testEqualScoreTies: of two submissions of one player with the same score,
// the earlier reach is the best, whichever is stored first (concurrent
// requests commit in any order), on the level board and in the global
// board's time.
func testEqualScoreTies(t *testing.T, f *fixture) {
	ada, bob, cyd := f.player("ada"), f.player("bob"), f.player("cyd")
	f.level("lvl", "h1")
	f.level("two", "h2")
	f.submit(bob.ID, "lvl", 1, 10, at(15))
	f.submit(ada.ID, "two", 1, 5, at(5))
	if rec := f.submit(ada.ID, "lvl", 1, 10, at(20)); rec.Rank != 2 {
		t.Fatalf("ada at t=20 behind bob at t=15: rank %d, want 2", rec.Rank)
	}
	early := newSub(ada.ID, "lvl", 1, 10, true, at(10))
	rec, err := f.s.CreateSubmission(f.ctx, early, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Improved || rec.Rank != 1 {
		t.Errorf("the same score reached earlier: Improved = %v, Rank = %d; want true, 1", rec.Improved, rec.Rank)
	}
	for _, sec := range []int{12, 10} { // later, and exactly as early: no change
		if rec := f.submit(ada.ID, "lvl", 1, 10, at(sec)); rec.Improved || rec.Rank != 1 {
			t.Errorf("same score at t=%d: Improved = %v, Rank = %d; want false, 1", sec, rec.Improved, rec.Rank)
		}
	}
	e, err := f.s.PlayerRank(f.ctx, "lvl", 0, ada.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := game.Entry{Rank: 1, PlayerID: ada.ID, PlayerName: "ada", Score: 10, AchievedAt: at(10), SubmissionID: early.ID}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("ada's entry (-want +got):\n%s", diff)
	}
	// cyd's latest current best (on "two", t=30) keeps setting the time of
	// their total when an earlier tie replaces their "lvl" best.
	f.submit(cyd.ID, "two", 1, 5, at(30))
	f.submit(cyd.ID, "lvl", 1, 10, at(25))
	f.submit(cyd.ID, "lvl", 1, 10, at(8))

	lvl := f.wholeBoard("lvl", 0, 2)
	var order []string
	for _, e := range lvl {
		order = append(order, fmt.Sprintf("%s:%d@%d", e.PlayerName, e.Score, int(e.AchievedAt.Sub(t0).Seconds())))
	}
	if diff := cmp.Diff([]string{"cyd:10@8", "ada:10@10", "bob:10@15"}, order); diff != "" {
		t.Errorf("level board (-want +got):\n%s", diff)
	}
	order = nil
	for _, e := range f.wholeBoard("", 0, 2) {
		order = append(order, fmt.Sprintf("%s:%d@%d", e.PlayerName, e.Score, int(e.AchievedAt.Sub(t0).Seconds())))
	}
	// ada's total of 15 was reached when her latest current best was set
	// (lvl, t=10 now); cyd's at t=30 ("two").
	if diff := cmp.Diff([]string{"ada:15@10", "cyd:15@30", "bob:10@15"}, order); diff != "" {
		t.Errorf("global board (-want +got):\n%s", diff)
	}

	// Concurrently: whichever commits first, the earlier reach ends up best.
	for i := range 8 {
		p := f.player(fmt.Sprintf("racer-%d", i))
		subs := []game.Submission{newSub(p.ID, "lvl", 1, 10, true, at(100+i)), newSub(p.ID, "lvl", 1, 10, true, at(200+i))}
		var wg sync.WaitGroup
		for _, sub := range subs {
			wg.Go(func() {
				if _, err := f.s.CreateSubmission(f.ctx, sub, "", ""); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		e, err := f.s.PlayerRank(f.ctx, "lvl", 0, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !e.AchievedAt.Equal(at(100+i)) || e.SubmissionID != subs[0].ID {
			t.Errorf("racer %d: best reached at %v by %v; want %v by %v", i, e.AchievedAt, e.SubmissionID, at(100+i), subs[0].ID)
		}
	}
	f.wholeBoard("lvl", 0, 3)
	f.wholeBoard("", 0, 3)
}

// testIdempotencyLookup: a retry can find the first receipt without
// submitting again.
func testIdempotencyLookup(t *testing.T, f *fixture) {
	ada, bob := f.player("ada"), f.player("bob")
	f.level("lvl", "h1")
	_, err := f.s.SubmissionByIdempotencyKey(f.ctx, ada.ID, "k1", "hash-A")
	wantCode(t, "unused key", err, game.ENOTFOUND)
	first, err := f.s.CreateSubmission(f.ctx, newSub(ada.ID, "lvl", 1, 100, true, at(1)), "k1", "hash-A")
	if err != nil {
		t.Fatal(err)
	}
	f.submit(bob.ID, "lvl", 1, 500, at(2)) // the stored answer does not change
	got, err := f.s.SubmissionByIdempotencyKey(f.ctx, ada.ID, "k1", "hash-A")
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.Replayed = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookup (-want +got):\n%s", diff)
	}
	_, err = f.s.SubmissionByIdempotencyKey(f.ctx, ada.ID, "k1", "hash-B")
	wantCode(t, "same key, different request", err, game.ECONFLICT)
	_, err = f.s.SubmissionByIdempotencyKey(f.ctx, bob.ID, "k1", "hash-A")
	wantCode(t, "another player's key", err, game.ENOTFOUND)
	_, err = f.s.SubmissionByIdempotencyKey(f.ctx, ada.ID, "", "")
	wantCode(t, "no key", err, game.ENOTFOUND)
	_, err = f.s.SubmissionByIdempotencyKey(f.ctx, uuid.New(), "k1", "hash-A")
	wantCode(t, "unknown player", err, game.ENOTFOUND)
}

// testCreateLevel: CreateLevel publishes a new slug only, with its owner;
// later versions keep that owner whoever stores them.
func testCreateLevel(t *testing.T, f *fixture) {
	author, other := f.player("author"), f.player("other")
	in := level("new", "h1")
	in.Builtin = false
	in.OwnerID = author.ID
	got, err := f.s.CreateLevel(f.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Version = 1
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateLevel (-want +got):\n%s", diff)
	}
	again := level("new", "h2")
	again.OwnerID = other.ID
	_, err = f.s.CreateLevel(f.ctx, again)
	wantCode(t, "CreateLevel of an existing slug", err, game.ECONFLICT)
	if l, err := f.s.Level(f.ctx, "new", 0); err != nil || l.ContentHash != "h1" || l.OwnerID != author.ID {
		t.Errorf("after a refused CreateLevel: %+v, %v; want h1 owned by author", l, err)
	}
	// PutLevel keeps the owner of the slug in every new version.
	if l, _, err := f.s.PutLevel(f.ctx, again); err != nil || l.Version != 2 || l.OwnerID != author.ID {
		t.Errorf("PutLevel new content: v%d owner %v, %v; want v2 owned by the author", l.Version, l.OwnerID, err)
	}
	f.submit(author.ID, "new", 2, 1, at(1))
	third := level("new", "h3")
	if l, _, err := f.s.PutLevel(f.ctx, third); err != nil || l.Version != 3 || l.OwnerID != author.ID {
		t.Errorf("PutLevel new version: v%d owner %v, %v; want v3 owned by the author", l.Version, l.OwnerID, err)
	}
	if l, err := f.s.Level(f.ctx, "new", 3); err != nil || l.OwnerID != author.ID {
		t.Errorf("Level v3: owner %v, %v; want the author", l.OwnerID, err)
	}
	// No owner (built-in levels, the configured admin).
	if l, err := f.s.CreateLevel(f.ctx, level("unowned", "h4")); err != nil || l.OwnerID != uuid.Nil {
		t.Errorf("CreateLevel without owner: %+v, %v", l, err)
	}
	orphan := level("orphan", "h5")
	orphan.OwnerID = uuid.New()
	_, err = f.s.CreateLevel(f.ctx, orphan)
	wantCode(t, "CreateLevel by an unknown player", err, game.ENOTFOUND)
	_, err = f.s.CreateLevel(f.ctx, game.Level{Slug: "x"})
	wantCode(t, "CreateLevel invalid", err, game.EINVALID)
	if _, err := f.s.Level(f.ctx, "orphan", 0); game.ErrorCode(err) != game.ENOTFOUND {
		t.Errorf("a refused CreateLevel left a level: %v", err)
	}
}

// testCreateLevelConcurrent: of concurrent creations of one slug exactly
// one succeeds.
func testCreateLevelConcurrent(t *testing.T, f *fixture) {
	const n = 8
	authors := f.players(n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l := level("race", fmt.Sprintf("h%d", i))
			l.OwnerID = authors[i].ID
			_, errs[i] = f.s.CreateLevel(f.ctx, l)
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("CreateLevel %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		default:
			wantCode(t, "a losing CreateLevel", err, game.ECONFLICT)
		}
	}
	if winner < 0 {
		t.Fatal("no CreateLevel succeeded")
	}
	l, err := f.s.Level(f.ctx, "race", 0)
	if err != nil || l.Version != 1 || l.OwnerID != authors[winner].ID || l.ContentHash != fmt.Sprintf("h%d", winner) {
		t.Errorf("Level = v%d owner %v hash %s, %v; want v1 of the winner", l.Version, l.OwnerID, l.ContentHash, err)
	}
}
