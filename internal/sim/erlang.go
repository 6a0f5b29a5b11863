package sim

import "math"

// negligibleB is the Erlang-B value below which erlangB answers 0 (2^-60 ≈ 8.7e-19).
const negligibleB = 0x1p-60

// Exact M/M/c building blocks. Everything here is O(c), allocation-free and
// total: any int and any float64 (including NaN, ±Inf, negative) yields a
// probability in [0,1], because these run inside the tick loop where a
// panic or NaN would poison a whole simulation.

// erlangB is the Erlang-B blocking probability of c servers with no waiting
// room under an offered load of a = λ/μ Erlangs. It is valid for every
// a ≥ 0, including overload (a ≥ c).
//
// It runs the textbook stable recursion B(k) = a·B(k-1)/(k + a·B(k-1)) in
// its reciprocal form I(k) = 1/B(k) = 1 + (k/a)·I(k-1). The two are the same
// recursion (and equally stable: each step damps the error it inherits),
// but the reciprocal form has no division on the loop-carried dependency,
// and four steps can be fused into one multiply-add on that dependency,
// which makes c=640 several times faster than the textbook loop.
//
// A blocking probability below negligibleB is returned as 0: it would turn into
// fewer than one request in 10^18 refused, and into a wait probability that the
// latency model drops (minWaitProb). For a large, lightly loaded pool
// (serverless concurrency, a web tier at night) the steps after that point
// could only make B smaller, and stopping there skips them.
func erlangB(c int, a float64) float64 {
	if c <= 0 {
		return 1
	}
	if !(a > 0) { // also NaN: no offered load, nothing is lost
		return 0
	}
	if math.IsInf(a, 1) {
		return 1
	}
	ia := 1 / a
	inv := 1.0
	k := 1
	for ; k+3 <= c; k += 4 {
		// I(k+3) = 1 + x3(1 + x2(1 + x1(1 + x0·I(k-1))))
		//        = (1 + x3 + x3x2 + x3x2x1) + x3x2x1x0·I(k-1)
		x0, x1 := float64(k)*ia, float64(k+1)*ia
		x2, x3 := float64(k+2)*ia, float64(k+3)*ia
		p32 := x3 * x2
		inv = (1 + x3 + p32 + p32*x1) + p32*(x1*x0)*inv
		// While k ≤ a every I(k) ≤ k+1, so a huge I means k > a, all later
		// factors exceed 1, and B only shrinks further: below negligibleB.
		if inv > 1/negligibleB {
			return 0
		}
	}
	for ; k <= c; k++ {
		inv = 1 + float64(k)*ia*inv
	}
	return 1 / inv
}

// erlangC is the probability that an arrival has to wait in an M/M/c queue
// with offered load a = λ/μ Erlangs. At or beyond saturation (a ≥ c) there is
// no stationary regime and every arrival eventually waits, so it returns 1.
func erlangC(c int, a float64) float64 {
	if c <= 0 || a >= float64(c) || math.IsNaN(a) {
		return 1
	}
	if !(a > 0) {
		return 0
	}
	return erlangCFromB(c, a, erlangB(c, a))
}

// erlangCFromB is erlangC given b = erlangB(c, a), for callers that need both.
func erlangCFromB(c int, a, b float64) float64 {
	if c <= 0 || a >= float64(c) || math.IsNaN(a) {
		return 1
	}
	if !(a > 0) {
		return 0
	}
	cf := float64(c)
	// c - a(1-B) > c - a > 0 here, so this cannot divide by zero.
	return min(1, cf*b/(cf-a*(1-b)))
}

// regularLoss is the share of arrivals refused by a room of c workers and no waiting place
// offered a Erlangs by a stream whose interarrival times vary by cv2 (squared): the exact
// GI/M/c/c loss (Takács) for gamma-distributed interarrival times of that variation, so an
// Erlang-n stream (every n-th request of a Poisson stream, dealt in turn) is exact. A
// regular stream finds all the workers busy less often than a Poisson one: three rooms of
// 6 workers dealt in turn 90% of their capacity lose 17.4%, where Erlang B says 22.2% and
// pooled into one room of 18 workers 11.7%. With cv2 = 1 it is Erlang B.
func regularLoss(c int, a, cv2 float64) float64 {
	if cv2 == 1 || !(cv2 > 0) || !(a > 0) || c <= 0 {
		return erlangB(c, a)
	}
	// 1/B = Σ_j C(c, j) Π_{i≤j} (1 − φ_i) ÷ φ_i, φ_i the interarrival time's transform at
	// i workers' departure rate: (1 + i ÷ (k·a))^(−k) in units of the service time, k = 1 ÷
	// cv2. Summed by Horner's rule from the innermost term; past the largest float the
	// loss is 0.
	k := 1 / cv2
	h := 1.0
	for i := c; i >= 1; i-- {
		odds := math.Expm1(k * math.Log1p(float64(i)/(k*a))) // (1 − φ_i) ÷ φ_i
		h = 1 + float64(c-i+1)/float64(i)*odds*h
	}
	return 1 / h
}

// roomQueue is the stationary queue of one room: c workers offered a Erlangs (a < c),
// places waiting places (+Inf for an unbounded room), and sigma the ratio by which the chance of each further place being taken falls: a ÷ c for Poisson
// arrivals, which makes this M/M/c/K exactly, and smaller for a more regular stream
// (heavy-traffic GI/M/c, 1 − 2(1 − a/c) ÷ (ca² + 1)). It returns the chance that an admitted
// arrival waits, its mean wait counted in departures of the room (divide by c·μ for
// seconds), and the share of arrivals refused because every place is taken.
func roomQueue(c int, a, sigma, places float64) (waits, departures, refused float64) {
	if !(a > 0) || c <= 0 {
		return 0, 0, 0
	}
	b := erlangB(c, a)
	if !(b > 0) {
		return 0, 0, 0
	}
	m := max(0, places)
	one := 1 - sigma
	// sigma^m, the queue part's weight at the last place relative to the first: below
	// e^(−m(1 − σ)), and taken as none below e^(−48), where m·σ^m no longer moves a sum
	// of 1 (a room of many places far from full, and an unbounded one).
	full := 0.0
	if m*one < 48 {
		full = math.Pow(sigma, m)
	}
	// Over the places j = 0..m−1 an arrival may find taken: Σ σ^j and Σ (j+1)·σ^j.
	ahead, wait := 1/one, 1/(one*one)
	if full > 0 {
		ahead = (1 - full) / one
		wait = (1 - (m+1)*full + m*full*sigma) / (one * one)
	}
	pc := 1 / (1/b + sigma*ahead) // all workers busy, none waiting
	refused = pc * full
	admitted := 1 - refused
	return pc * ahead / admitted, pc * wait / admitted, refused
}
