package game

import (
	"math"
	"time"
)

// Ratings are Glicko-2 (Glickman, "Example of the Glicko-2 system", 2012),
// with every duel its own rating period: a rating is a mean and a
// deviation (how sure the system is of it) and a volatility (how erratic
// the player is). Glicko-2 rather than Elo because a newcomer's rating
// moves fast while its deviation is large and settles as it shrinks, and
// rather than a TrueSkill-family model because duels are one against one,
// which Glicko-2 was designed for (docs/dependencies.md says why it is
// written here rather than imported).

// Rules that keep a rating from being farmed. Glicko-2 trusts every result
// it is given; a player who can make results (throwaway accounts that lose
// on purpose, one opponent beaten again and again) can make a rating. So a
// result moves a player's rating only when it says something about the
// player (RateDuel):
//
//   - a player is provisional until they have finished rated duels against
//     EstablishedOpponents distinct opponents; a result against a
//     provisional opponent moves nobody's rating (the duel still counts
//     toward both players' duels, opponents and wins), so thirty fresh
//     accounts beaten in a row move a rating by nothing;
//   - against the same opponent, a player's rating moves at most once per
//     RepeatWindow;
//   - the deviation never falls below MinDeviation, so a rating stays able
//     to follow a player, and the volatility never rises above
//     MaxVolatility, so losing on purpose cannot pump it to make later wins
//     count many times over;
//   - the ratings board shows players whose ratings moved against at least
//     BoardOpponents distinct opponents.
//
// Between established players who meet once in a window, Glicko-2 applies
// exactly (TestGlicko2PaperExample, TestRateDuelFarming).
const (
	EstablishedOpponents = 5
	BoardOpponents       = 5
	RepeatWindow         = 24 * time.Hour
	MinDeviation         = 45.0
	MaxVolatility        = 0.1
)

// Why a duel did not move a player's rating (RatingChange.Unrated).
const (
	UnratedProvisionalOpponent = "provisional_opponent"
	UnratedRepeatOpponent      = "repeat_opponent"
)

// glickoScale converts between the Glicko and Glicko-2 scales.
const glickoScale = 173.7178

// Glicko-2 system constants: tau constrains the change of volatility
// (Glickman suggests 0.3 to 1.2); the volatility iteration stops at
// glickoEpsilon.
const (
	glickoTau     = 0.5
	glickoEpsilon = 1e-6
)

// glickoOpponent is one game of a rating period: the opponent's rating and
// deviation (Glicko scale) and the score (1 win, 0.5 draw, 0 loss).
type glickoOpponent struct {
	rating, deviation, score float64
}

func glickoG(phi float64) float64 { return 1 / math.Sqrt(1+3*phi*phi/(math.Pi*math.Pi)) }

// glicko2 is one rating period of player r against games (steps 2 to 8 of
// Glickman's paper). A period without games only widens the deviation.
func glicko2(r Rating, games []glickoOpponent) Rating {
	mu := (r.Rating - DefaultRating) / glickoScale
	phi := r.Deviation / glickoScale
	sigma := r.Volatility
	if len(games) == 0 {
		r.Deviation = math.Max(MinDeviation, math.Min(DefaultDeviation, glickoScale*math.Sqrt(phi*phi+sigma*sigma)))
		return r
	}
	var vInv, sum float64
	for _, o := range games {
		muJ := (o.rating - DefaultRating) / glickoScale
		g := glickoG(o.deviation / glickoScale)
		e := 1 / (1 + math.Exp(-g*(mu-muJ)))
		vInv += g * g * e * (1 - e)
		sum += g * (o.score - e)
	}
	v := 1 / vInv
	delta := v * sum

	// Step 5: the new volatility, by the Illinois algorithm.
	a := math.Log(sigma * sigma)
	f := func(x float64) float64 {
		ex := math.Exp(x)
		d := phi*phi + v + ex
		return ex*(delta*delta-phi*phi-v-ex)/(2*d*d) - (x-a)/(glickoTau*glickoTau)
	}
	A := a
	var B float64
	if delta*delta > phi*phi+v {
		B = math.Log(delta*delta - phi*phi - v)
	} else {
		k := 1.0
		for f(a-k*glickoTau) < 0 {
			k++
		}
		B = a - k*glickoTau
	}
	fA, fB := f(A), f(B)
	for i := 0; math.Abs(B-A) > glickoEpsilon && i < 100; i++ {
		C := A + (A-B)*fA/(fB-fA)
		fC := f(C)
		if fC*fB <= 0 {
			A, fA = B, fB
		} else {
			fA /= 2
		}
		B, fB = C, fC
	}
	sigmaNew := math.Exp(A / 2)

	phiStar := math.Sqrt(phi*phi + sigmaNew*sigmaNew)
	phiNew := 1 / math.Sqrt(1/(phiStar*phiStar)+1/v)
	muNew := mu + phiNew*phiNew*sum

	r.Rating = glickoScale*muNew + DefaultRating
	r.Deviation = math.Max(MinDeviation, math.Min(DefaultDeviation, glickoScale*phiNew))
	r.Volatility = math.Min(MaxVolatility, sigmaNew)
	return r
}

// Established reports whether r's results move other players' ratings.
func (r Rating) Established() bool { return r.Opponents >= EstablishedOpponents }

// OnBoard reports whether r is shown on the ratings board.
func (r Rating) OnBoard() bool { return r.RatedOpponents >= BoardOpponents }

// PairHistory is what a store knows of one player's earlier duels against
// the other of a duel being rated.
type PairHistory struct {
	// Met: they have finished a rated duel before.
	Met bool
	// LastRated is when a duel against the other last moved this player's
	// rating; zero if none has.
	LastRated time.Time
}

// RateDuel rates one duel between a and b ended at at: winner 0 (a won),
// 1 (b won) or -1 (a draw); ha and hb are each side's history against the
// other. Each side is rated from both ratings before the duel under the
// rules above, and its counts of duels, opponents, wins, losses and draws
// move on. The changes say, for a side whose rating did not move, why.
func RateDuel(a, b Rating, winner int, ha, hb PairHistory, at time.Time) (Rating, Rating, []RatingChange) {
	scoreA := 0.5
	switch winner {
	case 0:
		scoreA = 1
	case 1:
		scoreA = 0
	}
	na, ca := rateSide(a, b, scoreA, ha, at)
	nb, cb := rateSide(b, a, 1-scoreA, hb, at)
	switch winner {
	case 0:
		na.Wins, nb.Losses = a.Wins+1, b.Losses+1
	case 1:
		na.Losses, nb.Wins = a.Losses+1, b.Wins+1
	default:
		na.Draws, nb.Draws = a.Draws+1, b.Draws+1
	}
	return na, nb, []RatingChange{ca, cb}
}

// rateSide is one side of RateDuel.
func rateSide(me, opponent Rating, score float64, h PairHistory, at time.Time) (Rating, RatingChange) {
	n := me
	change := RatingChange{PlayerID: me.PlayerID, Before: me.Rating}
	switch {
	case !opponent.Established():
		change.Unrated = UnratedProvisionalOpponent
	case !h.LastRated.IsZero() && at.Sub(h.LastRated) < RepeatWindow:
		change.Unrated = UnratedRepeatOpponent
	default:
		n = glicko2(me, []glickoOpponent{{opponent.Rating, opponent.Deviation, score}})
		if h.LastRated.IsZero() {
			n.RatedOpponents++
		}
	}
	n.Duels++
	if !h.Met {
		n.Opponents++
	}
	n.Provisional = !n.Established()
	change.After = n.Rating
	return n, change
}

// NewPairHistory is a side's history against the other in a store that
// keeps, per ordered pair, whether they met and when the rating last moved.
func NewPairHistory(met bool, lastRated *time.Time) PairHistory {
	h := PairHistory{Met: met}
	if lastRated != nil {
		h.LastRated = *lastRated
	}
	return h
}

// RatedAt is when change moved its player's rating against the other side,
// for a store to record in the pair's history: at, or nil if it did not.
func (c RatingChange) RatedAt(at time.Time) *time.Time {
	if c.Unrated != "" {
		return nil
	}
	return &at
}
