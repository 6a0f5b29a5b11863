package storetest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/game"
)

func testLevels(t *testing.T, f *fixture) {
	in := level("b-second", "h1")
	// Opaque JSON comes back byte for byte: spacing, key order, duplicates.
	in.Definition = json.RawMessage(`{ "z": 1,  "a" : [1, 2.50, "\u00e9"], "a": null }`)
	in.CreatedAt = t0.Add(123456789) // nanoseconds are truncated to µs
	in.WorstCaseCost = 123_456       // what storing it found is kept with the version
	got, created, err := f.s.PutLevel(f.ctx, in)
	if err != nil || !created {
		t.Fatalf("PutLevel = %v, %v; want created", created, err)
	}
	want := in
	want.Version = 1
	want.CreatedAt = game.Timestamp(in.CreatedAt)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutLevel (-want +got):\n%s", diff)
	}
	for _, v := range []int{0, 1} {
		l, err := f.s.Level(f.ctx, "b-second", v)
		if err != nil {
			t.Fatalf("Level(v%d): %v", v, err)
		}
		if diff := cmp.Diff(want, l); diff != "" {
			t.Errorf("Level(v%d) (-want +got):\n%s", v, diff)
		}
	}

	// Loading the same content again (a restart) is a no-op.
	again := in
	again.Title = "ignored"
	again.CreatedAt = at(100)
	got, created, err = f.s.PutLevel(f.ctx, again)
	if err != nil || created {
		t.Errorf("PutLevel same hash: created = %v, err = %v; want no-op", created, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PutLevel same hash returned (-want +got):\n%s", diff)
	}

	a := f.level("a-first", "h2")
	c := f.level("c-third", "h3")
	levels, err := f.s.Levels(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantList := []game.LevelSummary{a.Summary(), want.Summary(), c.Summary()}
	if diff := cmp.Diff(wantList, levels); diff != "" {
		t.Errorf("Levels (-want +got):\n%s", diff)
	}

	_, err = f.s.Level(f.ctx, "nope", 0)
	wantCode(t, "Level unknown slug", err, game.ENOTFOUND)
	_, err = f.s.Level(f.ctx, "a-first", 2)
	wantCode(t, "Level unknown version", err, game.ENOTFOUND)

	bad := []game.Level{
		{Slug: "", ContentHash: "h", Definition: json.RawMessage(`{}`), CreatedAt: t0},
		{Slug: "x", ContentHash: "", Definition: json.RawMessage(`{}`), CreatedAt: t0},
		{Slug: "x", ContentHash: "h", Definition: json.RawMessage(`{`), CreatedAt: t0},
		{Slug: "x", ContentHash: "h", Definition: json.RawMessage(`{}`)},
	}
	for i, l := range bad {
		_, _, err := f.s.PutLevel(f.ctx, l)
		wantCode(t, "PutLevel invalid "+string(rune('0'+i)), err, game.EINVALID)
	}
}

// testLevelOwnVersionNumbers: a level that carries its own version number is
// stored under it, so the number in a level file is the one every client
// shows; a number not above the current version gives way to current+1.
func testLevelOwnVersionNumbers(t *testing.T, f *fixture) {
	p := f.player("ada")
	numbered := func(hash string, version int) game.Level {
		l := level("own", hash)
		l.Version = version
		return l
	}
	steps := []struct {
		hash        string
		version     int
		wantVersion int
		wantCreated bool
	}{
		{"h1", 3, 3, true},  // a new slug: the level's own number
		{"h1", 3, 3, false}, // the same content: nothing written
		{"h2", 7, 7, true},  // numbers may skip
		{"h3", 5, 8, true},  // not above the current version: current+1
		{"h4", 0, 9, true},  // no number: current+1
	}
	for _, s := range steps {
		got, created, err := f.s.PutLevel(f.ctx, numbered(s.hash, s.version))
		if err != nil || created != s.wantCreated || got.Version != s.wantVersion {
			t.Fatalf("PutLevel(%s, v%d) = v%d, created %v, %v; want v%d, created %v",
				s.hash, s.version, got.Version, created, err, s.wantVersion, s.wantCreated)
		}
	}
	for v, hash := range map[int]string{3: "h1", 7: "h2", 8: "h3", 9: "h4", 0: "h4"} {
		if l, err := f.s.Level(f.ctx, "own", v); err != nil || l.ContentHash != hash || (v != 0 && l.Version != v) {
			t.Errorf("Level(own, v%d) = v%d %q, %v; want %q", v, l.Version, l.ContentHash, err, hash)
		}
	}
	for _, v := range []int{1, 2, 4, 10} {
		if _, err := f.s.Level(f.ctx, "own", v); game.ErrorCode(err) != game.ENOTFOUND {
			t.Errorf("Level(own, v%d) = %v, want ENOTFOUND: no such version was stored", v, err)
		}
	}
	// Scores on a skipping version go to its board and to the global board
	// while it is current, and leave the global board when it is not.
	f.submit(p.ID, "own", 9, 40, at(1))
	if page := f.board(game.BoardQuery{Slug: "own"}); page.Version != 9 || len(page.Entries) != 1 {
		t.Errorf("current board = %+v, want version 9 with ada", page)
	}
	if g := f.board(game.BoardQuery{}); len(g.Entries) != 1 || g.Entries[0].Score != 40 {
		t.Errorf("global board = %+v, want ada with 40", g)
	}
	if _, _, err := f.s.PutLevel(f.ctx, numbered("h5", 12)); err != nil {
		t.Fatal(err)
	}
	if g := f.board(game.BoardQuery{}); len(g.Entries) != 0 {
		t.Errorf("global board after version 12 = %+v, want empty", g)
	}

	created, err := f.s.CreateLevel(f.ctx, func() game.Level { l := level("own-new", "n1"); l.Version = 4; return l }())
	if err != nil || created.Version != 4 {
		t.Errorf("CreateLevel(v4) = v%d, %v; want v4", created.Version, err)
	}
}

func testLevelVersioning(t *testing.T, f *fixture) {
	p := f.player("ada")
	f.level("lvl", "h1")

	// A stored version never changes: new content is version 2, even
	// with no submissions on version 1.
	in := level("lvl", "h2")
	in.Title = "Renamed"
	got, created, err := f.s.PutLevel(f.ctx, in)
	if err != nil || !created || got.Version != 2 || got.Title != "Renamed" {
		t.Fatalf("PutLevel unused = %+v, %v, %v; want version 2", got, created, err)
	}
	if v1, err := f.s.Level(f.ctx, "lvl", 1); err != nil || v1.ContentHash != "h1" || v1.Title != "Level lvl" {
		t.Errorf("version 1 after a change = %+v, %v; want it unchanged", v1, err)
	}

	// A failed submission and a pass on version 2; the next change is version 3.
	if _, err := f.s.CreateSubmission(f.ctx, newSub(p.ID, "lvl", 2, 0, false, at(1)), "", ""); err != nil {
		t.Fatal(err)
	}
	f.submit(p.ID, "lvl", 2, 50, at(2))
	got, created, err = f.s.PutLevel(f.ctx, level("lvl", "h3"))
	if err != nil || !created || got.Version != 3 {
		t.Fatalf("PutLevel used = %+v, %v, %v; want version 3", got, created, err)
	}
	got, created, err = f.s.PutLevel(f.ctx, level("lvl", "h4"))
	if err != nil || !created || got.Version != 4 || got.ContentHash != "h4" {
		t.Fatalf("PutLevel v3 unused = %+v, %v, %v; want version 4", got, created, err)
	}
	// Going back to old content is new content too.
	f.submit(p.ID, "lvl", 4, 10, at(3))
	got, _, err = f.s.PutLevel(f.ctx, level("lvl", "h2"))
	if err != nil || got.Version != 5 {
		t.Fatalf("PutLevel old content = %+v, %v; want version 5", got, err)
	}

	for v, hash := range map[int]string{1: "h1", 2: "h2", 3: "h3", 4: "h4", 5: "h2", 0: "h2"} {
		l, err := f.s.Level(f.ctx, "lvl", v)
		if err != nil || l.ContentHash != hash {
			t.Errorf("Level(v%d) = %q, %v; want hash %q", v, l.ContentHash, err, hash)
		}
	}
	levels, _ := f.s.Levels(f.ctx)
	if len(levels) != 1 || levels[0].Version != 5 {
		t.Errorf("Levels = %+v, want only version 5", levels)
	}

	// Old boards stay readable; the current one starts empty.
	for v, score := range map[int]int64{2: 50, 4: 10} {
		page := f.board(game.BoardQuery{Slug: "lvl", Version: v})
		if page.Version != v || len(page.Entries) != 1 || page.Entries[0].Score != score {
			t.Errorf("board v%d = %+v, want ada with %d", v, page, score)
		}
	}
	page := f.board(game.BoardQuery{Slug: "lvl"})
	if page.Version != 5 || len(page.Entries) != 0 || page.Total != 0 {
		t.Errorf("current board = %+v, want empty version 5", page)
	}
	// Submissions to an old version still land on its board.
	rec := f.submit(p.ID, "lvl", 2, 70, at(4))
	if !rec.Improved || rec.Rank != 1 {
		t.Errorf("submission to old version: %+v, want improved rank 1", rec)
	}
	if _, err := f.s.Board(f.ctx, game.BoardQuery{Slug: "lvl", Version: 6}); game.ErrorCode(err) != game.ENOTFOUND {
		t.Errorf("board of unknown version: %v, want ENOTFOUND", err)
	}
}

// testLevelsConcurrentLoad is several replicas loading the built-in
// campaign at once: each level is created exactly once.
func testLevelsConcurrentLoad(t *testing.T, f *fixture) {
	const replicas = 6
	created := make([]bool, replicas)
	versions := make([]int, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			l, c, err := f.s.PutLevel(f.ctx, level("boot", "h1"))
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
			}
			created[i], versions[i] = c, l.Version
		})
	}
	wg.Wait()
	n := 0
	for i := range replicas {
		if created[i] {
			n++
		}
		if versions[i] != 1 {
			t.Errorf("replica %d got version %d, want 1", i, versions[i])
		}
	}
	if n != 1 {
		t.Errorf("%d replicas created the level, want 1", n)
	}
}
