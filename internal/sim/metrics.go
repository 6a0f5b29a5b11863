package sim

import "math"

// accumulators carry the run's totals from tick to tick.
type accumulators struct {
	offered, fresh, retries, served, rejected, errors, timedOut, dropped float64
	costSum, latencySum, latencyWeight                                   float64
	firstFailing                                                         int
	comps                                                                []compAcc
	splitBrains                                                          []string
	causes                                                               []tickCause // the failing ticks, diagnosed
	diag                                                                 diagScratch
}

func (a *accumulators) splitBrain(from, to string, t int) {
	name := "split_brain:" + from + ":" + to
	for _, s := range a.splitBrains {
		if s == name {
			return
		}
	}
	a.splitBrains = append(a.splitBrains, name)
}

type compAcc struct {
	peakUtil, utilSum, rejected, errors, peakBacklog, maxLag, costSum float64
	backlogAtLastFifth, lagAtLastFifth                                float64
	backlogEnd, lagEnd                                                float64
	enqueued, drainable                                               float64 // a queue over the last 80%: messages in, consumer capacity
}

func (a *accumulators) init(n int) {
	a.firstFailing = -1
	a.comps = make([]compAcc, n)
}

// saturated: at capacity, or refusing more than a trace of its input.
func saturated(util, rejected, in float64) bool {
	return util >= 0.999 || rejected > 0.001*in
}

// recordComponents fills the tick's per-component metrics.
func (m *model) recordComponents(t int, tick *Tick, st *runState) {
	dt := m.dt
	lastFifth := t == m.v.ticks-1-m.v.ticks/5
	steadyTick := t >= m.v.ticks/5
	for i := range m.comps {
		c := &m.comps[i]
		ct := &tick.Components[i]
		*ct = ComponentTick{}
		var in, out, rej, errs, backlog, buffer, handled float64
		failed := false
		for _, p := range c.pools {
			pl := &m.pools[p]
			in += pl.in
			out += pl.processed
			backlog += pl.backlog1
			buffer += pl.buffer
			ct.Workers += pl.workers
			ct.Utilization = max(ct.Utilization, pl.util)
			failed = failed || pl.failed
			rej += pl.nodeRejected
			errs += pl.nodeFailed
		}
		if len(c.pools) > 0 {
			handled = m.pools[c.pools[0]].processed
		}
		ct.InputRPS, ct.OutputRPS, ct.RejectedRPS = in/dt, out/dt, rej/dt
		ct.Backlog = backlog
		if buffer > 0 && !math.IsInf(buffer, 1) {
			ct.QueueFill = min(1, backlog/buffer)
		}
		if in > 0 {
			ct.ErrorRate = min(1, (rej+errs)/in)
		}
		mean, p99 := m.componentLatency(i, st)
		ct.MeanMs, ct.P99Ms = mean*1000, p99*1000
		switch c.kind {
		case KindCache, KindCDN:
			ct.HitRatio = c.hitNow
		case KindDatabase:
			for _, r := range m.replay {
				if nd := &m.nodes[r]; nd.comp == i {
					if cp := m.pools[nd.pool].capRate; cp > 0 {
						ct.LagMs = max(ct.LagMs, nd.backlog/cp*1000)
					}
				}
			}
		case KindAPIGateway:
			ct.Breaker = c.gate.during
		case KindContainerPool:
			ct.Replicas = c.scaler.replicas
		case KindServerless:
			ct.ColdStartShare = c.fn.coldShare
		case KindQueue:
			// A queue's backlog is its depth; its utilisation is that of its consumers.
			consumers := &m.pools[c.pools[1]]
			ct.Utilization = consumers.util
			if steadyTick {
				st.acc.comps[i].enqueued += consumers.in
				st.acc.comps[i].drainable += consumers.capRate * dt
			}
			buffer = c.queueBuffer
			ct.QueueFill = min(1, backlog/buffer)
		}
		ct.CostPerHour = m.costPerHour(c, handled/dt, in/dt)
		switch {
		case failed:
			ct.Status = StatusFailed
		case in == 0 && backlog == 0:
			ct.Status = StatusIdle
		case saturated(ct.Utilization, rej, in):
			ct.Status = StatusSaturated
		case ct.Utilization >= 0.8:
			ct.Status = StatusBusy
		default:
			ct.Status = StatusOK
		}
		tick.CostPerHour += ct.CostPerHour

		a := &st.acc.comps[i]
		a.peakUtil = max(a.peakUtil, ct.Utilization)
		a.utilSum += ct.Utilization
		a.rejected += rej
		a.errors += errs
		a.peakBacklog = max(a.peakBacklog, backlog)
		a.maxLag = max(a.maxLag, ct.LagMs)
		a.costSum += ct.CostPerHour
		a.backlogEnd, a.lagEnd = backlog, ct.LagMs
		if lastFifth {
			a.backlogAtLastFifth, a.lagAtLastFifth = backlog, ct.LagMs
		}
	}
	attempts, lost := tick.OfferedRPS*dt, (tick.RejectedRPS+tick.ErrorRPS+tick.TimedOutRPS)*dt
	if failingTick(attempts, lost) {
		if d, ok := m.diagnose(t, st, attempts, tick.FreshRPS*dt, tick.TimedOutRPS*dt); ok {
			st.acc.causes = append(st.acc.causes, d)
		}
	}
}

var p99Only = []float64{0.99}

// costPerHour prices a component for one tick: units at their hourly price plus per-use
// charges at the tick's rate, extrapolated to an hour.
func (m *model) costPerHour(c *component, handledRPS, inRPS float64) float64 {
	it := c.it
	cost := c.units*it.PricePerHour + handledRPS*3600/1e6*it.PricePerMillion
	switch c.kind {
	case KindDatabase:
		cost += (c.units - 1) * (c.rit.PricePerHour - it.PricePerHour) // replicas at their own type's price
	case KindQueue:
		cost += c.queueWorkers * it.PricePerWorkerHour
	case KindServerless:
		pl := &m.pools[c.pools[0]]
		busy := handledRPS * (pl.serviceSec + pl.holdSec) // concurrent executions, by Little's law
		cost += busy * c.memoryGB * 3600 * it.PricePerGBSecond
	}
	return cost
}

func (a *accumulators) addTick(m *model, t int, tick *Tick, attempts, fresh, retried, served, rejected, failed, timedOut, queued float64) {
	a.offered += attempts
	a.fresh += fresh
	a.retries += retried
	a.served += served
	a.rejected += rejected
	a.errors += failed
	a.timedOut += timedOut
	a.costSum += tick.CostPerHour
	if w := served + timedOut; w > 0 {
		a.latencySum += tick.MeanMs * w
		a.latencyWeight += w
	}
	if a.firstFailing < 0 && failingTick(attempts, rejected+failed+timedOut) {
		a.firstFailing = t
	}
}

// summarize condenses the run into its summary.
func (m *model) summarize(res *Result, st *runState) {
	a := &st.acc
	n := len(res.Ticks)
	s := &res.Summary
	s.Ticks = n
	s.DurationSec = float64(n) * m.dt
	s.Offered, s.Fresh, s.Retries = a.offered, a.fresh, a.retries
	s.Served, s.Rejected, s.Errors, s.TimedOut = a.served, a.rejected, a.errors, a.timedOut
	s.Dropped = a.dropped
	if n > 0 {
		s.QueuedAtEnd = res.Ticks[n-1].Queued
		s.CostPerHour = a.costSum / float64(n)
		s.TotalCost = a.costSum * m.dt / 3600
	}
	if done := a.served + a.rejected + a.errors + a.timedOut; done > 0 {
		s.ErrorRate = (a.rejected + a.errors + a.timedOut) / done
	}
	if a.latencyWeight > 0 {
		s.MeanMs = a.latencySum / a.latencyWeight
	}
	var q [3]float64
	st.hist.quantiles(tickQuantiles, q[:])
	s.P50Ms, s.P95Ms, s.P99Ms = q[0]*1000, q[1]*1000, q[2]*1000
	if a.firstFailing >= 0 {
		at := res.Ticks[a.firstFailing].T
		s.FirstFailingSec = &at
	}
	s.Failures = []string{}
	s.Components = make([]ComponentSummary, len(m.comps))
	for i := range m.comps {
		c := &m.comps[i]
		ca := &a.comps[i]
		cs := ComponentSummary{ID: c.id, Type: c.kind, PeakUtilization: ca.peakUtil, Rejected: ca.rejected,
			Errors: ca.errors, PeakBacklog: ca.peakBacklog, MaxLagMs: ca.maxLag}
		if n > 0 {
			cs.MeanUtilization = ca.utilSum / float64(n)
			cs.MeanCostPerHour = ca.costSum / float64(n)
		}
		s.Components[i] = cs
		// A backlog that has not shrunk over the last fifth of the run is taken as never
		// draining: those writes were acknowledged but will never be stored.
		switch c.kind {
		case KindQueue:
			// Consumers that cannot keep up on average leave acknowledged writes behind for
			// good, even if the run happens to end in a lull.
			behind := ca.enqueued > ca.drainable*(1+1e-9)
			if ca.backlogEnd > 0.5 && (behind || ca.backlogEnd >= ca.backlogAtLastFifth) {
				s.LostWrites += ca.backlogEnd
				s.Failures = append(s.Failures, "lost_data:"+c.id)
			}
		case KindDatabase:
			if ca.lagEnd > 0 && ca.lagEnd >= ca.lagAtLastFifth {
				s.Failures = append(s.Failures, "replication_lag:"+c.id)
			}
		}
	}
	s.Failures = append(s.Failures, a.splitBrains...)
	s.Why = m.structuralWhy(res, st, m.buildWhy(a.causes))
	if s.Why == nil {
		s.Why = []Why{}
	}
	busiest := -1.0
	for _, cs := range s.Components {
		if cs.PeakUtilization > busiest {
			busiest, s.Busiest = cs.PeakUtilization, cs.ID
		}
	}
	s.Events = m.eventImpacts(res, st)
}
