package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// Duels is the duel part of the store contract.
type Duels interface {
	CreateDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	MatchDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	Duel(ctx context.Context, id uuid.UUID) (game.Duel, error)
	PlayerDuels(ctx context.Context, playerID uuid.UUID, q game.ListQuery) (game.DuelList, error)
	OpenDuels(ctx context.Context) ([]game.Duel, error)
	AcceptDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time, rules game.DuelRules) (game.Duel, error)
	DeclineDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time) (game.Duel, error)
	SubmitDuelDesign(ctx context.Context, id, playerID uuid.UUID, design json.RawMessage, at time.Time) (game.Duel, error)
	EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error)
	Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error)
	Ratings(ctx context.Context, q game.ListQuery) (game.RatingsPage, error)
}

// duelTests are the duel contract's subtests (run by Run).
var duelTests = []struct {
	name string
	fn   func(t *testing.T, f *fixture)
}{
	{"DuelChallenge", testDuelChallenge},
	{"DuelStartRules", testDuelStartRules},
	{"DuelDailyLimitCountsEveryEntry", testDuelDailyLimitCountsEveryEntry},
	{"DuelEnds", testDuelEnds},
	{"DuelMatching", testDuelMatching},
	{"DuelAcceptConcurrent", testDuelAcceptConcurrent},
	{"DuelEndOnceConcurrent", testDuelEndOnceConcurrent},
	{"DuelMatchConcurrent", testDuelMatchConcurrent},
	{"RatingFarming", testRatingFarming},
	{"RatingRepeatOpponent", testRatingRepeatOpponent},
	{"RatingsBoard", testRatingsBoard},
	{"DuelPages", testDuelPages},
}

var duelRules = game.DuelRules{PerDay: 20, MatchBase: 100, MatchPerMinute: 50, MatchMax: 400, SubmitWindow: 30 * time.Minute}

func (f *fixture) duels() Duels { return f.s.(Duels) }

func challenge(slug string, a, b uuid.UUID, created time.Time) game.Duel {
	d := game.Duel{ID: uuid.Must(uuid.NewV7()), Slug: slug, Version: 1, State: game.DuelChallenged, Seed: 0xfeedfacecafebeef,
		CreatedAt: created, AcceptBy: created.Add(24 * time.Hour)}
	d.Sides[0].PlayerID, d.Sides[1].PlayerID = a, b
	return d
}

func matchRequest(slug string, p uuid.UUID, rating float64, created time.Time) game.Duel {
	d := game.Duel{ID: uuid.Must(uuid.NewV7()), Slug: slug, Version: 1, State: game.DuelMatching, Seed: 1,
		MatchRating: rating, CreatedAt: created, AcceptBy: created.Add(10 * time.Minute)}
	d.Sides[0].PlayerID = p
	return d
}

func (f *fixture) mustDuel(d game.Duel, err error) game.Duel {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("duel step: %v", err)
	}
	return d
}

func design(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"components":[],"n":%d}`, n))
}

func testDuelChallenge(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	a, b, c := f.player("ada"), f.player("bob"), f.player("cy")
	ds := f.duels()
	f.establish("arena", at(-100000), a.ID, b.ID)
	d := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(0)), duelRules))
	if d.State != game.DuelChallenged || d.Seq != 1 || d.Sides[0].PlayerName != "ada" || d.Sides[1].PlayerName != "bob" || d.Seed != 0xfeedfacecafebeef {
		t.Errorf("CreateDuel = %+v", d)
	}
	back := f.mustDuel(ds.Duel(f.ctx, d.ID))
	if back.ID != d.ID || back.Seq != 1 || !back.AcceptBy.Equal(at(0).Add(24*time.Hour)) || back.Seed != d.Seed {
		t.Errorf("Duel = %+v, want %+v", back, d)
	}
	_, err := ds.AcceptDuel(f.ctx, d.ID, a.ID, at(1), duelRules)
	wantCode(t, "the challenger accepts", err, game.EDUELNOTPLAYER)
	_, err = ds.AcceptDuel(f.ctx, d.ID, c.ID, at(1), duelRules)
	wantCode(t, "a stranger accepts", err, game.EDUELNOTPLAYER)
	_, err = ds.SubmitDuelDesign(f.ctx, d.ID, a.ID, design(1), at(1))
	wantCode(t, "submit before accepting", err, game.EDUELSTATE)
	_, err = ds.AcceptDuel(f.ctx, d.ID, b.ID, at(0).Add(24*time.Hour), duelRules)
	wantCode(t, "accept at accept_by", err, game.EDUELDEADLINE)

	d = f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, b.ID, at(10), duelRules))
	if d.State != game.DuelActive || d.SubmitBy == nil || !d.SubmitBy.Equal(at(10).Add(30*time.Minute)) || d.Seq != 2 {
		t.Errorf("AcceptDuel = %+v", d)
	}
	_, err = ds.AcceptDuel(f.ctx, d.ID, b.ID, at(11), duelRules)
	wantCode(t, "accept twice", err, game.EDUELSTATE)
	_, err = ds.SubmitDuelDesign(f.ctx, d.ID, c.ID, design(1), at(11))
	wantCode(t, "a stranger submits", err, game.EDUELNOTPLAYER)
	_, err = ds.SubmitDuelDesign(f.ctx, d.ID, a.ID, design(1), at(10).Add(30*time.Minute))
	wantCode(t, "submit at submit_by", err, game.EDUELDEADLINE)
	d = f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, a.ID, design(1), at(12)))
	if !d.Sides[0].Submitted() || d.Sides[1].Submitted() || string(d.Sides[0].Design) != string(design(1)) || d.Seq != 3 {
		t.Errorf("after one submit: %+v", d)
	}
	_, err = ds.SubmitDuelDesign(f.ctx, d.ID, a.ID, design(2), at(13))
	wantCode(t, "submit twice", err, game.EDUELSUBMITTED)
	_, _, err = ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelFinished, At: at(14)})
	wantCode(t, "finish with one design in", err, game.EDUELSTATE)
	d = f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, b.ID, design(3), at(14)))

	winner := a.ID
	res := game.DuelResult{Winner: &winner, Reason: game.ReasonScore, Surprise: json.RawMessage(`[]`),
		Sides: []game.DuelResultSide{{PlayerID: a.ID, DuelRun: game.DuelRun{Passed: true, Score: 5000}}, {PlayerID: b.ID}}}
	ended, done, err := ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelFinished, Result: res, At: at(15)})
	if err != nil || !done || ended.State != game.DuelFinished || ended.Result == nil || ended.EndedAt == nil {
		t.Fatalf("EndDuel = %+v, %v, %v", ended, done, err)
	}
	if rs := ended.Result.Ratings; len(rs) != 2 || rs[0].PlayerID != a.ID || rs[0].Before != 1500 || rs[0].After <= 1500 || rs[1].After >= 1500 {
		t.Errorf("rating changes = %+v", rs)
	}
	again, done, err := ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelFinished, Result: res, At: at(16)})
	if err != nil || done || again.Seq != ended.Seq {
		t.Errorf("second EndDuel = %v, %v (seq %d, first %d); want no change", done, err, again.Seq, ended.Seq)
	}
	ra, _ := ds.Rating(f.ctx, a.ID)
	rb, _ := ds.Rating(f.ctx, b.ID)
	rc, err := ds.Rating(f.ctx, c.ID)
	if ra.Duels != 1+game.EstablishedOpponents || ra.Wins != 1 || rb.Losses != 1 || ra.Rating <= rb.Rating || ra.Provisional ||
		ra.Opponents != 1+game.EstablishedOpponents || ra.RatedOpponents != 1 || err != nil || rc.Rating != 1500 || rc.Duels != 0 || !rc.Provisional {
		t.Errorf("ratings: %+v %+v %+v %v", ra, rb, rc, err)
	}
	// One rated opponent each: neither is on the board yet.
	page, err := ds.Ratings(f.ctx, game.ListQuery{Limit: 10})
	if err != nil || page.Total != 0 || len(page.Entries) != 0 || page.Next != "" {
		t.Errorf("Ratings = %+v, %v", page, err)
	}
	_, err = ds.Ratings(f.ctx, game.ListQuery{Limit: game.MaxListLimit + 1})
	wantCode(t, "Ratings limit 101", err, game.EINVALID)
	_, err = ds.Rating(f.ctx, uuid.New())
	wantCode(t, "Rating of nobody", err, game.ENOTFOUND)
	_, err = ds.Duel(f.ctx, uuid.New())
	wantCode(t, "Duel of nothing", err, game.ENOTFOUND)

	list, err := ds.PlayerDuels(f.ctx, b.ID, game.ListQuery{Limit: 1})
	if err != nil || len(list.Duels) != 1 || list.Duels[0].ID != d.ID || list.Duels[0].Result == nil {
		t.Errorf("PlayerDuels = %+v, %v", list, err)
	}
	// The pair may duel again once the first has ended.
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", b.ID, a.ID, at(20)), duelRules))
}

func testDuelStartRules(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	f.level("other", "h2")
	a, b, c := f.player("ada"), f.player("bob"), f.player("cy")
	ds := f.duels()
	_, err := ds.CreateDuel(f.ctx, challenge("arena", a.ID, a.ID, at(0)), duelRules)
	wantCode(t, "challenge yourself", err, game.EDUELSELF)
	_, err = ds.CreateDuel(f.ctx, challenge("nowhere", a.ID, b.ID, at(0)), duelRules)
	wantCode(t, "missing level", err, game.ENOTFOUND)
	_, err = ds.CreateDuel(f.ctx, challenge("arena", a.ID, uuid.New(), at(0)), duelRules)
	wantCode(t, "missing opponent", err, game.ENOTFOUND)
	first := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(0)), duelRules))
	_, err = ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(1)), duelRules)
	wantCode(t, "a second challenge to the pair", err, game.EDUELPAIRACTIVE)
	_, err = ds.CreateDuel(f.ctx, challenge("arena", b.ID, a.ID, at(1)), duelRules)
	wantCode(t, "the pair the other way round", err, game.EDUELPAIRACTIVE)
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("other", a.ID, b.ID, at(1)), duelRules))
	f.mustDuel(ds.DeclineDuel(f.ctx, first.ID, b.ID, at(2)))
	_, err = ds.DeclineDuel(f.ctx, first.ID, b.ID, at(3))
	wantCode(t, "decline twice", err, game.EDUELSTATE)
	_, err = ds.DeclineDuel(f.ctx, first.ID, c.ID, at(3))
	wantCode(t, "a stranger declines", err, game.EDUELNOTPLAYER)
	declined := f.mustDuel(ds.Duel(f.ctx, first.ID))
	if declined.State != game.DuelDeclined || declined.EndedAt == nil || declined.Result == nil || declined.Result.Reason != game.ReasonDeclined {
		t.Errorf("declined duel = %+v", declined)
	}
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(4)), duelRules))

	// The daily limit counts the duels a player entered in the UTC day.
	day := game.DayStart(at(0))
	limited := duelRules
	limited.PerDay = 3 // a has started three above (one declined)
	_, err = ds.CreateDuel(f.ctx, challenge("arena", a.ID, c.ID, at(5)), limited)
	wantCode(t, "past the daily limit", err, game.EDUELDAILYLIMIT)
	_, err = ds.MatchDuel(f.ctx, matchRequest("arena", a.ID, 1500, at(5)), limited)
	wantCode(t, "matching past the daily limit", err, game.EDUELDAILYLIMIT)
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", c.ID, a.ID, at(5)), limited)) // c's first
	f.mustDuel(ds.CreateDuel(f.ctx, challenge("other", a.ID, c.ID, day.Add(24*time.Hour)), limited))
}

func testDuelEnds(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	a, b := f.player("ada"), f.player("bob")
	ds := f.duels()
	f.establish("arena", at(-100000), a.ID, b.ID)
	// An unanswered challenge expires at accept_by, not before.
	d := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(0)), duelRules))
	expire := game.DuelEnd{State: game.DuelExpired, Result: game.DuelResult{Reason: game.ReasonUnanswered}}
	expire.At = at(0).Add(24*time.Hour - time.Second)
	_, _, err := ds.EndDuel(f.ctx, d.ID, expire)
	wantCode(t, "expire before accept_by", err, game.EDUELSTATE)
	expire.At = at(0).Add(24 * time.Hour)
	ended, done, err := ds.EndDuel(f.ctx, d.ID, expire)
	if err != nil || !done || ended.State != game.DuelExpired || len(ended.Result.Ratings) != 0 {
		t.Errorf("expire = %+v, %v, %v", ended, done, err)
	}
	open, err := ds.OpenDuels(f.ctx)
	if err != nil || len(open) != 0 {
		t.Errorf("OpenDuels = %+v, %v", open, err)
	}

	// A duel where one side submitted is forfeited to it, at submit_by.
	d = f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(100)), duelRules))
	d = f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, b.ID, at(100), duelRules))
	d = f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, b.ID, design(1), at(101)))
	open, err = ds.OpenDuels(f.ctx)
	if err != nil || len(open) != 1 || open[0].ID != d.ID || !open[0].Deadline().Equal(at(100).Add(30*time.Minute)) {
		t.Errorf("OpenDuels = %+v, %v", open, err)
	}
	bw, aw := b.ID, a.ID
	forfeit := game.DuelEnd{State: game.DuelForfeited, Result: game.DuelResult{Winner: &bw, Reason: game.ReasonForfeit}, At: at(101)}
	_, _, err = ds.EndDuel(f.ctx, d.ID, forfeit)
	wantCode(t, "forfeit before submit_by", err, game.EDUELSTATE)
	forfeit.At = *d.SubmitBy
	wrong := forfeit
	wrong.Result.Winner = &aw
	_, _, err = ds.EndDuel(f.ctx, d.ID, wrong)
	wantCode(t, "forfeit to the side that did not submit", err, game.EDUELSTATE)
	_, _, err = ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelExpired, At: forfeit.At})
	wantCode(t, "expire a duel with a design in", err, game.EDUELSTATE)
	ended, done, err = ds.EndDuel(f.ctx, d.ID, forfeit)
	if err != nil || !done || ended.State != game.DuelForfeited || *ended.Result.Winner != b.ID || len(ended.Result.Ratings) != 2 {
		t.Fatalf("forfeit = %+v, %v, %v", ended, done, err)
	}
	rb, _ := ds.Rating(f.ctx, b.ID)
	if rb.Wins != 1 || rb.Rating <= 1500 {
		t.Errorf("the forfeit's winner: %+v", rb)
	}

	// Neither side submitted: expired, no rating change.
	d = f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(200)), duelRules))
	d = f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, b.ID, at(200), duelRules))
	ended, done, err = ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelExpired, Result: game.DuelResult{Reason: game.ReasonNoDesigns}, At: *d.SubmitBy})
	if err != nil || !done || ended.State != game.DuelExpired {
		t.Errorf("expire an active duel = %+v, %v, %v", ended, done, err)
	}
	if again, _ := ds.Rating(f.ctx, b.ID); again != rb {
		t.Errorf("an expired duel changed a rating: %+v, was %+v", again, rb)
	}
}

func testDuelMatching(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	ps := f.players(5)
	ds := f.duels()
	// Nobody waiting: queued.
	w0 := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[0].ID, 1500, at(0)), duelRules))
	if w0.State != game.DuelMatching || w0.Sides[1].PlayerID != uuid.Nil || w0.Seq != 1 {
		t.Fatalf("first request = %+v", w0)
	}
	_, err := ds.MatchDuel(f.ctx, matchRequest("arena", ps[0].ID, 1500, at(1)), duelRules)
	wantCode(t, "asking twice", err, game.EDUELMATCHING)
	w1 := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[1].ID, 1800, at(1)), duelRules))
	if w1.State != game.DuelMatching {
		t.Fatalf("300 apart at once paired: %+v", w1)
	}
	// 1560 is closest to 1500 (ps[0], within 100): paired with it.
	m := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[2].ID, 1560, at(2)), duelRules))
	if m.ID != w0.ID || m.State != game.DuelActive || m.Sides[1].PlayerID != ps[2].ID || m.SubmitBy == nil || m.Seq != 2 {
		t.Fatalf("pairing = %+v", m)
	}
	if !m.SubmitBy.Equal(at(2).Add(duelRules.SubmitWindow)) {
		t.Errorf("submit_by = %s", m.SubmitBy)
	}
	// ps[1] (1800) has waited 2 minutes: 200 allowed, 1550 is 250 away.
	early := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[3].ID, 1550, at(1).Add(2*time.Minute)), duelRules))
	if early.State != game.DuelMatching {
		t.Fatalf("paired beyond the allowance: %+v", early)
	}
	// 2050 is 250 from ps[1], who has waited 3 minutes (250 allowed), and
	// 500 from ps[3], who has waited one (150 allowed).
	late := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[4].ID, 2050, at(1).Add(3*time.Minute)), duelRules))
	if late.ID != w1.ID || late.State != game.DuelActive || late.Sides[1].PlayerID != ps[4].ID {
		t.Errorf("the allowance did not grow with the wait: %+v", late)
	}
	// Past its accept_by a waiting request pairs with nobody.
	stale := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", ps[2].ID, 1550, early.AcceptBy), duelRules))
	if stale.State != game.DuelMatching || stale.ID == early.ID {
		t.Errorf("paired with an expired request: %+v", stale)
	}
}

// Two replicas accept one challenge at once: one wins, the other is told.
func testDuelAcceptConcurrent(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	a, b := f.player("ada"), f.player("bob")
	ds := f.duels()
	d := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(0)), duelRules))
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = ds.AcceptDuel(f.ctx, d.ID, b.ID, at(1+i), duelRules)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch game.ErrorCode(err) {
		case "":
			ok++
		case game.EDUELSTATE:
		default:
			t.Errorf("accept: %v", err)
		}
	}
	got := f.mustDuel(ds.Duel(f.ctx, d.ID))
	if ok != 1 || got.Seq != 2 {
		t.Errorf("%d accepts succeeded, seq %d; want 1 and 2", ok, got.Seq)
	}
}

// Replicas racing to end a duel end it once and rate it once.
func testDuelEndOnceConcurrent(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	a, b := f.player("ada"), f.player("bob")
	ds := f.duels()
	d := f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", a.ID, b.ID, at(0)), duelRules))
	d = f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, b.ID, at(1), duelRules))
	d = f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, a.ID, design(1), at(2)))
	d = f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, b.ID, design(2), at(3)))
	const n = 8
	var wg sync.WaitGroup
	dones := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			_, dones[i], err = ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelFinished,
				Result: game.DuelResult{Draw: true, Reason: game.ReasonDraw}, At: at(4)})
			if err != nil {
				t.Errorf("EndDuel: %v", err)
			}
		}()
	}
	wg.Wait()
	count := 0
	for _, d := range dones {
		if d {
			count++
		}
	}
	ra, _ := ds.Rating(f.ctx, a.ID)
	if count != 1 || ra.Duels != 1 || ra.Draws != 1 {
		t.Errorf("%d ends reported done, rating %+v; want one, one duel", count, ra)
	}
}

// Requests arriving at once never both wait where they could have paired.
func testDuelMatchConcurrent(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	ps := f.players(10)
	ds := f.duels()
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := ds.MatchDuel(f.ctx, matchRequest("arena", p.ID, 1500, at(i)), duelRules); err != nil {
				t.Errorf("MatchDuel: %v", err)
			}
		}()
	}
	wg.Wait()
	open, err := ds.OpenDuels(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	active, seen := 0, map[uuid.UUID]int{}
	for _, d := range open {
		if d.State == game.DuelActive {
			active++
		}
		for _, s := range d.Sides {
			if s.PlayerID != uuid.Nil {
				seen[s.PlayerID]++
			}
		}
	}
	if active != 5 || len(open) != 5 || len(seen) != 10 {
		t.Errorf("%d duels (%d active) over %d players; want 5 active duels pairing all 10", len(open), active, len(seen))
	}
}

// duelOnce plays one duel of a against b on slug from challenge to end at
// start (plus a few seconds): winner a, b or nobody (a draw).
func (f *fixture) duelOnce(slug string, a, b uuid.UUID, winner *uuid.UUID, start time.Time) game.Duel {
	f.t.Helper()
	ds := f.duels()
	rules := duelRules
	rules.PerDay = 1000 // the rating rules, not the daily limit, are under test
	d := f.mustDuel(ds.CreateDuel(f.ctx, challenge(slug, a, b, start), rules))
	f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, b, start.Add(time.Second), rules))
	f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, a, design(1), start.Add(2*time.Second)))
	f.mustDuel(ds.SubmitDuelDesign(f.ctx, d.ID, b, design(2), start.Add(3*time.Second)))
	res := game.DuelResult{Winner: winner, Draw: winner == nil, Reason: game.ReasonDraw, Surprise: json.RawMessage(`[]`)}
	if winner != nil {
		res.Reason = game.ReasonScore
	}
	ended, done, err := ds.EndDuel(f.ctx, d.ID, game.DuelEnd{State: game.DuelFinished, Result: res, At: start.Add(4 * time.Second)})
	if err != nil || !done {
		f.t.Fatalf("EndDuel = %v, %v", done, err)
	}
	return ended
}

// establish makes each of ps established (game.Rating.Established) at
// 1500 ± 350: each draws with the same game.EstablishedOpponents fresh
// players (whose results move nobody), one day before start.
func (f *fixture) establish(slug string, start time.Time, ps ...uuid.UUID) {
	f.t.Helper()
	for i := range game.EstablishedOpponents {
		filler := f.player(fmt.Sprintf("filler-%d-%s", i, uuid.NewString()[:8]))
		for j, p := range ps {
			f.duelOnce(slug, p, filler.ID, nil, start.Add(time.Duration(i*len(ps)+j)*10*time.Second))
		}
	}
}

// The farming run of issue 25 against a store: thirty wins against freshly
// registered accounts leave the farmer's rating where it was, and put
// nobody on the ratings board.
func testRatingFarming(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	farmer := f.player("farmer")
	ds := f.duels()
	for i := range 30 {
		victim := f.player(fmt.Sprintf("victim-%02d", i))
		d := f.duelOnce("arena", farmer.ID, victim.ID, &farmer.ID, at(10*i))
		if rs := d.Result.Ratings; len(rs) != 2 || rs[0].After != rs[0].Before || rs[0].Unrated != game.UnratedProvisionalOpponent {
			t.Fatalf("duel %d rated the farmer: %+v", i, rs)
		}
	}
	r, err := ds.Rating(f.ctx, farmer.ID)
	if err != nil || r.Rating != game.DefaultRating || r.Wins != 30 || r.Opponents != 30 || r.RatedOpponents != 0 {
		t.Errorf("the farmer after 30 wins: %+v, %v", r, err)
	}
	page, err := ds.Ratings(f.ctx, game.ListQuery{Limit: 10})
	if err != nil || page.Total != 0 {
		t.Errorf("Ratings after farming = %+v, %v; want nobody", page, err)
	}
}

// Against the same opponent a rating moves once a day.
func testRatingRepeatOpponent(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	a, b := f.player("ada"), f.player("bob")
	ds := f.duels()
	f.establish("arena", at(-100000), a.ID, b.ID)
	first := f.duelOnce("arena", a.ID, b.ID, &a.ID, at(0))
	again := f.duelOnce("arena", a.ID, b.ID, &a.ID, at(3600))
	later := f.duelOnce("arena", a.ID, b.ID, &a.ID, at(0).Add(game.RepeatWindow+4*time.Second))
	for _, c := range []struct {
		name    string
		d       game.Duel
		unrated string
	}{{"first", first, ""}, {"an hour later", again, game.UnratedRepeatOpponent}, {"a day later", later, ""}} {
		rs := c.d.Result.Ratings
		if len(rs) != 2 || rs[0].Unrated != c.unrated || rs[1].Unrated != c.unrated || (c.unrated == "") != (rs[0].After > rs[0].Before) {
			t.Errorf("%s: changes %+v, want unrated %q", c.name, rs, c.unrated)
		}
	}
	ra, _ := ds.Rating(f.ctx, a.ID)
	if ra.Wins != 3 || ra.RatedOpponents != 1 || ra.Opponents != 1+game.EstablishedOpponents {
		t.Errorf("rating after three wins against one opponent: %+v", ra)
	}
}

// The board shows players rated against BoardOpponents opponents, in
// rating order, and nobody else.
func testRatingsBoard(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	ds := f.duels()
	es := make([]uuid.UUID, game.BoardOpponents+1)
	for i := range es {
		es[i] = f.player(fmt.Sprintf("established-%d", i)).ID
	}
	newcomer := f.player("newcomer")
	f.establish("arena", at(-100000), es...)
	// A round robin among the established, the lower index winning.
	n := 0
	for i := range es {
		for j := i + 1; j < len(es); j++ {
			f.duelOnce("arena", es[i], es[j], &es[i], at(10*n))
			n++
		}
	}
	// The newcomer beats two of them: rated, but not on the board.
	f.duelOnce("arena", newcomer.ID, es[0], &newcomer.ID, at(10*n))
	f.duelOnce("arena", newcomer.ID, es[1], &newcomer.ID, at(10*n+10))
	page, err := ds.Ratings(f.ctx, game.ListQuery{Limit: 100})
	if err != nil || page.Total != int64(len(es)) || len(page.Entries) != len(es) || page.Next != "" {
		t.Fatalf("Ratings = %+v, %v; want the %d established", page, err, len(es))
	}
	for i, e := range page.Entries {
		if e.PlayerID == newcomer.ID || e.Rank != int64(i+1) || e.RatedOpponents < game.BoardOpponents || e.Provisional ||
			i > 0 && game.CompareRatings(page.Entries[i-1].Rating, e.Rating) >= 0 {
			t.Errorf("entry %d = %+v", i, e)
		}
	}
	r, err := ds.Rating(f.ctx, newcomer.ID)
	if err != nil || r.Rating <= game.DefaultRating || r.RatedOpponents != 2 || !r.Provisional {
		t.Errorf("the newcomer: %+v, %v", r, err)
	}
	testRatingsPages(t, f, page.Entries)
}

// testRatingsPages: pages of the board, walked to the end, hold every
// entry once, in board order, ranked 1..N; a cursor starts after its
// entry (ties of rating by player id); a forged cursor is refused.
func testRatingsPages(t *testing.T, f *fixture, board []game.RatingEntry) {
	ds := f.duels()
	var walked []game.RatingEntry
	q := game.ListQuery{Limit: 2}
	for i := 0; ; i++ {
		page, err := ds.Ratings(f.ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != int64(len(board)) || len(page.Entries) > 2 || (page.Next != "" && len(page.Entries) != 2) {
			t.Errorf("page %d: total %d, %d entries, next %q", i, page.Total, len(page.Entries), page.Next)
		}
		walked = append(walked, page.Entries...)
		if page.Next == "" || i > 20 {
			break
		}
		q.Cursor = page.Next
	}
	if diff := cmp.Diff(board, walked); diff != "" {
		t.Errorf("Ratings, pages of 2 (-want +got):\n%s", diff)
	}
	// A cursor at the third entry's rating: before every player id of
	// that rating, the page starts at the third; at or after the third's
	// id, at the fourth.
	third := board[2]
	for _, c := range []struct {
		id    uuid.UUID
		first game.RatingEntry
	}{{uuid.Nil, board[2]}, {third.PlayerID, board[3]}, {uuid.Max, board[3]}} {
		cur := game.RatingsCursor{Rating: third.Rating.Rating, PlayerID: c.id, Rank: c.first.Rank - 1}.String()
		page, err := ds.Ratings(f.ctx, game.ListQuery{Limit: 1, Cursor: cur})
		if err != nil || len(page.Entries) != 1 || page.Entries[0] != c.first {
			t.Errorf("Ratings after the third's rating and id %v = %+v, %v; want %+v first", c.id, page, err, c.first)
		}
	}
	below := game.RatingsCursor{Rating: -1e300, Rank: 1}.String()
	if none, err := ds.Ratings(f.ctx, game.ListQuery{Cursor: below}); err != nil || len(none.Entries) != 0 || none.Next != "" {
		t.Errorf("Ratings below every rating = %+v, %v", none, err)
	}
	for _, bad := range []string{
		"not a cursor",
		game.RatingsCursor{Rating: math.NaN(), Rank: 1}.String(),
		game.RatingsCursor{Rating: 1500, Rank: 0}.String(),
		game.DuelListCursor{CreatedAt: at(0)}.String(),
	} {
		_, err := ds.Ratings(f.ctx, game.ListQuery{Cursor: bad})
		wantCode(t, "Ratings cursor "+bad, err, game.EINVALID)
	}
}

// Issue 25: with a limit of 3, six match requests that paired at once were
// counted nowhere. Every duel a player enters counts toward the day: one
// they start, one they are paired into, one they accept.
func testDuelDailyLimitCountsEveryEntry(t *testing.T, f *fixture) {
	f.level("arena", "h1")
	ds := f.duels()
	limited := duelRules
	limited.PerDay = 3
	pairer := f.player("pairer")
	for i := range 3 {
		waiting := f.player(fmt.Sprintf("waiting-%d", i))
		f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", waiting.ID, 1500, at(10*i)), limited))
		d := f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", pairer.ID, 1500, at(10*i+1)), limited))
		if d.State != game.DuelActive || d.Sides[1].PlayerID != pairer.ID {
			t.Fatalf("request %d did not pair at once: %+v", i, d)
		}
	}
	last := f.player("waiting-last")
	f.mustDuel(ds.MatchDuel(f.ctx, matchRequest("arena", last.ID, 1500, at(40)), limited))
	_, err := ds.MatchDuel(f.ctx, matchRequest("arena", pairer.ID, 1500, at(41)), limited)
	wantCode(t, "a fourth pairing in the day", err, game.EDUELDAILYLIMIT)
	_, err = ds.CreateDuel(f.ctx, challenge("arena", pairer.ID, last.ID, at(42)), limited)
	wantCode(t, "a challenge after three pairings", err, game.EDUELDAILYLIMIT)

	accepter := f.player("accepter")
	var challenges []game.Duel
	for i := range 4 {
		c := f.player(fmt.Sprintf("challenger-%d", i))
		challenges = append(challenges, f.mustDuel(ds.CreateDuel(f.ctx, challenge("arena", c.ID, accepter.ID, at(50+i)), limited)))
	}
	for i, d := range challenges[:3] {
		f.mustDuel(ds.AcceptDuel(f.ctx, d.ID, accepter.ID, at(60+i), limited))
	}
	_, err = ds.AcceptDuel(f.ctx, challenges[3].ID, accepter.ID, at(63), limited)
	wantCode(t, "a fourth accept in the day", err, game.EDUELDAILYLIMIT)
	// A challenge received and not accepted counts for nothing; the next day starts afresh.
	f.mustDuel(ds.AcceptDuel(f.ctx, challenges[3].ID, accepter.ID, game.DayStart(at(0)).Add(24*time.Hour), limited))
}
