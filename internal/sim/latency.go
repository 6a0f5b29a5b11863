package sim

import (
	"math"
	"slices"
)

// Response-time distributions of request paths, and their quantiles.
//
// Method. A path's latency is Fixed + R, where R is a sum of independent
// exponential "factors": every stage contributes its service time Exp(μ)
// and, with probability C, a wait Exp(θ). Each factor has the rational
// Laplace transform (1-c) + c·r/(r+s) (c = 1 for service), so R is
// phase-type and its survival function is *exactly* a finite sum
//
//	P(R > x) = Σ_j e^{-ρ_j x} · Σ_{i<n_j} s_ji (ρ_j x)^i / i!
//
// over the distinct rates ρ_j (n_j = how many factors share ρ_j). The
// coefficients come from a partial-fraction expansion, redone lazily after
// the mix changes (O(factors²) per path), after which every evaluation costs
// one exp per distinct rate. That is exact (the single M/M/c stage is
// reproduced to rounding, including θ = μ, which is just a double pole), and
// cheaper than a saddlepoint approximation, which needs an inner Newton solve
// per evaluation and is unreliable for the bimodal "most requests don't wait,
// a few wait long" shape that small Erlang-C probabilities produce.
//
// The catch of partial fractions is cancellation when rates are close but
// not equal: coefficients grow like 1/gap. Exactly equal rates (repeated
// identical hops) become one higher-order pole, which is exact. If the sum
// of |coefficients| still exceeds condBudget (so rounding could cost more
// than ~1e-10 absolute in P(T>t)), the two closest poles are merged into one
// at the rate that keeps the mean exact, and the expansion is redone. An
// isolated pair is merged only below a relative gap of ~1e-6, where the
// error is O(gap²), i.e. nil. Bunches of many close-but-distinct rates end
// up as one pole; that keeps the mean but loses the bunch's spread in
// variance, which in the tests costs at most 0.2% at p99 (16 rates spanning
// 30%). Where a merge kicks in as a rate moves, quantiles can jump by that
// much, so they are monotone in load only up to such steps.
//
// Quantiles of the weighted mixture are found by Halley's method on
// ln P(T>t) (the density and its derivative come from the same exps), which
// is nearly linear in the tail of a phase-type law, kept inside a bracket
// [lo, hi] with (geometric) bisection when a step leaves it. Atoms
// (deterministic paths) make P(T>t) jump; those points are checked first so
// that a quantile sitting on a jump is returned exactly. For ascending ps
// the last evaluation of one solve seeds the next, so {p50, p95, p99} of a
// 10-path mix typically cost 6-7 evaluations. A solve stops once a Halley
// step is below quantileRelTol of t; with cubic convergence the result is
// then accurate to ~1e-8 relative (worst seen in the tests: 3e-10 against
// the exact M/M/c quantile).
//
// Terms whose contribution e^{-ρx}·|coefficient| is below ~4e-18 are
// skipped without calling exp, which is what keeps the tail quantiles of
// mixes with fast hops cheap.
//
// Units are seconds for times and 1/seconds for rates. Inputs are sanitised
// rather than rejected: NaN/negative times and weights count as 0; rates
// that are not > 0 (or +Inf) mean "no such random part"; rates are clamped
// to [minRate, maxRate], each Fixed to maxFixed, WaitProb to 1, and a
// WaitProb below minWaitProb drops the wait.
//
// LatencyMix caches its expansion and is therefore not safe for concurrent
// use, not even for concurrent Tail calls.

const (
	minRate        = 1e-12 // 1/s; a mean of ~30,000 years
	maxRate        = 1e12  // 1/s; a mean of 1 ps
	maxFixed       = 1e12  // s
	maxWeight      = 1e300 // keeps the weight total finite
	minWaitProb    = 1e-12 // below this the wait factor is dropped
	sameRateRelGap = 1e-12 // rates closer than this are one pole from the start
	condBudget     = 1e6   // max Σ|coefficient| of a path's expansion
	quantileRelTol = 3e-3  // Halley step size at which a quantile is accepted
	maxQuantileP   = 1 - 1e-12
	maxSolveIter   = 200
)

// Stage is one hop's contribution to a request's response time, in seconds.
type Stage struct {
	Fixed       float64 // deterministic part: network, auth, injected latency, fluid-backlog wait
	ServiceRate float64 // own service time ~ Exp(ServiceRate) (1/mean service seconds); 0 means no random service part
	WaitProb    float64 // probability the request queues (Erlang C), in [0,1]
	WaitRate    float64 // if it queues, the wait ~ Exp(WaitRate) where WaitRate = c·μ − λ; ignored when WaitProb==0
	// SpreadRate, if > 0, adds spreadStages exponential factors of this rate: the spread
	// of a fluid backlog's wait around its mean (the rest of that wait is in Fixed).
	SpreadRate float64
}

// spreadStages is how many exponential factors of one rate carry a backlog wait's spread:
// a shifted Erlang with the wait's mean and variance.
const spreadStages = 8

// mmcStage is the exact stationary FCFS response time of an M/M/c pool with
// c workers, per-worker service rate mu and arrival rate lambda (both 1/s),
// valid for lambda < c·mu. At or beyond saturation there is no stationary
// wait: it returns WaitProb 1 with WaitRate 0, which LatencyMix treats as "no
// random wait", so the caller must put the (fluid) backlog wait into Fixed.
func mmcStage(c int, mu, lambda float64) Stage {
	if c <= 0 || !(mu > 0) || math.IsInf(mu, 1) {
		return Stage{}
	}
	s := Stage{ServiceRate: mu}
	if !(lambda > 0) {
		return s
	}
	a := lambda / mu
	if !(a < float64(c)) {
		s.WaitProb = 1
		return s
	}
	s.WaitProb = erlangC(c, a)
	s.WaitRate = float64(c)*mu - lambda
	return s
}

// LatencyMix is the latency distribution of a request mix: a weighted set of paths, each a sum of Stages.
// It is reset and refilled every tick, so it must not allocate once its slices have grown.
type LatencyMix struct {
	stages []Stage
	paths  []mixPath

	// Expansion, rebuilt lazily when dirty.
	dirty    bool
	comp     []compPath
	simple   []simpleTerm
	high     []highTerm
	coef     []float64
	atoms    []atomPoint
	mean     float64
	minFixed float64

	// Scratch for the expansion.
	factors  []factor
	clusters []cluster
	ser      []float64
	hser     []float64
}

type mixPath struct {
	start  int // index of its first stage in stages
	weight float64
	comp   int // its index in comp once compiled; -1 if it has no weight
}

// compPath is one positive-weight path in expanded form.
type compPath struct {
	w      float64 // normalised weight
	fixed  float64
	atom   float64 // P(R = 0): the path is deterministic with this probability
	s0, s1 int     // its simple poles
	h0, h1 int     // its multiple poles
}

// simpleTerm is a pole of multiplicity 1: with e = exp(-ρx) it adds s·e to
// P(R > x), d·e to the density and dd·e to the density's derivative.
// Beyond y = ρx = skip, |s|·e < e^{-40} ≈ 4e-18 and the exp is not worth
// its cost: that is far below any probability a quantile is asked about.
type simpleTerm struct {
	rho, skip, s, d, dd float64
}

// highTerm is a pole of multiplicity n ≥ 2. With π_i = e^{-y} y^i/i!,
// y = ρx, it adds Σ S_i π_i to P(R > x), Σ D_i π_i to the density and
// Σ E_i π_i to its derivative, where S, D and E are coef[off:off+3n].
type highTerm struct {
	rho, skip float64 // skip: beyond this y, P(Poisson(y) < n) < ~e^{-38}
	off, n    int
}

type atomPoint struct {
	u, sAt, sBefore float64 // P(T > u) and P(T ≥ u)
}

type factor struct {
	r, c float64 // rate and probability of being present
	m    float64 // mean contribution c/r
	rho  float64 // rate of the pole it was merged into
}

// cluster is a run of sorted factors sharing one pole.
type cluster struct {
	lo, hi     int
	rho        float64
	sumC, sumM float64 // Σc and Σc/r of the members: rho = sumC/sumM keeps the mean
}

// evalPoint is the mix at t: s = P(T > t), f the density, df its derivative.
type evalPoint struct {
	t, s, f, df float64
}

// Reset empties the mix, keeping its memory.
func (m *LatencyMix) Reset() {
	m.stages = m.stages[:0]
	m.paths = m.paths[:0]
	m.dirty = true
}

// BeginPath starts a path; following AddStage calls belong to it. Weights are
// relative (they need not sum to 1); a path with weight ≤ 0 is ignored.
func (m *LatencyMix) BeginPath(weight float64) {
	if !(weight > 0) {
		weight = 0
	}
	m.paths = append(m.paths, mixPath{start: len(m.stages), weight: min(weight, maxWeight), comp: -1})
	m.dirty = true
}

// AddStage appends s to the current path. Stages added before any BeginPath
// start an implicit path of weight 1.
func (m *LatencyMix) AddStage(s Stage) {
	if len(m.paths) == 0 {
		m.BeginPath(1)
	}
	m.stages = append(m.stages, s)
	m.dirty = true
}

// Len is the number of paths with weight > 0.
func (m *LatencyMix) Len() int {
	n := 0
	for _, p := range m.paths {
		if p.weight > 0 {
			n++
		}
	}
	return n
}

// Mean is the weighted mean latency in seconds: exactly the weighted sum of
// stage means (0 for an empty mix).
func (m *LatencyMix) Mean() float64 {
	m.compile()
	return m.mean
}

// Tail is P(T > t) over the mix, in [0,1]; 0 for an empty mix.
func (m *LatencyMix) Tail(t float64) float64 {
	m.compile()
	if len(m.comp) == 0 || math.IsNaN(t) {
		return 0
	}
	return m.eval(t).s
}

// Quantiles sets out[i] to the smallest t with P(T ≤ t) ≥ ps[i], for i below
// min(len(ps), len(out)). ps are meant to be ascending in (0,1) (that is the
// fast path, not a requirement); p ≤ 0 or NaN gives the lowest possible
// latency and p ≥ 1 is treated as 1-1e-12. An empty mix gives 0.
func (m *LatencyMix) Quantiles(ps []float64, out []float64) {
	m.compile()
	n := min(len(ps), len(out))
	if len(m.comp) == 0 {
		clear(out[:n])
		return
	}
	prevP, prevT := math.NaN(), 0.0
	var last evalPoint // the last evaluation, a free starting point for the next p
	last.t = math.NaN()
	for i := range n {
		p := ps[i]
		var t float64
		switch {
		case !(p > 0):
			t = m.minFixed
		case p >= prevP:
			t = m.quantile(min(p, maxQuantileP), &last)
			t = max(t, prevT) // rounding must not reorder ascending ps
		default:
			last.t = math.NaN()
			t = m.quantile(min(p, maxQuantileP), &last)
		}
		out[i] = t
		prevP, prevT = p, t
	}
}

// quantile returns the smallest t with P(T > t) ≤ 1-p. last holds an
// evaluation at or left of the answer to start from (or t = NaN) and
// receives the last evaluation made.
func (m *LatencyMix) quantile(p float64, last *evalPoint) float64 {
	tgt := 1 - p
	lnTgt := math.Log(tgt)
	// Invariant: the answer lies in [lo, hi]. Nothing finishes before the
	// smallest fixed part, so lo starts there.
	lo, hi := m.minFixed, math.Inf(1)
	for _, a := range m.atoms {
		if a.sAt <= tgt {
			if tgt < a.sBefore {
				return a.u // the answer sits exactly on this jump
			}
			hi = min(hi, a.u)
		} else {
			lo = max(lo, a.u)
		}
	}
	if converged(lo, hi) {
		return hi
	}
	ep := *last
	fresh := !(ep.t >= lo && ep.t < hi)
	t := ep.t
	if fresh {
		t = m.mean
		if !(t >= lo && t < hi) {
			t = m.bisect(lo, hi)
		}
	}
	for range maxSolveIter {
		if fresh {
			ep = m.eval(t)
			*last = ep
		}
		fresh = true
		if ep.s <= tgt {
			hi = t
		} else {
			lo = t
		}
		if converged(lo, hi) {
			return hi
		}
		step := math.NaN()
		if ep.s > 0 && ep.f > 0 {
			// Halley on g(t) = ln P(T>t) - ln(1-p): g' = -h with h = f/s the
			// hazard rate, g'' = -df/s - h². ln P(T>t) is nearly linear in the
			// tail, so this usually lands within 1e-3 in one or two steps, and
			// the cubic convergence then makes the final step exact to ~1e-9.
			g := math.Log(ep.s) - lnTgt
			h := ep.f / ep.s
			step = g / h // Newton
			if den := 2*h*h + g*(ep.df/ep.s+h*h); den > 0 {
				if hs := 2 * g * h / den; math.Abs(hs) < 2*math.Abs(step) {
					step = hs
				}
			}
		}
		next := t + step
		if math.Abs(step) <= quantileRelTol*t && next >= lo && next <= hi {
			// Inclusive bounds: a step of zero from a point that hit the
			// target exactly is convergence, not a reason to bisect.
			return next
		}
		if !(next > lo && next < hi) {
			if math.IsInf(hi, 1) {
				// No density to follow (a flat stretch between fixed parts)
				// or the step overflowed: walk right geometrically.
				next = t + max(t, m.mean, 1/maxRate)
			} else {
				next = m.bisect(lo, hi)
			}
		}
		t = next
	}
	if math.IsInf(hi, 1) {
		return t
	}
	return hi
}

// converged reports whether the bracket pins the answer down to well below
// what the Halley stopping rule guarantees.
func converged(lo, hi float64) bool {
	return hi-lo <= 1e-9*hi && !math.IsInf(hi, 1)
}

// bisect splits [lo, hi] in log space when it spans orders of magnitude, so
// that a mixture of millisecond and second paths still converges quickly.
func (m *LatencyMix) bisect(lo, hi float64) float64 {
	if lo <= 0 {
		return hi / 8
	}
	if hi > 4*lo {
		return math.Sqrt(lo * hi)
	}
	return lo + (hi-lo)/2
}

// PathTail is P(T > t) for path i of the mix alone (0 if it has no weight). It reads the
// mix's own expansion, so a path's tail costs no second expansion.
func (m *LatencyMix) PathTail(i int, t float64) float64 {
	m.compile()
	if i < 0 || i >= len(m.paths) || m.paths[i].comp < 0 || math.IsNaN(t) {
		return 0
	}
	cp := &m.comp[m.paths[i].comp]
	x := t - cp.fixed
	if x < 0 {
		return 1
	}
	s, _, _ := m.evalPath(cp, x)
	return atMost(nonNegative(s), 1)
}

// eval returns P(T > t), the density of T and its derivative for the mix.
func (m *LatencyMix) eval(t float64) evalPoint {
	var surv, dens, ddens float64
	for ci := range m.comp {
		cp := &m.comp[ci]
		x := t - cp.fixed
		if x < 0 {
			surv += cp.w
			continue
		}
		s, d, dd := m.evalPath(cp, x)
		surv += cp.w * atMost(nonNegative(s), 1)
		dens += cp.w * nonNegative(d)
		ddens += cp.w * dd
	}
	return evalPoint{t: t, s: atMost(nonNegative(surv), 1), f: dens, df: ddens}
}

// evalPath returns one path's P(R > x), density and its derivative, x ≥ 0 past its fixed part.
func (m *LatencyMix) evalPath(cp *compPath, x float64) (s, d, dd float64) {
	simple := m.simple[cp.s0:cp.s1]
	for i := range simple {
		tm := &simple[i] // most terms are skipped: read rho and skip only
		y := tm.rho * x
		if y > tm.skip {
			continue
		}
		e := math.Exp(-y)
		s += tm.s * e
		d += tm.d * e
		dd += tm.dd * e
	}
	coef := m.coef
	high := m.high[cp.h0:cp.h1]
	for i := range high {
		tm := &high[i]
		y := tm.rho * x
		if y > tm.skip {
			continue
		}
		ts, td, tdd := poissonSums(y, coef[tm.off:tm.off+3*tm.n])
		s += ts
		d += td
		dd += tdd
	}
	return s, d, dd
}

// poissonSums returns Σ S_i π_i, Σ D_i π_i, Σ E_i π_i with π_i = e^{-y} y^i/i!
// and c = S ‖ D ‖ E, built by recurrence so that neither y^i nor i! is formed.
func poissonSums(y float64, c []float64) (ss, sd, se float64) {
	n := len(c) / 3
	cs, cd, ce := c[:n], c[n:2*n], c[2*n:3*n]
	cd, ce = cd[:len(cs)], ce[:len(cs)]
	if y <= 700 {
		pi := math.Exp(-y)
		ss, sd, se = 0+cs[0]*pi, 0+cd[0]*pi, 0+ce[0]*pi
		for i := 1; i < len(cs); i++ {
			pi *= y / float64(i)
			ss += cs[i] * pi
			sd += cd[i] * pi
			se += ce[i] * pi
		}
		return ss, sd, se
	}
	// e^{-y} underflows. Here y > 700 > n-1, so π_i grows with i: start at
	// the top in log space and walk down.
	lg, _ := math.Lgamma(float64(n))
	pi := math.Exp(-y + float64(n-1)*math.Log(y) - lg)
	for i := n - 1; i >= 0; i-- {
		ss += cs[i] * pi
		sd += cd[i] * pi
		se += ce[i] * pi
		pi *= float64(i) / y
	}
	return ss, sd, se
}

func cleanRate(r float64) (float64, bool) {
	if !(r > 0) || math.IsInf(r, 1) {
		return 0, false
	}
	return min(max(r, minRate), maxRate), true
}

// compile rebuilds the expansion if the mix changed since the last call.
func (m *LatencyMix) compile() {
	if !m.dirty {
		return
	}
	m.dirty = false
	m.comp = m.comp[:0]
	m.simple = m.simple[:0]
	m.high = m.high[:0]
	m.coef = m.coef[:0]
	m.atoms = m.atoms[:0]
	m.mean = 0
	m.minFixed = 0
	total := 0.0
	for pi, p := range m.paths {
		m.paths[pi].comp = -1
		if p.weight <= 0 {
			continue
		}
		m.paths[pi].comp = len(m.comp)
		end := len(m.stages)
		if pi+1 < len(m.paths) {
			end = m.paths[pi+1].start
		}
		mean := m.compilePath(p.weight, m.stages[p.start:end])
		total += p.weight
		m.mean += p.weight * mean
	}
	if len(m.comp) == 0 {
		return
	}
	m.mean /= total
	m.minFixed = math.Inf(1)
	for i := range m.comp {
		m.comp[i].w /= total
		m.minFixed = min(m.minFixed, m.comp[i].fixed)
	}
	// Jump points of P(T>t), needed by quantile; almost always none.
	for i := range m.comp {
		u := m.comp[i].fixed
		if m.comp[i].atom <= 0 || slices.ContainsFunc(m.atoms, func(a atomPoint) bool { return a.u == u }) {
			continue
		}
		s := m.eval(u).s
		before := s
		for j := range m.comp {
			if m.comp[j].fixed == u {
				before += m.comp[j].w * m.comp[j].atom
			}
		}
		m.atoms = append(m.atoms, atomPoint{u: u, sAt: s, sBefore: min(1, before)})
	}
}

// compilePath appends the expansion of one path and returns its mean.
func (m *LatencyMix) compilePath(w float64, stages []Stage) float64 {
	fixed, mean := 0.0, 0.0
	fs, spread := m.factors[:0], false
	for _, s := range stages {
		if s.Fixed > 0 {
			fixed += min(s.Fixed, maxFixed)
		}
		if r, ok := cleanRate(s.ServiceRate); ok {
			fs = append(fs, factor{r: r, c: 1, m: 1 / r, rho: r})
		}
		if r, ok := cleanRate(s.SpreadRate); ok {
			spread = true
			for range spreadStages {
				fs = append(fs, factor{r: r, c: 1, m: 1 / r, rho: r})
			}
		}
		if c := min(s.WaitProb, 1); c >= minWaitProb {
			if r, ok := cleanRate(s.WaitRate); ok {
				fs = append(fs, factor{r: r, c: c, m: c / r, rho: r})
			}
		}
	}
	m.factors = fs
	atom := 1.0
	for _, f := range fs {
		atom *= 1 - f.c
		mean += f.m
	}
	if spread && len(fs) <= maxInsertionSort {
		sortByRuns(fs)
	} else {
		sortFactors(fs)
	}
	cl := m.clusters[:0]
	for i, f := range fs {
		if n := len(cl); n > 0 && f.r-fs[cl[n-1].lo].r <= sameRateRelGap*f.r {
			k := &cl[n-1]
			k.hi = i + 1
			k.sumC += f.c
			k.sumM += f.m
			k.rho = k.sumC / k.sumM
			continue
		}
		cl = append(cl, cluster{lo: i, hi: i + 1, rho: f.r, sumC: f.c, sumM: f.m})
	}
	for _, k := range cl {
		if k.hi-k.lo > 1 {
			for i := k.lo; i < k.hi; i++ {
				fs[i].rho = k.rho
			}
		}
	}
	s0, h0, c0 := len(m.simple), len(m.high), len(m.coef)
	for amp := m.expand(fs, cl); !(amp <= condBudget) && len(cl) > 1; amp = m.expand(fs, cl) {
		m.simple, m.high, m.coef = m.simple[:s0], m.high[:h0], m.coef[:c0]
		best := 0
		for j := 1; j+1 < len(cl); j++ {
			if cl[j+1].rho/cl[j].rho < cl[best+1].rho/cl[best].rho {
				best = j
			}
		}
		a, b := &cl[best], cl[best+1]
		a.hi = b.hi
		a.sumC += b.sumC
		a.sumM += b.sumM
		a.rho = a.sumC / a.sumM
		for i := a.lo; i < a.hi; i++ {
			fs[i].rho = a.rho
		}
		cl = slices.Delete(cl, best+1, best+2)
	}
	m.clusters = cl
	m.comp = append(m.comp, compPath{
		w: w, fixed: fixed, atom: atom,
		s0: s0, s1: len(m.simple), h0: h0, h1: len(m.high),
	})
	return fixed + mean
}

// maxInsertionSort is the most factors a path sorts by insertion (stable); longer ones are
// sorted by slices.SortFunc, which is not stable.
const maxInsertionSort = 32

// sortByRuns is sortFactors for a path with a backlog's spread: its phases are equal
// factors in a row, and a stable insertion sort puts each after the one before, so a run
// is inserted as a block, in one shift of the sorted part instead of one per phase.
func sortByRuns(fs []factor) {
	for i := 0; i < len(fs); {
		f, n := fs[i], 1
		for i+n < len(fs) && fs[i+n] == f {
			n++
		}
		j := i
		for j > 0 && fs[j-1].r > f.r {
			j--
		}
		if j < i {
			copy(fs[j+n:i+n], fs[j:i])
			for k := j; k < j+n; k++ {
				fs[k] = f
			}
		}
		i += n
	}
}

// sortFactors sorts by rate. Paths are short, so insertion sort wins.
func sortFactors(fs []factor) {
	if len(fs) > maxInsertionSort {
		slices.SortFunc(fs, func(a, b factor) int {
			switch {
			case a.r < b.r:
				return -1
			case a.r > b.r:
				return 1
			}
			return 0
		})
		return
	}
	for i := 1; i < len(fs); i++ {
		f := fs[i]
		j := i
		for ; j > 0 && fs[j-1].r > f.r; j-- {
			fs[j] = fs[j-1]
		}
		fs[j] = f
	}
}

// expand appends one term per cluster and returns Σ|coefficient|, the
// factor by which rounding errors are amplified in P(R > x).
//
// Once that sum is past condBudget with clusters left to merge, the path will
// be merged and expanded again whatever the remaining terms are (adding
// non-negative terms never lowers a rounded sum), so it returns at once:
// expanding a path with close poles in full once per merge would be a third
// of the work.
//
// Around the pole ρ of a cluster with n members, in v = (ρ+s)/ρ, the
// transform is G(v)/v^n with
//
//	G(v) = Π_{members} (c + (1-c)v) · Π_{others} [(1-c) + (c·r/d)/(1 + (ρ/d)v)],  d = r-ρ,
//
// and the coefficient of the Erlang(k, ρ) component is a_k = [v^{n-k}] G.
func (m *LatencyMix) expand(fs []factor, cl []cluster) float64 {
	amp := 0.0
	for j := range cl {
		k := &cl[j]
		rho, n := k.rho, k.hi-k.lo
		if n == 1 {
			// G(0) = c · Π (d + c'ρ)/d. Numerators and denominators are
			// multiplied separately (one division instead of one per factor)
			// and folded every 8 factors so that neither can overflow
			// (|d| is within [1e-24, 1e12] after clamping and merging).
			g, num, den := k.sumC, 1.0, 1.0
			for b := 0; b < len(fs); b += 8 {
				e := min(b+8, len(fs))
				for i := b; i < e; i++ {
					if i == k.lo {
						continue
					}
					f := &fs[i]
					d := f.rho - rho
					num *= d + f.c*rho
					den *= d
				}
				if e-b == 8 && e-1 != k.lo {
					g *= num / den
					num, den = 1, 1
				}
			}
			g *= num / den
			amp += math.Abs(g)
			if amp > condBudget && len(cl) > 1 {
				return amp // it will be merged and redone: the rest would be thrown away
			}
			if skip := 40 + logAbsFloor(g); skip > 0 {
				m.simple = append(m.simple, simpleTerm{rho: rho, skip: skip, s: g, d: rho * g, dd: -rho * rho * g})
			}
			continue
		}
		g := grow(&m.ser, n)
		hr := grow(&m.hser, n)
		clear(g)
		g[0] = 1
		unit := true // g is still 1, 0, 0, …
		for _, f := range fs[k.lo:k.hi] {
			if f.c == 1 {
				// c·g[i] + 0·g[i-1] is g[i] exactly while g ≥ 0, which it is
				// here: a certain factor (a service time, a backlog's spread
				// phase) leaves G unchanged.
				continue
			}
			unit = false
			for i := n - 1; i > 0; i-- {
				g[i] = f.c*g[i] + (1-f.c)*g[i-1]
			}
			g[0] *= f.c
		}
		// Factors of one rate and probability (a backlog's spread phases) have
		// one series h, built once for the run of them.
		hRho, hC := math.NaN(), math.NaN()
		for fi := range len(fs) - (k.hi - k.lo) {
			if fi >= k.lo {
				fi += k.hi - k.lo // the members are not their own others
			}
			f := &fs[fi]
			if f.rho != hRho || f.c != hC {
				hRho, hC = f.rho, f.c
				d := f.rho - rho
				q := -rho / d
				hr[n-1] = (d + f.c*rho) / d
				pw := f.c * f.rho / d
				for i := 1; i < n; i++ {
					pw *= q
					hr[n-1-i] = pw
				}
			}
			switch {
			case unit && finite(hr[0]) && finite(hr[n-1]):
				// (h[0] and the last power: once a power overflows, the rest do.)
				convolveUnit(g, hr)
			case n == 2:
				// A double pole (two equal hops): convolve's sums, without the call.
				g0, g1 := g[0], g[1]
				g[1] = 0.0 + g0*hr[0] + g1*hr[1]
				g[0] = 0.0 + g0*hr[1]
			default:
				convolve(g, hr)
			}
			unit = false
		}
		// a_k = g[n-k]. S_i = Σ_{k>i} a_k, D_i = ρ·a_{i+1} and
		// E_i = ρ(D_{i+1} - D_i) (from dπ_i/dx = ρ(π_{i-1} - π_i)).
		off := len(m.coef)
		m.coef = slices.Grow(m.coef, 3*n)[:off+3*n]
		cs, cd, ce := m.coef[off:off+n], m.coef[off+n:off+2*n], m.coef[off+2*n:off+3*n]
		cum, next := 0.0, 0.0
		for i := n - 1; i >= 0; i-- {
			a := g[n-1-i]
			cum += a
			amp += math.Abs(a)
			cs[i] = cum
			cd[i] = rho * a
			ce[i] = rho * (next - cd[i])
			next = cd[i]
		}
		fn := float64(n)
		m.high = append(m.high, highTerm{rho: rho, skip: fn + 40 + 8*math.Sqrt(fn), off: off, n: n})
		if amp > condBudget && len(cl) > 1 {
			return amp
		}
	}
	return amp
}

// convolve replaces g by its product with the series h, both truncated to
// len(g): g[i] = Σ_{l≤i} g[l]·h[i-l], summed in ascending l. hr holds h
// reversed (hr[len-1-j] = h[j]), so that for each i the terms g[l] and
// hr[len-1-i+l] walk up together and no index needs checking; four outputs
// share each pass over g. Every sum takes the terms of the direct loop in its
// order, so the expansion is unchanged to the last bit.
func convolve(g, hr []float64) {
	n := len(g)
	hr = hr[:n]
	h0, h1 := hr[n-1], 0.0
	if n > 1 {
		h1 = hr[n-2]
	}
	i := n - 1
	for ; i >= 3; i -= 4 {
		// Output i-k takes g[l]·hr[b+k+l], b = n-1-i: the four walk one window
		// of hr, which slides by one element per term.
		gs := g[:i-2] // l ≤ i-3: a term of all four outputs
		b := n - 1 - i
		ws := hr[b+3 : b+3+len(gs)]
		w0, w1, w2 := hr[b], hr[b+1], hr[b+2]
		a0, a1, a2, a3 := 0.0, 0.0, 0.0, 0.0
		for l, gv := range gs {
			w3 := ws[l]
			a0 += gv * w0
			a1 += gv * w1
			a2 += gv * w2
			a3 += gv * w3
			w0, w1, w2 = w1, w2, w3
		}
		gv := g[i-2]
		a0 += gv * hr[n-3]
		a1 += gv * h1
		a2 += gv * h0
		gv = g[i-1]
		a0 += gv * h1
		a1 += gv * h0
		a0 += g[i] * h0
		g[i], g[i-1], g[i-2], g[i-3] = a0, a1, a2, a3
	}
	// The last outputs (all of them for a pole of multiplicity 2 or 3), written out.
	switch i {
	case 2:
		g0, g1, g2 := g[0], g[1], g[2]
		g[2] = 0.0 + g0*hr[n-3] + g1*h1 + g2*h0
		g[1] = 0.0 + g0*h1 + g1*h0
		g[0] = 0.0 + g0*h0
	case 1:
		g0, g1 := g[0], g[1]
		g[1] = 0.0 + g0*h1 + g1*h0
		g[0] = 0.0 + g0*h0
	case 0:
		g[0] = 0.0 + g[0]*h0
	}
}

// convolveUnit is convolve for g = 1, 0, 0, … and a finite h: each sum is
// 0 + h[i] followed by products ±0 that leave it unchanged, so g becomes h
// (with −0 read as +0, as the sum gives it).
func convolveUnit(g, hr []float64) {
	n := len(g)
	hr = hr[:n]
	for i := range g {
		g[i] = 0.0 + hr[n-1-i]
	}
}

func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// logAbsFloor is a lower bound on ln|x| that is within ln 2 of it, read off
// the exponent bits: a math.Log per pole would cost a fifth of the expansion.
func logAbsFloor(x float64) float64 {
	e := int(math.Float64bits(x)>>52&0x7ff) - 1023
	return float64(e) * math.Ln2
}

func grow(s *[]float64, n int) []float64 {
	if cap(*s) < n {
		*s = make([]float64, n)
	}
	return (*s)[:n]
}
