package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// The suite's events run from at(100) to at(200).
func newEvent(slug string, mutate func(*game.Event)) game.Event {
	e := game.Event{
		ID: uuid.Must(uuid.NewV7()), Slug: slug, Version: 1, Title: "Friday storm", Briefing: "Survive it.",
		StartsAt: at(100), EndsAt: at(200), Final: game.FinalBest,
		HiddenChaos:      json.RawMessage(`[{"kind":"node_failure","at_sec":30}]`),
		HiddenResilience: json.RawMessage(`{"error_ceiling":0.05,"recovery_deadline_sec":20}`), CreatedAt: at(0),
	}
	if mutate != nil {
		mutate(&e)
	}
	return e
}

func (f *fixture) event(e game.Event) game.Event {
	f.t.Helper()
	got, err := f.s.CreateEvent(f.ctx, e)
	if err != nil {
		f.t.Fatalf("CreateEvent: %v", err)
	}
	return got
}

func eventSub(e game.Event, p uuid.UUID, score int64, passed bool, when time.Time) game.EventSubmission {
	return game.EventSubmission{ID: uuid.Must(uuid.NewV7()), EventID: e.ID, PlayerID: p,
		Design: json.RawMessage(fmt.Sprintf(`{"score": %d}`, score)), Result: json.RawMessage(`{"passed": true}`),
		Passed: passed, Score: score, CreatedAt: when}
}

func testEvents(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	author := f.player("author")
	e := newEvent("lvl", func(e *game.Event) { e.CreatedBy = author.ID })
	got := f.event(e)
	want := e
	want.MaxEntrants = game.DefaultMaxEntrants // the default cap
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateEvent (-want +got):\n%s", diff)
	}
	if back, err := f.s.Event(f.ctx, e.ID); err != nil || !cmp.Equal(got, back) {
		t.Errorf("Event: %v, %v; want %+v", back, err, got)
	}
	later := f.event(newEvent("lvl", func(e *game.Event) { e.StartsAt, e.EndsAt = at(300), at(400) }))
	list, err := f.s.EventList(f.ctx, game.EventListQuery{Now: at(0)})
	if err != nil || len(list.Events) != 2 || list.Events[0].ID != e.ID || list.Events[1].ID != later.ID || list.Next != "" {
		t.Errorf("EventList: %v, %v", list, err)
	}
	_, err = f.s.CreateEvent(f.ctx, e)
	wantCode(t, "CreateEvent twice", err, game.ECONFLICT)
	_, err = f.s.CreateEvent(f.ctx, newEvent("nope", nil))
	wantCode(t, "CreateEvent on no level", err, game.ENOTFOUND)
	_, err = f.s.CreateEvent(f.ctx, newEvent("lvl", func(e *game.Event) { e.Version = 9 }))
	wantCode(t, "CreateEvent on no such version", err, game.ENOTFOUND)
	_, err = f.s.CreateEvent(f.ctx, newEvent("lvl", func(e *game.Event) { e.EndsAt = e.StartsAt }))
	wantCode(t, "CreateEvent ending at its start", err, game.EINVALID)
	_, err = f.s.Event(f.ctx, uuid.New())
	wantCode(t, "Event unknown", err, game.ENOTFOUND)
}

// testEventRules: every rule, enforced by the store against the caller's
// clock.
func testEventRules(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(4)
	open := f.event(newEvent("lvl", func(e *game.Event) { e.AttemptLimit = 2; e.MaxEntrants = 2 }))
	closed := f.event(newEvent("lvl", func(e *game.Event) { e.JoinRequired = true }))
	submit := func(e game.Event, p int, when time.Time) (int, error) {
		return f.s.CreateEventSubmission(f.ctx, eventSub(e, ps[p].ID, 10, true, when))
	}
	_, err := submit(open, 0, at(99))
	wantCode(t, "before the start", err, game.EEVENTNOTSTARTED)
	_, err = submit(open, 0, at(200))
	wantCode(t, "at the end", err, game.EEVENTENDED)
	for want := 1; want <= 2; want++ {
		if n, err := submit(open, 0, at(100+want)); err != nil || n != want {
			t.Errorf("attempt %d: %d, %v", want, n, err)
		}
	}
	_, err = submit(open, 0, at(150))
	wantCode(t, "third attempt of two", err, game.EATTEMPTLIMIT)
	if _, err := submit(open, 1, at(150)); err != nil { // joins by submitting
		t.Fatal(err)
	}
	_, err = submit(open, 2, at(150))
	wantCode(t, "third entrant of two, by submitting", err, game.EEVENTFULL)
	err = f.s.JoinEvent(f.ctx, open.ID, ps[3].ID, at(10))
	wantCode(t, "third entrant of two, joining", err, game.EEVENTFULL)
	if err := f.s.JoinEvent(f.ctx, open.ID, ps[0].ID, at(10)); err != nil {
		t.Errorf("joining again: %v", err)
	}
	if e, _ := f.s.Event(f.ctx, open.ID); e.Entrants != 2 {
		t.Errorf("entrants %d, want 2", e.Entrants)
	}
	for i, want := range []bool{true, true, false, false} {
		if in, err := f.s.IsEntrant(f.ctx, open.ID, ps[i].ID); err != nil || in != want {
			t.Errorf("IsEntrant(player %d) = %v, %v; want %v (0 and 1 entered by submitting, 2 and 3 were refused: the event is full)", i, in, err, want)
		}
	}
	if _, err := f.s.IsEntrant(f.ctx, uuid.New(), ps[0].ID); game.ErrorCode(err) != game.ENOTFOUND {
		t.Errorf("IsEntrant of an unknown event: %v, want not found", err)
	}

	_, err = submit(closed, 0, at(150))
	wantCode(t, "without joining", err, game.ENOTJOINED)
	if err := f.s.JoinEvent(f.ctx, closed.ID, ps[0].ID, at(50)); err != nil { // before the start is fine
		t.Fatal(err)
	}
	if _, err := submit(closed, 0, at(150)); err != nil {
		t.Errorf("after joining: %v", err)
	}
	err = f.s.JoinEvent(f.ctx, closed.ID, ps[1].ID, at(200))
	wantCode(t, "joining at the end", err, game.EEVENTENDED)
	_, err = f.s.CreateEventSubmission(f.ctx, eventSub(game.Event{ID: uuid.New()}, ps[0].ID, 1, true, at(150)))
	wantCode(t, "unknown event", err, game.ENOTFOUND)
}

// testEventStandingsAndFinish: live standings by best public score, finals
// by the event's rule, and a finish that happens exactly once.
func testEventStandingsAndFinish(t *testing.T, f *fixture) {
	f.level("lvl", "h1")
	ps := f.players(4)
	for _, final := range []string{game.FinalBest, game.FinalLast} {
		e := f.event(newEvent("lvl", func(e *game.Event) { e.Final = final }))
		var subs [4][]game.EventSubmission
		for _, s := range []struct {
			p      int
			score  int64
			passed bool
			at     int
		}{
			{0, 50, true, 110}, {0, 30, true, 120}, // best 50, last 30
			{1, 50, true, 105},                     // the same 50, earlier
			{2, 90, false, 130},                    // failed only
			{3, 70, true, 140}, {3, 0, false, 150}, // best 70, last failed
		} {
			sub := eventSub(e, ps[s.p].ID, s.score, s.passed, at(s.at))
			if _, err := f.s.CreateEventSubmission(f.ctx, sub); err != nil {
				t.Fatal(err)
			}
			subs[s.p] = append(subs[s.p], sub)
		}
		if err := f.s.JoinEvent(f.ctx, e.ID, f.player("idle-"+final).ID, at(150)); err != nil {
			t.Fatal(err)
		}
		f.announced()
		board, err := f.s.EventStandingsPage(f.ctx, e.ID, game.EventStandingsQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		standings := board.Entries
		if board.Seq != 6 || board.Final || board.Total != 4 {
			t.Errorf("%s: board seq %d final %v total %d, want 6 attempts, live, 4 entrants in the standings (not the idle one)", final, board.Seq, board.Final, board.Total)
		}
		var order []string
		for i, st := range standings {
			if st.Rank != int64(i+1) {
				t.Errorf("standing %d has rank %d", i, st.Rank)
			}
			order = append(order, fmt.Sprintf("%s:%d:%v", st.PlayerName, st.Score, st.Passed))
		}
		want := "[player-003:70:true player-001:50:true player-000:50:true"
		if got := fmt.Sprint(order); got[:len(want)] != want || len(standings) != 4 {
			t.Errorf("%s: live standings %v", final, order)
		}

		finals, err := f.s.EventFinals(f.ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantFinal := map[uuid.UUID]uuid.UUID{}
		for p, ss := range subs {
			pick := ss[len(ss)-1]
			if final == game.FinalBest {
				for _, s := range ss {
					if s.Passed && (pick.ID == ss[len(ss)-1].ID && !pick.Passed || s.Score > pick.Score) {
						pick = s
					}
				}
			}
			wantFinal[ps[p].ID] = pick.ID
		}
		gotFinal := map[uuid.UUID]uuid.UUID{}
		for _, fs := range finals {
			gotFinal[fs.PlayerID] = fs.ID
		}
		if diff := cmp.Diff(wantFinal, gotFinal); diff != "" {
			t.Errorf("%s: finals (-want +got):\n%s", final, diff)
		}

		// Final runs: player 2's design passes with the hidden chaos, the
		// others score lower.
		var results []game.EventResult
		for _, fs := range finals {
			r := game.EventResult{PlayerID: fs.PlayerID, SubmissionID: fs.ID, Passed: fs.PlayerID == ps[2].ID,
				Score: fs.Score / 2, Result: json.RawMessage(`{"final": true}`)}
			results = append(results, r)
		}
		_, err = f.s.FinishEvent(f.ctx, e.ID, results, at(199))
		wantCode(t, "finishing before the end", err, game.ECONFLICT)
		bad := append([]game.EventResult{}, results...)
		bad[0].SubmissionID = subs[3][0].ID
		if bad[0].PlayerID != ps[3].ID {
			_, err = f.s.FinishEvent(f.ctx, e.ID, bad, at(200))
			wantCode(t, "a result naming another player's submission", err, game.EINVALID)
		}
		var wg sync.WaitGroup
		finished := make([]bool, 4)
		for i := range finished {
			wg.Go(func() {
				ok, err := f.s.FinishEvent(f.ctx, e.ID, results, at(200+i))
				if err != nil {
					t.Errorf("FinishEvent %d: %v", i, err)
				}
				finished[i] = ok
			})
		}
		wg.Wait()
		n := 0
		for _, ok := range finished {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d of 4 concurrent finishes finished it, want exactly 1", final, n)
		}
		ev, _ := f.s.Event(f.ctx, e.ID)
		if ev.FinishedAt == nil {
			t.Fatalf("%s: not finished", final)
		}
		frozenBoard, err := f.s.EventStandingsPage(f.ctx, e.ID, game.EventStandingsQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if frozenBoard.Seq != 7 || !frozenBoard.Final {
			t.Errorf("%s: frozen board seq %d final %v, want 7 (the finish) and final", final, frozenBoard.Seq, frozenBoard.Final)
		}
		frozen := frozenBoard.Entries
		if len(frozen) != 4 || frozen[0].PlayerID != ps[2].ID || !frozen[0].Passed || frozen[0].Rank != 1 {
			t.Errorf("%s: final standings %+v, want player 2 first and the idle entrant out", final, frozen)
		}
		if ok, err := f.s.FinishEvent(f.ctx, e.ID, nil, at(500)); ok || err != nil {
			t.Errorf("finishing again: %v, %v; want false, nil", ok, err)
		}
		again, _ := f.s.EventStandingsPage(f.ctx, e.ID, game.EventStandingsQuery{Limit: 100})
		if !cmp.Equal(frozenBoard, again) {
			t.Errorf("%s: standings changed after a second finish", final)
		}
		r, design, err := f.s.EventResult(f.ctx, e.ID, ps[2].ID)
		if err != nil || string(r.Result) != `{"final": true}` || design.ID != wantFinal[ps[2].ID] || string(design.Design) != `{"score": 90}` {
			t.Errorf("EventResult: %+v %+v %v", r, design, err)
		}
		_, err = f.s.CreateEventSubmission(f.ctx, eventSub(e, ps[0].ID, 1, true, at(150)))
		wantCode(t, "submitting to a finished event (even by an earlier clock)", err, game.EEVENTENDED)
	}
}
