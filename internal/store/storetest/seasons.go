package storetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// SeasonStore is a Store with seasons, and the clock that decides which
// season a submission counts for (the store's own: the database's for
// PostgreSQL), which the suite sets.
type SeasonStore interface {
	Store
	EnsureSeasons(ctx context.Context, sc game.SeasonSchedule) ([]game.Season, error)
	Seasons(ctx context.Context, q game.ListQuery) (game.SeasonList, error)
	Season(ctx context.Context, id string) (game.Season, error)
	SeasonBoard(ctx context.Context, id string, q game.BoardQuery) (game.BoardPage, error)
	PlayerHistory(ctx context.Context, playerID uuid.UUID) (game.PlayerHistory, error)
	EventFinalRuns(ctx context.Context, id uuid.UUID) ([]game.EventResult, error)
	SaveEventFinalRuns(ctx context.Context, id uuid.UUID, runs []game.EventResult) error
	// SetSeasonClock makes the store's season clock read t from now on;
	// the suite calls it between store calls only.
	SetSeasonClock(t time.Time)
	// DeadlineClock reads that clock: the one every deadline players race
	// against is decided by.
	DeadlineClock(ctx context.Context) (time.Time, error)
}

// RunSeasons runs the seasons contract; newStore returns a new, empty
// store for each call; the subtests run in parallel.
func RunSeasons(t *testing.T, newStore func(t *testing.T) SeasonStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *seasonFixture)
	}{
		{"Schedule", testSeasonSchedule},
		{"Pages", testSeasonPages},
		{"Board", testSeasonBoard},
		{"PastSeasonNeverChanges", testPastSeason},
		{"Pagination", testSeasonPagination},
		{"ConcurrentSubmissions", testSeasonConcurrent},
		{"PlayerHistory", testPlayerHistory},
		{"EventFinalRuns", testEventFinalRuns},
		{"DeadlineClock", testDeadlineClock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			tt.fn(t, &seasonFixture{fixture: fixture{t: t, s: s, ctx: t.Context()}, s: s})
		})
	}
}

type seasonFixture struct {
	fixture
	s SeasonStore
}

// The suite's seasons are weeks from the default anchor (a Monday): the
// clock starts on Wednesday of week 11 of 2025.
var (
	weekly   = game.SeasonSchedule{Kind: game.SeasonsWeekly, Anchor: game.DefaultSeasonAnchor}
	week11   = time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	midWeek  = week11.Add(60 * time.Hour)
	nextWeek = week11.Add(7*24*time.Hour + time.Hour)
)

func (f *seasonFixture) ensure(clock time.Time) []game.Season {
	f.t.Helper()
	f.s.SetSeasonClock(clock)
	made, err := f.s.EnsureSeasons(f.ctx, weekly)
	if err != nil {
		f.t.Fatalf("EnsureSeasons at %s: %v", clock, err)
	}
	return made
}

// whole reads a season's board through pages of limit entries, forwards
// and backwards, and checks that they agree and ranks run 1..Total.
func (f *seasonFixture) whole(id string, limit int) []game.Entry {
	f.t.Helper()
	var fwd []game.Entry
	q := game.BoardQuery{Limit: limit}
	var last game.BoardPage
	for i := 0; ; i++ {
		page, err := f.s.SeasonBoard(f.ctx, id, q)
		if err != nil {
			f.t.Fatalf("SeasonBoard(%s, %+v): %v", id, q, err)
		}
		if page.Season != id || page.Slug != "" || page.Version != 0 || page.Seq != 0 {
			f.t.Errorf("season page names season %q, slug %q, version %d, seq %d", page.Season, page.Slug, page.Version, page.Seq)
		}
		fwd = append(fwd, page.Entries...)
		last = page
		if page.Next == "" {
			break
		}
		if i > 1000 {
			f.t.Fatal("pagination does not end")
		}
		q.Cursor = page.Next
	}
	if int64(len(fwd)) != last.Total {
		f.t.Errorf("season %s: %d entries walked, Total %d", id, len(fwd), last.Total)
	}
	for i, e := range fwd {
		if e.Rank != int64(i+1) {
			f.t.Errorf("season %s: entry %d has rank %d", id, i, e.Rank)
		}
	}
	back := slices.Clone(last.Entries)
	for q.Cursor = last.Prev; q.Cursor != ""; {
		page, err := f.s.SeasonBoard(f.ctx, id, q)
		if err != nil {
			f.t.Fatalf("SeasonBoard backwards: %v", err)
		}
		back = append(slices.Clone(page.Entries), back...)
		q.Cursor = page.Prev
	}
	if diff := cmp.Diff(fwd, back); diff != "" {
		f.t.Errorf("season %s: backward walk differs (-fwd +back):\n%s", id, diff)
	}
	return fwd
}

func testSeasonSchedule(t *testing.T, f *seasonFixture) {
	made := f.ensure(midWeek)
	ids := func(ss []game.Season) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"2025-W11", "2025-W12"}, ids(made)); diff != "" {
		t.Errorf("first EnsureSeasons stored (-want +got):\n%s", diff)
	}
	if again := f.ensure(midWeek); len(again) != 0 {
		t.Errorf("EnsureSeasons again stored %v, want nothing", ids(again))
	}
	// In week 12 the season after it is due.
	if made := f.ensure(nextWeek); !cmp.Equal(ids(made), []string{"2025-W13"}) {
		t.Errorf("EnsureSeasons in week 12 stored %v, want [2025-W13]", ids(made))
	}
	list, err := f.s.Seasons(f.ctx, game.ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := []game.Season{
		{ID: "2025-W13", Name: "Week 13, 2025", StartsAt: week11.AddDate(0, 0, 14), EndsAt: week11.AddDate(0, 0, 21)},
		{ID: "2025-W12", Name: "Week 12, 2025", StartsAt: week11.AddDate(0, 0, 7), EndsAt: week11.AddDate(0, 0, 14), Current: true},
		{ID: "2025-W11", Name: "Week 11, 2025", StartsAt: week11, EndsAt: week11.AddDate(0, 0, 7)},
	}
	if diff := cmp.Diff(game.SeasonList{Seasons: want}, list); diff != "" {
		t.Errorf("Seasons (-want +got):\n%s", diff)
	}
	if s, err := f.s.Season(f.ctx, "2025-W11"); err != nil || !cmp.Equal(s, want[2]) {
		t.Errorf("Season(2025-W11) = %+v, %v", s, err)
	}
	_, err = f.s.Season(f.ctx, "1999-W01")
	wantCode(t, "Season unknown", err, game.ENOTFOUND)
	_, err = f.s.SeasonBoard(f.ctx, "1999-W01", game.BoardQuery{})
	wantCode(t, "SeasonBoard unknown", err, game.ENOTFOUND)
	_, err = f.s.SeasonBoard(f.ctx, "2025-W11", game.BoardQuery{Limit: 1000})
	wantCode(t, "SeasonBoard limit 1000", err, game.EINVALID)
	p := f.player("nobody")
	_, err = f.s.SeasonBoard(f.ctx, "2025-W11", game.BoardQuery{AroundPlayer: &p.ID})
	wantCode(t, "SeasonBoard around a player not on it", err, game.ENOTFOUND)
}

// testSeasonBoard: per player the sum over levels (by slug, whatever the
// version) of their best passing score during the season; a new version of
// a level keeps its season scores; failed submissions and submissions
// outside every season count for nothing.
func testSeasonBoard(t *testing.T, f *seasonFixture) {
	f.level("a", "a1")
	f.level("b", "b1")
	ps := f.players(4)
	// Before any season is stored: counts in none.
	f.s.SetSeasonClock(week11.Add(-time.Hour))
	f.submit(ps[3].ID, "a", 1, 999, at(0))
	f.ensure(midWeek)

	f.submit(ps[0].ID, "a", 1, 100, at(1))
	f.submit(ps[0].ID, "a", 1, 90, at(2)) // worse: no change
	f.submit(ps[0].ID, "b", 1, 50, at(3))
	f.submit(ps[1].ID, "a", 1, 150, at(4))
	if _, err := f.s.CreateSubmission(f.ctx, newSub(ps[2].ID, "a", 1, 500, false, at(5)), "", ""); err != nil {
		t.Fatal(err) // failed: counts nowhere
	}
	f.submit(ps[2].ID, "b", 1, 150, at(6)) // ties ps[1] at 150, reached later
	// A new version of a: ps[0]'s season best on a stays 100 until beaten.
	if _, created, err := f.s.PutLevel(f.ctx, level("a", "a2")); err != nil || !created {
		t.Fatalf("PutLevel a v2: %v, %v", created, err)
	}
	f.submit(ps[1].ID, "a", 2, 120, at(7)) // below their 150 on v1: no change
	f.submit(ps[0].ID, "a", 2, 110, at(8)) // beats their 100 on v1

	got := f.whole("2025-W11", 2)
	want := []game.Entry{
		{Rank: 1, PlayerID: ps[0].ID, PlayerName: ps[0].Name, Score: 160, AchievedAt: at(8)},
		{Rank: 2, PlayerID: ps[1].ID, PlayerName: ps[1].Name, Score: 150, AchievedAt: at(4)},
		{Rank: 3, PlayerID: ps[2].ID, PlayerName: ps[2].Name, Score: 150, AchievedAt: at(6)},
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".SubmissionID" }, cmp.Ignore())); diff != "" {
		t.Errorf("season board (-want +got):\n%s", diff)
	}
	// The submission of an entry is the one that reached the latest best.
	sub, err := f.s.Submission(f.ctx, got[0].SubmissionID)
	if err != nil || sub.Slug != "a" || sub.Version != 2 || sub.Score != 110 {
		t.Errorf("season entry's submission: %+v, %v; want the 110 on a v2", sub, err)
	}
	// An equal score reached earlier (committed later) moves the time back
	// to the latest remaining best.
	f.submit(ps[0].ID, "a", 2, 110, at(5))
	page, err := f.s.SeasonBoard(f.ctx, "2025-W11", game.BoardQuery{AroundPlayer: &ps[0].ID, Limit: 3})
	if err != nil || len(page.Entries) != 3 || page.Entries[0].PlayerID != ps[0].ID || !page.Entries[0].AchievedAt.Equal(at(5)) || page.Total != 3 {
		t.Errorf("around ps[0] after an equal earlier score: %+v, %v; want them first, reached at(5)", page, err)
	}
	// Level boards are untouched by seasons: a v1 has ps[3]'s 999.
	if e, err := f.s.PlayerRank(f.ctx, "a", 1, ps[3].ID); err != nil || e.Score != 999 {
		t.Errorf("level entry of a pass outside every season: %+v, %v", e, err)
	}
}

// testPastSeason: once a season has ended, nothing lands in it: its board
// is final, and submissions count in the season of the store's clock.
func testPastSeason(t *testing.T, f *seasonFixture) {
	f.level("a", "a1")
	ps := f.players(3)
	f.ensure(midWeek)
	f.submit(ps[0].ID, "a", 1, 100, at(1))
	f.submit(ps[1].ID, "a", 1, 80, at(2))
	f.ensure(nextWeek) // week 11 has ended
	final := f.whole("2025-W11", 10)
	// Submissions stamped inside week 11 by a replica's clock, stored
	// in week 12 by the store's: they count in week 12.
	f.submit(ps[1].ID, "a", 1, 200, week11.Add(time.Hour))
	f.submit(ps[2].ID, "a", 1, 50, at(3))
	if diff := cmp.Diff(final, f.whole("2025-W11", 10)); diff != "" {
		t.Errorf("the ended season's board changed (-final +now):\n%s", diff)
	}
	if diff := cmp.Diff(final, f.whole("2025-W11", 1)); diff != "" {
		t.Errorf("the ended season's board in pages of 1 (-final +now):\n%s", diff)
	}
	w12 := f.whole("2025-W12", 10)
	if len(w12) != 2 || w12[0].PlayerID != ps[1].ID || w12[0].Score != 200 || w12[1].PlayerID != ps[2].ID {
		t.Errorf("week 12's board: %+v; want ps[1] 200, ps[2] 50", w12)
	}
	if len(final) != 2 || final[0].Score != 100 || final[1].Score != 80 {
		t.Errorf("week 11's final board: %+v", final)
	}
}

// testSeasonPagination: a season board of many players with ties pages like
// every board, and agrees with a brute-force model.
func testSeasonPagination(t *testing.T, f *seasonFixture) {
	f.level("a", "a1")
	f.level("b", "b1")
	f.ensure(midWeek)
	ps := f.players(23)
	rng := rand.New(rand.NewPCG(8, 8))
	type best struct {
		score int64
		at    time.Time
		sub   uuid.UUID
	}
	bests := map[uuid.UUID]map[string]best{}
	for i := range 80 {
		p := ps[rng.IntN(len(ps))]
		slug := []string{"a", "b"}[rng.IntN(2)]
		score := int64(rng.IntN(4) * 10)
		rec := f.submit(p.ID, slug, 1, score, at(i))
		if bests[p.ID] == nil {
			bests[p.ID] = map[string]best{}
		}
		if b, ok := bests[p.ID][slug]; !ok || score > b.score {
			bests[p.ID][slug] = best{score, at(i), rec.Submission.ID}
		}
	}
	var want []game.Entry
	names := map[uuid.UUID]string{}
	for _, p := range ps {
		names[p.ID] = p.Name
	}
	for p, bs := range bests {
		e := game.Entry{PlayerID: p, PlayerName: names[p]}
		for _, b := range bs {
			e.Score += b.score
			if b.at.After(e.AchievedAt) || (b.at.Equal(e.AchievedAt) && bytes.Compare(b.sub[:], e.SubmissionID[:]) > 0) {
				e.AchievedAt, e.SubmissionID = b.at, b.sub
			}
		}
		want = append(want, e)
	}
	slices.SortFunc(want, func(a, b game.Entry) int { return a.Key().Compare(b.Key()) })
	for i := range want {
		want[i].Rank = int64(i + 1)
	}
	for _, limit := range []int{1, 4, 100} {
		if diff := cmp.Diff(want, f.whole("2025-W11", limit)); diff != "" {
			t.Errorf("season board in pages of %d (-model +store):\n%s", limit, diff)
		}
	}
	for _, i := range []int{0, len(want) / 2, len(want) - 1} {
		page, err := f.s.SeasonBoard(f.ctx, "2025-W11", game.BoardQuery{AroundPlayer: &want[i].PlayerID, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		nb, na := game.AroundWindow(i, len(want)-i, 5)
		if diff := cmp.Diff(want[i-nb:i+na], page.Entries); diff != "" {
			t.Errorf("around rank %d (-model +store):\n%s", i+1, diff)
		}
	}
}

// testSeasonConcurrent: one player's submissions on several levels at once
// all count; their total is the sum of their bests.
func testSeasonConcurrent(t *testing.T, f *seasonFixture) {
	slugs := []string{"a", "b", "c", "d"}
	for _, s := range slugs {
		f.level(s, s+"1")
	}
	f.ensure(midWeek)
	ps := f.players(3)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for _, p := range ps {
		for i, slug := range slugs {
			for k := range 3 {
				wg.Go(func() {
					_, err := f.s.CreateSubmission(f.ctx, newSub(p.ID, slug, 1, int64(10*(i+1)+k), true, at(10*i+k)), "", "")
					if err != nil {
						errs <- fmt.Errorf("%s %s: %w", p.Name, slug, err)
					}
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, e := range f.whole("2025-W11", 2) {
		// Bests 12, 22, 32, 42; the last reached at at(32).
		if e.Score != 108 || !e.AchievedAt.Equal(at(32)) {
			t.Errorf("%s: season total %d reached %s, want 108 at %s", e.PlayerName, e.Score, e.AchievedAt, at(32))
		}
	}
}

func testPlayerHistory(t *testing.T, f *seasonFixture) {
	f.level("lvl", "h1")
	ps := f.players(3)
	h, err := f.s.PlayerHistory(f.ctx, ps[0].ID)
	if err != nil || h.Seasons == nil || h.Events == nil || len(h.Seasons)+len(h.Events) != 0 {
		t.Errorf("history of a new player: %+v, %v; want empty lists", h, err)
	}
	_, err = f.s.PlayerHistory(f.ctx, uuid.New())
	wantCode(t, "PlayerHistory unknown", err, game.ENOTFOUND)

	f.ensure(midWeek)
	f.submit(ps[0].ID, "lvl", 1, 100, at(1))
	f.submit(ps[1].ID, "lvl", 1, 200, at(2))
	f.ensure(nextWeek)
	f.submit(ps[0].ID, "lvl", 1, 300, at(3))

	// An event: ps[0] second of two.
	e := f.event(newEvent("lvl", nil))
	s0, s1 := eventSub(e, ps[0].ID, 10, true, at(150)), eventSub(e, ps[1].ID, 20, true, at(151))
	for _, sub := range []game.EventSubmission{s0, s1} {
		if _, err := f.s.CreateEventSubmission(f.ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	results := []game.EventResult{
		{PlayerID: ps[0].ID, SubmissionID: s0.ID, Passed: true, Score: 10, Result: []byte(`{}`)},
		{PlayerID: ps[1].ID, SubmissionID: s1.ID, Passed: true, Score: 20, Result: []byte(`{}`)},
	}
	if done, err := f.s.FinishEvent(f.ctx, e.ID, results, at(201)); err != nil || !done {
		t.Fatalf("FinishEvent: %v, %v", done, err)
	}
	// Another, not finished: not in the history.
	open := f.event(newEvent("lvl", func(e *game.Event) { e.StartsAt, e.EndsAt = at(300), at(400) }))
	if _, err := f.s.CreateEventSubmission(f.ctx, eventSub(open, ps[0].ID, 5, true, at(301))); err != nil {
		t.Fatal(err)
	}

	h, err = f.s.PlayerHistory(f.ctx, ps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := game.PlayerHistory{
		Seasons: []game.PlayerSeason{
			{SeasonID: "2025-W12", Name: "Week 12, 2025", StartsAt: week11.AddDate(0, 0, 7), EndsAt: week11.AddDate(0, 0, 14),
				Current: true, Rank: 1, Score: 300, Total: 1},
			{SeasonID: "2025-W11", Name: "Week 11, 2025", StartsAt: week11, EndsAt: week11.AddDate(0, 0, 7),
				Rank: 2, Score: 100, Total: 2},
		},
		Events: []game.PlayerEvent{
			{EventID: e.ID, Title: e.Title, Rank: 2, Score: 10, Passed: true, Total: 2, FinishedAt: at(201)},
		},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("PlayerHistory (-want +got):\n%s", diff)
	}
	if h, err := f.s.PlayerHistory(f.ctx, ps[2].ID); err != nil || len(h.Seasons) != 0 || len(h.Events) != 0 {
		t.Errorf("history of a player who played nothing: %+v, %v", h, err)
	}
}

// testEventFinalRuns: the final runs a finisher stores on the way are read
// back byte for byte, replaced only by a run of another design, and gone
// (and no longer stored) once the event is finished.
func testEventFinalRuns(t *testing.T, f *seasonFixture) {
	f.level("lvl", "h1")
	ps := f.players(2)
	e := f.event(newEvent("lvl", nil))
	subs := []game.EventSubmission{eventSub(e, ps[0].ID, 10, true, at(150)), eventSub(e, ps[1].ID, 20, true, at(151))}
	for _, sub := range subs {
		if _, err := f.s.CreateEventSubmission(f.ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := f.s.EventFinalRuns(f.ctx, e.ID)
	if err != nil || runs == nil || len(runs) != 0 {
		t.Fatalf("EventFinalRuns before any: %v, %v; want []", runs, err)
	}
	run := func(i int, score int64, result string) game.EventResult {
		return game.EventResult{PlayerID: ps[i].ID, SubmissionID: subs[i].ID, Passed: true, Score: score, Result: []byte(result)}
	}
	first := run(0, 7, `{"passed": true,  "score": 7}`)
	if err := f.s.SaveEventFinalRuns(f.ctx, e.ID, []game.EventResult{first}); err != nil {
		t.Fatal(err)
	}
	// The same design again (a second finisher): the first run stays.
	again := run(0, 8, `{"score":8}`)
	second := run(1, 9, `{"score":9}`)
	if err := f.s.SaveEventFinalRuns(f.ctx, e.ID, []game.EventResult{again, second}); err != nil {
		t.Fatal(err)
	}
	want := []game.EventResult{first, second}
	slices.SortFunc(want, func(a, b game.EventResult) int { return bytes.Compare(a.PlayerID[:], b.PlayerID[:]) })
	runs, err = f.s.EventFinalRuns(f.ctx, e.ID)
	if diff := cmp.Diff(want, runs); err != nil || diff != "" {
		t.Errorf("EventFinalRuns (-want +got), %v:\n%s", err, diff)
	}
	err = f.s.SaveEventFinalRuns(f.ctx, e.ID, []game.EventResult{run(0, -1, `{}`)})
	wantCode(t, "a negative score", err, game.EINVALID)
	// Results that miss an entrant's final design (an attempt committed
	// after the finisher read the finals) are refused: finish again.
	_, err = f.s.FinishEvent(f.ctx, e.ID, want[:1], at(201))
	wantCode(t, "finishing without an entrant's result", err, game.ECONFLICT)
	if done, err := f.s.FinishEvent(f.ctx, e.ID, want, at(201)); err != nil || !done {
		t.Fatalf("FinishEvent: %v, %v", done, err)
	}
	if err := f.s.SaveEventFinalRuns(f.ctx, e.ID, []game.EventResult{first}); err != nil {
		t.Errorf("SaveEventFinalRuns after the finish: %v, want nothing stored and no error", err)
	}
	if runs, err := f.s.EventFinalRuns(f.ctx, e.ID); err != nil || len(runs) != 0 {
		t.Errorf("EventFinalRuns after the finish: %v, %v; want none", runs, err)
	}
	_, err = f.s.EventFinalRuns(f.ctx, uuid.New())
	if code := game.ErrorCode(err); code != "" && code != game.ENOTFOUND {
		t.Errorf("EventFinalRuns of no event: %v", err)
	}
}

// The deadline clock is the seasons' clock: the database's for PostgreSQL,
// whatever any replica's own clock says.
func testDeadlineClock(t *testing.T, f *seasonFixture) {
	for _, clock := range []time.Time{midWeek, nextWeek.Add(1234567 * time.Microsecond)} {
		f.s.SetSeasonClock(clock)
		got, err := f.s.DeadlineClock(f.ctx)
		if err != nil || !got.Equal(clock) || got.Location() != time.UTC {
			t.Errorf("DeadlineClock = %s, %v; want %s in UTC", got, err, clock)
		}
	}
}
