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

func TestMMCKBlockingBruteForce(t *testing.T) {
	for _, c := range []int{1, 2, 3, 6, 10} {
		for _, buffer := range []int{0, 1, 2, 5, 17, 40} {
			for _, r := range []float64{0.1, 0.5, 0.9, 1, 1.0000001, 1.1, 2, 5} {
				a := r * float64(c)
				got, want := mmcKBlocking(c, buffer, a), bruteMMCKBlocking(c, buffer, a)
				if relErr(got, want) > 1e-9 {
					t.Errorf("mmcKBlocking(%d, %d, %v) = %v, brute force %v", c, buffer, a, got, want)
				}
			}
		}
	}
}

func TestMMCKBlockingBufferZeroIsErlangB(t *testing.T) {
	for _, c := range []int{1, 6, 640} {
		for _, a := range []float64{0, 0.5, 6, 7.5, 1000} {
			if got, want := mmcKBlocking(c, 0, a), erlangB(c, a); got != want {
				t.Errorf("mmcKBlocking(%d, 0, %v) = %v, erlangB %v", c, a, got, want)
			}
		}
	}
}

func TestMMCKBlockingHugeBuffer(t *testing.T) {
	tests := []struct {
		name     string
		c        int
		r        float64
		want     float64
		tol      float64 // absolute
		buffer   int
		relative bool
	}{
		{"below saturation", 6, 0.9, 0, 1e-300, 1_000_000, false},
		{"barely below saturation", 6, 0.99999, 0, 1e-4, 1_000_000, false},
		// Beyond saturation the queue is always full: the surplus 1-1/r is lost.
		{"twice saturation", 6, 2, 0.5, 1e-12, 1_000_000, false},
		{"twice saturation, one server", 1, 2, 0.5, 1e-12, 1_000_000, false},
		{"ten times saturation", 32, 10, 0.9, 1e-12, 1_000_000_000, false},
	}
	for _, tt := range tests {
		got := mmcKBlocking(tt.c, tt.buffer, tt.r*float64(tt.c))
		if math.Abs(got-tt.want) > tt.tol {
			t.Errorf("%s: mmcKBlocking = %v, want %v ± %v", tt.name, got, tt.want, tt.tol)
		}
	}
	// At exactly r = 1 all waiting states are as likely as state c.
	c, buffer := 6, 1_000_000
	want := 1 / (1/erlangB(c, 6) + float64(buffer))
	if got := mmcKBlocking(c, buffer, 6); relErr(got, want) > 1e-12 {
		t.Errorf("r=1: mmcKBlocking = %v, want %v", got, want)
	}
}

func TestMMCKBlockingMonotoneInBuffer(t *testing.T) {
	for _, r := range []float64{0.5, 0.99, 1, 1.01, 3} {
		prev := 2.0
		for buffer := 0; buffer <= 4096; buffer = buffer*2 + 1 {
			got := mmcKBlocking(8, buffer, 8*r)
			if !(got >= 0 && got <= 1) || got > prev {
				t.Fatalf("r=%v buffer=%d: %v after %v", r, buffer, got, prev)
			}
			prev = got
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
