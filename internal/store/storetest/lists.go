package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// The lists the API pages through with cursors (game/lists.go): read page
// by page, each existing item comes exactly once and in order, also when
// items are added between two pages.

func slugsOf(ls []game.LevelSummary) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.Slug)
	}
	return out
}

// testLevelPages: CurrentLevels finds the current versions of the levels
// named; LevelsAfter pages through the others by slug in byte order
// ("a-b" before "a0" before "ab", whatever the database's collation),
// leaving out those skipped.
func testLevelPages(t *testing.T, f *fixture) {
	for _, slug := range []string{"ab", "a0", "a-b", "zz", "m", "b", "campaign-one", "c", "campaign-two", "d", "e"} {
		f.level(slug, "h1")
	}
	f.level("b", "h2") // a new version is still one level
	current, err := f.s.CurrentLevels(f.ctx, []string{"campaign-two", "nowhere", "campaign-one", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "campaign-one", "campaign-two"}, slugsOf(current)); diff != "" {
		t.Errorf("CurrentLevels (-want +got):\n%s", diff)
	}
	if i := slices.IndexFunc(current, func(l game.LevelSummary) bool { return l.Slug == "b" }); i < 0 || current[i].Version != 2 {
		t.Errorf("CurrentLevels gave %+v, want b at version 2", current)
	}
	skip := []string{"campaign-one", "campaign-two"}
	var walked []string
	after := ""
	for i := 0; ; i++ {
		page, err := f.s.LevelsAfter(f.ctx, after, skip, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 3 {
			t.Fatalf("page of %d levels with limit 3", len(page))
		}
		walked = append(walked, slugsOf(page)...)
		if len(page) < 3 || i > 20 {
			break
		}
		after = page[len(page)-1].Slug
		if i == 0 {
			// Between pages: one level before the cursor, one after it.
			f.level("a", "h1")
			f.level("x", "h1")
		}
	}
	want := []string{"a-b", "a0", "ab", "b", "c", "d", "e", "m", "x", "zz"}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("LevelsAfter pages of 3 (-want +got):\n%s", diff)
	}
	if page, err := f.s.LevelsAfter(f.ctx, "zz", skip, 3); err != nil || len(page) != 0 {
		t.Errorf("LevelsAfter the last = %v, %v; want nothing", slugsOf(page), err)
	}
	if page, err := f.s.LevelsAfter(f.ctx, "", nil, 0); err != nil || len(page) != 0 {
		t.Errorf("LevelsAfter limit 0 = %v, %v; want nothing", slugsOf(page), err)
	}
	if page, err := f.s.LevelsAfter(f.ctx, "x", nil, 5); err != nil || !cmp.Equal(slugsOf(page), []string{"zz"}) {
		t.Errorf("LevelsAfter x, skipping nothing = %v, %v; want [zz]", slugsOf(page), err)
	}
}

// testSeasonPages: the seasons, the latest first, by pages; a season
// stored between two pages starts after every season already listed, so
// it is on no later page and moves nothing.
func testSeasonPages(t *testing.T, f *seasonFixture) {
	for w := range 7 {
		f.ensure(midWeek.AddDate(0, 0, 7*w))
	}
	first, err := f.s.Seasons(f.ctx, game.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ss []game.Season) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	want := []string{"2025-W18", "2025-W17", "2025-W16", "2025-W15", "2025-W14", "2025-W13", "2025-W12", "2025-W11"}
	if diff := cmp.Diff(want, ids(first.Seasons)); diff != "" || first.Next != "" {
		t.Errorf("Seasons, default limit (-want +got):\n%s next %q", diff, first.Next)
	}
	var walked []string
	q := game.ListQuery{Limit: 3}
	for i := 0; ; i++ {
		page, err := f.s.Seasons(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Seasons) > 3 || (page.Next != "" && len(page.Seasons) != 3) {
			t.Errorf("page %d: %d seasons, next %q", i, len(page.Seasons), page.Next)
		}
		walked = append(walked, ids(page.Seasons)...)
		if page.Next == "" || i > 20 {
			break
		}
		q.Cursor = page.Next
		if i == 0 {
			f.ensure(midWeek.AddDate(0, 0, 7*7))
		}
	}
	if diff := cmp.Diff(want, walked); diff != "" {
		t.Errorf("Seasons, pages of 3 with a season stored between (-want +got):\n%s", diff)
	}
	for _, q := range []game.ListQuery{{Limit: 101}, {Limit: -1}, {Cursor: "x"}, {Cursor: game.DuelListCursor{}.String()}} {
		_, err := f.s.Seasons(f.ctx, q)
		wantCode(t, fmt.Sprintf("Seasons(%+v)", q), err, game.EINVALID)
	}
}

// testDuelPages: a player's duels, newest first (ties of creation time by
// id), by pages, from both sides; duels created between two pages, newer
// or older than the cursor, move nothing already listed.
func testDuelPages(t *testing.T, f *fixture) {
	ds := f.duels()
	f.level("arena", "h1")
	me := f.player("me")
	others := f.players(15)
	var want []game.Duel
	for i, o := range others[:11] {
		created := at(100 + i/2) // pairs created in the same microsecond
		d := challenge("arena", me.ID, o.ID, created)
		if i%3 == 0 {
			d = challenge("arena", o.ID, me.ID, created)
		}
		want = append(want, f.mustDuel(ds.CreateDuel(f.ctx, d, duelRules)))
	}
	// Someone else's duel is in no page of mine.
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", others[12].ID, others[13].ID, at(105)), duelRules))
	slices.SortFunc(want, func(a, b game.Duel) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return slices.Compare(b.ID[:], a.ID[:])
	})
	ids := func(list []game.Duel) []uuid.UUID {
		out := []uuid.UUID{}
		for _, d := range list {
			out = append(out, d.ID)
		}
		return out
	}
	var walked []game.Duel
	q := game.ListQuery{Limit: 4}
	for i := 0; ; i++ {
		page, err := ds.PlayerDuels(f.ctx, me.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Duels) > 4 || (page.Next != "" && len(page.Duels) != 4) {
			t.Errorf("page %d: %d duels, next %q", i, len(page.Duels), page.Next)
		}
		walked = append(walked, page.Duels...)
		if page.Next == "" || i > 20 {
			break
		}
		q.Cursor = page.Next
		if i == 0 {
			// Newer than every listed duel: on no later page. Older than
			// every one: on the last.
			f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", me.ID, others[11].ID, at(200)), duelRules))
			older := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", others[14].ID, me.ID, at(50)), duelRules))
			want = append(want, older)
		}
	}
	if diff := cmp.Diff(ids(want), ids(walked)); diff != "" {
		t.Errorf("PlayerDuels, pages of 4 (-want +got):\n%s", diff)
	}
	if all, err := ds.PlayerDuels(f.ctx, me.ID, game.ListQuery{}); err != nil || len(all.Duels) != 13 || all.Next != "" {
		t.Errorf("PlayerDuels default limit: %d duels, next %q, %v; want all 13", len(all.Duels), all.Next, err)
	}
	if one, err := ds.PlayerDuels(f.ctx, me.ID, game.ListQuery{Limit: 1}); err != nil || len(one.Duels) != 1 || one.Duels[0].Result != nil {
		t.Errorf("PlayerDuels limit 1 = %+v, %v", one, err)
	}
	far := game.DuelListCursor{CreatedAt: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}.String()
	if none, err := ds.PlayerDuels(f.ctx, me.ID, game.ListQuery{Cursor: far}); err != nil || len(none.Duels) != 0 || none.Next != "" {
		t.Errorf("PlayerDuels before everything = %+v, %v", none, err)
	}
	for _, q := range []game.ListQuery{{Limit: 101}, {Limit: -1}, {Cursor: "x"}, {Cursor: game.SeasonListCursor{}.String()}} {
		_, err := ds.PlayerDuels(f.ctx, me.ID, q)
		wantCode(t, fmt.Sprintf("PlayerDuels(%+v)", q), err, game.EINVALID)
	}
}
