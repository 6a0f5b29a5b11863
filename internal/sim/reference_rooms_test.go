package sim

// How one replica's waiting room fills in the reference: the spread of its occupancy, which
// a model of rooms per replica (doc.go, the pooled rooms) has to carry beside the mean.

import (
	"math"
	"testing"
)

// replicaOccupancy runs d under cfg in the reference with one seed and returns, at each tick's
// end, how many requests each of component id's replicas holds (in service and waiting).
func replicaOccupancy(t *testing.T, d Design, cfg Config, id string, seed uint64) [][]int {
	t.Helper()
	m, err := newRefModel(d, cfg, seed)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	n := m.ticks
	_, end := m.begin()
	pools := m.comps[id].pools
	held := make([][]int, n)
	var tickEnd func(k int)
	tickEnd = func(k int) {
		for _, pl := range pools {
			held[k] = append(held[k], pl.busy+len(pl.waiting))
		}
		if k+1 < n {
			m.s.at(float64(k+2)*m.dt-1e-9, func() { tickEnd(k + 1) })
		}
	}
	m.s.at(m.dt-1e-9, func() { tickEnd(0) })
	m.s.runUntil(end)
	return held
}

// A replica's room filling from empty spreads as a diffusion whose rate is the arrivals'
// variability plus the departures': λ·ca² + c·μ·cs² a second, with ca² = 1/n for a room dealt
// every n-th request by round-robin and cs² = (S² + H²) ÷ (S + H)² for workers held through
// calls (the same factor the queue's spread takes, doc.go). A Poisson-fed room of
// exponential workers, the exact transient M/M/c/K, spreads at λ + c·μ, about three times as
// fast. So rooms per replica carried with the Poisson spread fill too wide: on the seed's
// default, exact transient M/M/c/K rooms at the closed loop's rate read 95% full at 2.5 s,
// the reference's (mean of 40 seeds) at 2.0 s. Seed architecture-simulator's default (4 replicas of 8 workers, 50 ms
// holding through a database of 5 × 20 ms, 400 rps): the variance over the rooms and seeds
// of what a room holds, from 0.5 s (its workers all busy) to 1.25 s (before it nears full).
func TestReferenceReplicaRoomSpreadsAsItsStreams(t *testing.T) {
	d, cfg := archSimRetries(0)()
	cfg.DurationSec = 1.5
	const (
		replicas, workers = 4, 8
		own, query        = 0.050, 0.020 // s: the app's own work, the database's
		connections       = 5
		from, to          = 1, 4   // tick ends: 0.5 s and 1.25 s
		batches, perBatch = 20, 10 // seeds, in independent batches
	)
	dt := cfg.TickMs / 1000
	lambda := cfg.Traffic.RPS / replicas
	// Saturated, the database passes connections ÷ query a second, shared by every held worker.
	mu := connections / query / (replicas * workers)
	hold := 1/mu - own
	cs2 := (own*own + hold*hold) / ((own + hold) * (own + hold))
	rule := lambda/replicas + workers*mu*cs2
	poisson := lambda + workers*mu
	variance := func(xs []float64) float64 {
		var m, v float64
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			v += (x - m) * (x - m)
		}
		return v / float64(len(xs)-1)
	}
	var rates []float64
	for b := 0; b < batches; b++ {
		var at0, at1 []float64
		for s := 0; s < perBatch; s++ {
			held := replicaOccupancy(t, d, cfg, "app", uint64(b*perBatch+s+1))
			for r := range replicas {
				at0 = append(at0, float64(held[from][r]))
				at1 = append(at1, float64(held[to][r]))
			}
		}
		rates = append(rates, (variance(at1)-variance(at0))/(float64(to-from)*dt))
	}
	got, half := batchCI(rates)
	t.Logf("a room's variance grows %.1f ± %.1f a second; λ/n + cμ·cs² = %.1f (cs² %.2f), Poisson and exponential λ + cμ = %.1f",
		got, half, rule, cs2, poisson)
	if half > 0.4*rule {
		t.Errorf("interval ±%.1f is wider than 40%% of %.1f: the check has no teeth", half, rule)
	}
	if math.Abs(got-rule) > half {
		t.Errorf("spread rate %.1f ± %.1f, the streams' rule %.1f: outside the reference's 99%% interval", got, half, rule)
	}
	if !(got+half < poisson) {
		t.Errorf("spread rate %.1f ± %.1f: not narrower than a Poisson-fed exponential room's %.1f", got, half, poisson)
	}
}
