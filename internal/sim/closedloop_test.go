package sim

import (
	"fmt"
	"math"
	"testing"
)

// bruteFiniteSource is the finite-source queue's stationary state by the textbook birth–death
// recursion over every state: births (N − n)·γ, deaths min(n, c)·μ, at most K in the pool.
// It returns the mean number in the pool, busy workers, queued, and the share of attempts lost.
func bruteFiniteSource(n, c, k int, r float64) (inPool, busy, queued, lost float64) {
	p := []float64{1}
	for j := 1; j <= k; j++ {
		p = append(p, p[j-1]*float64(n-j+1)*r/float64(min(j, c)))
	}
	var sum, out float64
	for j, q := range p {
		sum += q
		out += float64(n-j) * q
	}
	for j, q := range p {
		inPool += float64(j) * q / sum
		busy += float64(min(j, c)) * q / sum
		queued += float64(max(0, j-c)) * q / sum
	}
	return inPool, busy, queued, float64(n-k) * p[k] / out
}

// The sums summed outwards from the mode, stopping where the terms no longer count, are
// the product form's over every state: lightly and heavily loaded, with and without a full
// room, a population below, at and far above the workers.
func TestFiniteSourceMatchesProductForm(t *testing.T) {
	tests := []struct {
		n, c, k int
		r       float64
	}{
		{10, 4, 10, 1}, {10, 4, 10, 0.05}, {16, 4, 16, 2}, {16, 6, 16, 0.3}, {16, 4, 4, 1},
		{16, 4, 8, 0.5}, {3, 8, 3, 0.7}, {500, 10, 500, 0.5}, {500, 10, 500, 0.001}, {2000, 50, 900, 0.04},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d c=%d K=%d r=%g", tt.n, tt.c, tt.k, tt.r), func(t *testing.T) {
			fs := finiteSource{n: tt.n, c: tt.c, k: tt.k}
			fs.eval(tt.r)
			wantIn, wantBusy, wantQueued, wantLost := bruteFiniteSource(tt.n, tt.c, tt.k, tt.r)
			out := float64(tt.n)*fs.sum - fs.in
			got := []float64{fs.in / fs.sum, fs.busy() / fs.sum, fs.queued / fs.sum, float64(tt.n-tt.k) * fs.full / out}
			want := []float64{wantIn, wantBusy, wantQueued, wantLost}
			for i, name := range []string{"in the pool", "busy", "queued", "lost"} {
				if math.Abs(got[i]-want[i]) > 1e-9*max(1, want[i]) {
					t.Errorf("%s: %v, product form %v", name, got[i], want[i])
				}
			}
		})
	}
}

// Ten queue consumers of 5 ms holding their worker through a write to a database of 4 × 5 ms
// are a closed loop of ten: the machine-repairman model stores 775 writes/s (an open stream
// of calls would keep arriving while the waiting consumers cannot send), and the database's
// waiting room, which holds all ten, refuses nothing.
func TestHeldConsumersAreAClosedLoop(t *testing.T) {
	d, cfg := consumersOnASaturatedDatabase()
	r := mustRun(t, d, cfg)
	db := comp(r, "db")
	var out, rejected float64
	n := 0
	for _, tk := range r.Ticks[len(r.Ticks)/2:] {
		out += tk.Components[db].OutputRPS
		rejected += tk.Components[db].RejectedRPS
		n++
	}
	out /= float64(n)
	// Exact: states 0..10 at the database, q(j)/q(j−1) = (10 − j + 1)·(5 ms ÷ 5 ms) ÷ min(j, 4).
	_, busy, _, _ := bruteFiniteSource(10, 4, 10, 1)
	want := busy / 0.005
	if math.Abs(out/want-1) > 0.01 {
		t.Errorf("database stores %.1f writes/s, the closed loop of ten consumers %.1f/s", out, want)
	}
	if rejected != 0 {
		t.Errorf("database refused %v writes/s with a room for every consumer", rejected/float64(n))
	}
}

// A callee can hold no more calls than its callers have held workers: a database whose
// connections and waiting room together hold all 16 of an app's workers refuses nothing,
// however overloaded the app above it is; with room for fewer it refuses some.
func TestClosedLoopRoomForEveryHeldWorker(t *testing.T) {
	for _, tt := range []struct {
		queuePerConnection int
		refuses            bool
	}{{3, false}, {1, true}} {
		d := mustDesign(t, fmt.Sprintf(`{"components":[{"id":"app","type":"app_service","params":{"replicas":2,"concurrency":8}},
		 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":10,"queue_per_connection":%d}}],
		 "edges":[{"from":"app","to":"db"}]}`, tt.queuePerConnection))
		cfg := constant(2000, 20)
		cfg.Mix = Mix{Write: 1}
		r := mustRun(t, d, cfg)
		var rejected float64
		for _, tk := range r.Ticks {
			rejected += tk.Components[comp(r, "db")].RejectedRPS
		}
		if got := rejected > 0; got != tt.refuses {
			t.Errorf("4 connections with %d waiting places each under 16 held workers: refused %.1f writes/s over the run, want refusals %t",
				tt.queuePerConnection, rejected, tt.refuses)
		}
	}
}

// termByTerm is finiteSource.eval written state by state, every state adding to every sum
// it has a part in, outwards from the mode: the sums eval must give bit for bit.
func termByTerm(n, c, k int, r float64) finiteSource {
	mode := int(math.Floor(float64(n+1) * r / (1 + r)))
	if mode > c {
		mode = max(c, int(math.Floor(float64(n+1)-float64(c)/r)))
	}
	mode = max(0, min(k, mode))
	fs := finiteSource{n: n, c: c, k: k, r: r}
	term := func(j int, q float64) {
		fs.sum += q
		fs.in += float64(j) * q
		if j > c {
			fs.queued += float64(j-c) * q
		}
		if j >= c && j < k {
			fs.waitSend += float64(n-j) * q
		}
		if j == k {
			fs.full = q
		}
	}
	term(mode, 1)
	q := 1.0
	for j := mode + 1; j <= k; j++ {
		q *= float64(n-j+1) * r / float64(min(j, c))
		term(j, q)
		if q < closedTermEps*fs.sum {
			break
		}
	}
	q = 1.0
	for j := mode; j >= 1; j-- {
		q *= float64(min(j, c)) / (float64(n-j+1) * r)
		term(j-1, q)
		if q < closedTermEps*fs.sum {
			break
		}
	}
	return fs
}

// eval's runs of states, each summed by its own loop, give the term-by-term sums exactly:
// a mode below, at and above the workers, a room full below them and above, and terms that
// stop counting before either end.
func TestFiniteSourceSumsTermByTerm(t *testing.T) {
	for _, n := range []int{1, 3, 10, 16, 64, 500} {
		for _, c := range []int{1, 4, 10, 40} {
			for _, room := range []int{0, 2, 8, 1 << 20} {
				k := min(n, c+room)
				for _, r := range []float64{1e-4, 0.003, 0.05, 0.3, 0.9, 1, 2, 7.5, 60} {
					fs := finiteSource{n: n, c: c, k: k}
					fs.eval(r)
					if want := termByTerm(n, c, k, r); fs != want {
						t.Errorf("N=%d c=%d K=%d r=%g: %+v, term by term %+v", n, c, k, r, fs, want)
					}
				}
			}
		}
	}
}

// The memo gives exactly the state eval computes, whether it has it or not: mirrors asking
// in turn and a pool or two apart, more distinct states than it keeps, an r one ulp apart,
// and the same r for another population, another worker count or another room.
func TestFiniteSourceMemoIsExact(t *testing.T) {
	type ask struct {
		n, c, k int
		r       float64
	}
	a, b, c := ask{224, 12, 140, 0.0115}, ask{224, 400, 224, 0.0115}, ask{64, 30, 30, 4.3e-4}
	next := ask{a.n, a.c, a.k, math.Nextafter(a.r, 1)}
	asks := []ask{a, a, a, b, c, b, c, next, a, {225, 12, 140, a.r}, {224, 13, 140, a.r}, {224, 12, 141, a.r},
		{10, 4, 10, 1}, {16, 4, 8, 0.5}, {500, 10, 500, 0.5}, a, b, c, c, b, a}
	var memo finiteSourceMemo
	for i, q := range asks {
		want := finiteSource{n: q.n, c: q.c, k: q.k}
		want.eval(q.r)
		if got := *memo.state(q.n, q.c, q.k, q.r); got != want {
			t.Errorf("ask %d %+v: %+v, eval %+v", i, q, got, want)
		}
	}
}
