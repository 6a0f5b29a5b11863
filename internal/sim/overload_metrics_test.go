package sim

// What the overload scenarios measure, computed the same way from the engine's ticks and
// from the reference simulator's, so that the two are compared on one definition.

import (
	"math"
)

// overloadSeries is one run, tick by tick, in requests per second.
type overloadSeries struct {
	dt                                       float64
	offered, fresh, served, failed, timedOut []float64
	fill, out                                map[string][]float64 // per component: waiting-room fill 0..1, finished per second
	// p99 is the 99th percentile of every answer of the run (within the timeout), in s: the
	// true quantile on both sides (the engine's from its run histogram), never a mean of
	// per-tick percentiles.
	p99 float64
	// breakers holds each gateway breaker's changes of state, in order, timed where the
	// state took effect (the engine's at the start of the tick it first holds in).
	breakers map[string][]refGateState
}

func engineSeries(r *Result) overloadSeries {
	s := overloadSeries{dt: r.TickMs / 1000, fill: map[string][]float64{}, out: map[string][]float64{}}
	for i, tk := range r.Ticks {
		s.offered = append(s.offered, tk.OfferedRPS)
		s.fresh = append(s.fresh, tk.FreshRPS)
		s.served = append(s.served, tk.ServedRPS)
		s.failed = append(s.failed, tk.RejectedRPS+tk.ErrorRPS+tk.TimedOutRPS)
		s.timedOut = append(s.timedOut, tk.TimedOutRPS)
		for c, info := range r.Components {
			if i == 0 {
				s.fill[info.ID] = make([]float64, len(r.Ticks))
				s.out[info.ID] = make([]float64, len(r.Ticks))
			}
			s.fill[info.ID][i] = tk.Components[c].QueueFill
			s.out[info.ID][i] = tk.Components[c].OutputRPS
		}
	}
	s.p99 = r.Summary.P99Ms / 1000
	s.breakers = map[string][]refGateState{}
	for c, info := range r.Components {
		if info.Type != KindAPIGateway {
			continue
		}
		var h []refGateState
		for i, tk := range r.Ticks {
			at, opens := float64(i)*s.dt, tk.Components[c].BreakerOpens
			if b := tk.Components[c].Breaker; b != BreakerNone && (len(h) == 0 || h[len(h)-1].state != b) {
				h = append(h, refGateState{at: at, state: b})
				if b == BreakerOpen && opens > 0 {
					opens-- // it opened at the tick's start
				}
			}
			// Opened within the tick: from closed, or again after probing.
			for ; opens > 0; opens-- {
				if h[len(h)-1].state == BreakerOpen {
					h = append(h, refGateState{at: at, state: BreakerHalfOpen})
				}
				h = append(h, refGateState{at: at, state: BreakerOpen})
			}
		}
		s.breakers[info.ID] = h
	}
	return s
}

// ReferenceTrace is one run of the per-request reference (internal/reference's Trace), in
// requests per second tick by tick. The reference imports this package, so the tests that
// hold the engine against it run from package sim_test, which hands its runs in as these.
type ReferenceTrace struct {
	TickSec                                  float64
	Offered, Fresh, Served, Failed, TimedOut []float64
	Fill, Out                                map[string][]float64
	P99Sec                                   float64
	Breakers                                 map[string][]BreakerChange
}

// BreakerChange is a gateway breaker's change of state at a time.
type BreakerChange struct {
	AtSec float64
	State Breaker
}

// ReferenceRun runs the reference on a design with one seed; slowDatabase reads an injected
// delay into a database as the database being slow, its connection held through it.
type ReferenceRun func(d Design, cfg Config, seed uint64, slowDatabase bool) (ReferenceTrace, error)

func (tr ReferenceTrace) series() overloadSeries {
	s := overloadSeries{dt: tr.TickSec, offered: tr.Offered, fresh: tr.Fresh, served: tr.Served, failed: tr.Failed,
		timedOut: tr.TimedOut, fill: tr.Fill, out: tr.Out, p99: tr.P99Sec, breakers: map[string][]refGateState{}}
	for id, h := range tr.Breakers {
		for _, c := range h {
			s.breakers[id] = append(s.breakers[id], refGateState{at: c.AtSec, state: c.State})
		}
	}
	return s
}

// refGateState is a breaker's change of state as the metrics read it.
type refGateState struct {
	at    float64
	state Breaker
}

// failRule is seed architecture-simulator's: a step fails when more than 5% of the
// attempts finished in it failed.
const failRule = 0.05

// firstFailingSec is the end of the first tick that fails by the seed's rule.
func firstFailingSec(s overloadSeries) (float64, bool) {
	for k := range s.served {
		if done := s.served[k] + s.failed[k]; done > 0 && s.failed[k]/done > failRule {
			return float64(k+1) * s.dt, true
		}
	}
	return 0, false
}

// fillSec is the end of the first tick at which component id's waiting room is full.
func fillSec(id string) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		for k, f := range s.fill[id] {
			if f >= 0.99 {
				return float64(k+1) * s.dt, true
			}
		}
		return 0, false
	}
}

// window is how many ticks make one second, the span of the smoothed measures: a
// per-request simulation counts whole requests, so a single tick of it is noisy.
func (s overloadSeries) window() int { return max(1, int(math.Round(1/s.dt))) }

// peakAmplification is the highest retry amplification (attempts ÷ fresh requests) over
// any one-second window.
func peakAmplification(s overloadSeries) (float64, bool) {
	w, peak := s.window(), 0.0
	for k := 0; k+w <= len(s.offered); k++ {
		var off, fresh float64
		for j := k; j < k+w; j++ {
			off, fresh = off+s.offered[j], fresh+s.fresh[j]
		}
		if fresh > 0 {
			peak = math.Max(peak, off/fresh)
		}
	}
	return peak, peak > 0
}

// windowFails reports whether the second starting at tick k fails by the seed's rule (a
// second in which requests arrive and nothing finishes fails too).
func (s overloadSeries) windowFails(k int) bool {
	var done, failed, fresh float64
	for j := k; j < k+s.window(); j++ {
		done += s.served[j] + s.failed[j]
		failed += s.failed[j]
		fresh += s.fresh[j]
	}
	if done == 0 {
		return fresh > 0
	}
	return failed/done > failRule
}

// recoveryHold is how long the failure rule must hold for a system to count as recovered.
const recoveryHold = 5.0

// recoverySec is the time from `from` until the first moment after which every
// one-second window for recoveryHold seconds (or to the end of the run) passes the seed's
// rule; false if that never happens within the run.
func recoverySec(from float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		w, n := s.window(), len(s.served)
		hold := int(math.Round(recoveryHold / s.dt))
		for k := int(math.Ceil(from/s.dt - 1e-9)); k+w <= n; k++ {
			ok := true
			for j := k; j < min(n-w+1, k+hold); j++ {
				if s.windowFails(j) {
					ok, k = false, j
					break
				}
			}
			if ok {
				return float64(k)*s.dt - from, true
			}
		}
		return 0, false
	}
}

// failShare is the failed share of the attempts finished in [t0, t1).
func failShare(t0, t1 float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		var done, failed float64
		for k := range s.served {
			if t := float64(k) * s.dt; t >= t0 && t < t1 {
				done += s.served[k] + s.failed[k]
				failed += s.failed[k]
			}
		}
		return failed / math.Max(done, 1e-9), done > 0
	}
}

// storedShare is what component id finished per second over the second half of the run,
// as a share of the fresh requests (a database's stored writes).
func storedShare(id string) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		var out, fresh float64
		for k := len(s.fresh) / 2; k < len(s.fresh); k++ {
			out, fresh = out+s.out[id][k], fresh+s.fresh[k]
		}
		return out / math.Max(fresh, 1e-9), fresh > 0
	}
}

// retriesPerFresh is the retries sent per fresh request over the second half of the run.
func retriesPerFresh(s overloadSeries) (float64, bool) {
	var offered, fresh float64
	for k := len(s.fresh) / 2; k < len(s.fresh); k++ {
		offered, fresh = offered+s.offered[k], fresh+s.fresh[k]
	}
	return (offered - fresh) / math.Max(fresh, 1e-9), fresh > 0
}

// retriesPerFreshIn is the retries sent per fresh request over [t0, t1).
func retriesPerFreshIn(t0, t1 float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		var offered, fresh float64
		for k := range s.fresh {
			if t := float64(k) * s.dt; t >= t0-1e-9 && t < t1-1e-9 {
				offered, fresh = offered+s.offered[k], fresh+s.fresh[k]
			}
		}
		return (offered - fresh) / math.Max(fresh, 1e-9), fresh > 0
	}
}

// servedShare is what was answered within the timeout over the second half of the run, as
// a share of the fresh requests: the throughput a design passes.
func servedShare(s overloadSeries) (float64, bool) {
	var served, fresh float64
	for k := len(s.fresh) / 2; k < len(s.fresh); k++ {
		served, fresh = served+s.served[k], fresh+s.fresh[k]
	}
	return served / math.Max(fresh, 1e-9), fresh > 0
}

// p99Ms is the 99th percentile latency of the run's answers, in ms.
func p99Ms(s overloadSeries) (float64, bool) {
	return s.p99 * 1000, s.p99 > 0
}

// breakerOpensSec is when gateway id's breaker first opens after from.
func breakerOpensSec(id string, from float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		for _, h := range s.breakers[id] {
			if h.state == BreakerOpen && h.at >= from {
				return h.at - from, true
			}
		}
		return 0, false
	}
}

// breakerClosesSec is how long after from gateway id's breaker closes for good: the time of
// its last change of state, which closed it; false if it ends open or half-open, or never
// opened.
func breakerClosesSec(id string, from float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		h := s.breakers[id]
		if len(h) < 2 {
			return 0, false
		}
		last := h[len(h)-1]
		return last.at - from, last.state == BreakerClosed
	}
}

// breakerOpenings is how many times gateway id's breaker opened.
func breakerOpenings(id string) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		n := 0
		for _, h := range s.breakers[id] {
			if h.state == BreakerOpen {
				n++
			}
		}
		return float64(n), true
	}
}

// firstTimeoutsSec is the start of the first one-second window in which more than 1% of
// the attempts finished timed out.
func firstTimeoutsSec(s overloadSeries) (float64, bool) {
	w := s.window()
	for k := 0; k+w <= len(s.served); k++ {
		var done, to float64
		for j := k; j < k+w; j++ {
			done, to = done+s.served[j]+s.failed[j], to+s.timedOut[j]
		}
		if done > 0 && to > 0.01*done {
			return float64(k) * s.dt, true
		}
	}
	return 0, false
}

// backlogGrowth is how fast component id's waiting messages grow over the second half of
// the run, in messages a second, its room holding places.
func backlogGrowth(id string, places float64) func(overloadSeries) (float64, bool) {
	return func(s overloadSeries) (float64, bool) {
		fill := s.fill[id]
		n := len(fill)
		if n < 2 {
			return 0, false
		}
		return (fill[n-1] - fill[n/2]) * places / (float64(n-1-n/2) * s.dt), true
	}
}
