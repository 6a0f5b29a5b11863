package reference

import "backpressure/internal/sim"

// Trace is one run of the reference tick by tick, in requests per second: what the engine's
// tests hold the engine's own ticks against (internal/sim's overload table).
type Trace struct {
	TickSec                                  float64
	Offered, Fresh, Served, Failed, TimedOut []float64
	// Fill is each component's waiting-room fill (0..1) at the end of each tick, Out what it
	// finished each second.
	Fill, Out map[string][]float64
	// P99Sec is the 99th percentile of every answer within the deadline: the true quantile.
	P99Sec float64
	// Breakers holds each gateway breaker's changes of state, in order.
	Breakers map[string][]BreakerChange
}

// BreakerChange is a gateway breaker's change of state at a time.
type BreakerChange struct {
	AtSec float64
	State sim.Breaker
}

// Simulate runs d under cfg with one seed and returns its trace. slowDatabase reads a
// latency injection into a database as the database being slow, its connection held
// through the delay, rather than the network.
func Simulate(d sim.Design, cfg sim.Config, seed uint64, slowDatabase bool) (*Trace, error) {
	rec, err := refRunWith(d, cfg, seed, refOptions{slowDatabase: slowDatabase})
	if err != nil {
		return nil, err
	}
	per := 1 / rec.dt
	tr := &Trace{TickSec: rec.dt, Fill: rec.fill, Out: map[string][]float64{}, Breakers: map[string][]BreakerChange{}}
	for k := range rec.offered {
		tr.Offered = append(tr.Offered, rec.offered[k]*per)
		tr.Fresh = append(tr.Fresh, rec.fresh[k]*per)
		tr.Served = append(tr.Served, rec.served[k]*per)
		tr.Failed = append(tr.Failed, (rec.rejected[k]+rec.errors[k]+rec.timedOut[k])*per)
		tr.TimedOut = append(tr.TimedOut, rec.timedOut[k]*per)
	}
	for id, xs := range rec.out {
		tr.Out[id] = make([]float64, len(xs))
		for k, x := range xs {
			tr.Out[id][k] = x * per
		}
	}
	var xs []float64
	for _, l := range rec.latency {
		xs = append(xs, l...)
	}
	tr.P99Sec = quantile(xs, 0.99)
	for id, h := range rec.breakers {
		for _, g := range h {
			tr.Breakers[id] = append(tr.Breakers[id], BreakerChange{AtSec: g.at, State: g.state})
		}
	}
	return tr, nil
}
