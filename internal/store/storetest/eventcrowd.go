package storetest

import (
	"bytes"
	"context"
	"encoding/json"
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

// standingsModel recounts an event's live standings from every accepted
// attempt, the slow and obvious way: the reference the stores' counted
// ranks must equal.
type standingsModel struct {
	names    map[uuid.UUID]string
	entrants map[uuid.UUID]*game.EventStanding
}

func newStandingsModel(ps []game.Player) *standingsModel {
	m := &standingsModel{names: map[uuid.UUID]string{}, entrants: map[uuid.UUID]*game.EventStanding{}}
	for _, p := range ps {
		m.names[p.ID] = p.Name
	}
	return m
}

func (m *standingsModel) attempt(sub game.EventSubmission) {
	st, ok := m.entrants[sub.PlayerID]
	if !ok {
		st = &game.EventStanding{PlayerID: sub.PlayerID, PlayerName: m.names[sub.PlayerID]}
		m.entrants[sub.PlayerID] = st
	}
	st.Attempts++
	at := game.Timestamp(sub.CreatedAt)
	if sub.Passed && (!st.Passed || sub.Score > st.Score || (sub.Score == st.Score && at.Before(*st.AchievedAt))) {
		id := sub.ID
		st.Passed, st.Score, st.AchievedAt, st.SubmissionID = true, sub.Score, &at, &id
	}
}

// standings is the whole field in order, ranked.
func (m *standingsModel) standings() []game.EventStanding {
	out := []game.EventStanding{}
	for _, st := range m.entrants {
		out = append(out, *st)
	}
	slices.SortFunc(out, game.CompareStandings)
	for i := range out {
		out[i].Rank = int64(i + 1)
	}
	return out
}

func (f *fixture) standingsPage(id uuid.UUID, q game.EventStandingsQuery) game.EventBoard {
	f.t.Helper()
	b, err := f.s.EventStandingsPage(f.ctx, id, q)
	if err != nil {
		f.t.Fatalf("EventStandingsPage(%+v): %v", q, err)
	}
	return b
}

// wholeStandings reads an event's standings through pages of limit
// entries, forwards via Next and (backwards too) back via Prev, and checks
// that the walks agree, ranks run 1..Total and every page says the same
// Total.
func (f *fixture) wholeStandings(id uuid.UUID, limit int, backwards bool) []game.EventStanding {
	f.t.Helper()
	var fwd []game.EventStanding
	var pages []game.EventBoard
	q := game.EventStandingsQuery{Limit: limit}
	for i := 0; ; i++ {
		page := f.standingsPage(id, q)
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
	for i, page := range pages {
		if page.Total != pages[0].Total || page.Seq != pages[0].Seq {
			f.t.Errorf("page %d: total %d seq %d, first page said %d, %d", i, page.Total, page.Seq, pages[0].Total, pages[0].Seq)
		}
	}
	if len(fwd) != pages[0].Total {
		f.t.Errorf("forward walk found %d entrants, Total = %d", len(fwd), pages[0].Total)
	}
	for i, e := range fwd {
		if e.Rank != int64(i+1) {
			f.t.Errorf("forward walk: entrant %d (%s) has rank %d", i, e.PlayerName, e.Rank)
		}
	}
	if !backwards {
		return fwd
	}
	back := slices.Clone(pages[len(pages)-1].Entries)
	q.Cursor = pages[len(pages)-1].Prev
	for i := 0; q.Cursor != ""; i++ {
		page := f.standingsPage(id, q)
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

// checkAround checks that the page around each entrant holds them at their
// rank in whole, as near the middle as the field allows.
func (f *fixture) checkAround(id uuid.UUID, whole []game.EventStanding, limit int) {
	f.t.Helper()
	for i, want := range whole {
		page := f.standingsPage(id, game.EventStandingsQuery{Limit: limit, AroundPlayer: &want.PlayerID})
		nb, na := game.AroundWindow(min(i, limit-1), min(len(whole)-i, limit), limit)
		if diff := cmp.Diff(whole[i-nb:i+na], page.Entries); diff != "" {
			f.t.Errorf("around %s (rank %d) (-want +got):\n%s", want.PlayerName, want.Rank, diff)
		}
	}
}

func (f *fixture) eventAttempt(sub game.EventSubmission) {
	f.t.Helper()
	if _, err := f.s.CreateEventSubmission(f.ctx, sub); err != nil {
		f.t.Fatalf("CreateEventSubmission(%+v): %v", sub, err)
	}
	f.announced()
}

// announced waits until every committed event attempt is numbered, for a
// store that numbers them after commit (the PostgreSQL store's announcer
// does within a few tens of milliseconds; AnnounceEvents does it now).
// A store that numbers them as they commit has nothing to wait for.
func (f *fixture) announced() {
	f.t.Helper()
	if a, ok := f.s.(interface {
		AnnounceEvents(ctx context.Context) (int, error)
	}); ok {
		if _, err := a.AnnounceEvents(f.ctx); err != nil {
			f.t.Fatalf("AnnounceEvents: %v", err)
		}
	}
}

// finishWithFinals freezes an event with each final design's public verdict
// as its final run.
func (f *fixture) finishWithFinals(e game.Event, at time.Time) {
	f.t.Helper()
	finals, err := f.s.EventFinals(f.ctx, e.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	var results []game.EventResult
	for _, fs := range finals {
		results = append(results, game.EventResult{PlayerID: fs.PlayerID, SubmissionID: fs.ID, Passed: fs.Passed,
			Score: fs.Score, Result: json.RawMessage(`{}`)})
	}
	if ok, err := f.s.FinishEvent(f.ctx, e.ID, results, at); !ok || err != nil {
		f.t.Fatalf("FinishEvent: %v, %v", ok, err)
	}
}

// testEventStandingsPages: pages, cursors both ways and around an entrant,
// live and final, in the order of every board (ties by time, then player
// id; failed-only entrants after every passing one); entrants who only
// joined are in no standings.
func testEventStandingsPages(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(15)
	e := f.event(newEvent("lvl", nil))
	m := newStandingsModel(ps)
	for i, a := range []struct {
		score  int64
		passed bool
		at     int
	}{
		{50, true, 110}, {50, true, 110}, {50, true, 110}, // a three-way tie, by player id
		{50, true, 105}, {70, true, 150}, {10, true, 101},
		{90, false, 120}, {0, false, 121}, // failed only
		{30, true, 199}, {30, true, 130}, {70, true, 150}, {20, true, 160},
	} {
		sub := eventSub(e, ps[i].ID, a.score, a.passed, at(a.at))
		f.eventAttempt(sub)
		m.attempt(sub)
	}
	for _, p := range ps[12:] {
		if err := f.s.JoinEvent(f.ctx, e.ID, p.ID, at(150)); err != nil {
			t.Fatal(err)
		}
	}
	want := m.standings()
	for _, limit := range []int{1, 2, 5, 12, 100} {
		got := f.wholeStandings(e.ID, limit, true)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("limit %d: standings (-recount +got):\n%s", limit, diff)
		}
	}
	if ev, _ := f.s.Event(f.ctx, e.ID); ev.Entrants != 15 {
		t.Errorf("entrants %d, want 15 (the 3 who only joined included)", ev.Entrants)
	}
	f.checkAround(e.ID, want, 5)
	f.checkAround(e.ID, want, 4)
	for _, p := range []uuid.UUID{ps[13].ID, uuid.New()} {
		_, err := f.s.EventStandingsPage(f.ctx, e.ID, game.EventStandingsQuery{AroundPlayer: &p})
		wantCode(t, "around an entrant who never submitted, or a stranger", err, game.ENOTFOUND)
	}
	_, err := f.s.EventStandingsPage(f.ctx, uuid.New(), game.EventStandingsQuery{})
	wantCode(t, "standings of no event", err, game.ENOTFOUND)
	for _, q := range []game.EventStandingsQuery{
		{Limit: 101}, {Limit: -1}, {Cursor: "nope"}, {Cursor: f.standingsPage(e.ID, game.EventStandingsQuery{Limit: 1}).Next, AroundPlayer: &ps[0].ID},
	} {
		_, err := f.s.EventStandingsPage(f.ctx, e.ID, q)
		wantCode(t, fmt.Sprintf("query %+v", q), err, game.EINVALID)
	}
	liveCursor := f.standingsPage(e.ID, game.EventStandingsQuery{Limit: 2}).Next

	f.finishWithFinals(e, at(200))
	final := f.wholeStandings(e.ID, 3, true)
	if len(final) != 12 || !f.standingsPage(e.ID, game.EventStandingsQuery{}).Final {
		t.Fatalf("final standings: %d entrants, want 12, final", len(final))
	}
	// The final runs here are the public verdicts: the same order for
	// every passing entrant.
	for i := range final {
		if want[i].Passed && (final[i].PlayerID != want[i].PlayerID || final[i].Score != want[i].Score) {
			t.Errorf("final rank %d: %s %d, live said %s %d", i+1, final[i].PlayerName, final[i].Score, want[i].PlayerName, want[i].Score)
		}
	}
	f.checkAround(e.ID, final, 5)
	_, err = f.s.EventStandingsPage(f.ctx, e.ID, game.EventStandingsQuery{Cursor: liveCursor})
	wantCode(t, "a live cursor on the final standings", err, game.EINVALID)
}

// testEventRanksRecount: after every attempt, in any order of times (an
// attempt stamped earlier may commit later), the live standings equal a
// recount of every attempt, and the entrant's own page holds their exact
// rank.
func testEventRanksRecount(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(24)
	e := f.event(newEvent("lvl", nil))
	m := newStandingsModel(ps)
	rng := rand.New(rand.NewPCG(24, 2026))
	for i := range 120 {
		p := ps[rng.IntN(len(ps))]
		when := at(100).Add(time.Duration(rng.IntN(100_000_000)) * time.Microsecond)
		if rng.IntN(4) == 0 {
			when = at(150) // ties on time too
		}
		sub := eventSub(e, p.ID, int64(10*rng.IntN(5)), rng.IntN(10) < 7, when)
		f.eventAttempt(sub)
		m.attempt(sub)
		want := m.standings()
		got := f.wholeStandings(e.ID, 7, i%40 == 39)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("after attempt %d: standings (-recount +got):\n%s", i+1, diff)
		}
		page := f.standingsPage(e.ID, game.EventStandingsQuery{Limit: 3, AroundPlayer: &p.ID})
		mine := slices.IndexFunc(want, func(s game.EventStanding) bool { return s.PlayerID == p.ID })
		if !slices.ContainsFunc(page.Entries, func(s game.EventStanding) bool { return cmp.Equal(s, want[mine]) }) {
			t.Fatalf("after attempt %d: the page around %s lacks them at rank %d: %+v", i+1, p.Name, mine+1, page.Entries)
		}
	}
}

// testEventConcurrentAttempts: attempts racing on one event keep every rule
// exact (the attempt limit per entrant, the cap on entrants), and the
// standings equal a recount of the attempts accepted.
func testEventConcurrentAttempts(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	const players, each, limit, capacity = 14, 5, 3, 10
	ps := f.players(players)
	e := f.event(newEvent("lvl", func(e *game.Event) { e.AttemptLimit = limit; e.MaxEntrants = capacity }))
	var mu sync.Mutex
	m := newStandingsModel(ps)
	accepted := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	for i := range players * each {
		p := ps[i%players]
		sub := eventSub(e, p.ID, int64(10*(i%4)), i%5 != 0, at(100+i%7))
		wg.Go(func() {
			_, err := f.s.CreateEventSubmission(f.ctx, sub)
			mu.Lock()
			defer mu.Unlock()
			switch game.ErrorCode(err) {
			case "":
				m.attempt(sub)
				accepted[p.ID]++
			case game.EATTEMPTLIMIT, game.EEVENTFULL:
			default:
				t.Errorf("attempt of %s: %v", p.Name, err)
			}
		})
	}
	wg.Wait()
	f.announced()
	if len(accepted) != capacity {
		t.Errorf("%d entrants got in, want the cap %d", len(accepted), capacity)
	}
	for p, n := range accepted {
		if n != limit {
			t.Errorf("%s: %d attempts accepted of %d, want the limit %d", m.names[p], n, each, limit)
		}
	}
	ev, err := f.s.Event(f.ctx, e.ID)
	if err != nil || ev.Entrants != capacity {
		t.Errorf("Event: %d entrants, %v; want %d", ev.Entrants, err, capacity)
	}
	got := f.wholeStandings(e.ID, 3, true)
	if diff := cmp.Diff(m.standings(), got); diff != "" {
		t.Errorf("standings (-recount +got):\n%s", diff)
	}
	f.announced()
	if page := f.standingsPage(e.ID, game.EventStandingsQuery{}); page.Seq != capacity*limit {
		t.Errorf("seq %d, want one change per accepted attempt (%d)", page.Seq, capacity*limit)
	}
}

// testEventLateCommits: the event's end is judged by when an attempt was
// accepted (its stamp), not when it commits; the finish takes every
// attempt accepted before the end, and nothing after it.
func testEventLateCommits(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(3)
	e := f.event(newEvent("lvl", nil))
	m := newStandingsModel(ps)
	early := eventSub(e, ps[0].ID, 40, true, at(150))
	f.eventAttempt(early)
	m.attempt(early)
	finals, err := f.s.EventFinals(f.ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Accepted a microsecond before the end, committed after the finisher
	// read the finals.
	last := eventSub(e, ps[1].ID, 60, true, at(200).Add(-time.Microsecond))
	f.eventAttempt(last)
	m.attempt(last)
	_, err = f.s.CreateEventSubmission(f.ctx, eventSub(e, ps[2].ID, 90, true, at(200)))
	wantCode(t, "an attempt stamped at the end", err, game.EEVENTENDED)
	var stale []game.EventResult
	for _, fs := range finals {
		stale = append(stale, game.EventResult{PlayerID: fs.PlayerID, SubmissionID: fs.ID, Passed: true, Score: fs.Score, Result: json.RawMessage(`{}`)})
	}
	_, err = f.s.FinishEvent(f.ctx, e.ID, stale, at(201))
	wantCode(t, "a finish without the late attempt", err, game.ECONFLICT)
	if diff := cmp.Diff(m.standings(), f.wholeStandings(e.ID, 1, true)); diff != "" {
		t.Errorf("live standings with the late attempt (-recount +got):\n%s", diff)
	}
	f.finishWithFinals(e, at(202))
	_, err = f.s.CreateEventSubmission(f.ctx, eventSub(e, ps[2].ID, 90, true, at(199)))
	wantCode(t, "an attempt stamped before the end, after the finish", err, game.EEVENTENDED)
	final := f.wholeStandings(e.ID, 5, false)
	if len(final) != 2 || final[0].PlayerID != ps[1].ID || final[1].PlayerID != ps[0].ID {
		t.Errorf("final standings %+v, want the late attempt first, then the early one", final)
	}
}

// testEventList: pages of events by start, filtered by phase, each without
// hidden chaos, whatever is scheduled.
func testEventList(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	now := at(150)
	live := f.event(newEvent("lvl", nil))
	finishing := f.event(newEvent("lvl", func(e *game.Event) { e.StartsAt, e.EndsAt = at(50), at(120) }))
	finished := f.event(newEvent("lvl", func(e *game.Event) { e.StartsAt, e.EndsAt = at(10), at(110) }))
	if ok, err := f.s.FinishEvent(f.ctx, finished.ID, nil, at(111)); !ok || err != nil {
		t.Fatalf("FinishEvent: %v, %v", ok, err)
	}
	var upcoming []uuid.UUID
	for i := range 23 {
		e := f.event(newEvent("lvl", func(e *game.Event) { e.StartsAt, e.EndsAt = at(300+i%5), at(400) }))
		upcoming = append(upcoming, e.ID)
	}
	list := func(q game.EventListQuery, limit int) []game.Event {
		t.Helper()
		q.Now, q.Limit = now, limit
		var out []game.Event
		for i := 0; ; i++ {
			page, err := f.s.EventList(f.ctx, q)
			if err != nil {
				t.Fatalf("EventList(%+v): %v", q, err)
			}
			want := limit
			if want == 0 {
				want = game.DefaultEventListLimit
			}
			if len(page.Events) > want || (page.Next != "" && len(page.Events) != want) {
				t.Errorf("page %d: %d events, next %q, limit %d", i, len(page.Events), page.Next, want)
			}
			out = append(out, page.Events...)
			if page.Next == "" || i > 100 {
				return out
			}
			q.Cursor = page.Next
		}
	}
	all := list(game.EventListQuery{}, 0)
	if len(all) != 26 {
		t.Fatalf("%d events listed, want 26", len(all))
	}
	for i, e := range all {
		if e.HiddenChaos != nil || e.HiddenResilience != nil || e.Briefing != "Survive it." {
			t.Errorf("listed event %s carries hidden parts, or not its briefing: %+v", e.ID, e)
		}
		if i > 0 && (e.StartsAt.Before(all[i-1].StartsAt) || (e.StartsAt.Equal(all[i-1].StartsAt) && e.ID.String() <= all[i-1].ID.String())) {
			t.Errorf("event %d out of order", i)
		}
	}
	if diff := cmp.Diff(all, list(game.EventListQuery{}, 4)); diff != "" {
		t.Errorf("pages of 4 differ from pages of 20 (-20 +4):\n%s", diff)
	}
	ids := func(es []game.Event) []uuid.UUID {
		out := []uuid.UUID{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, tc := range []struct {
		phase string
		want  []uuid.UUID
	}{
		{game.PhaseLive, []uuid.UUID{live.ID}},
		{game.PhaseFinishing, []uuid.UUID{finishing.ID}},
		{game.PhaseFinished, []uuid.UUID{finished.ID}},
		{game.PhaseUpcoming, upcoming},
	} {
		got := ids(list(game.EventListQuery{Phase: tc.phase}, 5))
		byID := func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) }
		slices.SortFunc(got, byID)
		want := slices.SortedFunc(slices.Values(tc.want), byID)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("phase %s (-want +got):\n%s", tc.phase, diff)
		}
	}
	for _, q := range []game.EventListQuery{
		{Now: now, Limit: 101}, {Now: now, Limit: -1}, {Now: now, Phase: "soon"}, {Now: now, Cursor: "x"}, {},
	} {
		_, err := f.s.EventList(f.ctx, q)
		wantCode(t, fmt.Sprintf("list %+v", q), err, game.EINVALID)
	}
}

// testEventCapUnderACrowd: a crowd larger than the cap, joining and
// attempting at once, fills the event to exactly its cap, whether the count
// is far from the cap (each joiner counting alone) or near it (counted
// exactly); a joiner told to try again (EUNAVAILABLE) does, and is then in
// or refused as the cap decides.
func testEventCapUnderACrowd(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	const crowd, capacity = 150, 100
	ps := f.players(crowd)
	e := f.event(newEvent("lvl", func(e *game.Event) { e.MaxEntrants = capacity }))
	var mu sync.Mutex
	in, full := 0, 0
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			var err error
			for range 50 {
				if i%3 == 0 {
					err = f.s.JoinEvent(f.ctx, e.ID, p.ID, at(101))
				} else {
					_, err = f.s.CreateEventSubmission(f.ctx, eventSub(e, p.ID, int64(i), true, at(101)))
				}
				if game.ErrorCode(err) != game.EUNAVAILABLE {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			switch game.ErrorCode(err) {
			case "":
				in++
			case game.EEVENTFULL:
				full++
			default:
				t.Errorf("%s: %v", p.Name, err)
			}
		})
	}
	wg.Wait()
	if in != capacity || full != crowd-capacity {
		t.Errorf("%d in and %d refused as full, want %d and %d", in, full, capacity, crowd-capacity)
	}
	ev, err := f.s.Event(f.ctx, e.ID)
	if err != nil || ev.Entrants != capacity {
		t.Errorf("Event: %d entrants, %v; want %d", ev.Entrants, err, capacity)
	}
	f.announced()
	page := f.standingsPage(e.ID, game.EventStandingsQuery{Limit: 100})
	if int64(page.Total) != page.Seq || page.Total > capacity {
		t.Errorf("standings: %d ranked, seq %d; want one change per attempt and at most %d", page.Total, page.Seq, capacity)
	}
}
