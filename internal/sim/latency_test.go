package sim

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

var stdPs = []float64{0.5, 0.95, 0.99}

// exactMMCSurvival is P(T > t) for the M/M/c FCFS response time, from the
// closed form P = (1-C)e^{-μt} + C·P(S+W > t). P(S+W > t) is written as
// e^{-μt}[1 + μt·φ((θ-μ)t)], φ(z) = (1-e^{-z})/z, which is the textbook
// (θe^{-μt} - μe^{-θt})/(θ-μ) without its cancellation at θ ≈ μ.
func exactMMCSurvival(c int, mu, lambda, t float64) float64 {
	C := directErlangC(c, lambda/mu)
	theta := float64(c)*mu - lambda
	z := (theta - mu) * t
	phi := 1.0
	if z != 0 {
		phi = -math.Expm1(-z) / z
	}
	e := math.Exp(-mu * t)
	return (1-C)*e + C*e*(1+mu*t*phi)
}

// quantileByBisection is the smallest t with 1 - surv(t) ≥ p, to ~1e-15.
func quantileByBisection(surv func(float64) float64, p float64) float64 {
	return quantileByBisectionTol(surv, p, 1e-15)
}

func quantileByBisectionTol(surv func(float64) float64, p, rel float64) float64 {
	hi := 1e-9
	for surv(hi) > 1-p {
		hi *= 2
	}
	lo := 0.0
	for hi-lo > rel*hi {
		mid := lo + (hi-lo)/2
		if surv(mid) > 1-p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func TestLatencyMMCQuantilesExact(t *testing.T) {
	mu := 1 / 0.015 // 15 ms mean service
	worst := 0.0
	for _, c := range []int{1, 2, 6, 10, 32} {
		for _, u := range []float64{0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95} {
			lambda := u * float64(c) * mu
			var m LatencyMix
			m.BeginPath(1)
			m.AddStage(mmcStage(c, mu, lambda))
			got := make([]float64, len(stdPs))
			m.Quantiles(stdPs, got)
			for i, p := range stdPs {
				want := quantileByBisection(func(x float64) float64 { return exactMMCSurvival(c, mu, lambda, x) }, p)
				e := relErr(got[i], want)
				worst = max(worst, e)
				// The brief allows 5%; the method is exact here, so anything
				// beyond solver tolerance is a regression.
				if e > 1e-6 {
					t.Errorf("c=%d u=%v p%v: got %.9g, exact %.9g (rel err %.2g)", c, u, p*100, got[i], want, e)
				}
			}
		}
	}
	t.Logf("worst relative error vs exact M/M/c: %.3g", worst)
}

// Rates at and around θ = μ, where the textbook formula divides by θ-μ and
// the expansion has a double pole or nearly so.
func TestLatencyMMCQuantilesNearEqualRates(t *testing.T) {
	mu := 100.0
	for _, c := range []int{2, 10} {
		uEq := 1 - 1/float64(c) // θ = cμ(1-u) = μ
		for _, du := range []float64{0, 1e-15, -1e-13, 1e-9, -1e-7, 1e-5, 1e-3, -1e-2, 3e-2} {
			lambda := (uEq + du) * float64(c) * mu
			var m LatencyMix
			m.BeginPath(1)
			m.AddStage(mmcStage(c, mu, lambda))
			got := make([]float64, len(stdPs))
			m.Quantiles(stdPs, got)
			for i, p := range stdPs {
				want := quantileByBisection(func(x float64) float64 { return exactMMCSurvival(c, mu, lambda, x) }, p)
				if e := relErr(got[i], want); e > 1e-6 {
					t.Errorf("c=%d θ/μ-1=%.1g p%v: got %.9g, exact %.9g (rel err %.2g)",
						c, float64(c)*(1-uEq-du)-1, p*100, got[i], want, e)
				}
			}
		}
	}
}

func TestLatencyMMCTailMatchesClosedForm(t *testing.T) {
	mu := 50.0
	for _, c := range []int{1, 2, 6, 32} {
		for _, u := range []float64{0.1, 0.5, 0.9, 0.99} {
			lambda := u * float64(c) * mu
			var m LatencyMix
			m.BeginPath(1)
			m.AddStage(mmcStage(c, mu, lambda))
			for _, x := range []float64{0, 0.001, 0.01, 0.05, 0.2, 1} {
				got, want := m.Tail(x), exactMMCSurvival(c, mu, lambda, x)
				if math.Abs(got-want) > 1e-12+1e-9*want {
					t.Errorf("c=%d u=%v Tail(%v) = %.15g, exact %.15g", c, u, x, got, want)
				}
			}
		}
	}
}

// sampler draws latencies of a mix the slow, obvious way.
type sampler struct {
	paths   [][]Stage
	weights []float64
}

func (s sampler) draw(rng *rand.Rand) float64 {
	total := 0.0
	for _, w := range s.weights {
		total += w
	}
	u := rng.Float64() * total
	k := 0
	for k < len(s.weights)-1 && u >= s.weights[k] {
		u -= s.weights[k]
		k++
	}
	x := 0.0
	for _, st := range s.paths[k] {
		x += st.Fixed
		if st.ServiceRate > 0 {
			x += rng.ExpFloat64() / st.ServiceRate
		}
		if st.WaitProb > 0 && st.WaitRate > 0 && rng.Float64() < st.WaitProb {
			x += rng.ExpFloat64() / st.WaitRate
		}
	}
	return x
}

// monteCarlo returns empirical quantiles and the sample mean from n draws.
func (s sampler) monteCarlo(seed uint64, n int, ps []float64) ([]float64, float64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	xs := make([]float64, n)
	sum := 0.0
	for i := range xs {
		xs[i] = s.draw(rng)
		sum += xs[i]
	}
	slices.Sort(xs)
	q := make([]float64, len(ps))
	for i, p := range ps {
		q[i] = xs[int(math.Ceil(p*float64(n)))-1]
	}
	return q, sum / float64(n)
}

func (s sampler) mix() *LatencyMix {
	m := new(LatencyMix)
	for k, path := range s.paths {
		m.BeginPath(s.weights[k])
		for _, st := range path {
			m.AddStage(st)
		}
	}
	return m
}

func single(stages ...Stage) sampler {
	return sampler{paths: [][]Stage{stages}, weights: []float64{1}}
}

// Multi-stage paths and mixtures against a seeded Monte Carlo with 10^6
// samples. The MC error of a p99 is ~0.3% here, so 2% still catches any
// real modelling mistake while never flaking (the seed is fixed anyway).
func TestLatencyMultiStageVsMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo reference is slow")
	}
	fast := Stage{Fixed: 0.0005, ServiceRate: 1000}
	tests := []struct {
		name string
		s    sampler
	}{
		{"three hops, 2ms to 200ms", single(
			Stage{Fixed: 0.001, ServiceRate: 500, WaitProb: 0.3, WaitRate: 900},
			mmcStage(1, 1/0.05, 0.8/0.05),
			mmcStage(16, 1/0.2, 0.9*16/0.2),
		)},
		{"four hops, rates 1/s to 1000/s", single(
			Stage{ServiceRate: 1000, WaitProb: 0.5, WaitRate: 300},
			Stage{Fixed: 0.01, ServiceRate: 30, WaitProb: 0.05, WaitRate: 3},
			Stage{ServiceRate: 300},
			Stage{Fixed: 0.2, ServiceRate: 1, WaitProb: 0.2, WaitRate: 10},
		)},
		{"certain wait and no wait", single(
			Stage{ServiceRate: 100, WaitProb: 1, WaitRate: 20},
			Stage{Fixed: 0.003, ServiceRate: 1000, WaitProb: 0, WaitRate: 5},
			Stage{Fixed: 0.05},
		)},
		{"two hops, wait-only stage", single(
			Stage{Fixed: 0.002, WaitProb: 0.4, WaitRate: 25},
			Stage{ServiceRate: 200, WaitProb: 0.1, WaitRate: 40},
		)},
		{"repeated identical M/M/c with θ=μ (triple double pole)", single(
			mmcStage(2, 10, 10), mmcStage(2, 10, 10), mmcStage(2, 10, 10),
		)},
		{"close but distinct rates", single(
			Stage{ServiceRate: 10, WaitProb: 0.6, WaitRate: 10.2},
			Stage{ServiceRate: 10.4, WaitProb: 0.7, WaitRate: 10.1},
			Stage{ServiceRate: 10.3, WaitProb: 0.5, WaitRate: 9.9},
			Stage{ServiceRate: 9.8, WaitProb: 0.9, WaitRate: 10.05},
		)},
		{"rates spaced 1% apart", single(
			Stage{ServiceRate: 20.0}, Stage{ServiceRate: 20.2}, Stage{ServiceRate: 20.4},
			Stage{ServiceRate: 20.6}, Stage{ServiceRate: 20.8}, Stage{ServiceRate: 21.0},
			Stage{ServiceRate: 21.2}, Stage{ServiceRate: 21.4},
		)},
		{"mixture 0.9 fast / 0.1 slow", sampler{
			paths: [][]Stage{
				{fast, mmcStage(4, 1/0.004, 0.6*4/0.004)},
				{fast, mmcStage(2, 1/0.08, 0.85*2/0.08), Stage{Fixed: 0.02, ServiceRate: 40}},
			},
			weights: []float64{0.9, 0.1},
		}},
		{"mixture of three, one deterministic", sampler{
			paths: [][]Stage{
				{Stage{Fixed: 0.004}},
				{fast, mmcStage(1, 200, 150)},
				{Stage{Fixed: 0.03}, mmcStage(8, 20, 140)},
			},
			weights: []float64{5, 3, 2},
		}},
	}
	ps := []float64{0.5, 0.9, 0.95, 0.99}
	worst := 0.0
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, refMean := tt.s.monteCarlo(uint64(i+1), 1_000_000, ps)
			m := tt.s.mix()
			got := make([]float64, len(ps))
			m.Quantiles(ps, got)
			for j, p := range ps {
				e := relErr(got[j], ref[j])
				worst = max(worst, e)
				if e > 0.02 {
					t.Errorf("p%v: got %.6g, Monte Carlo %.6g (rel err %.3g)", p*100, got[j], ref[j], e)
				}
			}
			if e := relErr(m.Mean(), refMean); e > 0.01 {
				t.Errorf("mean: got %.6g, Monte Carlo %.6g", m.Mean(), refMean)
			}
		})
	}
	t.Logf("worst relative error vs Monte Carlo (includes MC noise): %.3g", worst)
}

// bigExpNeg is e^{-y} to ~150 digits: Taylor series of e^{y/2^k}, squared k
// times, then inverted.
func bigExpNeg(y *big.Float) *big.Float {
	const prec = 512
	k := 0
	z := new(big.Float).SetPrec(prec).Set(y)
	for z.Cmp(big.NewFloat(0.5)) > 0 {
		z.Quo(z, big.NewFloat(2))
		k++
	}
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := 1; i < 120; i++ {
		term.Mul(term, z)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(i)))
		sum.Add(sum, term)
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return sum.Quo(new(big.Float).SetPrec(prec).SetInt64(1), sum)
}

// hypoexpSurvivalExact is P(Σ Exp(r_i) > x) for distinct rates, by the
// textbook partial fractions Σ_j e^{-r_j x} Π_{k≠j} r_k/(r_k - r_j) in 512-bit
// arithmetic, so the cancellation that forces the production code to merge
// close poles costs nothing here.
func hypoexpSurvivalExact(rates []float64, x float64) float64 {
	const prec = 512
	total := new(big.Float).SetPrec(prec)
	for j, rj := range rates {
		a := new(big.Float).SetPrec(prec).SetInt64(1)
		for k, rk := range rates {
			if k == j {
				continue
			}
			num := new(big.Float).SetPrec(prec).SetFloat64(rk)
			den := new(big.Float).SetPrec(prec).Sub(num, new(big.Float).SetPrec(prec).SetFloat64(rj))
			a.Mul(a, num.Quo(num, den))
		}
		y := new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetFloat64(rj), new(big.Float).SetPrec(prec).SetFloat64(x))
		total.Add(total, a.Mul(a, bigExpNeg(y)))
	}
	f, _ := total.Float64()
	return f
}

// Close but distinct rates are where poles get merged; this measures what
// the merge costs against an exact reference.
func TestLatencyCloseRatesVsExactHypoexponential(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-precision reference is slow")
	}
	spaced := func(n int, base, gap float64) []float64 {
		r := make([]float64, n)
		for i := range r {
			r[i] = base * (1 + gap*float64(i))
		}
		return r
	}
	tests := []struct {
		name  string
		rates []float64
	}{
		{"pair 1e-7 apart", []float64{10, 10 * (1 + 1e-7)}},
		{"pair 1e-4 apart", []float64{10, 10 * (1 + 1e-4)}},
		{"three 5% apart", spaced(3, 10, 0.05)},
		{"four 0.1% apart", spaced(4, 10, 0.001)},
		{"eight 1% apart", spaced(8, 20, 0.01)},
		{"sixteen 2% apart", spaced(16, 5, 0.02)},
		{"eight 10% apart", spaced(8, 1, 0.1)},
		{"two bunches", []float64{1, 1.01, 1.02, 50, 50.5, 51}},
	}
	worst := 0.0
	for _, tt := range tests {
		var m LatencyMix
		m.BeginPath(1)
		for _, r := range tt.rates {
			m.AddStage(Stage{ServiceRate: r})
		}
		got := make([]float64, len(stdPs))
		m.Quantiles(stdPs, got)
		for i, p := range stdPs {
			want := quantileByBisectionTol(func(x float64) float64 { return hypoexpSurvivalExact(tt.rates, x) }, p, 1e-7)
			e := relErr(got[i], want)
			worst = max(worst, e)
			// Merging n rates into one keeps the mean but loses their spread
			// in variance; 16 rates spanning 30% cost ~0.2% at p99.
			if e > 3e-3 {
				t.Errorf("%s p%v: got %.9g, exact %.9g (rel err %.2g)", tt.name, p*100, got[i], want, e)
			}
		}
	}
	t.Logf("worst relative error vs exact hypoexponential: %.3g", worst)
}

func TestLatencyMixtureSlowPathDominatesP99(t *testing.T) {
	fastPath := []Stage{{Fixed: 0.001, ServiceRate: 1000}, mmcStage(4, 250, 600)}
	slowPath := []Stage{{Fixed: 0.02}, mmcStage(2, 12.5, 20)}
	s := sampler{paths: [][]Stage{fastPath, slowPath}, weights: []float64{0.9, 0.1}}
	m := s.mix()
	got := make([]float64, 3)
	m.Quantiles(stdPs, got)

	fastOnly := single(fastPath...).mix()
	fq := make([]float64, 1)
	fastOnly.Quantiles([]float64{0.9999}, fq)
	if got[2] <= fq[0] {
		t.Fatalf("mixture p99 %.4g not beyond the fast path's p99.99 %.4g", got[2], fq[0])
	}
	// P(T>t) = 0.9·S_fast + 0.1·S_slow = 0.01 with S_fast ≈ 0 there, so the
	// mixture p99 is within a hair of the slow path's p90.
	sq := make([]float64, 1)
	single(slowPath...).mix().Quantiles([]float64{0.9}, sq)
	if e := relErr(got[2], sq[0]); e > 1e-3 {
		t.Errorf("mixture p99 %.6g, slow path p90 %.6g", got[2], sq[0])
	}
	// The median belongs to the fast path.
	if got[0] > fq[0] {
		t.Errorf("mixture p50 %.4g beyond the fast path's p99.99 %.4g", got[0], fq[0])
	}
	// And the exact mixture definition holds at the answers.
	for i, p := range stdPs {
		tail := 0.9*fastOnly.Tail(got[i]) + 0.1*single(slowPath...).mix().Tail(got[i])
		if math.Abs(tail-(1-p)) > 1e-6 {
			t.Errorf("p%v: mixture tail at quantile %.9g, want %.9g", p*100, tail, 1-p)
		}
	}
}

func TestLatencyDeterministicPaths(t *testing.T) {
	tests := []struct {
		name    string
		s       sampler
		ps      []float64
		want    []float64
		wantAvg float64
	}{
		{"fixed only", single(Stage{Fixed: 0.004}, Stage{Fixed: 0.0015}, Stage{}),
			stdPs, []float64{0.0055, 0.0055, 0.0055}, 0.0055},
		{"two deterministic paths", sampler{
			paths:   [][]Stage{{{Fixed: 1}}, {{Fixed: 2}}},
			weights: []float64{1, 1},
		}, []float64{0.25, 0.5, 0.500001, 0.99}, []float64{1, 1, 2, 2}, 1.5},
		{"deterministic path holds the median", sampler{
			paths:   [][]Stage{{{Fixed: 0.01}}, {{Fixed: 0.02, ServiceRate: 10}}},
			weights: []float64{0.7, 0.3},
		}, []float64{0.5, 0.7}, []float64{0.01, 0.01}, 0.7*0.01 + 0.3*0.12},
		{"empty path is zero latency", sampler{
			paths:   [][]Stage{{}, {{Fixed: 3}}},
			weights: []float64{0.6, 0.4},
		}, []float64{0.5, 0.6, 0.61}, []float64{0, 0, 3}, 1.2},
	}
	for _, tt := range tests {
		m := tt.s.mix()
		got := make([]float64, len(tt.ps))
		m.Quantiles(tt.ps, got)
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: quantiles %v, want %v", tt.name, got, tt.want)
		}
		if relErr(m.Mean(), tt.wantAvg) > 1e-15 {
			t.Errorf("%s: mean %v, want %v", tt.name, m.Mean(), tt.wantAvg)
		}
	}
}

func TestLatencyQuantilesArguments(t *testing.T) {
	var m LatencyMix
	m.AddStage(Stage{Fixed: 0.01, ServiceRate: 100}) // no BeginPath: implicit weight-1 path
	if m.Len() != 1 {
		t.Fatalf("Len = %d after AddStage without BeginPath", m.Len())
	}
	exactQ := func(p float64) float64 { return 0.01 - math.Log1p(-p)/100 }
	tests := []struct {
		name string
		ps   []float64
		want []float64
	}{
		{"p ≤ 0 and NaN give the smallest latency", []float64{0, -1, math.NaN()}, []float64{0.01, 0.01, 0.01}},
		{"p ≥ 1 is capped, finite", []float64{1, 2}, []float64{exactQ(maxQuantileP), exactQ(maxQuantileP)}},
		{"descending ps", []float64{0.99, 0.5, 0.1}, []float64{exactQ(0.99), exactQ(0.5), exactQ(0.1)}},
		{"repeated p", []float64{0.9, 0.9}, []float64{exactQ(0.9), exactQ(0.9)}},
	}
	for _, tt := range tests {
		got := make([]float64, len(tt.ps))
		m.Quantiles(tt.ps, got)
		for i := range got {
			if relErr(got[i], tt.want[i]) > 1e-9 {
				t.Errorf("%s: quantiles %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
	// A short out is filled as far as it goes; a short ps leaves the rest alone.
	out := []float64{-1}
	m.Quantiles([]float64{0.5, 0.9}, out)
	if relErr(out[0], exactQ(0.5)) > 1e-9 {
		t.Errorf("short out: %v", out)
	}
	out = []float64{-1, -1}
	m.Quantiles([]float64{0.5}, out)
	if out[1] != -1 {
		t.Errorf("short ps: wrote past it: %v", out)
	}
	// Reset really empties the mix.
	m.Reset()
	out[0] = -1
	m.Quantiles([]float64{0.5}, out)
	if m.Len() != 0 || out[0] != 0 || m.Mean() != 0 || m.Tail(0) != 0 {
		t.Errorf("after Reset: Len %d, p50 %v, mean %v", m.Len(), out[0], m.Mean())
	}
}

func TestLatencyMeanIsSumOfStageMeans(t *testing.T) {
	var m LatencyMix
	m.BeginPath(3)
	m.AddStage(Stage{Fixed: 0.01, ServiceRate: 100, WaitProb: 0.2, WaitRate: 50})
	m.AddStage(Stage{ServiceRate: 10})
	m.BeginPath(1)
	m.AddStage(Stage{Fixed: 0.5, WaitProb: 1, WaitRate: 2})
	m.BeginPath(0) // ignored
	m.AddStage(Stage{Fixed: 100})
	want := (3*(0.01+0.01+0.2/50+0.1) + 1*(0.5+0.5)) / 4
	if got := m.Mean(); relErr(got, want) > 1e-15 {
		t.Errorf("Mean = %v, want %v", got, want)
	}
	if m.Len() != 2 {
		t.Errorf("Len = %d, want 2", m.Len())
	}
}

// Raising the arrival rate of one stage must never lower any quantile. The
// sweeps cross θ = μ (c=2 at u=0.5, c=10 at u=0.9), where the expansion
// switches between simple and double poles.
func TestLatencyQuantilesMonotoneInLoad(t *testing.T) {
	ps := []float64{0.1, 0.5, 0.9, 0.95, 0.99, 0.999}
	for _, c := range []int{1, 2, 10} {
		mu := 40.0
		prev := make([]float64, len(ps))
		got := make([]float64, len(ps))
		var m LatencyMix
		for step := 0; step <= 400; step++ {
			u := 0.01 + 0.98*float64(step)/400
			m.Reset()
			m.BeginPath(0.8)
			m.AddStage(Stage{Fixed: 0.002, ServiceRate: 400, WaitProb: 0.1, WaitRate: 300})
			m.AddStage(mmcStage(c, mu, u*float64(c)*mu))
			m.AddStage(Stage{ServiceRate: 38})
			m.BeginPath(0.2)
			m.AddStage(Stage{Fixed: 0.01, ServiceRate: 41})
			m.Quantiles(ps, got)
			for i := range ps {
				if got[i] < prev[i] {
					t.Fatalf("c=%d u=%.4f: p%v fell from %.12g to %.12g", c, u, ps[i]*100, prev[i], got[i])
				}
			}
			copy(prev, got)
		}
	}
}

func TestLatencyTailNonIncreasing(t *testing.T) {
	mixes := map[string]sampler{
		"mmc": single(mmcStage(6, 20, 100)),
		"three hops with double pole": single(
			Stage{Fixed: 0.01, ServiceRate: 100, WaitProb: 0.4, WaitRate: 100},
			mmcStage(2, 10, 10),
			Stage{ServiceRate: 3},
		),
		"mixture with atoms": {
			paths:   [][]Stage{{{Fixed: 0.05}}, {{ServiceRate: 30}}, {{Fixed: 0.1, ServiceRate: 5, WaitProb: 0.5, WaitRate: 2}}},
			weights: []float64{1, 2, 1},
		},
	}
	for name, s := range mixes {
		m := s.mix()
		prev := m.Tail(0)
		if prev < 0 || prev > 1 {
			t.Fatalf("%s: Tail(0) = %v", name, prev)
		}
		hi := 60 * m.Mean()
		for i := 1; i <= 5000; i++ {
			x := hi * float64(i) / 5000
			cur := m.Tail(x)
			if !(cur >= 0 && cur <= prev+1e-13) {
				t.Fatalf("%s: Tail(%v) = %.17g after %.17g", name, x, cur, prev)
			}
			prev = cur
		}
		if prev > 1e-6 {
			t.Errorf("%s: Tail(60·mean) = %v, expected ≈ 0", name, prev)
		}
	}
}

// Quantiles must satisfy their own definition against Tail, on every mix
// shape, not only on the ones with a closed form.
func TestLatencyQuantilesConsistentWithTail(t *testing.T) {
	s := sampler{
		paths: [][]Stage{
			{{Fixed: 0.001, ServiceRate: 2000}, mmcStage(3, 100, 250), {ServiceRate: 100, WaitProb: 0.3, WaitRate: 100}},
			{{Fixed: 0.02}, mmcStage(1, 10, 9)},
		},
		weights: []float64{0.95, 0.05},
	}
	m := s.mix()
	ps := []float64{0.01, 0.3, 0.5, 0.9, 0.95, 0.99, 0.999, 0.99999}
	got := make([]float64, len(ps))
	m.Quantiles(ps, got)
	for i, p := range ps {
		if tail := m.Tail(got[i]); math.Abs(tail-(1-p)) > 1e-6*(1-p) {
			t.Errorf("p=%v: Tail(q) = %.12g, want %.12g", p, tail, 1-p)
		}
	}
	// Order of ps must not matter beyond speed.
	rev := slices.Clone(ps)
	slices.Reverse(rev)
	gotRev := make([]float64, len(ps))
	m.Quantiles(rev, gotRev)
	slices.Reverse(gotRev)
	for i := range ps {
		if relErr(gotRev[i], got[i]) > 1e-7 {
			t.Errorf("p=%v: %v ascending, %v descending", ps[i], got[i], gotRev[i])
		}
	}
}

func TestLatencyRobustness(t *testing.T) {
	nan := math.NaN()
	many := func(n int, st Stage) []Stage {
		out := make([]Stage, n)
		for i := range out {
			out[i] = st
		}
		return out
	}
	spread := func(n int, base, step float64) []Stage {
		out := make([]Stage, n)
		for i := range out {
			r := base * (1 + step*float64(i))
			out[i] = Stage{ServiceRate: r, WaitProb: 0.5, WaitRate: r * (1 + step/2)}
		}
		return out
	}
	tests := []struct {
		name      string
		s         sampler
		exactFix  float64 // >0: every quantile must equal this
		wantEmpty bool
	}{
		{"empty mix", sampler{}, 0, true},
		{"only zero-weight paths", sampler{paths: [][]Stage{{{ServiceRate: 1}}}, weights: []float64{0}}, 0, true},
		{"wait rate equals service rate", single(Stage{ServiceRate: 10, WaitProb: 0.5, WaitRate: 10}), 0, false},
		{"wait rate 1 ulp from service rate", single(Stage{ServiceRate: 10, WaitProb: 0.5, WaitRate: math.Nextafter(10, 11)}), 0, false},
		{"wait rate 1e-9 from service rate", single(Stage{ServiceRate: 10, WaitProb: 0.5, WaitRate: 10 * (1 + 1e-9)}), 0, false},
		{"wait rate 1e-6 from service rate", single(Stage{ServiceRate: 10, WaitProb: 1, WaitRate: 10 * (1 - 1e-6)}), 0, false},
		{"slow rates 1e-6", single(Stage{ServiceRate: 1e-6, WaitProb: 0.5, WaitRate: 2e-6}), 0, false},
		{"fast rates 1e9", single(Stage{ServiceRate: 1e9, WaitProb: 0.5, WaitRate: 1e9}), 0, false},
		{"1e-6 and 1e9 on one path", single(Stage{ServiceRate: 1e9, WaitProb: 1, WaitRate: 1e-6}, Stage{Fixed: 1, ServiceRate: 1e-6}), 0, false},
		{"wait prob 1, wait rate 0 (saturated)", single(Stage{ServiceRate: 5, WaitProb: 1, WaitRate: 0}), 0, false},
		{"wait prob 0, wait rate 0", single(Stage{ServiceRate: 5}), 0, false},
		{"wait prob 1e-300", single(Stage{ServiceRate: 5, WaitProb: 1e-300, WaitRate: 1e-300}), 0, false},
		{"tiny wait prob, slow wait", single(Stage{ServiceRate: 1000, WaitProb: 1e-9, WaitRate: 1e-3}), 0, false},
		{"fixed only", single(Stage{Fixed: 0.25}, Stage{Fixed: 0.5}), 0.75, false},
		{"zero fixed only", single(Stage{}), 0, false},
		{"zero-weight path beside a real one", sampler{
			paths: [][]Stage{{{Fixed: 9, ServiceRate: 1}}, {{Fixed: 0.125}}}, weights: []float64{0, 2},
		}, 0.125, false},
		{"huge fixed", single(Stage{Fixed: math.MaxFloat64, ServiceRate: 1}, Stage{Fixed: math.MaxFloat64}), 0, false},
		{"huge rates", single(Stage{ServiceRate: math.MaxFloat64, WaitProb: 1, WaitRate: 1e300}), 0, false},
		{"tiny rates", single(Stage{ServiceRate: math.SmallestNonzeroFloat64, WaitProb: 1, WaitRate: 1e-300}), 0, false},
		{"huge weights", sampler{
			paths: [][]Stage{{{ServiceRate: 1}}, {{ServiceRate: 2}}}, weights: []float64{math.MaxFloat64, math.MaxFloat64},
		}, 0, false},
		{"NaN and negative inputs", single(Stage{Fixed: nan, ServiceRate: nan, WaitProb: nan, WaitRate: nan},
			Stage{Fixed: -1, ServiceRate: -1, WaitProb: -1, WaitRate: -1}, Stage{ServiceRate: 3, WaitProb: 7, WaitRate: 2}), 0, false},
		{"60 identical stages", single(many(60, mmcStage(2, 10, 10))...), 0, false},
		{"400 identical stages", single(many(400, Stage{Fixed: 0.001, ServiceRate: 10})...), 0, false},
		{"30 stages 0.5% apart", single(spread(30, 10, 0.005)...), 0, false},
		{"30 stages 10% apart", single(spread(30, 10, 0.1)...), 0, false},
	}
	ps := []float64{0.5, 0.95, 0.99}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.s.mix()
			got := []float64{-1, -1, -1}
			m.Quantiles(ps, got)
			mean := m.Mean()
			if math.IsNaN(mean) || math.IsInf(mean, 0) || mean < 0 {
				t.Errorf("Mean = %v", mean)
			}
			for i, q := range got {
				if math.IsNaN(q) || math.IsInf(q, 0) || q < 0 {
					t.Fatalf("quantiles %v", got)
				}
				if i > 0 && q < got[i-1] {
					t.Errorf("quantiles not ordered: %v", got)
				}
			}
			for _, x := range []float64{-1, 0, got[0], got[2], 2 * got[2], math.MaxFloat64, math.Inf(1), nan} {
				if tail := m.Tail(x); !(tail >= 0 && tail <= 1) {
					t.Errorf("Tail(%v) = %v", x, tail)
				}
			}
			if tt.wantEmpty {
				if m.Len() != 0 || mean != 0 || got[0] != 0 || got[2] != 0 || m.Tail(0) != 0 {
					t.Errorf("empty: Len %d mean %v quantiles %v", m.Len(), mean, got)
				}
			}
			if tt.exactFix > 0 && (got[0] != tt.exactFix || got[2] != tt.exactFix) {
				t.Errorf("deterministic: quantiles %v, want %v", got, tt.exactFix)
			}
			// Continuous cases must satisfy the quantile definition.
			if !tt.wantEmpty && tt.exactFix == 0 && got[2] > 0 {
				for i, p := range ps {
					if tail := m.Tail(got[i]); tail > 1-p+1e-6 {
						t.Errorf("p%v: Tail(%v) = %v above %v", p*100, got[i], tail, 1-p)
					}
				}
			}
		})
	}
}

// Huge multiplicities go through the log-space Poisson recurrence; check
// them against the Erlang distribution they are (a Gamma with integer shape).
func TestLatencyHighOrderPoleIsErlang(t *testing.T) {
	for _, n := range []int{2, 5, 60, 400} {
		var m LatencyMix
		m.BeginPath(1)
		for range n {
			m.AddStage(Stage{ServiceRate: 10})
		}
		erlangTail := func(x float64) float64 {
			// P(Poisson(10x) < n), summed in log space.
			y := 10 * x
			s := 0.0
			for i := 0; i < n; i++ {
				lg, _ := math.Lgamma(float64(i + 1))
				s += math.Exp(-y + float64(i)*math.Log(y) - lg)
			}
			return s
		}
		got := make([]float64, len(stdPs))
		m.Quantiles(stdPs, got)
		for i, p := range stdPs {
			want := quantileByBisection(erlangTail, p)
			if e := relErr(got[i], want); e > 1e-6 {
				t.Errorf("Erlang-%d p%v: got %.9g, want %.9g", n, p*100, got[i], want)
			}
		}
	}
}

func fillBenchMix(m *LatencyMix, paths, stages int) {
	m.Reset()
	for p := range paths {
		m.BeginPath(float64(p + 1))
		for s := range stages {
			k := float64(p*stages + s)
			c := 1 + (p+s)%6
			mu := 1 / (0.001 * (1 + math.Mod(k*7.3, 60)))
			u := 0.2 + math.Mod(k*0.137, 0.75)
			st := mmcStage(c, mu, u*float64(c)*mu)
			st.Fixed = 0.0005 * float64(s)
			m.AddStage(st)
		}
	}
}

func TestLatencyMixZeroAllocs(t *testing.T) {
	var m LatencyMix
	out := make([]float64, len(stdPs))
	run := func() {
		fillBenchMix(&m, 10, 4)
		m.Quantiles(stdPs, out)
		sinkFloat += m.Tail(out[1]) + m.Mean() + float64(m.Len())
		// Exercise the atom and multiple-pole code paths too.
		m.Reset()
		m.BeginPath(1)
		m.AddStage(Stage{Fixed: 0.01})
		m.BeginPath(1)
		m.AddStage(mmcStage(2, 10, 10))
		m.AddStage(mmcStage(2, 10, 10))
		m.Quantiles(stdPs, out)
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Fatalf("%v allocations per tick after warm-up", n)
	}
}

func BenchmarkLatencyMixQuantiles(b *testing.B) {
	var m LatencyMix
	out := make([]float64, len(stdPs))
	fillBenchMix(&m, 10, 4)
	m.Quantiles(stdPs, out)
	b.ReportAllocs()
	for b.Loop() {
		m.dirty = true // include the per-tick expansion, as the engine pays it
		m.Quantiles(stdPs, out)
	}
}

// The solve alone, when the mix did not change since the last call.
func BenchmarkLatencyMixQuantilesSolveOnly(b *testing.B) {
	var m LatencyMix
	out := make([]float64, len(stdPs))
	fillBenchMix(&m, 10, 4)
	m.Quantiles(stdPs, out)
	b.ReportAllocs()
	for b.Loop() {
		m.Quantiles(stdPs, out)
	}
}

func BenchmarkLatencyMixRefillAndQuantiles(b *testing.B) {
	var m LatencyMix
	out := make([]float64, len(stdPs))
	b.ReportAllocs()
	for b.Loop() {
		fillBenchMix(&m, 10, 4)
		m.Quantiles(stdPs, out)
	}
}

func BenchmarkLatencyMixTail(b *testing.B) {
	var m LatencyMix
	fillBenchMix(&m, 10, 4)
	t0 := m.Mean()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		sinkFloat += m.Tail(t0 * float64(1+i%4))
	}
}

func BenchmarkLatencyMixRefillAndMean(b *testing.B) {
	var m LatencyMix
	b.ReportAllocs()
	for b.Loop() {
		fillBenchMix(&m, 10, 4)
		sinkFloat += m.Mean()
	}
}

// A path's tail read from a mix's expansion is the tail of that path on its own, to the bit:
// the engine reads timeout shares that way instead of expanding each path twice.
func TestLatencyPathTailIsThePathAlone(t *testing.T) {
	paths := [][]Stage{
		{{Fixed: 0.001, ServiceRate: 2000}, mmcStage(3, 100, 250), {ServiceRate: 100, WaitProb: 0.3, WaitRate: 100}},
		{{Fixed: 0.02}, mmcStage(1, 10, 9)},
		{{ServiceRate: 50}, {ServiceRate: 50}, {ServiceRate: 50}}, // a triple pole
		{{Fixed: 0.05}}, // deterministic
	}
	var mix LatencyMix
	mix.BeginPath(0) // no weight: no tail
	mix.AddStage(Stage{ServiceRate: 1})
	for i, p := range paths {
		mix.BeginPath(float64(i + 1))
		for _, s := range p {
			mix.AddStage(s)
		}
	}
	if got := mix.PathTail(0, 0.01); got != 0 {
		t.Errorf("weightless path: PathTail = %v, want 0", got)
	}
	for i, p := range paths {
		var alone LatencyMix
		for _, s := range p {
			alone.AddStage(s)
		}
		for _, x := range []float64{0, 0.001, 0.01, 0.02, 0.05, 0.1, 0.5} {
			if got, want := mix.PathTail(i+1, x), alone.Tail(x); got != want {
				t.Errorf("path %d at %v s: PathTail = %v, Tail alone = %v", i, x, got, want)
			}
		}
	}
	if got := mix.PathTail(len(paths)+1, 0.01); got != 0 {
		t.Errorf("path out of range: PathTail = %v, want 0", got)
	}
}

// directProduct is the product of the series g and h truncated to len(g), term by term in
// ascending order: the arithmetic convolve must reproduce to the last bit.
func directProduct(g, h []float64) []float64 {
	out := make([]float64, len(g))
	for i := range out {
		acc := 0.0
		for l := 0; l <= i; l++ {
			acc += g[l] * h[i-l]
		}
		out[i] = acc
	}
	return out
}

func TestConvolveIsTheDirectProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for n := 1; n <= 20; n++ {
		for range 200 {
			g, h := make([]float64, n), make([]float64, n)
			for i := range n {
				g[i] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
				h[i] = rng.NormFloat64() * math.Exp(10*rng.NormFloat64())
			}
			if rng.IntN(4) == 0 {
				h[rng.IntN(n)] = math.Copysign(0, -1)
			}
			unit := make([]float64, n)
			unit[0] = 1
			hr := slices.Clone(h)
			slices.Reverse(hr)
			for _, c := range []struct {
				name string
				g    []float64
				fn   func(g, hr []float64)
			}{{"convolve", g, convolve}, {"convolve on 1, 0, …", unit, convolve}, {"convolveUnit", unit, convolveUnit}} {
				want := directProduct(c.g, h)
				got := slices.Clone(c.g)
				c.fn(got, hr)
				for i := range want {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s n=%d: [%d] = %v, want %v", c.name, n, i, got[i], want[i])
					}
				}
			}
		}
	}
}
