package reference

import (
	"fmt"
	"math"
	"testing"

	"backpressure/internal/sim"
)

// retriedAndLost are, over a steady stretch of a run whose client retries at once, the
// retries sent and the requests given up (fresh − served), each per fresh request.
func retriedAndLost(res *sim.Result, from, to float64) (sent, lost float64) {
	var fresh, retry, served float64
	for _, tk := range res.Ticks {
		if tk.T > from && tk.T <= to {
			fresh, retry, served = fresh+tk.FreshRPS, retry+tk.RetryRPS, served+tk.ServedRPS
		}
	}
	return retry / fresh, (fresh - served) / fresh
}

// sweepShares are the share p of fresh attempts refused and the share q of retries refused,
// one q for every retry, that send and lose as many: with r retries, sent = p × (1 + q + …
// + q^(r−1)) and lost = p × q^r. With one retry both are exact.
func sweepShares(sent, lost float64, retries int) (p, q float64) {
	series := func(q float64) (sum, last float64) {
		x := 1.0
		for range retries {
			sum += x
			x *= q
		}
		return sum, x
	}
	lo, hi := 0.0, 1.0
	for range 60 { // q^r ÷ Σq^k rises with q
		m := (lo + hi) / 2
		if s, l := series(m); l/s < lost/sent {
			lo = m
		} else {
			hi = m
		}
	}
	s, _ := series(lo)
	return sent / s, lo
}

// spreadChain is what rooms dealt in turn refuse when their free places lie at random
// among them. The rooms are taken together as one birth-death chain over the requests in
// them, rooms × (workers + places) at most, served by all their workers; a fresh request
// arriving when m places (and idle workers) are free meets a room with none with the chance
// π₀ = (1 − 1/rooms)^m, and a retry sent at once meets the next room, which, given the k
// rooms before it had none, has none with the chance (1 − 1/(rooms − k))^m: the m lie
// among the rooms not yet tried. The last untried room has all m; a sweep that has tried
// every room meets them again, full. A request is admitted unless every attempt of its
// sweep is refused, which sets the chain's arrivals in each state. It returns, per fresh
// request, the attempts refused and the requests given up, as sweepShares reads them.
func spreadChain(rooms, workers, places int, serviceSec, fresh float64, retries int) (sent, lost float64) {
	total := rooms * (workers + places)
	full := func(m, k int) float64 { // the k-th room of a sweep has none, given the rooms before had none
		switch untried := rooms - k; {
		case untried <= 0:
			return 1
		case untried == 1:
			if m == 0 {
				return 1
			}
			return 0
		default:
			return math.Pow(1-1/float64(untried), float64(m))
		}
	}
	// through[n][k]: with n requests in the rooms, the chance that a sweep's first k + 1
	// attempts are all refused.
	through := make([][]float64, total+1)
	for n := range through {
		chances, refused := make([]float64, retries+1), 1.0
		for k := range chances {
			refused *= full(total-n, k)
			chances[k] = refused
		}
		through[n] = chances
	}
	weight := make([]float64, total+1) // by requests in the rooms, unnormalised
	weight[0] = 1
	for n := range total {
		admitted := fresh * (1 - through[n][retries])
		weight[n+1] = weight[n] * admitted / (float64(min(n+1, rooms*workers)) / serviceSec)
	}
	sum := 0.0
	for _, w := range weight {
		sum += w
	}
	for n, w := range weight {
		for k, refused := range through[n] {
			if k < retries {
				sent += w / sum * refused
			} else {
				lost += w / sum * refused
			}
		}
	}
	return sent, lost
}

// Replicas each with a full room, dealt requests in turn, and clients that retry the
// instant they are refused: a retry goes to the next replica's room in that same instant,
// and per request it is refused more often than a fresh attempt, which arrives at a random
// moment. A refusal says the rooms' free places are few, and the retry meets the same few
// among fewer rooms; a request refused twice meets fewer still. One room is the limit: the
// retry meets the room that just refused it (the engine's rule, atonce.go). From three
// rooms on, the shares are those of the rooms' free places lying at random among them
// (spreadChain), within 15%; two rooms dealt strictly in turn share theirs more evenly
// than at random (the chain reads 0.14 and 0.54 against 0.19 and 0.40). The engine refuses
// a fresh attempt and a retry alike (its p and q are one share, logged beside), which is
// why its retries at full rooms read high (BENCHMARKS.md, "A full room's refusals retried
// at once"). Three seeds of 40 s, read from 10 s.
func TestReferenceRetriesAtOnceMeetRoomsFullTogether(t *testing.T) {
	if raceEnabled {
		t.Skip("a description of the reference, 24 runs; the plain run holds it")
	}
	const workers, places, serviceSec = 8, 32, 0.050
	tests := []struct {
		rooms, retries int
		load           float64
	}{
		{1, 1, 1.08}, {2, 1, 1.08}, {3, 1, 1.08}, {5, 1, 1.08}, {10, 1, 1.08},
		{5, 1, 1.3}, {5, 3, 1.08}, {5, 3, 1.3},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%d rooms, %d retries at once, offered %.0f%%", tt.rooms, tt.retries, 100*tt.load)
		t.Run(name, func(t *testing.T) {
			d, capRPS := roomsDesign(t, tt.rooms, workers, 1000*serviceSec, places)
			fresh := tt.load * capRPS
			cfg := sim.Config{TickMs: 250, DurationSec: 40, Traffic: sim.Traffic{Kind: "constant", RPS: fresh},
				Mix: sim.Mix{Static: 1}, Client: sim.Client{TimeoutMs: 5000, MaxRetries: tt.retries}}
			ref, err := Run(t.Context(), d, cfg, Options{Seeds: []uint64{1, 2, 3}})
			if err != nil {
				t.Fatal(err)
			}
			shares := func(sent, lost float64) (p, q float64) { return sweepShares(sent, lost, tt.retries) }
			p, q := shares(retriedAndLost(ref, 10, 40))
			wantP, wantQ := shares(spreadChain(tt.rooms, workers, places, serviceSec, fresh, tt.retries))
			engineP, engineQ := shares(retriedAndLost(mustRun(t, d, cfg), 10, 40))
			t.Logf("fresh attempts refused %.3f, retries %.3f; free places at random %.3f and %.3f; the engine %.3f and %.3f",
				p, q, wantP, wantQ, engineP, engineQ)
			if q-p < 0.05 {
				t.Errorf("a retry is refused %.3f of the time and a fresh attempt %.3f: want the retry's share above", q, p)
			}
			if tt.rooms != 2 && (!near(p, wantP, 0.15) || !near(q, wantQ, 0.15)) {
				t.Errorf("refused %.3f and %.3f, free places at random %.3f and %.3f: want within 15%%", p, q, wantP, wantQ)
			}
		})
	}
}
