package sim

import (
	"math"
	"testing"
)

// directErlangB is (a^c/c!) / Σ_{k≤c} a^k/k!, summed in log space so that it
// stays an independent check even for c in the hundreds.
func directErlangB(c int, a float64) float64 {
	logTerm := func(k int) float64 {
		lg, _ := math.Lgamma(float64(k + 1))
		return float64(k)*math.Log(a) - lg
	}
	top := logTerm(c)
	sum := 0.0
	for k := 0; k <= c; k++ {
		sum += math.Exp(logTerm(k) - top)
	}
	return 1 / sum
}

// directErlangC is the textbook Erlang C formula, independent of erlangB.
func directErlangC(c int, a float64) float64 {
	fact := 1.0
	sum := 0.0
	term := 1.0 // a^k/k!
	for k := 0; k < c; k++ {
		if k > 0 {
			fact *= float64(k)
			term = math.Pow(a, float64(k)) / fact
		}
		sum += term
	}
	fact *= float64(c)
	last := math.Pow(a, float64(c)) / fact * float64(c) / (float64(c) - a)
	return last / (sum + last)
}

// bruteMMCKBlocking builds the M/M/c/K stationary distribution state by state.
func bruteMMCKBlocking(c, buffer int, a float64) float64 {
	k := c + buffer
	p := make([]float64, k+1)
	p[0] = 1
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * a / float64(min(n, c))
	}
	total := 0.0
	for _, v := range p {
		total += v
	}
	return p[k] / total
}

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

func TestErlangBSpecExample(t *testing.T) {
	// "6 workers × 15 ms offered 125% lose about a third": a = 1.25·6 = 7.5
	// Erlangs. The exact value is 0.3615, so the band is [0.30, 0.37], not
	// the [0.30, 0.36] first suggested for it.
	got := erlangB(6, 7.5)
	if got < 0.30 || got > 0.37 {
		t.Fatalf("erlangB(6, 7.5) = %v, spec says about a third", got)
	}
	a, fact, sum := 7.5, 1.0, 0.0
	for k := 0; k <= 6; k++ {
		if k > 0 {
			fact *= float64(k)
		}
		sum += math.Pow(a, float64(k)) / fact
	}
	want := math.Pow(a, 6) / fact / sum
	if relErr(got, want) > 1e-13 {
		t.Fatalf("erlangB(6, 7.5) = %v, direct formula %v", got, want)
	}
}

func TestErlangBMatchesDirectFormula(t *testing.T) {
	for _, c := range []int{1, 2, 3, 5, 6, 10, 33, 64, 640} {
		for _, u := range []float64{0.01, 0.3, 0.8, 0.99, 1, 1.25, 3, 40} {
			a := u * float64(c)
			got, want := erlangB(c, a), directErlangB(c, a)
			if want < negligibleB && got == 0 {
				continue // below negligibleB the recursion stops and answers 0
			}
			if relErr(got, want) > 1e-11 {
				t.Errorf("erlangB(%d, %v) = %v, direct %v", c, a, got, want)
			}
		}
	}
}

func TestErlangBEdges(t *testing.T) {
	tests := []struct {
		name string
		c    int
		a    float64
		want float64
	}{
		{"no servers", 0, 3, 1},
		{"negative servers", -2, 3, 1},
		{"no load", 4, 0, 0},
		{"negative load", 4, -1, 0},
		{"NaN load", 4, math.NaN(), 0},
		{"infinite load", 4, math.Inf(1), 1},
		{"single server", 1, 3, 0.75},
		{"tiny load underflows to 0", 640, 1, 0},
	}
	for _, tt := range tests {
		if got := erlangB(tt.c, tt.a); got != tt.want {
			t.Errorf("%s: erlangB(%d, %v) = %v, want %v", tt.name, tt.c, tt.a, got, tt.want)
		}
	}
	// Extreme but finite loads must stay probabilities.
	for _, a := range []float64{1e-320, 1e-300, 1e-9, 1e9, 1e300, math.MaxFloat64} {
		for _, c := range []int{1, 2, 7, 640, 100000} {
			if b := erlangB(c, a); !(b >= 0 && b <= 1) {
				t.Errorf("erlangB(%d, %v) = %v", c, a, b)
			}
		}
	}
}

func TestErlangCMatchesDirectFormula(t *testing.T) {
	for _, c := range []int{1, 2, 3, 4, 6, 10, 20} {
		for _, u := range []float64{0.05, 0.3, 0.5, 0.7, 0.9, 0.99} {
			a := u * float64(c)
			got, want := erlangC(c, a), directErlangC(c, a)
			if got == 0 && want < negligibleB/(1-u) {
				continue // C = B/(1-ρ(1-B)): zero where erlangB answers 0
			}
			if relErr(got, want) > 1e-12 {
				t.Errorf("erlangC(%d, %v) = %v, direct %v", c, a, got, want)
			}
		}
	}
	// M/M/1 waits with probability ρ.
	if got := erlangC(1, 0.42); relErr(got, 0.42) > 1e-15 {
		t.Errorf("erlangC(1, 0.42) = %v", got)
	}
}

func TestErlangCEdges(t *testing.T) {
	tests := []struct {
		c    int
		a    float64
		want float64
	}{
		{4, 4, 1},
		{4, 9, 1},
		{4, math.Inf(1), 1},
		{4, math.NaN(), 1},
		{0, 1, 1},
		{4, 0, 0},
		{4, -3, 0},
	}
	for _, tt := range tests {
		if got := erlangC(tt.c, tt.a); got != tt.want {
			t.Errorf("erlangC(%d, %v) = %v, want %v", tt.c, tt.a, got, tt.want)
		}
	}
	for _, c := range []int{1, 3, 640, 100000} {
		for _, a := range []float64{1e-300, 0.5, float64(c) * (1 - 1e-15), float64(c) - 1e-9} {
			if got := erlangC(c, a); !(got >= 0 && got <= 1) {
				t.Errorf("erlangC(%d, %v) = %v", c, a, got)
			}
		}
	}
}

// roomQueue is M/M/c/K summed state by state, for Poisson arrivals (σ = ρ): its refusals,
// the chance that an admitted arrival waits, and that arrival's mean wait in departures.
func TestRoomQueueIsMMcKStateByState(t *testing.T) {
	for _, c := range []int{1, 2, 3, 6, 10} {
		for _, places := range []int{0, 1, 2, 5, 17, 40, 100_000} {
			for _, r := range []float64{0.1, 0.5, 0.9, 0.98} {
				a := r * float64(c)
				p := []float64{1}
				for n := 1; n <= c+places; n++ {
					p = append(p, p[n-1]*a/float64(min(n, c)))
				}
				var total, waits, departures float64
				for n, v := range p {
					total += v
					if n >= c && n < c+places {
						waits += v
						departures += float64(n-c+1) * v
					}
				}
				full := p[c+places] / total
				wantWaits, wantDepartures := waits/total/(1-full), departures/total/(1-full)
				gotWaits, gotDepartures, gotFull := roomQueue(c, a, r, float64(places))
				if !(relErr(gotFull, full) <= 1e-9 && relErr(gotWaits, wantWaits) <= 1e-9 && relErr(gotDepartures, wantDepartures) <= 1e-9) {
					t.Errorf("c=%d places=%d ρ=%v: refused %v, waits %v, departures %v; state by state %v, %v, %v",
						c, places, r, gotFull, gotWaits, gotDepartures, full, wantWaits, wantDepartures)
				}
			}
		}
	}
}

// With no places roomQueue is Erlang B; with unbounded ones, M/M/c: Erlang C's chance to
// wait and a mean of C ÷ (1 − ρ) departures.
func TestRoomQueueLimits(t *testing.T) {
	for _, c := range []int{1, 6, 640} {
		for _, r := range []float64{0.01, 0.5, 0.9, 0.98} {
			a := r * float64(c)
			b := erlangB(c, a)
			if waits, departures, refused := roomQueue(c, a, r, 0); waits != 0 || departures != 0 || !(relErr(refused, b) <= 1e-15) {
				t.Errorf("c=%d ρ=%v, no places: waits %v, departures %v, refused %v; want 0, 0, Erlang B %v", c, r, waits, departures, refused, b)
			}
			cw := erlangC(c, a)
			if waits, departures, refused := roomQueue(c, a, r, math.Inf(1)); !(relErr(waits, cw) <= 1e-12 && relErr(departures, cw/(1-r)) <= 1e-12) || refused != 0 {
				t.Errorf("c=%d ρ=%v, unbounded: waits %v, departures %v, refused %v; want %v, %v, 0", c, r, waits, departures, refused, cw, cw/(1-r))
			}
		}
	}
}

// A more regular stream (σ below ρ) queues less: it waits less often, for less, and is
// refused less; and more places never refuse more.
func TestRoomQueueMonotone(t *testing.T) {
	for _, r := range []float64{0.5, 0.9, 0.98} {
		a := 8 * r
		w0, d0, f0 := roomQueue(8, a, r, 64)
		if w, d, f := roomQueue(8, a, 1-1.6*(1-r), 64); !(w < w0 && d < d0 && f < f0) {
			t.Errorf("ρ=%v: a regular stream waits %v, %v departures, refused %v; Poisson %v, %v, %v", r, w, d, f, w0, d0, f0)
		}
		prev := 2.0
		for places := 0; places <= 4096; places = places*2 + 1 {
			_, _, f := roomQueue(8, a, r, float64(places))
			if !(f >= 0 && f <= prev) {
				t.Fatalf("ρ=%v places=%d: refused %v after %v", r, places, f, prev)
			}
			prev = f
		}
	}
}

var sinkFloat float64

func BenchmarkErlangC(b *testing.B) {
	a := 0.8 * 640
	for b.Loop() {
		sinkFloat += erlangC(640, a)
	}
}

func BenchmarkErlangB(b *testing.B) {
	for b.Loop() {
		sinkFloat += erlangB(640, 512)
	}
}

// erlangKLossByStates is the loss of c exponential workers (rate 1) with no waiting place,
// fed by an Erlang-k stream of rate a, from the stationary distribution of the Markov
// chain (busy workers, arrival phase), solved by Gaussian elimination: independent of the
// transform formula regularLoss sums.
func erlangKLossByStates(c, k int, a float64) float64 {
	n := (c + 1) * k
	idx := func(busy, phase int) int { return busy*k + phase }
	// Rows: balance equations πQ = 0 (transposed), the last replaced by Σπ = 1.
	q := make([][]float64, n)
	for i := range q {
		q[i] = make([]float64, n+1)
	}
	rate := float64(k) * a
	add := func(from, to int, r float64) {
		q[to][from] += r
		q[from][from] -= r
	}
	for b := 0; b <= c; b++ {
		for p := 0; p < k; p++ {
			s := idx(b, p)
			switch {
			case p < k-1:
				add(s, idx(b, p+1), rate)
			case b < c:
				add(s, idx(b+1, 0), rate)
			default:
				add(s, idx(b, 0), rate) // lost
			}
			if b > 0 {
				add(s, idx(b-1, p), float64(b))
			}
		}
	}
	for j := 0; j < n; j++ {
		q[n-1][j] = 1
	}
	q[n-1][n] = 1
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(q[r][col]) > math.Abs(q[piv][col]) {
				piv = r
			}
		}
		q[col], q[piv] = q[piv], q[col]
		for r := 0; r < n; r++ {
			if r != col && q[r][col] != 0 {
				f := q[r][col] / q[col][col]
				for j := col; j <= n; j++ {
					q[r][j] -= f * q[col][j]
				}
			}
		}
	}
	// An arrival finds every worker busy when it comes from the last phase in state c.
	return float64(k) * q[idx(c, k-1)][n] / q[idx(c, k-1)][idx(c, k-1)]
}

// A room with no waiting place fed a regular stream loses exactly what its Markov chain
// says: Erlang-2, -3 and -4 streams (round-robin over 2, 3 and 4) below, at and above the
// workers' capacity; and a Poisson stream loses Erlang B to the bit.
func TestRegularLossIsGIMccStateByState(t *testing.T) {
	for _, c := range []int{1, 6, 18} {
		for _, k := range []int{2, 3, 4} {
			for _, rho := range []float64{0.5, 0.9, 1.1, 2} {
				a := rho * float64(c)
				got, want := regularLoss(c, a, 1/float64(k)), erlangKLossByStates(c, k, a)
				if math.Abs(got-want) > 1e-9*math.Max(want, 1e-12) && math.Abs(got-want) > 1e-15 {
					t.Errorf("c=%d, Erlang-%d stream at %.0f%%: loss %.12g, the chain's %.12g", c, k, 100*rho, got, want)
				}
				if poisson := erlangB(c, a); !(got < poisson) {
					t.Errorf("c=%d, Erlang-%d at %.0f%%: loss %.6g not below Erlang B's %.6g", c, k, 100*rho, got, poisson)
				}
			}
		}
		if got, want := regularLoss(c, 0.9*float64(c), 1), erlangB(c, 0.9*float64(c)); got != want {
			t.Errorf("c=%d, Poisson: %v, Erlang B %v", c, got, want)
		}
	}
	if got := regularLoss(10_000, 9_000, 0.5); math.IsNaN(got) || got < 0 || got > 1e-6 {
		t.Errorf("10,000 workers at 90%%, Erlang-2: loss %v, want a tiny share", got)
	}
}
