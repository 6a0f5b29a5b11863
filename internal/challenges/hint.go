package challenges

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"backpressure/internal/sim"
)

// Hint is the fix for a failing design: the smallest single change that the same model says
// passes with headroom, and both runs. When no single change does, Change is nil and Binding
// names what stands in the way.
type Hint struct {
	Level string `json:"level"`
	Found bool   `json:"found"`
	// Message says in one sentence what was found.
	Message string  `json:"message"`
	Change  *Change `json:"change"`
	// Binding is the constraint that defeats the closest candidate when nothing passes.
	Binding *Binding `json:"binding_constraint"`
	// Tried counts the candidate designs simulated.
	Tried int `json:"candidates_tried"`
	// Cost is the path-ticks (sim.Cost) of every run the hint made; CostBound says the
	// search stopped at its cost bound (HintLimits.MaxCost) with candidates left.
	Cost      int64 `json:"-"`
	CostBound bool  `json:"-"`
	// Ticks counts the ticks the hint's runs simulated (a candidate's run that ended early,
	// once it could no longer matter, counts the ticks it ran) and Computed those of them
	// computed rather than repeated (sim's tick reuse). Neither is part of what it reports.
	Ticks    int64 `json:"-"`
	Computed int64 `json:"-"`
	// Resumed counts the candidates' runs set aside when they certainly failed and taken
	// up again because nothing passed (each after a call to HintLimits.Yield).
	Resumed int         `json:"-"`
	Before  *Evaluation `json:"before"`
	After   *Evaluation `json:"after"`

	// closest is the candidate that came closest when nothing passes (nil if none came
	// closer than the design as it is): the direction the hint points in.
	closest *candidate
	// yield is HintLimits.Yield; yieldsWithin counts its calls within runs (runYield).
	yield        func(ctx context.Context)
	yieldsWithin int64
}

// Change kinds.
const (
	ChangeParam = "set_param"
	ChangeAdd   = "add_component"
)

// Change is one change to a design, in words and as a JSON Patch against it.
type Change struct {
	Kind        string          `json:"kind"`
	Component   string          `json:"component"`
	Param       string          `json:"param,omitempty"`
	From        json.RawMessage `json:"from,omitempty"`
	To          json.RawMessage `json:"to,omitempty"`
	Description string          `json:"description"`
	Patch       []PatchOp       `json:"patch"`
}

// Binding is the check that fails for the design closest to passing.
type Binding struct {
	// Check is a condition name, "headroom" or a structural failure.
	Check     string  `json:"check"`
	Component string  `json:"component,omitempty"`
	Measured  float64 `json:"measured"`
	Target    float64 `json:"target"`
	Detail    string  `json:"detail"`
}

// MaxHintRuns bounds the simulations one hint may run. The bound is a count, not a time,
// so that the answer is the same on every machine.
const MaxHintRuns = 400

// Hint finds the smallest single change that makes the design pass with headroom: every
// condition holds and no component's peak utilisation outside chaos exceeds 85%.
//
// Candidates are one knob of one component set to another value, or one component added
// from the catalog, wired in the one way that makes sense for its kind (a cache beside
// every app that reads a database, a CDN or balancer or gateway in front of the entry, a
// queue between an app and its database, another service behind a balancer). They are
// ordered by size: parameter changes before additions; then magnitude (|Δ| for counts,
// octaves for sizes, tenths for shares, 1 for a switch, an enum or an instance type);
// within a magnitude the cheapest passing run wins, then design order, parameter order
// and value. Each magnitude is simulated as a batch, in parallel; the search stops at the
// first batch with a passing candidate, so the result does not depend on scheduling.
//
// A candidate's run ends as soon as it cannot change the answer: once it has certainly
// failed (a floor of its violation, computed from the ticks so far, is above 0: hintbound.go)
// while another of its batch has passed, or once that floor reaches the closest violation
// before it. A run that has certainly failed while nothing has passed yet is set aside where
// it stands (hintrun.go): ended unfinished if a later batch passes, taken up again in the
// search's order if none does, so that the closest is the one full runs would name. What
// the hint reports, its candidate count, cost and bound included, is the same as if every
// run went to the end; only the ticks computed are fewer.
func (l *Level) Hint(ctx context.Context, d sim.Design) (*Hint, error) {
	return l.HintWithin(ctx, d, HintLimits{})
}

// HintLimits bound one hint's search. Zero values take the defaults.
type HintLimits struct {
	// MaxCost bounds the path-ticks (sim.Cost) of all the hint's runs together; default
	// and ceiling MaxHintCost. The search stops before a batch that would exceed it, so the
	// answer depends on the bound, never on the machine.
	MaxCost int64
	// Parallelism is how many candidate runs go at once; default GOMAXPROCS. A server
	// sharing its CPUs with other players' submissions runs hints one run at a time.
	Parallelism int
	// Yield, if set, is called before each of the hint's runs and within each after every
	// yieldWork path-ticks of it (one call at a time), and may block, so that a server can
	// give other work priority within about a millisecond of one core. It changes when the
	// runs happen, never what they find.
	Yield func(ctx context.Context)
	// asideBytes bounds the results of the runs set aside together (hintrun.go): 0 takes
	// maxSetAside, a negative value sets none aside.
	asideBytes int64
}

// HintWithin is Hint within limits.
func (l *Level) HintWithin(ctx context.Context, d sim.Design, lim HintLimits) (*Hint, error) {
	if lim.MaxCost <= 0 || lim.MaxCost > MaxHintCost {
		lim.MaxCost = MaxHintCost
	}
	if lim.Parallelism <= 0 {
		lim.Parallelism = runtime.GOMAXPROCS(0)
	}
	if lim.Yield == nil {
		lim.Yield = func(context.Context) {}
	}
	// The search and its runs, which may go at once, all yield: one call at a time.
	var yieldMu sync.Mutex
	yield := lim.Yield
	lim.Yield = func(ctx context.Context) {
		yieldMu.Lock()
		defer yieldMu.Unlock()
		yield(ctx)
	}
	lim.Yield(ctx)
	h := &Hint{Level: l.Slug, yield: lim.Yield}
	mem := &scratches{}
	before, err := h.evaluate(ctx, l, d, mem)
	if err != nil {
		return nil, err
	}
	h.Before = before
	if before.Passed {
		h.Message = "The design already passes; there is nothing to fix."
		return h, nil
	}
	cands := l.candidates(d, before)
	prepErr := make([]error, len(cands))
	runs := make([]*candRun, len(cands))
	aside := &setAside{limit: lim.asideBytes}
	if aside.limit == 0 {
		aside.limit = maxSetAside
	}
	defer endRuns(runs) // none is left waiting, whatever the way out
	// known is the closest violation of the runs finished so far: a bound the closest
	// has to beat, not the closest itself while runs are set aside (hintrun.go).
	known := violation(before)
	for start := 0; start < len(cands) && h.Tried < MaxHintRuns; {
		end := start + 1
		for end < len(cands) && cands[end].class == cands[start].class && cands[end].magnitude == cands[start].magnitude {
			end++
		}
		end = min(end, start+MaxHintRuns-h.Tried)
		// The re-run of a found change is paid for before the batch that finds it.
		reserve := h.Cost / max(int64(h.Tried)+1, 1)
		batchCost := int64(0)
		prepared := make([]*sim.Prepared, 0, end-start)
		for i := start; i < end; i++ {
			p, err := l.prepare(cands[i].design)
			c := int64(0) // refused before it runs: costs nothing
			if err == nil {
				c = l.costOf(p)
			}
			if h.Cost+batchCost+c+reserve > lim.MaxCost {
				end = i
				h.CostBound = true
				break
			}
			prepErr[i] = err
			prepared = append(prepared, p)
			batchCost += c
		}
		if end == start {
			break
		}
		// A run's cost is charged in full, even when it ends early: what the search
		// tries, and so where its bound stops it, never depends on how its runs end.
		h.Cost += batchCost
		b := &batch{results: make([]batchResult, len(prepared)), closest: known}
		parallel(ctx, lim.Parallelism, len(prepared), lim.Yield, func(i int) {
			if prepared[i] == nil {
				return
			}
			r := &candRun{p: prepared[i]}
			runs[start+i] = r
			r.start(ctx, l, aside, mem, h.runYield(ctx, l, prepared[i]), func(floor float64) bool { return floor >= b.threshold(i) })
			if !r.aside {
				b.done(i, r.ev, r.err != nil)
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h.Tried += end - start
		best := -1
		for i := start; i < end; i++ {
			r := runs[i]
			if prepErr[i] != nil || r == nil || r.aside || r.err != nil {
				// A candidate the rules forbid (it should not have been generated), one
				// ended early because it could no longer matter, or one set aside.
				continue
			}
			if withHeadroom(r.ev) {
				if best < 0 || cost(r.ev) < cost(runs[best].ev) {
					best = i
				}
				continue
			}
			known = math.Min(known, violation(r.ev))
		}
		if best >= 0 {
			endRuns(runs)
			h.count(runs)
			ch := cands[best].change
			// Print-then-apply: the patch is applied to the player's design and re-run, so
			// what the player sees is exactly what the patch does.
			patched, err := ApplyPatch(d, ch.Patch)
			if err != nil {
				return nil, fmt.Errorf("hint: applying its own patch: %w", err)
			}
			lim.Yield(ctx)
			after, err := h.evaluate(ctx, l, patched, mem)
			if err != nil {
				return nil, fmt.Errorf("hint: re-running the patched design: %w", err)
			}
			h.Found, h.Change, h.After = true, &ch, after
			h.Message = fmt.Sprintf("Change %s: the design then passes with every component at or below %.0f%% utilisation.",
				ch.Description, HeadroomUtilization*100)
			if after.Score != nil {
				h.Message += fmt.Sprintf(" Score %d.", *after.Score)
			}
			return h, nil
		}
		start = end
	}
	// Nothing passes: the closest is wanted, the first in the search's order with the least
	// violation. The runs set aside are taken up again, those that failed last first (the
	// likeliest to come close), each ending once it can no longer be the closest: its floor
	// reaches the violation of a candidate before it, or passes that of one after it.
	var waiting []int
	vs := make([]float64, h.Tried) // violations of the finished runs; +Inf for the rest
	for i, r := range runs[:h.Tried] {
		vs[i] = math.Inf(1)
		switch {
		case r == nil:
		case r.aside:
			waiting = append(waiting, i)
		case r.err == nil:
			vs[i] = violation(r.ev)
		}
	}
	sort.SliceStable(waiting, func(a, b int) bool { return runs[waiting[a]].heldAt > runs[waiting[b]].heldAt })
	for _, i := range waiting {
		if lim.Yield(ctx); ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h.Resumed++
		lo, hi := violation(before), math.Inf(1) // the least violation before i, and after it
		for j, v := range vs {
			if j < i {
				lo = math.Min(lo, v)
			} else if j > i {
				hi = math.Min(hi, v)
			}
		}
		r := runs[i]
		r.resume(func(floor float64) bool { return floor >= lo || floor > hi })
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.err == nil {
			vs[i] = violation(r.ev)
		}
	}
	closest, closestViolation, closestChange := before, violation(before), ""
	for i, v := range vs {
		if v < closestViolation {
			closest, closestViolation, closestChange = runs[i].ev, v, cands[i].change.Description
			h.closest = &cands[i]
		}
	}
	h.count(runs)
	h.Binding = binding(closest, l)
	defer func() {
		if h.CostBound {
			h.Message += fmt.Sprintf(" The search stopped at its bound of %d path-ticks of simulation with candidates left.", lim.MaxCost)
		}
	}()
	if closestChange != "" {
		h.Message = fmt.Sprintf("No single change passes with headroom (%d tried). The closest, %s, still fails on the binding constraint: %s.",
			h.Tried, closestChange, h.Binding.Detail)
	} else {
		h.Message = fmt.Sprintf("No single change passes with headroom (%d tried), and none comes closer than the design as it is. The binding constraint: %s.",
			h.Tried, h.Binding.Detail)
	}
	return h, nil
}

// count adds the candidates' runs to the hint's ticks.
func (h *Hint) count(runs []*candRun) {
	for _, r := range runs {
		if r != nil {
			h.Ticks += int64(r.ticks)
			h.Computed += int64(r.ticks - r.reused)
		}
	}
}

// endRuns ends the runs still set aside.
func endRuns(runs []*candRun) {
	for _, r := range runs {
		if r != nil {
			r.end()
		}
	}
}

// evaluate is Level.evaluate for the hint, in memory lent by the search: the run's cost and
// ticks are the hint's.
func (h *Hint) evaluate(ctx context.Context, l *Level, d sim.Design, mem *scratches) (*Evaluation, error) {
	p, err := l.prepare(d)
	if err != nil {
		return nil, err
	}
	sc := mem.get()
	defer mem.put(sc)
	y := h.runYield(ctx, l, p)
	ev, err := l.runWith(ctx, p, sim.RunOptions{Scratch: sc, Stop: func(*sim.Result, int) bool { y.tick(); return false }})
	if err != nil {
		return nil, err
	}
	l.annotate(d, p, ev)
	h.Cost += l.costOf(p)
	h.Ticks += int64(len(ev.Result.Ticks))
	h.Computed += int64(len(ev.Result.Ticks) - p.Reused())
	return ev, nil
}

// yieldWork is how much work (path-ticks) a hint's run does between calls to
// HintLimits.Yield: about a millisecond of one core, as often as the engine looks at its
// context, so that a hint gives way however heavy its runs' ticks are.
const yieldWork = 4096

// runYield calls a hint's Yield after every yieldWork path-ticks of one of its runs.
type runYield struct {
	ctx     context.Context
	h       *Hint
	perTick int64
	work    int64
}

func (h *Hint) runYield(ctx context.Context, l *Level, p *sim.Prepared) *runYield {
	return &runYield{ctx: ctx, h: h, perTick: int64(p.Paths()) + l.tickOverhead()}
}

// tick counts one tick of the run, yielding once yieldWork path-ticks have gone by.
func (y *runYield) tick() {
	if y.work += y.perTick; y.work >= yieldWork {
		y.work = 0
		atomic.AddInt64(&y.h.yieldsWithin, 1)
		y.h.yield(y.ctx)
	}
}

// withHeadroom: passes, and every component's peak utilisation outside chaos is ≤ 85%.
func withHeadroom(ev *Evaluation) bool {
	if ev == nil || !ev.Passed {
		return false
	}
	for _, c := range ev.Components {
		if c.PeakUtilization > HeadroomUtilization {
			return false
		}
	}
	return true
}

func cost(ev *Evaluation) float64 {
	c, _ := ev.Condition(CondCost)
	return c.Measured
}

// violation is how far an evaluation is from passing with headroom: the sum of each failed
// check's relative excess.
func violation(ev *Evaluation) float64 {
	v := 0.0
	for _, c := range ev.Conditions {
		if !c.Passed {
			v += math.Max(0, c.Measured/c.Target-1) + 0.01
		}
	}
	v += float64(len(ev.Failures))
	for _, c := range ev.Components {
		if c.PeakUtilization > HeadroomUtilization {
			v += c.PeakUtilization/HeadroomUtilization - 1
		}
	}
	return v
}

// binding names the largest single violation of an evaluation.
func binding(ev *Evaluation, l *Level) *Binding {
	var best *Binding
	worst := -1.0
	consider := func(b *Binding, excess float64) {
		if excess > worst {
			best, worst = b, excess
		}
	}
	for _, f := range ev.Failures {
		kind, comp, _ := strings.Cut(f, ":")
		consider(&Binding{Check: kind, Component: comp, Measured: 1, Target: 0,
			Detail: fmt.Sprintf("%s at %s (%s)", strings.ReplaceAll(kind, "_", " "), comp, failureWords(kind))}, math.Inf(1))
	}
	for _, c := range ev.Conditions {
		if c.Passed {
			continue
		}
		b := &Binding{Check: c.Name, Measured: c.Measured, Target: c.Target}
		switch c.Name {
		case CondLatency:
			b.Detail = fmt.Sprintf("latency: p99 %.0f ms against a target of %.0f ms", c.Measured, c.Target)
			if c.Unmeasured {
				b.Detail = "latency: no request was answered"
			}
		case CondErrors:
			b.Detail = fmt.Sprintf("errors: %.2f%% against a target of %.2f%%", c.Measured*100, c.Target*100)
		case CondCost:
			b.Detail = fmt.Sprintf("cost: $%.3f/h against a budget of $%.3f/h", c.Measured, c.Target)
		case CondResilience:
			b.Detail = "resilience: " + worstEvent(ev)
		}
		consider(b, c.Measured/c.Target-1+1e-9)
	}
	for _, c := range ev.Components {
		if c.PeakUtilization > HeadroomUtilization {
			consider(&Binding{Check: "headroom", Component: c.ID, Measured: c.PeakUtilization, Target: HeadroomUtilization,
				Detail: fmt.Sprintf("headroom: %s peaks at %.0f%% utilisation (at most %.0f%% wanted)", c.ID,
					c.PeakUtilization*100, HeadroomUtilization*100)}, c.PeakUtilization/HeadroomUtilization-1)
		}
	}
	if best == nil {
		best = &Binding{Check: "none", Detail: "unknown"}
	}
	return best
}

func failureWords(kind string) string {
	switch kind {
	case "lost_data":
		return "writes were acknowledged but never stored"
	case "replication_lag":
		return "a replica falls behind for good"
	case "split_brain":
		return "two sides accepted conflicting writes"
	case "undrained":
		return "acknowledged writes were still queued when the run ended"
	}
	return "a structural failure"
}

func worstEvent(ev *Evaluation) string {
	var w *EventCheck
	for i := range ev.Events {
		if w == nil || ev.Events[i].Usage > w.Usage {
			w = &ev.Events[i]
		}
	}
	if w == nil {
		return "no events"
	}
	rec := "never recovered"
	if w.RecoverySec != nil {
		rec = fmt.Sprintf("recovered in %.1f s (deadline %.0f s)", *w.RecoverySec, w.RecoveryDeadlineSec)
	}
	return fmt.Sprintf("%s: %.1f%% errors during the event (ceiling %.1f%%), %s", w.ID, w.ErrorRate*100, w.ErrorCeiling*100, rec)
}

// parallel runs f(0..n-1) on up to width goroutines, calling yield before handing out
// each.
func parallel(ctx context.Context, width, n int, yield func(context.Context), f func(i int)) {
	workers := min(n, width)
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		if yield(ctx); ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
}

// candidate is one single change to the player's design.
type candidate struct {
	class     int     // 0: set a parameter; 1: add a component
	magnitude float64 // see Hint
	change    Change
	design    sim.Design
}

// Count knobs move in whole units; the hint tries up to maxCountStep more or fewer.
var countKnobs = map[string]bool{
	"instances": true, "replicas": true, "min_replicas": true, "max_replicas": true,
	"read_replicas": true, "workers": true,
}

// Share knobs lie in [0, 1] and move in tenths.
var shareKnobs = map[string]bool{
	"target_utilization": true, "breaker_error_threshold": true, "breaker_probe_ratio": true,
}

const maxCountStep = 8

// Size knobs move in octaves (×2, ÷2, ×4, ...), up to maxOctaves.
const maxOctaves = 6

// candidates lists every single change worth simulating, sorted by size.
func (l *Level) candidates(d sim.Design, before *Evaluation) []candidate {
	c := l.c
	failing := map[string]bool{}
	for _, name := range before.Failing() {
		failing[name] = true
	}
	onlyCost := len(failing) == 1 && failing[CondCost]
	needMore := !onlyCost // more capacity can only help what is not the budget
	needLess := failing[CondCost]

	patcher := newCandidatePatcher(d)
	var out []candidate
	add := func(cd candidate) {
		patched, err := patcher.apply(cd.change.Patch)
		if err != nil {
			return
		}
		cd.design = patched
		out = append(out, cd)
	}
	for i, comp := range d.Components {
		ki := c.kinds[comp.Type]
		if ki == nil {
			continue
		}
		for _, spec := range sim.Params(comp.Type) {
			if !ki.isKnob(spec.Name) {
				continue
			}
			cur := currentValue(comp, spec)
			set := func(v any, magnitude float64) {
				if sameValue(v, cur) {
					return
				}
				add(candidate{class: 0, magnitude: magnitude, change: setParam(i, comp, spec.Name, cur, v)})
			}
			switch {
			case spec.Name == "instance_type":
				curType := cur.(string)
				if curType == "" {
					curType = defaultType(c.cfg.Catalog, comp.Type)
				}
				for _, t := range ki.instanceTypes {
					if t != curType {
						add(candidate{class: 0, magnitude: 1, change: setParam(i, comp, spec.Name, curType, t)})
					}
				}
			case spec.Name == "read_from" && currentValue(comp, ki.specs["read_replicas"]) == 0.0:
				// Reads cannot go to replicas the database does not have.
			case (spec.Name == "health_check_interval_sec" || spec.Name == "unhealthy_threshold") &&
				(currentValue(comp, ki.specs["health_checks"]) != true || !l.backendsFail()):
				// Tuning checks that are off, or that never see a backend go down, changes nothing.
			case spec.Type == "boolean":
				set(!cur.(bool), 1)
			case spec.Type == "enum":
				for _, v := range spec.Enum {
					set(v, 1)
				}
			case spec.Type == "number" || spec.Type == "integer":
				r := ki.ranges[spec.Name]
				x := cur.(float64)
				for _, nv := range numericSteps(spec, x, r, l, needMore, needLess) {
					set(nv.value, nv.magnitude)
				}
			}
		}
	}
	out = append(out, l.additions(d, patcher)...)
	// Identical designs (a step clipped onto another) are simulated once.
	seen := map[string]bool{}
	uniq := out[:0]
	for _, cd := range out {
		key := string(mustJSON(cd.design))
		if !seen[key] {
			seen[key] = true
			uniq = append(uniq, cd)
		}
	}
	out = uniq
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].class != out[b].class {
			return out[a].class < out[b].class
		}
		return out[a].magnitude < out[b].magnitude
	})
	return out
}

// backendsFail reports whether the level's chaos takes a component down or cuts a link:
// only then do a balancer's health checks have anything to notice.
func (l *Level) backendsFail() bool {
	for _, e := range l.Run.Chaos {
		if e.Kind == sim.ChaosNodeFailure || e.Kind == sim.ChaosNetworkPartition {
			return true
		}
	}
	return false
}

type step struct {
	value     float64
	magnitude float64
}

// numericSteps proposes new values for a numeric knob.
func numericSteps(spec sim.ParamSpec, x float64, r [2]float64, l *Level, more, less bool) []step {
	var out []step
	in := func(v float64) bool { return v >= r[0] && v <= r[1] && v != x }
	switch {
	case countKnobs[spec.Name]:
		// More capacity (or more of the autoscaler's floor and ceiling) for the SLA, less
		// for the budget.
		for k := 1; k <= maxCountStep; k++ {
			if more && in(x+float64(k)) {
				out = append(out, step{x + float64(k), float64(k)})
			}
			if less && in(x-float64(k)) {
				out = append(out, step{x - float64(k), float64(k)})
			}
		}
	case shareKnobs[spec.Name]:
		for k := 1; k <= 5; k++ {
			for _, v := range []float64{x + 0.1*float64(k), x - 0.1*float64(k)} {
				v = math.Round(v*100) / 100
				if in(v) {
					out = append(out, step{v, float64(k)})
				}
			}
		}
	case x == 0 && spec.Name == "rate_limit_rps":
		// No limit yet: propose limits around the level's base traffic.
		base := l.Run.Traffic.RPS
		for _, f := range []float64{0.5, 0.75, 1, 1.25, 1.5, 2} {
			if v := math.Round(base * f); in(v) {
				out = append(out, step{v, 1})
			}
		}
	case x > 0:
		for k := 1; k <= maxOctaves; k++ {
			f := math.Pow(2, float64(k))
			for _, v := range []float64{x * f, x / f} {
				if spec.Type == "integer" {
					v = math.Round(v)
				}
				if in(v) {
					out = append(out, step{v, float64(k)})
				}
			}
		}
	}
	return out
}

// additions proposes one component added from the catalog, wired in by its kind's role.
func (l *Level) additions(d sim.Design, patcher *candidatePatcher) []candidate {
	c := l.c
	count := map[sim.Kind]int{}
	byID := map[string]sim.Component{}
	for _, comp := range d.Components {
		count[comp.Type]++
		byID[comp.ID] = comp
	}
	incoming := map[string]int{}
	callees := map[string][]string{}
	for _, e := range d.Edges {
		incoming[e.To]++
		callees[e.From] = append(callees[e.From], e.To)
	}
	var ingress []string
	for _, comp := range d.Components {
		if incoming[comp.ID] == 0 && comp.Type != sim.KindCache && comp.Type != sim.KindDatabase && comp.Type != sim.KindQueue {
			ingress = append(ingress, comp.ID)
		}
	}
	calls := func(id string, k sim.Kind) []string {
		var out []string
		for _, to := range callees[id] {
			if byID[to].Type == k {
				out = append(out, to)
			}
		}
		return out
	}
	var out []candidate
	for _, k := range c.order {
		ki := c.kinds[k]
		if count[k] >= ki.maxCount {
			continue
		}
		id := freshID(byID, string(k))
		newComp := func(params map[string]any) sim.Component {
			comp := sim.Component{ID: id, Type: k}
			if len(params) > 0 {
				comp.Params = map[string]json.RawMessage{}
				for _, name := range sortedKeys(params) {
					comp.Params[name] = mustJSON(params[name])
				}
			}
			return comp
		}
		addWith := func(comp sim.Component, edges []sim.Edge, what string) {
			if len(edges) == 0 {
				return
			}
			ops := []PatchOp{{Op: "add", Path: "/components/-", Value: mustJSON(comp)}}
			for _, e := range edges {
				ops = append(ops, PatchOp{Op: "add", Path: "/edges/-", Value: mustJSON(e)})
			}
			desc := fmt.Sprintf("add a %s %q %s", k, id, what)
			if len(comp.Params) > 0 {
				var ps []string
				for _, name := range sortedKeys(comp.Params) {
					ps = append(ps, name+"="+string(comp.Params[name]))
				}
				desc += " (" + strings.Join(ps, ", ") + ")"
			}
			ch := Change{Kind: ChangeAdd, Component: id, Description: desc, Patch: ops}
			patched, err := patcher.apply(ops)
			if err != nil {
				return
			}
			out = append(out, candidate{class: 1, magnitude: float64(len(comp.Params)), change: ch, design: patched})
		}
		front := func() []sim.Edge {
			var es []sim.Edge
			for _, in := range ingress {
				if byID[in].Type == k {
					return nil // already in front
				}
				if !canCall(k, byID[in].Type) {
					return nil
				}
				es = append(es, sim.Edge{From: id, To: in})
			}
			return es
		}
		switch k {
		case sim.KindCache:
			var es []sim.Edge
			var apps []string
			for _, comp := range d.Components {
				if isCompute(comp.Type) && len(calls(comp.ID, sim.KindDatabase)) > 0 && len(calls(comp.ID, sim.KindCache)) == 0 {
					es = append(es, sim.Edge{From: comp.ID, To: id})
					apps = append(apps, comp.ID)
				}
			}
			what := "beside " + strings.Join(apps, ", ") + " (cache-aside)"
			addWith(newComp(nil), es, what)
			// The other instance types too: a larger cache may be what it takes.
			for _, t := range ki.instanceTypes {
				if t != defaultType(c.cfg.Catalog, k) {
					addWith(newComp(map[string]any{"instance_type": t}), es, what)
				}
			}
		case sim.KindCDN, sim.KindLoadBalancer, sim.KindAPIGateway:
			if k == sim.KindCDN && l.Run.Mix.Static == 0 {
				continue
			}
			addWith(newComp(nil), front(), "in front of "+strings.Join(ingress, ", "))
		case sim.KindQueue:
			if l.Run.Mix.AsyncWrite == 0 {
				continue
			}
			for _, comp := range d.Components {
				if !isCompute(comp.Type) || len(calls(comp.ID, sim.KindQueue)) > 0 {
					continue
				}
				for _, db := range calls(comp.ID, sim.KindDatabase) {
					es := []sim.Edge{{From: comp.ID, To: id}, {From: id, To: db}}
					what := fmt.Sprintf("between %s and %s for asynchronous writes", comp.ID, db)
					addWith(newComp(nil), es, what)
					for _, w := range []float64{2, 8, 12, 16, 24, 32} {
						if r, ok := ki.ranges["workers"]; ok && w >= r[0] && w <= r[1] {
							addWith(newComp(map[string]any{"workers": w}), es, what)
						}
					}
				}
			}
		case sim.KindAppService, sim.KindContainerPool, sim.KindServerless:
			// Another service behind each balancer, calling what its siblings call.
			for _, lb := range d.Components {
				if lb.Type != sim.KindLoadBalancer {
					continue
				}
				var sib string
				for _, to := range callees[lb.ID] {
					if isCompute(byID[to].Type) {
						sib = to
						break
					}
				}
				if sib == "" {
					continue
				}
				es := []sim.Edge{{From: lb.ID, To: id}}
				for _, to := range callees[sib] {
					es = append(es, sim.Edge{From: id, To: to})
				}
				addWith(newComp(nil), es, fmt.Sprintf("behind %s, calling what %s calls", lb.ID, sib))
			}
		}
	}
	return out
}

func canCall(from, to sim.Kind) bool {
	switch from {
	case sim.KindCDN:
		return to == sim.KindLoadBalancer || to == sim.KindAPIGateway || isCompute(to)
	case sim.KindLoadBalancer:
		return to == sim.KindAPIGateway || to == sim.KindLoadBalancer || isCompute(to)
	case sim.KindAPIGateway:
		return to == sim.KindLoadBalancer || isCompute(to)
	}
	return false
}

func isCompute(k sim.Kind) bool {
	return k == sim.KindAppService || k == sim.KindContainerPool || k == sim.KindServerless
}

func freshID(byID map[string]sim.Component, base string) string {
	base = strings.ReplaceAll(base, "_", "-")
	if _, taken := byID[base]; !taken {
		return base
	}
	for n := 2; ; n++ {
		id := fmt.Sprintf("%s-%d", base, n)
		if _, taken := byID[id]; !taken {
			return id
		}
	}
}

// currentValue is a component's value of a parameter: as set, else the engine default.
func currentValue(comp sim.Component, spec sim.ParamSpec) any {
	if raw, ok := comp.Params[spec.Name]; ok && !isNull(raw) {
		if v, reason := paramValue(spec, raw); reason == "" {
			return v
		}
	}
	return spec.Default
}

func defaultType(cat sim.Catalog, k sim.Kind) string {
	names := sortedKeys(cat)
	for _, n := range names {
		if cat[n].Kind == k && cat[n].Default {
			return n
		}
	}
	for _, n := range names {
		if cat[n].Kind == k {
			return n
		}
	}
	return ""
}

// setParam is the change of one parameter of component i.
func setParam(i int, comp sim.Component, name string, from, to any) Change {
	var ops []PatchOp
	base := fmt.Sprintf("/components/%d/params", i)
	switch _, set := comp.Params[name]; {
	case comp.Params == nil:
		ops = []PatchOp{{Op: "add", Path: base, Value: mustJSON(map[string]any{name: to})}}
	case set:
		ops = []PatchOp{{Op: "replace", Path: base + "/" + name, Value: mustJSON(to)}}
	default:
		ops = []PatchOp{{Op: "add", Path: base + "/" + name, Value: mustJSON(to)}}
	}
	fromText := formatValue(from)
	if s, ok := from.(string); ok && name == "instance_type" {
		fromText = s
		to = to.(string)
	}
	return Change{Kind: ChangeParam, Component: comp.ID, Param: name, From: mustJSON(from), To: mustJSON(to),
		Description: fmt.Sprintf("%s: %s %s → %s", comp.ID, name, fromText, strings.Trim(formatValue(to), `"`)), Patch: ops}
}
