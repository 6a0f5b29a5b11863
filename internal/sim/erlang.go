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

// mmcKBlocking is the blocking probability of M/M/c/K with K = c + buffer:
// c servers, buffer waiting places, offered load a = λ/μ Erlangs. Any a ≥ 0 is
// valid, including overload; buffer ≤ 0 is exactly erlangB.
//
// Relative to state c the unnormalised stationary probabilities sum to 1/B
// over states 0..c (Erlang B already carries that sum) and to Σ_{j=1..buffer} r^j
// over the waiting states, r = a/c. So
//
//	P_block = r^buffer / (1/B + Σ_{j=1..buffer} r^j),
//
// evaluated in O(c) with the geometric sum in closed form. Buffers can be huge
// (1e6 and more), so r^buffer is formed as exp(buffer·ln r) and the sum via
// expm1 to stay accurate near r = 1; for r > 1 numerator and denominator are
// divided by r^buffer so nothing overflows, and the result tends to 1 - 1/r.
func mmcKBlocking(c, buffer int, a float64) float64 {
	if c <= 0 {
		return 1
	}
	if buffer <= 0 {
		return erlangB(c, a)
	}
	if !(a > 0) {
		return 0
	}
	if math.IsInf(a, 1) {
		return 1
	}
	return mmcKBlockingFromB(c, buffer, a, erlangB(c, a))
}

// mmcKBlockingFromB is mmcKBlocking given b = erlangB(c, a), for callers that need both.
func mmcKBlockingFromB(c, buffer int, a, b float64) float64 {
	if c <= 0 {
		return 1
	}
	if buffer <= 0 {
		return b
	}
	if !(a > 0) {
		return 0
	}
	if math.IsInf(a, 1) {
		return 1
	}
	r := a / float64(c)
	n := float64(buffer)
	if n*(1-r) > 40 {
		return 0 // r^n < e^(−n(1−r)) < 5e-18 bounds the blocking: nothing is lost
	}
	switch {
	case r < 1:
		// Multiply through by B so that B underflowing to 0 gives 0, not 0/0.
		lr := math.Log(r)
		rn := math.Exp(n * lr)
		geo := r * math.Expm1(n*lr) / math.Expm1(lr) // Σ_{j=1..n} r^j
		return rn * b / (1 + b*geo)
	case r > 1:
		// With q = 1/r: P = B / (q^n + B·Σ_{i=0..n-1} q^i). B ≥ 1-1/r > 0 here.
		lq := -math.Log(r)
		qn := math.Exp(n * lq)
		geo := math.Expm1(n*lq) / math.Expm1(lq)
		return min(1, b/(qn+b*geo))
	default:
		return b / (1 + b*n)
	}
}
