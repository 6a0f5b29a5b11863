package game

import (
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
)

// The worked example of Glickman's paper: a 1500 ± 200 player (volatility
// 0.06) beats 1400 ± 30 and loses to 1550 ± 100 and 1700 ± 300, and ends
// at 1464.06 ± 151.52 with volatility 0.05999.
func TestGlicko2PaperExample(t *testing.T) {
	r := Rating{Rating: 1500, Deviation: 200, Volatility: 0.06}
	got := glicko2(r, []glickoOpponent{{1400, 30, 1}, {1550, 100, 0}, {1700, 300, 0}})
	for _, c := range []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"rating", got.Rating, 1464.06, 0.01},
		{"deviation", got.Deviation, 151.52, 0.01},
		{"volatility", got.Volatility, 0.05999, 0.00001},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %.5f, want %.5f", c.name, c.got, c.want)
		}
	}
}

// established is a player the rules trust: opponents enough, rating
// settled to the deviation given.
func established(rating, deviation float64) Rating {
	r := NewRating(uuid.New())
	r.Rating, r.Deviation, r.Opponents, r.RatedOpponents, r.Duels, r.Provisional = rating, deviation, 20, 20, 40, false
	return r
}

func TestRateDuel(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fresh := NewRating(uuid.New())
	est, est2 := established(1500, 200), established(1500, 200)
	recent := PairHistory{Met: true, LastRated: at.Add(-RepeatWindow + time.Second)}
	old := PairHistory{Met: true, LastRated: at.Add(-RepeatWindow)}
	tests := []struct {
		name           string
		a, b           Rating
		winner         int
		ha, hb         PairHistory
		moveA, moveB   bool // whether each rating moves
		unratedA       string
		opponentsA     int
		ratedOpponents int
	}{
		{"established pair, a wins", est, est2, 0, PairHistory{}, PairHistory{}, true, true, "", 21, 21},
		{"established pair, draw", est, est2, -1, PairHistory{}, PairHistory{}, false, false, "", 21, 21},
		{"fresh opponent moves nobody established", est, fresh, 0, PairHistory{}, PairHistory{}, false, true, UnratedProvisionalOpponent, 21, 20},
		{"two fresh players move neither", fresh, NewRating(uuid.New()), 0, PairHistory{}, PairHistory{}, false, false, UnratedProvisionalOpponent, 1, 0},
		{"a repeat within the window", est, est2, 0, recent, PairHistory{}, false, true, UnratedRepeatOpponent, 20, 20},
		{"a repeat once the window has passed", est, est2, 0, old, PairHistory{}, true, true, "", 20, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			na, nb, changes := RateDuel(tt.a, tt.b, tt.winner, tt.ha, tt.hb, at)
			if moved := na.Rating != tt.a.Rating || na.Deviation != tt.a.Deviation; moved != tt.moveA && tt.winner >= 0 {
				t.Errorf("a's rating moved = %v, want %v (%+v)", moved, tt.moveA, na)
			}
			if moved := nb.Rating != tt.b.Rating; moved != tt.moveB && tt.winner >= 0 {
				t.Errorf("b's rating moved = %v, want %v (%+v)", moved, tt.moveB, nb)
			}
			if changes[0].Unrated != tt.unratedA || changes[0].Before != tt.a.Rating || changes[0].After != na.Rating {
				t.Errorf("a's change = %+v, want unrated %q", changes[0], tt.unratedA)
			}
			if na.Duels != tt.a.Duels+1 || nb.Duels != tt.b.Duels+1 || na.Opponents != tt.opponentsA || na.RatedOpponents != tt.ratedOpponents {
				t.Errorf("counts: a %+v, b %+v", na, nb)
			}
			if tt.winner == 0 && (na.Wins != tt.a.Wins+1 || nb.Losses != tt.b.Losses+1) || tt.winner < 0 && (na.Draws != 1 || nb.Draws != 1) {
				t.Errorf("results: a %+v, b %+v", na, nb)
			}
			again, _, _ := RateDuel(tt.a, tt.b, tt.winner, tt.ha, tt.hb, at)
			if again != na {
				t.Errorf("not deterministic: %+v then %+v", na, again)
			}
		})
	}
}

// The farming run of issue 25: thirty wins in a row against freshly
// registered accounts move the farmer by no more than one honest win
// against an established 1500 player would, whether the farmer is new or
// established, and leave everyone involved off the ratings board.
func TestRateDuelFarming(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, start := range []Rating{NewRating(uuid.New()), established(1500, 60), established(1800, 120)} {
		honest, _, _ := RateDuel(start, established(1500, 60), 0, PairHistory{}, PairHistory{}, at)
		farmer := start
		var victims []Rating
		for i := range 30 {
			var victim Rating
			farmer, victim, _ = RateDuel(farmer, NewRating(uuid.New()), 0, PairHistory{}, PairHistory{}, at.Add(time.Duration(i)*time.Second))
			victims = append(victims, victim)
		}
		if gain, bound := farmer.Rating-start.Rating, honest.Rating-start.Rating; gain > bound || bound <= 0 {
			t.Errorf("from %.0f±%.0f: 30 farmed wins gained %.1f, one honest win %.1f", start.Rating, start.Deviation, gain, bound)
		}
		if farmer.OnBoard() != start.OnBoard() {
			t.Errorf("from %.0f±%.0f: farming changed the farmer's place on the board: %+v", start.Rating, start.Deviation, farmer)
		}
		for _, v := range victims {
			if v.OnBoard() || !v.Provisional {
				t.Errorf("a throwaway account is on the board or established: %+v", v)
			}
		}
	}
}

// Losing on purpose raises volatility, so that later wins count for more;
// the ceiling bounds it however many upsets are staged, and the deviation
// keeps its floor however many duels are played.
func TestRatingBounds(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p := established(1500, 60)
	for i := range 2000 {
		winner, opponent := 1, established(1000, 45) // lose to the weak
		if i%2 == 1 {
			winner, opponent = 0, established(2200, 45) // beat the strong
		}
		p, _, _ = RateDuel(p, opponent, winner, PairHistory{}, PairHistory{}, at.Add(time.Duration(i)*time.Hour))
		if p.Volatility > MaxVolatility || p.Deviation < MinDeviation {
			t.Fatalf("duel %d: volatility %g, deviation %g; want at most %g and at least %g", i, p.Volatility, p.Deviation, MaxVolatility, MinDeviation)
		}
	}
	if p.Volatility != MaxVolatility {
		t.Errorf("staged upsets left volatility at %g; the test does not reach the ceiling %g", p.Volatility, MaxVolatility)
	}
}

func TestDecideDuel(t *testing.T) {
	at := func(x float64) *float64 { return &x }
	tests := []struct {
		name       string
		a, b       DuelRun
		wantWinner int
		wantReason string
	}{
		{"pass beats fail", DuelRun{Passed: true, Score: 1000}, DuelRun{Passed: false, FailedAtSec: at(50)}, 0, ReasonPassed},
		{"fail loses to pass", DuelRun{FailedAtSec: at(50)}, DuelRun{Passed: true, Score: 1000}, 1, ReasonPassed},
		{"higher score", DuelRun{Passed: true, Score: 4000}, DuelRun{Passed: true, Score: 5000}, 1, ReasonScore},
		{"equal scores draw", DuelRun{Passed: true, Score: 4000}, DuelRun{Passed: true, Score: 4000}, -1, ReasonDraw},
		{"failed later", DuelRun{FailedAtSec: at(90), ErrorRate: 0.5}, DuelRun{FailedAtSec: at(30), ErrorRate: 0.01}, 0, ReasonFailedLater},
		{"fewer errors", DuelRun{FailedAtSec: at(30), ErrorRate: 0.2}, DuelRun{FailedAtSec: at(30), ErrorRate: 0.1}, 1, ReasonFewerErrors},
		{"both fail alike", DuelRun{FailedAtSec: at(30), ErrorRate: 0.1}, DuelRun{FailedAtSec: at(30), ErrorRate: 0.1}, -1, ReasonDraw},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, reason := DecideDuel(tt.a, tt.b)
			if w != tt.wantWinner || reason != tt.wantReason {
				t.Errorf("DecideDuel = %d, %q; want %d, %q", w, reason, tt.wantWinner, tt.wantReason)
			}
		})
	}
}

func TestMatchAllowance(t *testing.T) {
	r := DuelRules{MatchBase: 100, MatchPerMinute: 50, MatchMax: 400}
	for _, c := range []struct {
		waited time.Duration
		want   float64
	}{{0, 100}, {time.Minute, 150}, {4 * time.Minute, 300}, {time.Hour, 400}, {-time.Minute, 100}} {
		if got := r.MatchAllowance(c.waited); got != c.want {
			t.Errorf("MatchAllowance(%s) = %g, want %g", c.waited, got, c.want)
		}
	}
}

// The bound on a ring of throwaway accounts (RELIABILITY.md, "Attacks and their bounds"):
// a farmer and five new accounts who play each other once (15 duels) are all established,
// having met five distinct opponents, without any rating moving; from then on the farmer
// gets one rated win a day against each. Such a win moves the farmer's rating about as
// much as a win against an established 1500 ± 60 player: at most a fifth more over a week
// (the throwaways' large deviations keep the farmer's deviation up). So a ring moves a
// rating no faster than winning about as many duels against ordinary established
// players, which DUELS_PER_DAY caps (20 a day).
func TestRatingRingBound(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const ring = 6 // the farmer (0) and five throwaways
	r := make([]Rating, ring)
	for i := range r {
		r[i] = NewRating(uuid.New())
	}
	hist := map[[2]int]PairHistory{}
	duel := func(a, b int, when time.Time) {
		na, nb, ch := RateDuel(r[a], r[b], 0, hist[[2]int{a, b}], hist[[2]int{b, a}], when)
		r[a], r[b] = na, nb
		for k, side := range [][2]int{{a, b}, {b, a}} {
			h := hist[side]
			h.Met = true
			if rated := ch[k].RatedAt(when); rated != nil {
				h.LastRated = *rated
			}
			hist[side] = h
		}
	}
	n := 0
	for a := range ring {
		for b := a + 1; b < ring; b++ {
			duel(a, b, at.Add(time.Duration(n)*time.Minute))
			n++
		}
	}
	for i, p := range r {
		if p.Rating != 1500 || !p.Established() || p.OnBoard() {
			t.Errorf("after the ring's %d duels, account %d: %+v; want established at 1500, not on the board", n, i, p)
		}
	}
	honest := NewRating(uuid.New())
	for day := range 7 {
		when := at.Add(time.Duration(day)*24*time.Hour + time.Hour)
		for b := 1; b < ring; b++ {
			duel(0, b, when.Add(time.Duration(b)*time.Minute))
			honest, _, _ = RateDuel(honest, established(1500, 60), 0, PairHistory{}, PairHistory{}, when)
		}
		t.Logf("day %d: the farmer %.0f ± %.0f (on the board: %v); an honest player winning as many duels %.0f ± %.0f",
			day+1, r[0].Rating, r[0].Deviation, r[0].OnBoard(), honest.Rating, honest.Deviation)
		if gain, bound := r[0].Rating-1500, 1.2*(honest.Rating-1500); gain > bound {
			t.Errorf("day %d: the ring's farmer gained %.1f, more than a fifth over an honest player winning as many duels (%.1f)",
				day+1, gain, honest.Rating-1500)
		}
	}
}

// A ratings cursor that decodes re-encodes to itself, and a position no
// board holds (a rating that is not a number, a rank below 1) is refused.
func FuzzRatingsCursor(f *testing.F) {
	f.Add(RatingsCursor{Rating: 1500.25, PlayerID: uuid.New(), Rank: 7}.String())
	f.Add(RatingsCursor{Rating: math.NaN(), Rank: 1}.String())
	f.Add(RatingsCursor{Rating: 1500, Rank: 0}.String())
	f.Add(DuelListCursor{CreatedAt: time.Unix(1, 0)}.String())
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		_, c, err := ParseRatingsQuery(ListQuery{Cursor: s})
		if err != nil || c == nil {
			return
		}
		if math.IsNaN(c.Rating) || math.IsInf(c.Rating, 0) || c.Rank < 1 {
			t.Errorf("%q decoded to rating %v, rank %d: a position no board holds", s, c.Rating, c.Rank)
		}
		_, again, err := ParseRatingsQuery(ListQuery{Cursor: c.String()})
		if err != nil || *again != *c {
			t.Errorf("re-encoding %q: %+v, %v; want %+v", s, again, err, c)
		}
	})
}
