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

func TestUpdateRatings(t *testing.T) {
	a, b := NewRating(uuid.New()), NewRating(uuid.New())
	tests := []struct {
		name   string
		winner int
		check  func(na, nb Rating) bool
	}{
		{"a wins", 0, func(na, nb Rating) bool {
			return na.Rating > 1500 && nb.Rating < 1500 && na.Wins == 1 && nb.Losses == 1
		}},
		{"b wins", 1, func(na, nb Rating) bool {
			return na.Rating < 1500 && nb.Rating > 1500 && na.Losses == 1 && nb.Wins == 1
		}},
		{"draw", -1, func(na, nb Rating) bool {
			return math.Abs(na.Rating-1500) < 1e-9 && math.Abs(nb.Rating-1500) < 1e-9 && na.Draws == 1 && nb.Draws == 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			na, nb := UpdateRatings(a, b, tt.winner)
			if !tt.check(na, nb) || na.Duels != 1 || nb.Duels != 1 {
				t.Errorf("UpdateRatings(%d) = %+v, %+v", tt.winner, na, nb)
			}
			if na.Deviation >= a.Deviation || nb.Deviation >= b.Deviation {
				t.Errorf("deviations did not shrink: %g, %g", na.Deviation, nb.Deviation)
			}
			again, _ := UpdateRatings(a, b, tt.winner)
			if again != na {
				t.Errorf("not deterministic: %+v then %+v", na, again)
			}
		})
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
