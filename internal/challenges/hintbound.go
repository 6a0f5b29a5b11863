package challenges

import (
	"container/heap"
	"errors"
	"math"
	"sync"

	"backpressure/internal/sim"
)

// Ending a candidate's run early. A candidate matters to the search only if it passes with
// headroom (and is the cheapest of its batch) or, when nothing passes, if it comes closer
// than every candidate before it (violation). Both are read off the evaluation window, and
// some of what the window will say is certain before the run ends: the mean error rate
// and cost cannot fall below what the ticks so far already add up to (the rates are never
// negative and the rest of the window adds to the same sums), the p99 of the per-tick p99s
// cannot fall below the r-th largest seen so far when r is how many of the window's values
// lie at or above it, and a component's peak utilisation cannot fall below the highest so
// far in calm ticks. violationBound sums these floors exactly as violation sums the final
// values (the same terms, in the same order, with IEEE rounding monotone in each operand),
// so the floor it returns is never above the violation of the finished run. A run whose
// floor already reaches a violation the search has (or that cannot pass while another of
// its batch has passed) can end: its full evaluation would change nothing the hint reports.
type violationBound struct {
	l       *Level
	k0, n   int     // the window's first tick and its length
	dt      float64 // seconds per tick
	r       int     // how many window values lie at or above the nearest-rank p99
	errSum  float64
	costSum float64
	top     floatHeap // the r largest per-tick p99s so far
	peak    []float64 // highest utilisation in certainly calm ticks, per component
	calmSum []float64 // sum of utilisation capped at 1 in certainly calm ticks (queues)
	events  []eventWindow
	usage   float64 // the worst error rate ÷ ceiling of the events over so far
	broken  bool    // a value the floors cannot vouch for (negative or NaN): no floor
}

// eventWindow is the ticks [k0, k1) over which the engine measures a chaos event's error
// rate (sim's eventImpacts), for the events whose window the level fixes: all but cache
// flushes, whose window is the flushed component's warm-up.
type eventWindow struct{ k0, k1 int }

func newViolationBound(l *Level, res *sim.Result) *violationBound {
	ticks, dt := len(res.Ticks), res.TickMs/1000
	k0 := int(math.Floor(float64(ticks) * WarmupShare))
	n := ticks - k0
	k := int(math.Ceil(0.99*float64(n))) - 1
	k = min(max(k, 0), max(n-1, 0))
	b := &violationBound{l: l, k0: k0, n: n, dt: dt, r: n - k}
	tickAt := func(t float64) int { // as eventImpacts: the first tick whose interval ends after t
		return min(ticks, max(0, int(math.Floor(t/dt+1e-9))))
	}
	if l.Resilience != nil && l.Resilience.ErrorCeiling > 0 {
		for _, e := range l.c.cfg.Chaos {
			if e.Kind == sim.ChaosCacheFlush {
				continue
			}
			w := eventWindow{tickAt(e.AtSec), tickAt(e.AtSec + e.DurationSec)}
			if w.k1 <= w.k0 {
				w.k1 = min(ticks, w.k0+1)
			}
			b.events = append(b.events, w)
		}
	}
	return b
}

// eventUsage is the share of the error ceiling an event's error rate uses, once its window
// is over: its failed ÷ finished attempts over the window, as the engine measures it,
// taken a hair low (one part in 10⁹) so that it never exceeds the engine's value.
func (b *violationBound) eventUsage(res *sim.Result, w eventWindow) float64 {
	dt := b.dt
	var el, ed float64
	for k := w.k0; k < w.k1; k++ {
		tk := &res.Ticks[k]
		lost := (tk.RejectedRPS + tk.ErrorRPS + tk.TimedOutRPS) * dt
		el, ed = el+lost, ed+lost+tk.ServedRPS*dt
	}
	if !(ed > 0) || !(el >= 0) {
		return 0
	}
	return clean(el/ed) * (1 - 1e-9) / b.l.Resilience.ErrorCeiling
}

// certainlyCalm reports whether a tick ending at t is calm (judge) whatever the run does:
// before every event starts or after every event and its allowance are over. A cache
// flush's end depends on the warm-up of what it flushes, so a tick after one is never
// taken as certainly calm.
func (b *violationBound) certainlyCalm(t float64) bool {
	allowance := 0.0
	if b.l.Resilience != nil {
		allowance = b.l.Resilience.RecoveryDeadlineSec
	}
	for _, e := range b.l.c.cfg.Chaos {
		if t <= e.AtSec {
			continue
		}
		if e.Kind == sim.ChaosCacheFlush || t-b.dt < e.AtSec+e.DurationSec+allowance {
			return false
		}
	}
	return true
}

// add takes in tick t of res and returns the floor of the finished run's violation so far.
func (b *violationBound) add(res *sim.Result, t int) float64 {
	if t < b.k0 || b.broken || b.n <= 0 {
		return 0
	}
	tk := &res.Ticks[t]
	if !(tk.ErrorRate >= 0) || !(tk.CostPerHour >= 0) || math.IsNaN(tk.P99Ms) {
		b.broken = true
		return 0
	}
	if b.peak == nil {
		b.peak = make([]float64, len(res.Components))
		b.calmSum = make([]float64, len(res.Components))
	}
	b.errSum += tk.ErrorRate
	b.costSum += tk.CostPerHour
	if len(b.top) < b.r {
		heap.Push(&b.top, tk.P99Ms)
	} else if tk.P99Ms > b.top[0] {
		b.top[0] = tk.P99Ms
		heap.Fix(&b.top, 0)
	}
	for _, w := range b.events {
		if t == w.k1-1 {
			b.usage = math.Max(b.usage, b.eventUsage(res, w))
		}
	}
	if b.certainlyCalm(tk.T) {
		for i := range res.Components {
			u := tk.Components[i].Utilization
			if !(u >= 0) {
				b.broken = true
				return 0
			}
			b.peak[i] = math.Max(b.peak[i], u)
			b.calmSum[i] += math.Min(u, 1)
		}
	}
	return b.floor(res)
}

// floor is violation over the floors: each condition that has certainly failed adds its
// floor's excess, each component certainly over the headroom its floor's excess.
func (b *violationBound) floor(res *sim.Result) float64 {
	n := float64(max(1, b.n))
	p99 := 0.0
	if len(b.top) == b.r {
		p99 = b.top[0]
	}
	v := 0.0
	term := func(measured, target float64) {
		measured = clean(measured)
		if target > 0 && measured > target {
			v += math.Max(0, measured/target-1) + 0.01
		}
	}
	term(p99, b.l.SLA.P99LatencyMs)
	term(b.errSum/n, b.l.SLA.ErrorRate)
	term(b.costSum/n, b.l.BudgetPerHour)
	if b.usage > 1 { // an event over its error ceiling fails resilience, whose target is 1
		term(b.usage, 1)
	}
	for i, c := range res.Components {
		peak := b.peak[i]
		if c.Type == sim.KindQueue {
			peak = b.calmSum[i] / n // the mean over calm ticks, of which there are at most n
		}
		peak = math.Min(clean(peak), maxReportedUtilization)
		if peak > HeadroomUtilization {
			v += peak/HeadroomUtilization - 1
		}
	}
	return v
}

// floatHeap is a min-heap of float64.
type floatHeap []float64

func (h floatHeap) Len() int           { return len(h) }
func (h floatHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h floatHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *floatHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *floatHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// errStopped marks a candidate whose run ended early: it neither passes with headroom nor
// comes closest.
var errStopped = errors.New("hint: candidate run ended once it could no longer matter")

// batch is what a batch's finished runs say, for the floors of the runs still going.
type batch struct {
	mu      sync.Mutex
	closest float64 // the least violation of the finished runs before the batch
	passed  bool    // a candidate of the batch passed with headroom
	results []batchResult
}

type batchResult struct {
	done      bool
	violation float64 // of a finished run that did not pass with headroom; +Inf otherwise
}

// done records candidate i's run: its evaluation, or that it was ended early.
func (b *batch) done(i int, ev *Evaluation, stopped bool) {
	r := batchResult{done: true, violation: math.Inf(1)}
	pass := false
	if ev != nil && !stopped {
		if pass = withHeadroom(ev); !pass {
			r.violation = violation(ev)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.results[i] = r
	b.passed = b.passed || pass
}

// threshold is the violation at or above which candidate i can no longer matter: 0 (any
// certain failure) once a candidate of its batch has passed with headroom, for then the
// batch's choice is among those that pass; else the least violation of the finished runs
// before it (in earlier batches, or earlier in its own), which it has to beat strictly to
// be the closest.
func (b *batch) threshold(i int) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.passed {
		return 0
	}
	thr := b.closest
	for j := range i {
		if r := b.results[j]; r.done {
			thr = math.Min(thr, r.violation)
		}
	}
	return thr
}
