package game

import "math"

// Ratings are Glicko-2 (Glickman, "Example of the Glicko-2 system", 2012),
// with every duel its own rating period: a rating is a mean and a
// deviation (how sure the system is of it) and a volatility (how erratic
// the player is). Glicko-2 rather than Elo because a newcomer's rating
// moves fast while its deviation is large and settles as it shrinks, and
// rather than a TrueSkill-family model because duels are one against one,
// which Glicko-2 was designed for (docs/dependencies.md says why it is
// written here rather than imported).

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
		r.Deviation = math.Min(DefaultDeviation, glickoScale*math.Sqrt(phi*phi+sigma*sigma))
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
	r.Deviation = math.Min(DefaultDeviation, glickoScale*phiNew)
	r.Volatility = sigmaNew
	return r
}

// UpdateRatings rates one duel between a and b: winner 0 (a won), 1 (b
// won) or -1 (a draw). Both are updated from their ratings before the
// duel, and their counts of duels, wins, losses and draws move on.
func UpdateRatings(a, b Rating, winner int) (Rating, Rating) {
	scoreA := 0.5
	switch winner {
	case 0:
		scoreA = 1
	case 1:
		scoreA = 0
	}
	na := glicko2(a, []glickoOpponent{{b.Rating, b.Deviation, scoreA}})
	nb := glicko2(b, []glickoOpponent{{a.Rating, a.Deviation, 1 - scoreA}})
	na.Duels, nb.Duels = a.Duels+1, b.Duels+1
	switch winner {
	case 0:
		na.Wins, nb.Losses = a.Wins+1, b.Losses+1
	case 1:
		na.Losses, nb.Wins = a.Losses+1, b.Wins+1
	default:
		na.Draws, nb.Draws = a.Draws+1, b.Draws+1
	}
	return na, nb
}
