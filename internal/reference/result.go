package reference

// The game's view of a reference run: the seeds' records pooled tick by tick into a
// sim.Result, so that a level judges it with the code that judges the engine's. Every
// figure is read from the reference's own requests (reference.md, "The game's view").

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"backpressure/internal/sim"
)

// Options choose how Run reads a design.
type Options struct {
	// Seeds are the runs pooled into one result; none means DefaultSeeds.
	Seeds []uint64
	// SlowDatabase reads a latency injection into a database as the database being slow,
	// its connection held through the delay, rather than the network.
	SlowDatabase bool
}

// DefaultSeeds are the seeds of a Run that names none.
var DefaultSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}

// The game's measurements, as the engine's documentation states them (doc.go, events.go).
const (
	failingShare    = 0.05 // a tick fails when more than this share of its attempts failed
	causeShare      = 0.01 // a cause must have lost at least this share of the tick's attempts
	baselineSec     = 30   // an event's baseline: the error rate and p99 before it, this long
	recoveryHoldSec = 5    // recovered: this long within the baseline
)

// Run simulates d under cfg once per seed and pools the runs tick by tick into the result a
// level judges: rates are the seeds' mean, a tick's latency quantiles those of every answer
// any seed gave in it, and the "why" names the cause from where the attempts were lost.
func Run(ctx context.Context, d sim.Design, cfg sim.Config, opt Options) (*sim.Result, error) {
	seeds := opt.Seeds
	if len(seeds) == 0 {
		seeds = DefaultSeeds
	}
	var recs []*refRecord
	var m *refModel
	for _, seed := range seeds {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reference run: %w", err)
		}
		var err error
		if m, err = newRefModelWith(d, cfg, seed, refOptions{slowDatabase: opt.SlowDatabase}); err != nil {
			return nil, fmt.Errorf("reference run: %w", err)
		}
		recs = append(recs, m.run())
	}
	return pool(d, m.cfg, recs), nil
}

// pool turns the seeds' records into one result.
func pool(d sim.Design, cfg sim.Config, recs []*refRecord) *sim.Result {
	dt := recs[0].dt
	n := len(recs[0].offered)
	per := 1 / (dt * float64(len(recs))) // a tick's count summed over the seeds → a rate
	res := &sim.Result{TickMs: dt * 1000, Ticks: make([]sim.Tick, n)}
	for _, c := range d.Components {
		res.Components = append(res.Components, sim.ComponentInfo{ID: c.ID, Type: c.Type})
	}
	prices := componentPrices(d, cfg)
	sum := func(f func(*refRecord) []float64, k int) float64 {
		s := 0.0
		for _, r := range recs {
			s += f(r)[k]
		}
		return s
	}
	timeoutMs := cfg.Client.TimeoutMs
	stretch := calmStretches(d, cfg, n, dt)
	var all []float64
	var tot struct{ offered, fresh, retries, served, rejected, errors, timedOut, late, cost float64 }
	for k := range n {
		tk := &res.Ticks[k]
		tk.T = math.Round(float64(k+1)*dt*1e9) / 1e9
		offered, fresh, retries := sum(func(r *refRecord) []float64 { return r.offered }, k),
			sum(func(r *refRecord) []float64 { return r.fresh }, k), sum(func(r *refRecord) []float64 { return r.retries }, k)
		served, rejected := sum(func(r *refRecord) []float64 { return r.served }, k), sum(func(r *refRecord) []float64 { return r.rejected }, k)
		errs, timedOut := sum(func(r *refRecord) []float64 { return r.errors }, k), sum(func(r *refRecord) []float64 { return r.timedOut }, k)
		late := sum(func(r *refRecord) []float64 { return r.late }, k)
		tk.OfferedRPS, tk.FreshRPS, tk.RetryRPS, tk.ServedRPS = offered*per, fresh*per, retries*per, served*per
		tk.RejectedRPS, tk.ErrorRPS, tk.TimedOutRPS = rejected*per, errs*per, timedOut*per
		lost := rejected + errs + timedOut
		if done := served + lost; done > 0 {
			tk.ErrorRate = lost / done
		}
		var lat []float64
		for _, r := range recs {
			lat = append(lat, r.latency[k]...)
		}
		all = append(all, lat...)
		if len(lat) > 0 {
			s := 0.0
			for _, x := range lat {
				s += x
			}
			tk.MeanMs = s / float64(len(lat)) * 1000
			lat = quantileWindow(recs, k, maxWindowTicks(dt), stretch)
			slices.Sort(lat)
			tk.P50Ms, tk.P95Ms, tk.P99Ms = sortedQuantile(lat, 0.5)*1000, sortedQuantile(lat, 0.95)*1000, sortedQuantile(lat, 0.99)*1000
		} else if timedOut > 0 {
			// Nobody got an answer in time: they all waited the whole timeout for nothing.
			tk.P50Ms, tk.P95Ms, tk.P99Ms = timeoutMs, timeoutMs, timeoutMs
		}
		tk.Components = make([]sim.ComponentTick, len(d.Components))
		for i, c := range d.Components {
			ct := &tk.Components[i]
			for _, r := range recs {
				ct.OutputRPS += r.out[c.ID][k]
				if w := r.workers[c.ID][k]; w > 0 {
					ct.Utilization += r.busy[c.ID][k] / (w * dt)
				}
				ct.QueueFill += r.fill[c.ID][k]
				if b := r.backlog[c.ID]; b != nil {
					ct.Backlog += b[k]
				}
				ct.Workers += int(r.workers[c.ID][k])
			}
			seeds := float64(len(recs))
			ct.OutputRPS *= per
			ct.Utilization /= seeds
			ct.QueueFill /= seeds
			ct.Backlog /= seeds
			ct.Workers = int(math.Round(float64(ct.Workers) / seeds))
			ct.CostPerHour = prices[i].perHour(float64(ct.Workers), ct.OutputRPS, ct.Utilization*float64(ct.Workers))
			tk.CostPerHour += ct.CostPerHour
		}
		tot.offered, tot.fresh, tot.retries, tot.served = tot.offered+offered, tot.fresh+fresh, tot.retries+retries, tot.served+served
		tot.rejected, tot.errors, tot.timedOut, tot.late = tot.rejected+rejected, tot.errors+errs, tot.timedOut+timedOut, tot.late+late
		tot.cost += tk.CostPerHour
	}
	seeds := float64(len(recs))
	s := &res.Summary
	s.Ticks, s.DurationSec = n, float64(n)*dt
	s.Offered, s.Fresh, s.Retries, s.Served = tot.offered/seeds, tot.fresh/seeds, tot.retries/seeds, tot.served/seeds
	s.Rejected, s.Errors, s.TimedOut, s.LateCompletions = tot.rejected/seeds, tot.errors/seeds, tot.timedOut/seeds, tot.late/seeds
	if done := tot.served + tot.rejected + tot.errors + tot.timedOut; done > 0 {
		s.ErrorRate = (tot.rejected + tot.errors + tot.timedOut) / done
	}
	if len(all) > 0 {
		slices.Sort(all)
		s.P50Ms, s.P95Ms, s.P99Ms = sortedQuantile(all, 0.5)*1000, sortedQuantile(all, 0.95)*1000, sortedQuantile(all, 0.99)*1000
	}
	if n > 0 {
		s.CostPerHour = tot.cost / float64(n)
		s.TotalCost = tot.cost * dt / 3600
	}
	for k := range n {
		if t := &res.Ticks[k]; t.OfferedRPS > 0 && (t.RejectedRPS+t.ErrorRPS+t.TimedOutRPS) > failingShare*t.OfferedRPS {
			at := t.T
			s.FirstFailingSec = &at
			break
		}
	}
	s.Failures = lostData(res, recs)
	s.Why = why(res, recs)
	for _, f := range s.Failures {
		// Acknowledged writes never stored fail the run whatever its ticks say.
		id, _ := strings.CutPrefix(f, "lost_data:")
		s.Why = append(s.Why, sim.Why{StartSec: 0, EndSec: s.DurationSec, Component: id, Cause: sim.CauseLostWrites,
			Detail: fmt.Sprintf("%s's backlog never drained", id), RetryAmplification: 1})
	}
	s.Events = eventImpacts(d, cfg, res, stretch, len(recs))
	busiest := -1.0
	for i, c := range res.Components {
		peak := 0.0
		for k := range n {
			peak = math.Max(peak, res.Ticks[k].Components[i].Utilization)
		}
		s.Components = append(s.Components, sim.ComponentSummary{ID: c.ID, Type: c.Type, PeakUtilization: peak})
		if peak > busiest {
			busiest, s.Busiest = peak, c.ID
		}
	}
	return res
}

// quantileAnswers is how many answers a tick's quantiles are read from at least: the 99th
// percentile of fewer reads the noise of the tail's few largest samples as latency (of 200
// answers it is the second largest). quantileWindowSec bounds how far a tick looks for them.
const (
	quantileAnswers   = 2000
	quantileWindowSec = 1.0
)

func maxWindowTicks(dt float64) int { return int(math.Round(quantileWindowSec / dt)) }

// calmStretches numbers each tick by the stretch of the run it belongs to: a new stretch
// starts at every instant the level's traffic or chaos changes (a step, a spike's or an
// event's start and end, a ramp's ends), so that a tick's quantiles are never read from
// answers on the other side of such a change.
func calmStretches(d sim.Design, cfg sim.Config, n int, dt float64) []int {
	var at []float64
	tr := cfg.Traffic
	if tr.Kind == "ramp" {
		at = append(at, tr.StartSec, tr.EndSec)
	}
	for _, s := range tr.Steps {
		at = append(at, s.AtSec)
	}
	for _, s := range tr.Spikes {
		at = append(at, s.AtSec, s.AtSec+s.DurationSec)
	}
	for _, e := range cfg.Chaos {
		end := e.AtSec + e.DurationSec
		if e.Kind == sim.ChaosCacheFlush {
			end = e.AtSec + flushWarmup(d, e)
		}
		at = append(at, e.AtSec, end)
	}
	stretch := make([]int, n)
	for k := range n {
		for _, t := range at {
			if t > 0 && t <= float64(k)*dt+1e-9 {
				stretch[k]++
			}
		}
	}
	return stretch
}

// quantileWindow is the answers a tick's quantiles are read from: the tick's own, widened a
// tick on each side at a time within its stretch (calmStretches), over every seed, until
// they number quantileAnswers or the window reaches maxTicks on each side.
func quantileWindow(recs []*refRecord, k, maxTicks int, stretch []int) []float64 {
	n := len(recs[0].latency)
	count := func(j int) int {
		c := 0
		for _, r := range recs {
			c += len(r.latency[j])
		}
		return c
	}
	lo, hi, have := k, k, count(k)
	for have < quantileAnswers && hi-k < maxTicks && k-lo < maxTicks {
		grown := false
		if lo > 0 && stretch[lo-1] == stretch[k] {
			lo--
			have += count(lo)
			grown = true
		}
		if hi < n-1 && stretch[hi+1] == stretch[k] {
			hi++
			have += count(hi)
			grown = true
		}
		if !grown {
			break
		}
	}
	out := make([]float64, 0, have)
	for j := lo; j <= hi; j++ {
		for _, r := range recs {
			out = append(out, r.latency[j]...)
		}
	}
	return out
}

// sortedQuantile is the q-quantile of sorted xs by the nearest-rank rule.
func sortedQuantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(len(xs)-1, max(0, i))]
}

// lostData names the queues whose backlog of acknowledged writes never drains. A queue's
// messages wait even when its consumers keep up, so what counts is a backlog of more than
// a second of its consumers' work: one that grew by that much over the last 80% of the
// run, or that stands that high at the end and no lower than when the last fifth began.
func lostData(res *sim.Result, recs []*refRecord) []string {
	out := []string{}
	n := len(res.Ticks)
	if n == 0 {
		return out
	}
	dt := res.TickMs / 1000
	first := min(n-1, int(math.Floor(float64(n)*0.2)))
	fifth := min(n-1, int(math.Floor(float64(n)*0.8)))
	for i, c := range res.Components {
		if c.Type != sim.KindQueue {
			continue
		}
		stored := 0.0
		for _, r := range recs {
			for _, x := range r.stored[c.ID][first:] {
				stored += x
			}
		}
		second := math.Max(1, stored/float64(len(recs))/(float64(n-first)*dt)) // messages stored a second
		backlog := func(k int) float64 { return res.Ticks[k].Components[i].Backlog }
		end := backlog(n - 1)
		if end-backlog(first) > second || (end > second && end >= backlog(fifth)) {
			out = append(out, "lost_data:"+c.ID)
		}
	}
	return out
}

// why names each failing tick's cause: the place and reason that lost the most of its
// attempts over the seeds (at least 1% of them); ticks with the same cause at the same
// component, less than a second apart, form one stretch.
func why(res *sim.Result, recs []*refRecord) []sim.Why {
	dt := res.TickMs / 1000
	gap := max(1, int(math.Round(1/dt)))
	keys := map[refLossKey]bool{}
	for _, r := range recs {
		for key := range r.lost {
			keys[key] = true
		}
	}
	sorted := make([]refLossKey, 0, len(keys))
	for key := range keys {
		sorted = append(sorted, key)
	}
	slices.SortFunc(sorted, func(a, b refLossKey) int {
		return cmp.Or(cmp.Compare(a.comp, b.comp), cmp.Compare(a.cause, b.cause))
	})
	type stretch struct {
		key            refLossKey
		first, last    int
		offered, fresh float64
	}
	var out []stretch
	for k := range res.Ticks {
		t := &res.Ticks[k]
		if t.OfferedRPS <= 0 || t.RejectedRPS+t.ErrorRPS+t.TimedOutRPS <= failingShare*t.OfferedRPS {
			continue
		}
		best, most := refLossKey{}, 0.0
		for _, key := range sorted {
			lost := 0.0
			for _, r := range recs {
				if xs := r.lost[key]; xs != nil {
					lost += xs[k]
				}
			}
			if lost > most {
				best, most = key, lost
			}
		}
		if most/(float64(len(recs))*dt) < causeShare*t.OfferedRPS {
			continue
		}
		if l := len(out); l > 0 && out[l-1].key == best && k-out[l-1].last <= gap {
			out[l-1].last = k
			out[l-1].offered += t.OfferedRPS
			out[l-1].fresh += t.FreshRPS
			continue
		}
		out = append(out, stretch{key: best, first: k, last: k, offered: t.OfferedRPS, fresh: t.FreshRPS})
	}
	whys := []sim.Why{}
	for _, s := range out {
		amp := 1.0
		if s.fresh > 0 {
			amp = math.Max(1, math.Round(s.offered/s.fresh*100)/100)
		}
		whys = append(whys, sim.Why{StartSec: math.Round(float64(s.first)*dt*1e9) / 1e9, EndSec: res.Ticks[s.last].T,
			Component: s.key.comp, Cause: s.key.cause,
			Detail:             fmt.Sprintf("the reference lost most attempts at %s (%s)", s.key.comp, s.key.cause),
			RetryAmplification: amp})
	}
	return whys
}

// eventImpacts measures each chaos event as the engine's documentation says the game
// measures it: a baseline over the 30 s before it, the error rate while it acts, and the
// recovery from its end until 5 s of ticks stay within the baseline.
//
// A tick's error rate in the recovery check is read, as its quantiles are, from at least
// quantileAnswers finished attempts within its calm stretch: one refused attempt among a
// tick's 450 reads 0.2%, twice the recovery's margin over a baseline of none.
func eventImpacts(d sim.Design, cfg sim.Config, res *sim.Result, stretch []int, seeds int) []sim.EventImpact {
	out := []sim.EventImpact{}
	ticks := res.Ticks
	dt := res.TickMs / 1000
	failedAt := func(k int) (lost, done float64) {
		tk := &ticks[k]
		lost = (tk.RejectedRPS + tk.ErrorRPS + tk.TimedOutRPS) * dt
		return lost, lost + tk.ServedRPS*dt
	}
	tickAt := func(t float64) int { return min(len(ticks), max(0, int(math.Floor(t/dt+1e-9)))) }
	for _, e := range cfg.Chaos {
		start, end := e.AtSec, e.AtSec+e.DurationSec
		if e.Kind == sim.ChaosCacheFlush {
			end = e.AtSec + flushWarmup(d, e)
		}
		id := e.ID
		if id == "" {
			id = fmt.Sprintf("%s@%gs", e.Kind, e.AtSec)
		}
		imp := sim.EventImpact{ID: id, Kind: string(e.Kind), StartSec: start, EndSec: end}
		k0, k1 := tickAt(start), tickAt(end)
		if k1 <= k0 {
			k1 = min(len(ticks), k0+1)
		}
		b0 := tickAt(start - baselineSec)
		if b0 >= k0 {
			b0 = 0
		}
		var bl, bd, bp float64
		var bn int
		for k := b0; k < max(k0, b0+1) && k < len(ticks); k++ {
			l, dn := failedAt(k)
			bl, bd = bl+l, bd+dn
			bp += ticks[k].P99Ms
			bn++
		}
		if bd > 0 {
			imp.BaselineErrorRate = bl / bd
		}
		if bn > 0 {
			imp.BaselineP99Ms = bp / float64(bn)
		}
		var el, ed float64
		for k := k0; k < k1; k++ {
			l, dn := failedAt(k)
			el, ed = el+l, ed+dn
			imp.P99Ms = math.Max(imp.P99Ms, ticks[k].P99Ms)
			imp.PeakError = math.Max(imp.PeakError, ticks[k].ErrorRate)
		}
		if ed > 0 {
			imp.ErrorRate = el / ed
		}
		errOK := imp.BaselineErrorRate + math.Max(0.001, 0.1*imp.BaselineErrorRate)
		p99OK := imp.BaselineP99Ms*1.1 + 1
		healthy := func(k int) bool {
			return windowErrorRate(ticks, dt*float64(seeds), k, stretch) <= errOK && ticks[k].P99Ms <= p99OK
		}
		hold := max(1, int(math.Round(recoveryHoldSec/dt)))
		recovered := len(ticks)
		for k := k1; k < len(ticks); k++ {
			ok := true
			for j := k; j < min(len(ticks), k+hold); j++ {
				if !healthy(j) {
					ok, k = false, j
					break
				}
			}
			if ok {
				recovered = k
				break
			}
		}
		if recovered < len(ticks) {
			r := math.Max(0, float64(recovered)*dt-end)
			imp.RecoverySec = &r
		}
		for k := k0; k < recovered; k++ {
			l, dn := failedAt(k)
			imp.Lost += math.Max(0, l-imp.BaselineErrorRate*dn)
		}
		out = append(out, imp)
	}
	return out
}

// windowErrorRate is failed ÷ finished attempts over tick k's window: the tick, widened a
// tick on each side at a time within its stretch until quantileAnswers attempts finished in
// it over all the seeds, or it reaches quantileWindowSec on each side. perTick turns a
// tick's rates into its attempts over the seeds.
func windowErrorRate(ticks []sim.Tick, perTick float64, k int, stretch []int) float64 {
	maxTicks := maxWindowTicks(ticks[0].T)
	at := func(j int) (lost, done float64) {
		t := &ticks[j]
		lost = (t.RejectedRPS + t.ErrorRPS + t.TimedOutRPS) * perTick
		return lost, lost + t.ServedRPS*perTick
	}
	lost, done := at(k)
	lo, hi := k, k
	for done < quantileAnswers && hi-k < maxTicks && k-lo < maxTicks {
		grown := false
		if lo > 0 && stretch[lo-1] == stretch[k] {
			lo--
			l, d := at(lo)
			lost, done, grown = lost+l, done+d, true
		}
		if hi < len(ticks)-1 && stretch[hi+1] == stretch[k] {
			hi++
			l, d := at(hi)
			lost, done, grown = lost+l, done+d, true
		}
		if !grown {
			break
		}
	}
	if done <= 0 {
		return 0
	}
	return lost / done
}

// flushWarmup is how long a flushed cache or CDN takes to fill again.
func flushWarmup(d sim.Design, e sim.ChaosEvent) float64 {
	if e.Params.WarmupSec != nil {
		return *e.Params.WarmupSec
	}
	for _, c := range d.Components {
		if c.ID == e.Target {
			if c.Type == sim.KindCDN {
				return refParams{c}.f("ttl_sec")
			}
			return refParams{c}.f("warmup_sec")
		}
	}
	return 0
}

// price is what a component costs, from the catalog's prices.
type price struct {
	hourly     float64 // per unit an hour
	fixed      float64 // an hour, whatever the load: units not counted as workers, probes, consumers
	perMillion float64 // per million requests handled
	gbSecond   float64 // a function's price per GB-second, times its memory
	perWorker  float64 // units per worker (app replicas and pools are priced by replica)
}

// perHour prices one tick: its workers' units, its fixed part, what it handled, and a
// function's execution time.
func (p price) perHour(workers, handledRPS, busy float64) float64 {
	cost := p.fixed + handledRPS*3600/1e6*p.perMillion
	if p.perWorker > 0 {
		cost += workers * p.perWorker * p.hourly
	}
	return cost + busy*3600*p.gbSecond
}

func componentPrices(d sim.Design, cfg sim.Config) []price {
	cat := cfg.Catalog
	if len(cat) == 0 {
		cat = sim.DefaultCatalog()
	}
	backends := map[string]int{}
	for _, e := range d.Edges {
		backends[e.From]++
	}
	out := make([]price, len(d.Components))
	for i, c := range d.Components {
		p := refParams{c}
		it := refInstanceType(cat, c, p)
		pr := price{hourly: it.PricePerHour, perMillion: it.PricePerMillion}
		switch c.Type {
		case sim.KindLoadBalancer:
			pr.fixed = p.f("instances")*it.PricePerHour +
				sim.ProbeCostPerHour(p.b("health_checks"), p.f("health_check_interval_sec"), backends[c.ID], it.PricePerMillionProbes)
		case sim.KindAPIGateway:
			pr.fixed = p.f("instances") * it.PricePerHour
		case sim.KindAppService, sim.KindContainerPool:
			pr.perWorker = 1 / p.f("concurrency") // replicas = workers ÷ concurrency
		case sim.KindCache:
			mem := p.f("memory_gb")
			units := 1.0
			if mem > 0 && it.MemoryGB > 0 {
				units = math.Ceil(mem/it.MemoryGB - 1e-9)
			}
			pr.fixed = units * it.PricePerHour
		case sim.KindDatabase:
			rit := it
			if name := p.s("replica_instance_type"); name != "" {
				rit = cat[name]
			}
			pr.fixed = it.PricePerHour + float64(p.i("read_replicas"))*rit.PricePerHour
		case sim.KindQueue:
			pr.fixed = it.PricePerHour + p.f("workers")*it.PricePerWorkerHour
		case sim.KindServerless:
			pr.gbSecond = p.f("memory_mb") / 1024 * it.PricePerGBSecond
		default:
			pr.fixed = it.PricePerHour
		}
		out[i] = pr
	}
	return out
}
