package reference

// The reference simulator's clients, chaos schedule and per-tick record.

import (
	"backpressure/internal/sim"
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
	stored                                    map[string][]float64      // queue id → messages written per tick
	breakers                                  map[string][]refGateState // gateway id → its breaker's changes of state
	// lost counts the failed attempts of each tick by where and why they were lost
	// (refLoss): refused, errored or timed out.
	lost map[refLossKey][]float64
	// busy is each component's busy worker-seconds in each tick, workers its workers at the
	// tick's end, backlog a queue's messages waiting at the tick's end.
	busy, workers, backlog map[string][]float64
}

// refLossKey is where and why attempts were lost.
type refLossKey struct {
	comp  string
	cause sim.Cause
}

func (rec *refRecord) addLoss(k int, l *refLoss) {
	key := refLossKey{l.comp, l.cause}
	if rec.lost[key] == nil {
		rec.lost[key] = make([]float64, len(rec.offered))
	}
	rec.lost[key][k]++
}

func (m *refModel) tickOf(t float64) int {
	return min(m.ticks-1, max(0, int(math.Floor(t/m.dt+1e-9))))
}

// begin gives the model an empty record of its ticks and schedules what drives a run: the
// chaos, the balancers' health checks and the arrivals until the run's end.
func (m *refModel) begin() (*refRecord, float64) {
	n := m.ticks
	rec := &refRecord{dt: m.dt, fill: map[string][]float64{}, out: map[string][]float64{}, stored: map[string][]float64{},
		lost: map[refLossKey][]float64{}, busy: map[string][]float64{}, workers: map[string][]float64{}, backlog: map[string][]float64{}}
	for _, p := range []*[]float64{&rec.offered, &rec.fresh, &rec.retries, &rec.served, &rec.rejected, &rec.errors,
		&rec.timedOut, &rec.late, &rec.dropped} {
		*p = make([]float64, n)
	}
	rec.latency = make([][]float64, n)
	m.rec = rec
	end := float64(n) * m.dt
	m.scheduleChaos()
	if m.cfg.Client.RetryBudget > 0 {
		m.retryTokens = m.retryTokenCap() // a day's traffic has been flowing: the bucket is full
	}
	for _, id := range m.order {
		switch h := m.comps[id].hop.(type) {
		case *refBalancer:
			h.startHealthChecks(end)
		case *refApp:
			if h.scaler != nil {
				// Its period starts at a phase of its own, as a health check's does.
				m.s.at(m.s.rng.Float64(), func() { h.scaler.decide(end) })
			}
		}
	}
	m.startArrivals(end)
	return rec, end
}

// refRun simulates d under cfg with one seed and returns its record.
func refRun(d sim.Design, cfg sim.Config, seed uint64) (*refRecord, error) {
	return refRunWith(d, cfg, seed, refOptions{})
}

// refRunWith is refRun with readings of the configuration other than the default.
func refRunWith(d sim.Design, cfg sim.Config, seed uint64, opt refOptions) (*refRecord, error) {
	m, err := newRefModelWith(d, cfg, seed, opt)
	if err != nil {
		return nil, err
	}
	return m.run(), nil
}

// run simulates the model to its end and returns its record.
func (m *refModel) run() *refRecord {
	n := m.ticks
	rec, end := m.begin()
	// Tick ends: read the waiting rooms and what each component finished.
	lastServed := map[string]int{}
	lastStored := map[string]int{}
	lastBusy := map[string]float64{}
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
			if rec.busy[id] == nil {
				rec.busy[id], rec.workers[id] = make([]float64, n), make([]float64, n)
			}
			busy, workers := 0.0, 0
			for _, pl := range c.pools {
				busy += pl.busySeconds()
				workers += pl.workers
			}
			if a, ok := c.hop.(*refApp); ok {
				workers = 0 // the replicas dealt requests; draining ones are finishing
				for _, pl := range a.live {
					workers += pl.workers
				}
			}
			if f, ok := c.hop.(*refFunction); ok {
				busy, workers = f.busySeconds(), f.maxConc
			}
			rec.busy[id][k], rec.workers[id][k] = busy-lastBusy[id], float64(workers)
			lastBusy[id] = busy
			if q, ok := c.hop.(*refQueue); ok {
				if rec.stored[id] == nil {
					rec.stored[id] = make([]float64, n)
				}
				rec.stored[id][k] = float64(q.stored - lastStored[id])
				lastStored[id] = q.stored
				if rec.backlog[id] == nil {
					rec.backlog[id] = make([]float64, n)
				}
				rec.backlog[id][k] = float64(len(c.pools[1].waiting))
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
	rec.breakers = map[string][]refGateState{}
	for _, id := range m.order {
		if g, ok := m.comps[id].hop.(*refGateway); ok && g.threshold > 0 {
			rec.breakers[id] = g.history
		}
	}
	return rec
}

// refCurveRate is the level's traffic curve at time t, as Traffic's fields document it
// (the reference's own reading, not the engine's sampling): exact in continuous time, a
// spike or a step acting from its instant on.
func refCurveRate(tr sim.Traffic, t float64) float64 {
	r := tr.RPS
	switch tr.Kind {
	case "ramp":
		if t >= tr.EndSec {
			r = tr.ToRPS
		} else if t > tr.StartSec {
			r += (tr.ToRPS - tr.RPS) * (t - tr.StartSec) / (tr.EndSec - tr.StartSec)
		}
	case "step":
		for _, s := range tr.Steps {
			if t >= s.AtSec {
				r = s.RPS
			}
		}
	case "wave":
		r += tr.AmplitudeRPS * math.Sin(2*math.Pi*(t+tr.PhaseSec)/tr.PeriodSec)
	}
	for _, s := range tr.Spikes {
		if t >= s.AtSec && t < s.AtSec+s.DurationSec {
			r += s.RPS
		}
	}
	return max(r, 0)
}

// refCurveBound is a rate the curve never exceeds: the thinning's proposal rate.
func refCurveBound(tr sim.Traffic) float64 {
	r := max(tr.RPS, tr.ToRPS) + math.Abs(tr.AmplitudeRPS)
	for _, s := range tr.Steps {
		r = max(r, s.RPS)
	}
	for _, s := range tr.Spikes {
		r += max(0, s.RPS)
	}
	return r
}

// freshRate is the arrival rate at time t: the curve times every traffic spike acting then.
func (m *refModel) freshRate(t float64) float64 {
	r := refCurveRate(m.cfg.Traffic, t)
	for _, e := range m.cfg.Chaos {
		if e.Kind == sim.ChaosTrafficSpike && t >= e.AtSec && t < e.AtSec+e.DurationSec {
			r *= e.Params.Multiplier
		}
	}
	return r
}

// startArrivals runs a non-homogeneous Poisson stream by thinning (Lewis and Shedler):
// candidates at the bound's rate, each kept with probability rate(t) ÷ bound.
func (m *refModel) startArrivals(end float64) {
	bound := refCurveBound(m.cfg.Traffic)
	for _, e := range m.cfg.Chaos {
		if e.Kind == sim.ChaosTrafficSpike {
			bound *= max(1, e.Params.Multiplier)
		}
	}
	if bound <= 0 {
		return
	}
	mix := m.cfg.Mix
	shares := [...]float64{mix.Static, mix.Read, mix.Write, mix.AsyncWrite}
	var next func(t float64)
	next = func(t float64) {
		for {
			if t += m.s.exp(1 / bound); t >= end {
				return
			}
			if m.s.rng.Float64()*bound < m.freshRate(t) {
				break
			}
		}
		m.s.at(t, func() {
			u, class := m.s.rng.Float64(), sim.Class(0)
			for int(class) < len(shares)-1 && u >= shares[class] {
				u -= shares[class]
				class++
			}
			m.send(class, 0)
			next(t)
		})
	}
	next(0)
}

// send starts one attempt of a request: generation 0 is fresh, later ones are retries.
func (m *refModel) send(class sim.Class, gen int) {
	rec, s := m.rec, m.s
	k := m.tickOf(s.now)
	rec.offered[k]++
	if gen == 0 {
		rec.fresh[k]++
		m.depositRetryToken()
	} else {
		rec.retries[k]++
	}
	sent := s.now
	pending := true
	cl := m.cfg.Client
	loss := &refLoss{}
	if cl.TimeoutMs > 0 {
		s.at(sent+cl.TimeoutMs/1000, func() {
			if pending {
				pending = false
				k := m.tickOf(s.now)
				rec.timedOut[k]++
				// Waiting in a pool's queue, it was lost there; anywhere else (in service, held
				// through a call, on a slow edge) the answer was just too slow.
				if w := loss.waiting; w != nil {
					loss.comp, loss.cause = w.comp, sim.CauseSaturated
				} else {
					loss.comp, loss.cause = loss.at, sim.CauseTimeouts
				}
				rec.addLoss(k, loss)
				m.failed(class, gen)
			}
		})
	}
	deadline := math.Inf(1)
	if cl.TimeoutMs > 0 {
		deadline = sent + cl.TimeoutMs/1000
	}
	m.entry.call(&refReq{class: class, deadline: deadline, loss: loss}, func(o refOutcome) {
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
		rec.addLoss(k, loss)
		m.failed(class, gen)
	})
}

// failed retries a failed attempt if the client's limit and budget allow: at once with no
// backoff, else after backoff_ms × backoff_multiplier^(retry−1).
func (m *refModel) failed(class sim.Class, gen int) {
	cl, s := m.cfg.Client, m.s
	k := m.tickOf(s.now)
	if gen >= cl.MaxRetries {
		m.rec.dropped[k]++
		return
	}
	if cl.RetryBudget > 0 {
		if m.retryTokens < 1 {
			m.rec.dropped[k]++
			return
		}
		m.retryTokens--
	}
	delay := cl.BackoffMs * math.Pow(cl.BackoffMultiplier, float64(gen)) / 1000
	if delay <= 0 {
		m.send(class, gen+1)
		return
	}
	s.at(s.now+delay, func() { m.send(class, gen+1) })
}

// depositRetryToken is a fresh request's deposit in the retry budget: a token bucket that
// every fresh request fills by retry_budget tokens, every retry empties by one, and that
// holds at most what one second of fresh requests deposits at the current rate (never
// less than one token).
func (m *refModel) depositRetryToken() {
	b := m.cfg.Client.RetryBudget
	if b <= 0 {
		return
	}
	m.retryTokens = min(m.retryTokens+b, m.retryTokenCap())
}

func (m *refModel) retryTokenCap() float64 {
	return max(1, m.cfg.Client.RetryBudget*m.freshRate(m.s.now))
}

// scheduleChaos applies node failures and cache flushes at their times; edges read
// latency injections and partitions when they are crossed, arrivals read spikes.
func (m *refModel) scheduleChaos() {
	for _, e := range m.cfg.Chaos {
		c := m.comps[e.Target]
		switch e.Kind {
		case sim.ChaosNodeFailure:
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
		case sim.ChaosCacheFlush:
			ch := c.hop.(refFlushable)
			m.s.at(e.AtSec, func() {
				warm := ch.warmup()
				if e.Params.WarmupSec != nil {
					warm = *e.Params.WarmupSec
				}
				ch.flush(e.AtSec, warm)
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
