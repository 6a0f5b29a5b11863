package pgstore_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/store/pgstore"
)

// A new version of a level many players have passed does not stall anyone else: while its
// old bests are being taken off the global board, other players' improving submissions on
// other levels complete (the drain waits for them, between two of its batches, and would
// wait forever if they were blocked behind it), and when it ends the global board is
// exactly the sum of every player's current bests, its ranks exact.
func TestReversionDoesNotStallOthers(t *testing.T) {
	t.Parallel()
	const players, victims, bucket = 400, 8, 16
	s := open(t, bucket)
	ctx := t.Context()
	put := func(slug, hash string) game.Level {
		l, _, err := s.PutLevel(ctx, game.Level{Slug: slug, Title: slug, Difficulty: "easy",
			Definition: json.RawMessage(`{"hash":"` + hash + `"}`), ContentHash: hash, CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	put("popular", "p1")
	put("other", "o1")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	submit := func(p uuid.UUID, slug string, version int, score int64, at time.Time) error {
		_, err := s.CreateSubmission(ctx, game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p, Slug: slug, Version: version,
			Design: json.RawMessage(`{}`), Passed: true, Score: score, CreatedAt: at}, "", "")
		return err
	}
	ids := make([]uuid.UUID, players)
	for i := range ids {
		_, hash := game.NewToken()
		p, err := s.CreatePlayer(ctx, fmt.Sprintf("player-%04d", i), game.RolePlayer, hash)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.ID
		if err := submit(p.ID, "popular", 1, int64(1000+i%97), t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if err := submit(p.ID, "other", 1, int64(500+i%13), t0.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The victims have passed the popular level too, and one of them plays its new
	// version during the drain: the player the drain reaches last (it goes in player
	// order).
	last := 0
	for i, id := range ids {
		if id.String() > ids[last].String() {
			last = i
		}
	}
	ids[0], ids[last] = ids[last], ids[0]
	popular0 := int64(1000 + last%97)
	other0 := int64(0)
	if last%3 == 0 {
		other0 = int64(500 + last%13)
	}
	batches := 0
	var once sync.Once
	victimsDone := make(chan error, victims)
	pgstore.SetDrain(s, 50, func(moved int) {
		batches++
		once.Do(func() {
			for v := range victims {
				go func() {
					at := t0.Add(time.Hour + time.Duration(v)*time.Second)
					if v == 0 {
						victimsDone <- submit(ids[v], "popular", 2, 7, at)
						return
					}
					victimsDone <- submit(ids[v], "other", 1, 10_000+int64(v), at)
				}()
			}
			for range victims {
				select {
				case err := <-victimsDone:
					if err != nil {
						t.Errorf("victim submission during the drain: %v", err)
					}
				case <-time.After(30 * time.Second):
					t.Errorf("a victim's submission is still blocked behind the re-versioning")
					return
				}
			}
			// Read during the drain: the victim who played the new version
			// counts it and not the old one.
			e, err := s.PlayerRank(ctx, "", 0, ids[0])
			if err != nil || e.Score != other0+7 {
				t.Errorf("during the drain, the global total of a player of the new version = %d (%v), want %d (not counting the old version's %d)",
					e.Score, err, other0+7, popular0)
			}
		})
	})
	if v := put("popular", "p2"); v.Version != 2 {
		t.Fatalf("new version = %d, want 2", v.Version)
	}
	if batches < players/50 {
		t.Errorf("the drain ran %d batches, want at least %d", batches, players/50)
	}
	// The global board is the sum of current bests: "other" v1 and "popular" v2.
	want := map[uuid.UUID]int64{}
	for i, id := range ids {
		j := i // the seed index of ids[i]
		switch i {
		case 0:
			j = last
		case last:
			j = 0
		}
		if j%3 == 0 {
			want[id] += int64(500 + j%13)
		}
	}
	for v := 1; v < victims; v++ {
		want[ids[v]] = 10_000 + int64(v)
	}
	want[ids[0]] += 7
	got := map[uuid.UUID]int64{}
	q := game.BoardQuery{Limit: 100}
	for rank := int64(1); ; {
		page, err := s.Board(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entries {
			if e.Rank != rank {
				t.Errorf("global entry %s has rank %d, want %d", e.PlayerName, e.Rank, rank)
			}
			rank++
			got[e.PlayerID] = e.Score
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if len(got) != len(want) {
		t.Errorf("global board has %d players, want %d", len(got), len(want))
	}
	for id, score := range want {
		if got[id] != score {
			t.Errorf("player %s: global %d, want %d", id, got[id], score)
		}
	}
	var pending int
	if err := pgstore.Pool(s).QueryRow(ctx, `SELECT count(*) FROM global_drains`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("global_drains holds %d boards (%v) after the drain", pending, err)
	}
}

// A stored level version never changes, even by hand: the database refuses it.
func TestStoredVersionImmutable(t *testing.T) {
	t.Parallel()
	s := open(t, 0)
	ctx := t.Context()
	if _, _, err := s.PutLevel(ctx, game.Level{Slug: "fixed", Title: "Fixed", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h1", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Pool(s).Exec(ctx, `UPDATE levels SET content_hash = 'h2', definition = '{"x":1}' WHERE slug = 'fixed'`)
	if err == nil {
		t.Fatal("an UPDATE of a stored version's content succeeded")
	}
	if l, err := s.Level(ctx, "fixed", 1); err != nil || l.ContentHash != "h1" {
		t.Errorf("Level after a refused UPDATE = %+v, %v", l, err)
	}
}
