package sim

// The reference simulator's clients, chaos schedule and per-tick record.

import (
	"math"
	"slices"
)

// refRecord is what one reference run saw, tick by tick, in the engine's units
// (requests per tick here; series() turns them into rates).
type refRecord struct {
	dt                                        float64
	offered, fresh, retries, served           []float64
	rejected, errors, timedOut, late, dropped []float64
	inFlight                                  float64     // attempts unanswered at the end
	latency                                   [][]float64 // seconds, answered within the deadline, per tick
	fill, out                                 map[string][]float64
	stored                                    map[string][]float64 // queue id → messages written per tick
}

func (m *refModel) tickOf(t float64) int {
	return min(m.ticks-1, max(0, int(math.Floor(t/m.dt+1e-9))))
}

// begin gives the model an empty record of its ticks and schedules what drives a run: the
// chaos, the balancers' health checks and the arrivals until the run's end.
func (m *refModel) begin() (*refRecord, float64) {
	n := m.ticks
	rec := &refRecord{dt: m.dt, fill: map[string][]float64{}, out: map[string][]float64{}, stored: map[string][]float64{}}
	for _, p := range []*[]float64{&rec.offered, &rec.fresh, &rec.retries, &rec.served, &rec.rejected, &rec.errors,
		&rec.timedOut, &rec.late, &rec.dropped} {
		*p = make([]float64, n)
	}
	rec.latency = make([][]float64, n)
	m.rec = rec
	end := float64(n) * m.dt
	m.scheduleChaos()
	for _, id := range m.order {
		if b, ok := m.comps[id].hop.(*refBalancer); ok {
			b.startHealthChecks(end)
		}
	}
	m.startArrivals(end)
	return rec, end
}

// refRun simulates d under cfg with one seed and returns its record.
func refRun(d Design, cfg Config, seed uint64) (*refRecord, error) {
	m, err := newRefModel(d, cfg, seed)
	if err != nil {
		return nil, err
	}
	n := m.ticks
	rec, end := m.begin()
	// Tick ends: read the waiting rooms and what each component finished.
	lastServed := map[string]int{}
	lastStored := map[string]int{}
	var tickEnd func(k int)
	tickEnd = func(k int) {
		for _, id := range m.order {
			c := m.comps[id]
			if rec.fill[id] == nil {
				rec.fill[id], rec.out[id] = make([]float64, n), make([]float64, n)
			}
			if c.room > 0 {
				rec.fill[id][k] = float64(c.waiting()) / float64(c.room)
			}
			s := c.served()
			rec.out[id][k] = float64(s - lastServed[id])
			lastServed[id] = s
			if q, ok := c.hop.(*refQueue); ok {
				if rec.stored[id] == nil {
					rec.stored[id] = make([]float64, n)
				}
				rec.stored[id][k] = float64(q.stored - lastStored[id])
				lastStored[id] = q.stored
			}
		}
		if k+1 < n {
			m.s.at(float64(k+2)*m.dt-1e-9, func() { tickEnd(k + 1) })
		}
	}
	m.s.at(m.dt-1e-9, func() { tickEnd(0) })
	m.s.runUntil(end)
	for k := 0; k < n; k++ {
		rec.inFlight += rec.offered[k] - rec.served[k] - rec.rejected[k] - rec.errors[k] - rec.timedOut[k]
	}
	return rec, nil
}

// spike is the traffic multiplier of tick k (the engine's rule: an event acts in a tick it overlaps).
func (m *refModel) spike(k int) float64 {
	t0, t1 := float64(k)*m.dt, float64(k+1)*m.dt
	mult := 1.0
	for _, e := range m.cfg.Chaos {
		if e.Kind == ChaosTrafficSpike && e.AtSec < t1 && t0 < e.AtSec+e.DurationSec {
			mult *= e.Params.Multiplier
		}
	}
	return mult
}

// freshRate is the arrival rate of tick k: the curve at the tick's middle, spikes included.
func (m *refModel) freshRate(k int) float64 {
	return m.cfg.Traffic.Rate((float64(k)+0.5)*m.dt) * m.spike(k)
}

// startArrivals runs the Poisson stream, piecewise constant per tick (exact by memorylessness:
// a draw that crosses the tick's end is dropped and redrawn at the next tick's rate).
func (m *refModel) startArrivals(end float64) {
	shares := m.cfg.Mix.shares()
	var next func(t float64, k int)
	next = func(t float64, k int) {
		for k < m.ticks {
			tickEnd := float64(k+1) * m.dt
			if rate := m.freshRate(k); rate > 0 {
				if t2 := t + m.s.exp(1/rate); t2 < tickEnd {
					m.s.at(t2, func() {
						u, class := m.s.rng.Float64(), Class(0)
						for class < numClasses-1 && u >= shares[class] {
							u -= shares[class]
							class++
						}
						m.send(class, 0)
						next(t2, k)
					})
					return
				}
			}
			t, k = tickEnd, k+1
		}
	}
	next(0, 0)
}

// send starts one attempt of a request: generation 0 is fresh, later ones are retries.
func (m *refModel) send(class Class, gen int) {
	rec, s := m.rec, m.s
	k := m.tickOf(s.now)
	rec.offered[k]++
	if gen == 0 {
		rec.fresh[k]++
	} else {
		rec.retries[k]++
	}
	sent := s.now
	pending := true
	cl := m.cfg.Client
	if cl.TimeoutMs > 0 {
		s.at(sent+cl.TimeoutMs/1000, func() {
			if pending {
				pending = false
				rec.timedOut[m.tickOf(s.now)]++
				m.failed(class, gen)
			}
		})
	}
	m.entry.call(&refReq{class: class}, func(o refOutcome) {
		k := m.tickOf(s.now)
		if !pending {
			rec.late[k]++ // the client left: this answer is wasted work
			return
		}
		pending = false
		switch o {
		case refOK:
			rec.served[k]++
			rec.latency[k] = append(rec.latency[k], s.now-sent)
			return
		case refRejected:
			rec.rejected[k]++
		case refErrored:
			rec.errors[k]++
		}
		m.failed(class, gen)
	})
}

// failed retries a failed attempt if the client's limit and budget allow.
func (m *refModel) failed(class Class, gen int) {
	cl, s := m.cfg.Client, m.s
	k := m.tickOf(s.now)
	if gen >= cl.MaxRetries {
		m.rec.dropped[k]++
		return
	}
	if cl.RetryBudget > 0 && m.retryStarted[k]+1 > cl.RetryBudget*m.freshRate(k)*m.dt {
		m.rec.dropped[k]++
		return
	}
	m.retryStarted[k]++
	delay := cl.BackoffMs * math.Pow(cl.BackoffMultiplier, float64(gen)) / 1000
	if delay <= 0 {
		delay = m.dt // "0 retries in the next tick"
	}
	s.at(s.now+delay, func() { m.send(class, gen+1) })
}

// scheduleChaos applies node failures and cache flushes at their times; edges read
// latency injections and partitions when they are crossed, arrivals read spikes.
func (m *refModel) scheduleChaos() {
	for _, e := range m.cfg.Chaos {
		c := m.comps[e.Target]
		switch e.Kind {
		case ChaosNodeFailure:
			m.s.at(e.AtSec, func() {
				c.failed = true
				for _, p := range c.pools {
					p.fail()
				}
			})
			m.s.at(e.AtSec+e.DurationSec, func() {
				c.failed = false
				for _, p := range c.pools {
					p.recover()
				}
			})
		case ChaosCacheFlush:
			ch := c.hop.(*refCache)
			m.s.at(e.AtSec, func() {
				ch.flushedAt, ch.flushWarm = e.AtSec, ch.warmup
				if e.Params.WarmupSec != nil {
					ch.flushWarm = *e.Params.WarmupSec
				}
			})
		}
	}
}

// quantile is the q-quantile of xs (sorted in place), by the nearest-rank rule.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(len(xs)-1, max(0, i))]
}
