package storetest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

func testSubmissions(t *testing.T, f *fixture) {
	ada, bob := f.player("ada"), f.player("bob")
	f.level("lvl", "h1")

	type step struct {
		name   string
		sub    game.Submission
		want   game.SubmissionReceipt // Submission is filled in
		wantEr string
	}
	first := newSub(ada.ID, "lvl", 1, 100, true, at(1).Add(1500)) // ns truncated
	first.Design = json.RawMessage(` {"components":[ {"kind":"lb"} ]} `)
	noResult := newSub(bob.ID, "lvl", 1, 0, false, at(2))
	noResult.Result = nil
	bad := newSub(ada.ID, "lvl", 1, -1, true, at(3))
	steps := []step{
		{name: "first pass", sub: first, want: game.SubmissionReceipt{Improved: true, Rank: 1}},
		{name: "failed, no result", sub: noResult, want: game.SubmissionReceipt{}},
		{name: "bob passes higher", sub: newSub(bob.ID, "lvl", 1, 150, true, at(4)), want: game.SubmissionReceipt{Improved: true, Rank: 1}},
		{name: "ada lower", sub: newSub(ada.ID, "lvl", 1, 90, true, at(5)), want: game.SubmissionReceipt{Rank: 2}},
		{name: "ada equal", sub: newSub(ada.ID, "lvl", 1, 100, true, at(6)), want: game.SubmissionReceipt{Rank: 2}},
		{name: "ada failed with high score", sub: newSub(ada.ID, "lvl", 1, 999, false, at(7)), want: game.SubmissionReceipt{}},
		{name: "ada beats bob", sub: newSub(ada.ID, "lvl", 1, 200, true, at(8)), want: game.SubmissionReceipt{Improved: true, Rank: 1}},
		{name: "unknown level", sub: newSub(ada.ID, "nope", 1, 1, true, at(9)), wantEr: game.ENOTFOUND},
		{name: "unknown version", sub: newSub(ada.ID, "lvl", 2, 1, true, at(9)), wantEr: game.ENOTFOUND},
		{name: "unknown player", sub: newSub(uuid.New(), "lvl", 1, 1, true, at(9)), wantEr: game.ENOTFOUND},
		{name: "duplicate id", sub: first, wantEr: game.ECONFLICT},
		{name: "negative score", sub: bad, wantEr: game.EINVALID},
		{name: "invalid design", sub: func() game.Submission {
			s := newSub(ada.ID, "lvl", 1, 1, true, at(9))
			s.Design = json.RawMessage(`{`)
			return s
		}(), wantEr: game.EINVALID},
	}
	for _, st := range steps {
		rec, err := f.s.CreateSubmission(f.ctx, st.sub, "", "")
		if st.wantEr != "" {
			wantCode(t, st.name, err, st.wantEr)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		want := st.want
		want.Submission = st.sub
		want.Submission.CreatedAt = game.Timestamp(st.sub.CreatedAt)
		if diff := cmp.Diff(want, rec); diff != "" {
			t.Errorf("%s: receipt (-want +got):\n%s", st.name, diff)
		}
		got, err := f.s.Submission(f.ctx, st.sub.ID)
		if err != nil {
			t.Fatalf("%s: Submission: %v", st.name, err)
		}
		if diff := cmp.Diff(want.Submission, got); diff != "" {
			t.Errorf("%s: Submission (-want +got):\n%s", st.name, diff)
		}
	}
	_, err := f.s.Submission(f.ctx, uuid.New())
	wantCode(t, "Submission unknown", err, game.ENOTFOUND)

	e, err := f.s.PlayerRank(f.ctx, "lvl", 0, bob.ID)
	want := game.Entry{Rank: 2, PlayerID: bob.ID, PlayerName: "bob", Score: 150, AchievedAt: at(4), SubmissionID: steps[2].sub.ID}
	if err != nil || !cmp.Equal(want, e) {
		t.Errorf("PlayerRank(bob) = %+v, %v; want %+v", e, err, want)
	}
	_, err = f.s.PlayerRank(f.ctx, "lvl", 0, uuid.New())
	wantCode(t, "PlayerRank not on board", err, game.ENOTFOUND)
	_, err = f.s.PlayerRank(f.ctx, "nope", 0, bob.ID)
	wantCode(t, "PlayerRank unknown level", err, game.ENOTFOUND)
}

func testIdempotency(t *testing.T, f *fixture) {
	ada, bob := f.player("ada"), f.player("bob")
	f.level("lvl", "h1")

	orig := newSub(ada.ID, "lvl", 1, 100, true, at(1))
	first, err := f.s.CreateSubmission(f.ctx, orig, "key-1", "hash-A")
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || !first.Improved || first.Rank != 1 {
		t.Fatalf("first receipt = %+v", first)
	}
	// bob overtakes ada: a replay still answers what the first call did.
	f.submit(bob.ID, "lvl", 1, 500, at(2))

	retry := newSub(ada.ID, "lvl", 1, 100, true, at(3)) // the caller made a new ID and time
	got, err := f.s.CreateSubmission(f.ctx, retry, "key-1", "hash-A")
	if err != nil {
		t.Fatal(err)
	}
	want := first
	want.Replayed = true
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}
	_, err = f.s.Submission(f.ctx, retry.ID)
	wantCode(t, "replayed submission must not be stored", err, game.ENOTFOUND)

	_, err = f.s.CreateSubmission(f.ctx, retry, "key-1", "hash-B")
	wantCode(t, "same key, different request", err, game.ECONFLICT)

	// Keys belong to a player.
	other, err := f.s.CreateSubmission(f.ctx, newSub(bob.ID, "lvl", 1, 10, true, at(4)), "key-1", "hash-B")
	if err != nil || other.Replayed {
		t.Errorf("bob with ada's key: %+v, %v; want a fresh receipt", other, err)
	}
	// A failed request stores nothing under its key.
	_, err = f.s.CreateSubmission(f.ctx, newSub(ada.ID, "nope", 1, 1, true, at(5)), "key-2", "hash-C")
	wantCode(t, "unknown level", err, game.ENOTFOUND)
	rec, err := f.s.CreateSubmission(f.ctx, newSub(ada.ID, "lvl", 1, 1, false, at(6)), "key-2", "hash-D")
	if err != nil || rec.Replayed {
		t.Errorf("key of a failed request: %+v, %v; want a fresh receipt", rec, err)
	}
	_, err = f.s.CreateSubmission(f.ctx, newSub(uuid.New(), "lvl", 1, 1, false, at(6)), "key-3", "hash-E")
	wantCode(t, "unknown player with key", err, game.ENOTFOUND)

	page := f.board(game.BoardQuery{Slug: "lvl"})
	if page.Total != 2 {
		t.Errorf("board total = %d, want 2", page.Total)
	}
}

func testIdempotencyConcurrent(t *testing.T, f *fixture) {
	ada := f.player("ada")
	f.level("lvl", "h1")
	const n = 10
	recs := make([]game.SubmissionReceipt, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			recs[i], errs[i] = f.s.CreateSubmission(f.ctx, newSub(ada.ID, "lvl", 1, int64(100+i), true, at(i)), "same", "h")
		})
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !recs[i].Replayed {
			fresh++
		}
		if recs[i].Submission.ID != recs[0].Submission.ID {
			t.Errorf("call %d stored %v, call 0 %v: want one submission", i, recs[i].Submission.ID, recs[0].Submission.ID)
		}
	}
	if fresh != 1 {
		t.Errorf("%d calls wrote, want 1", fresh)
	}
	page := f.board(game.BoardQuery{Slug: "lvl"})
	if len(page.Entries) != 1 || page.Entries[0].SubmissionID != recs[0].Submission.ID {
		t.Errorf("board = %+v, want only the one stored submission", page.Entries)
	}
}
