package sim

import "math"

// accumulators carry the run's totals from tick to tick.
type accumulators struct {
	offered, fresh, retries, served, rejected, errors, timedOut, dropped float64
	costSum, latencySum, latencyWeight                                   float64
	lateCompletions                                                      float64
	firstFailing                                                         int
	comps                                                                []compAcc
	splitBrains                                                          []string
	causes                                                               causeLog // the failing ticks, diagnosed
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
	late                                                              float64 // work served after its client gave up
}

func (a *accumulators) init(n int) {
	a.firstFailing = -1
	a.comps = make([]compAcc, n)
}

// saturated: at capacity, or refusing more than a trace of its input.
func saturated(util, rejected, in float64) bool {
	return util >= 0.999 || rejected > 0.001*in
}

// recordComponents fills the tick's per-component metrics; accumulate folds them into the
// run's totals.
func (m *model) recordComponents(t int, tick *Tick, st *runState) {
	dt := m.dt
	detail := m.detailed(t)
	// In locals, resliced to one length: the loop's stores cannot move them, and an index
	// into one needs no bounds check in another.
	comps, pools := m.comps, m.pools
	records, compTot := tick.Components[:len(comps)], st.compTot[:len(comps)]
	atOnce := st.atOnceSent
	for i := range comps {
		c := &comps[i]
		// Built apart and stored whole: the records are fresh memory, written once.
		var rec ComponentTick
		ct := &rec
		var in, out, rej, errs, backlog, buffer, handled, late float64
		failed := false
		for _, p := range c.pools {
			pl := &pools[p]
			late += pl.ghostProcessed
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
			handled = pools[c.pools[0]].processed
		}
		// Retries sent at once and refused at once (atonce.go): the balancers and gateways
		// they pass forward them, the pool that refused them refuses them again.
		if atOnce && st.atOnceIn[i] > 0 {
			extra, refused := st.atOnceIn[i], st.atOnceRefused[i]
			in += extra
			out += extra - refused
			rej += refused
			handled += extra - refused
		}
		ct.InputRPS, ct.OutputRPS, ct.RejectedRPS = in/dt, out/dt, rej/dt
		ct.Backlog = backlog
		ct.LateRPS = late / dt
		if buffer > 0 && !math.IsInf(buffer, 1) {
			ct.QueueFill = atMost(backlog/buffer, 1)
		}
		if in > 0 {
			ct.ErrorRate = atMost((rej+errs)/in, 1)
		}
		if detail {
			var mean, p99 float64
			if len(c.pools) == 1 { // componentLatency's own dispatch, without its call
				mean, p99 = m.onePoolLatency(i, c.pools[0], st)
			} else {
				mean, p99 = m.componentLatency(i, st)
			}
			ct.MeanMs, ct.P99Ms = mean*1000, p99*1000
		}
		// The tick's price: units at their hourly price plus per-use charges at the tick's
		// rate, extrapolated to an hour, and what the kind adds (below, with its figures).
		it := &c.it
		handledRPS := handled / dt
		cost := c.units*it.PricePerHour + handledRPS*3600/1e6*it.PricePerMillion
		switch c.kind {
		case KindCache, KindCDN:
			ct.HitRatio = c.hitNow
		case KindDatabase:
			for _, r := range st.replayOf[i] {
				nd := &m.nodes[r]
				if cp := pools[nd.pool].capRate; cp > 0 {
					ct.LagMs = max(ct.LagMs, nd.backlog/cp*1000)
				}
			}
			cost += (c.units - 1) * (c.rit.PricePerHour - it.PricePerHour) // replicas at their own type's price
		case KindAPIGateway:
			ct.Breaker, ct.BreakerOpens = c.gate.during, c.gate.opens
		case KindContainerPool:
			ct.Replicas = c.scaler.replicas
		case KindServerless:
			ct.ColdStartShare = c.fn.coldShare
			pl := &pools[c.pools[0]]
			busy := handledRPS * (pl.serviceSec + pl.holdSec) // concurrent executions, by Little's law
			cost += busy * c.memoryGB * 3600 * it.PricePerGBSecond
		case KindQueue:
			// A queue's backlog is its depth; its utilisation is that of its consumers.
			consumers := &pools[c.pools[1]]
			ct.Utilization = consumers.util
			compTot[i].enqueued, compTot[i].drainable = consumers.in, consumers.capRate*dt
			buffer = c.queueBuffer
			ct.QueueFill = atMost(backlog/buffer, 1)
			cost += c.queueWorkers * it.PricePerWorkerHour
		case KindLoadBalancer:
			cost += ProbeCostPerHour(c.healthChecks, c.checkIntervalSec, len(c.edges), it.PricePerMillionProbes)
		}
		ct.CostPerHour = cost
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
		records[i] = rec
		ctot := &compTot[i]
		ctot.rejected, ctot.errors, ctot.late, ctot.backlog = rej, errs, late, backlog
	}
}

// compTotals are one component's amounts in the last computed tick, for accumulate.
type compTotals struct {
	rejected, errors, late, backlog float64
	enqueued, drainable             float64 // queues: messages in, consumer capacity
}

// accumulate folds tick t, as recorded in tick, st.tot and st.compTot, into the run's
// totals. It reads nothing else that a tick computes but the model's state as the tick left
// it (for the diagnosis of a failing tick), so a repeated tick is folded in as computed.
func (m *model) accumulate(t int, tick *Tick, st *runState, repeated bool) {
	dt := m.dt
	lastFifth := t == m.v.ticks-1-m.v.ticks/5
	steadyTick := t >= m.v.ticks/5
	tot := &st.tot
	st.acc.lateCompletions += tot.late
	st.acc.dropped += tot.dropped
	if tot.hist {
		st.hist.add(tot.served, tot.histQ, m.timeoutSec)
	}
	// One record, total and sum per component, resliced to one length: no bounds checks.
	comps := tick.Components[:len(m.comps)]
	compTot, acc := st.compTot[:len(comps)], st.acc.comps[:len(comps)]
	for i := range comps {
		ct := &comps[i]
		ctot := &compTot[i]
		a := &acc[i]
		if steadyTick {
			// Only a queue's are ever set (recordComponents): another's stay 0, as they were.
			a.enqueued += ctot.enqueued
			a.drainable += ctot.drainable
		}
		backlog := ctot.backlog
		a.peakUtil = max(a.peakUtil, ct.Utilization)
		a.utilSum += ct.Utilization
		a.rejected += ctot.rejected
		a.errors += ctot.errors
		a.late += ctot.late
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
		r := &st.reuse
		if !repeated {
			// A repeated tick is diagnosed as the tick it repeats: the diagnosis reads the
			// state and the flows, which are the same, and its time only through failures
			// the health checks have noticed (timeInvariant).
			r.cause, r.causeOK = m.diagnose(t, st, attempts, tick.FreshRPS*dt, tick.TimedOutRPS*dt)
		}
		if r.causeOK {
			d := r.cause
			d.tick = t
			st.acc.causes.add(d)
		}
	}
	st.acc.addTick(m, t, tick, tot.attempts, tot.fresh, tot.retried, tot.served, tot.rejected, tot.failed, tot.timedOut, tot.queued)
}

var p99Only = []float64{0.99}

// ProbeCostPerHour is what a balancer's health checks cost an hour: a probe of each of its
// backends every intervalSec while they are on, at pricePerMillion dollars a million probes.
// The cost estimate before a run (package challenges) uses the same rule.
func ProbeCostPerHour(on bool, intervalSec float64, backends int, pricePerMillion float64) float64 {
	if !on || !(intervalSec > 0) {
		return 0
	}
	return float64(backends) * 3600 / intervalSec * pricePerMillion / 1e6
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
	if to := m.timeoutSec; to > 0 {
		// The histogram's bins are 1% wide: its upper edge must not lift a quantile past
		// the timeout that bounded every answer in it.
		q[0], q[1], q[2] = min(q[0], to), min(q[1], to), min(q[2], to)
	}
	s.P50Ms, s.P95Ms, s.P99Ms = q[0]*1000, q[1]*1000, q[2]*1000
	s.LateCompletions = a.lateCompletions
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
			Errors: ca.errors, PeakBacklog: ca.peakBacklog, MaxLagMs: ca.maxLag, Late: ca.late}
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
			// A lag that has not come down by 1% over the last fifth never recovers (a replica
			// at capacity holds a steady lag: its queue is served in turn with the reads).
			if ca.lagEnd > 0 && ca.lagEnd >= 0.99*ca.lagAtLastFifth {
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
