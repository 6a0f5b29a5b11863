package challenges

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"backpressure/internal/sim"
)

// Condition names, in the order an Evaluation lists them.
const (
	CondLatency    = "latency"
	CondErrors     = "errors"
	CondCost       = "cost"
	CondResilience = "resilience"
)

// Utilisation thresholds (seeds simple-model and architecture-simulator).
const (
	// HealthyUtilization: a design is healthy when every component stays below it.
	HealthyUtilization = 0.90
	// HeadroomUtilization: the hint only proposes changes that keep every component at or
	// below it.
	HeadroomUtilization = 0.85
	// maxReportedUtilization caps utilisation in results: a tier with no capacity at all
	// (a queue with no workers) is infinitely over-utilised, which JSON cannot say.
	maxReportedUtilization = 1000
)

// Evaluation is the verdict on one design for one level.
type Evaluation struct {
	Level   string `json:"level"`
	Version int    `json:"version"`
	// Passed: all four conditions hold and the engine reports no structural failure.
	Passed bool `json:"passed"`
	// Score is set only when Passed (see Score).
	Score *int64 `json:"score"`
	// ScoreParts is what each condition added to a passing run's score (see ScorePart).
	ScoreParts []ScorePart `json:"score_parts,omitempty"`
	// Stars: 0 for a failing run; 1 to 3 for a passing one, by the level's par (see Stars).
	Stars int `json:"stars"`
	// Conditions: latency, errors, cost and resilience, in that order.
	Conditions []Condition `json:"conditions"`
	// Failures are structural failures the engine found ("lost_data:jobs",
	// "replication_lag:db", ...); any of them fails the run whatever the numbers say.
	Failures []string `json:"failures"`
	// Events is the resilience check of each chaos event, in schedule order.
	Events []EventCheck `json:"events"`
	// Why is the "why it happened" timeline of a failing run: the engine's stretches of
	// failing ticks (each naming the limiting component, the cause and the retry
	// amplification on top of it) and structural failures, those that reach into the
	// evaluation window. A passing run has none.
	Why []sim.Why `json:"why"`
	// Warnings name parts of the design that change nothing: components no request of the
	// level reaches, connections no request crosses (a call back up its own path). They
	// never fail a run.
	Warnings Problems `json:"warnings,omitempty"`
	// Busiest is the component with the highest peak utilisation in the window.
	Busiest string `json:"busiest"`
	// Healthy: every component's peak utilisation outside chaos is below 90% (seed
	// simple-model's headroom rule).
	Healthy    bool            `json:"healthy"`
	Components []ComponentPeak `json:"components"`
	Window     Window          `json:"window"`
	// Result is the engine's full output, for charts; it is not part of the verdict's JSON.
	Result *sim.Result `json:"-"`
}

// Condition is one win condition: what was measured against what was allowed.
type Condition struct {
	Name     string  `json:"name"`
	Passed   bool    `json:"passed"`
	Measured float64 `json:"measured"`
	Target   float64 `json:"target"`
	// Margin is Target − Measured: the headroom left (negative: by how much it failed).
	Margin float64 `json:"margin"`
	Unit   string  `json:"unit"`
	// Detail says in words how the value was measured.
	Detail string `json:"detail"`
	// Unmeasured: there was nothing to measure (latency when no request was answered), and
	// the condition fails.
	Unmeasured bool `json:"unmeasured,omitempty"`
	// NotApplicable: the level gives the condition nothing to measure (resilience on a
	// level without chaos). It passes, and the score shares its weight among the others.
	NotApplicable bool `json:"not_applicable,omitempty"`
}

// EventCheck is the resilience verdict on one chaos event.
type EventCheck struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"`
	StartSec float64 `json:"start_sec"`
	EndSec   float64 `json:"end_sec"`
	// ErrorRate is the mean error rate while the event acts (the engine's EventImpact).
	ErrorRate    float64 `json:"error_rate"`
	ErrorCeiling float64 `json:"error_ceiling"`
	CeilingHeld  bool    `json:"ceiling_held"`
	// RecoverySec is the engine's recovery time; nil when the system never recovered.
	RecoverySec         *float64 `json:"recovery_sec"`
	RecoveryDeadlineSec float64  `json:"recovery_deadline_sec"`
	Recovered           bool     `json:"recovered"`
	LostRequests        float64  `json:"lost_requests"`
	// Usage is the share of the allowance used: the larger of error rate ÷ ceiling and
	// recovery time ÷ deadline (a never-recovered system counts the time to the end of
	// the run). At most 1 passes.
	Usage  float64 `json:"usage"`
	Passed bool    `json:"passed"`
}

// ComponentPeak is one component's peak utilisation in the evaluation window. Headroom is
// a property of normal operation, so PeakUtilization leaves out the ticks under chaos (each
// event's window plus its recovery deadline), whose peak ChaosPeakUtilization reports; how
// the system fares under chaos is the resilience condition's business.
//
// A queue is measured differently (Measure "mean"): its consumers running flat out while
// they drain a burst is what a queue is for, so its PeakUtilization is the mean of its
// consumers' utilisation, each tick capped at 100%: the share of their capacity they need
// on average, whose complement is what they have left to catch up with.
type ComponentPeak struct {
	ID                   string   `json:"id"`
	Type                 sim.Kind `json:"type"`
	PeakUtilization      float64  `json:"peak_utilization"`
	ChaosPeakUtilization float64  `json:"chaos_peak_utilization"`
	Measure              string   `json:"measure"` // peak, or mean for a queue
	// Healthy: PeakUtilization is below 90%.
	Healthy bool `json:"healthy"`
}

// Window is the part of the run that is evaluated: the ticks after the warm-up.
type Window struct {
	StartSec float64 `json:"start_sec"`
	EndSec   float64 `json:"end_sec"`
	Ticks    int     `json:"ticks"`
}

// ErrNotParsed is returned by the methods of a Level that did not come from Parse.
var ErrNotParsed = errors.New("challenges: level was not built by Parse or Campaign")

// Evaluate runs a design on the level and checks it. A design that breaks the level's
// rules (component types, instance types, counts, fixed parameters, chaos targets) or the
// engine's is invalid: the error is Problems with paths into the design.
//
// The four conditions are checked over the evaluation window, the ticks after the first
// 20% of the run (seed simulation-design):
//
//  1. latency: the 99th percentile (nearest rank) of the ticks' p99 latency ≤ sla.p99_latency_ms;
//  2. errors: the mean of the ticks' error rates ≤ sla.error_rate;
//  3. cost: the mean of the ticks' cost per hour ≤ budget_per_hour;
//  4. resilience: for every chaos event, the mean error rate while it acts ≤
//     resilience.error_ceiling, and the engine's recovery time (from the end of the event
//     until the system has stayed within its pre-event baseline for 5 s) exists and is ≤
//     resilience.recovery_deadline_sec. The condition's measured value is the worst
//     event's Usage; a level without chaos passes it with 0.
func (l *Level) Evaluate(ctx context.Context, d sim.Design) (*Evaluation, error) {
	ev, _, err := l.evaluate(ctx, d)
	return ev, err
}

// evaluate is Evaluate, also returning the run's cost (sim.Cost), which is known, and
// checked against the level's worst case, before the run starts.
func (l *Level) evaluate(ctx context.Context, d sim.Design) (*Evaluation, int64, error) {
	p, err := l.prepare(d)
	if err != nil {
		return nil, 0, err
	}
	ev, err := l.run(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	l.annotate(d, p, ev)
	return ev, l.costOf(p), nil
}

// designError is the level's problems with a design, with the engine's about the same
// design added, so that a player sees every problem at once.
func (l *Level) designError(eff sim.Design, ps Problems) Problems {
	if err := sim.Validate(eff, l.c.cfg); err != nil {
		var sp sim.Problems
		if errors.As(err, &sp) {
			ps = mergeProblems(ps, designProblems(sp, ps))
		}
	}
	return ps
}

// designProblems converts the engine's problems with a player's design. The level's own
// configuration is valid, so a problem the engine finds with it (a chaos event naming what
// the design lacks) is the design's: it is dropped when prepareDesign already said so in
// the player's terms, and otherwise shown at its place in the level (run.chaos[...]).
func designProblems(sp sim.Problems, ours Problems) Problems {
	chaosReported := false
	for _, p := range ours {
		chaosReported = chaosReported || strings.Contains(p.Reason, "chaos event")
	}
	var out Problems
	for _, p := range sp {
		if head, _, _ := strings.Cut(p.Path, "["); head == "components" || head == "edges" || strings.HasPrefix(p.Path, "components.") {
			out = append(out, Problem(p))
			continue
		}
		if strings.HasPrefix(p.Path, "chaos") && chaosReported {
			continue
		}
		out = append(out, Problem{Path: levelPath(p.Path), Reason: p.Reason})
	}
	return out
}

// mergeProblems appends the engine's problems that are not about a path already reported.
// A component whose type is refused is reported once: nothing else about it is.
func mergeProblems(ours, engine Problems) Problems {
	seen := map[string]bool{}
	for _, p := range ours {
		seen[p.Path] = true
		if comp, ok := strings.CutSuffix(p.Path, ".type"); ok {
			seen[comp] = true
		}
	}
	for _, p := range engine {
		if !covered(p.Path, seen) {
			ours = append(ours, p)
		}
	}
	return ours
}

// judge turns a run into a verdict.
func (l *Level) judge(res *sim.Result) *Evaluation {
	ev := &Evaluation{Level: l.Slug, Version: l.Version, Result: res, Failures: slices.Clone(res.Summary.Failures)}
	if ev.Failures == nil {
		ev.Failures = []string{}
	}
	ticks := res.Ticks
	k0 := int(math.Floor(float64(len(ticks)) * WarmupShare))
	steady := ticks[k0:]
	ev.Failures = append(ev.Failures, l.undrained(res, steady, ev.Failures)...)
	ev.Window = Window{Ticks: len(steady)}
	if len(steady) > 0 {
		ev.Window.StartSec = steady[0].T - res.TickMs/1000
		ev.Window.EndSec = steady[len(steady)-1].T
	}

	p99s := make([]float64, len(steady))
	var errSum, costSum, offered, served float64
	for i := range steady {
		t := &steady[i]
		offered += t.OfferedRPS
		served += t.ServedRPS
		p99s[i] = t.P99Ms
		errSum += t.ErrorRate
		costSum += t.CostPerHour
	}
	n := float64(max(1, len(steady)))
	p99 := percentile(p99s, 0.99)
	errRate := errSum / n
	cost := costSum / n

	latency := condition(CondLatency, p99, l.SLA.P99LatencyMs, "ms",
		"99th percentile of the per-tick p99 latency over the evaluation window")
	if offered > 0 && served <= 0 {
		// A latency of 0 ms would read as a pass: nothing was fast, nothing was answered.
		latency.Passed, latency.Unmeasured = false, true
		latency.Detail = "no request was answered in the evaluation window: there is no latency to measure"
	}
	ev.Conditions = []Condition{
		latency,
		condition(CondErrors, errRate, l.SLA.ErrorRate, "ratio",
			"mean of the per-tick error rate (failed ÷ finished attempts) over the evaluation window"),
		condition(CondCost, cost, l.BudgetPerHour, "$/h",
			"mean cost per hour over the evaluation window"),
	}
	ev.Events = l.checkEvents(res)
	worst := 0.0
	resOK := true
	for _, e := range ev.Events {
		worst = math.Max(worst, e.Usage)
		resOK = resOK && e.Passed
	}
	rc := condition(CondResilience, worst, 1, "usage",
		"worst chaos event's share of its allowance: max(error rate ÷ ceiling, recovery time ÷ deadline)")
	rc.Passed = resOK
	if len(ev.Events) == 0 {
		rc.Detail = "no chaos events in this level: nothing to measure, and the score shares this condition's weight among the others"
		rc.NotApplicable = true
	}
	ev.Conditions = append(ev.Conditions, rc)

	// Peak utilisation per component over the window, apart from the ticks under chaos.
	calm := make([]bool, len(steady))
	for k := range steady {
		t := &steady[k]
		calm[k] = true
		for _, e := range res.Summary.Events {
			allowance := 0.0
			if l.Resilience != nil {
				allowance = l.Resilience.RecoveryDeadlineSec
			}
			if t.T > e.StartSec && t.T-res.TickMs/1000 < e.EndSec+allowance {
				calm[k] = false
			}
		}
	}
	ev.Components = make([]ComponentPeak, len(res.Components))
	ev.Healthy = true
	busiest := -1.0
	for i, c := range res.Components {
		peak, chaosPeak, sum, calmTicks := 0.0, 0.0, 0.0, 0
		for k := range steady {
			u := steady[k].Components[i].Utilization
			if calm[k] {
				peak = math.Max(peak, u)
				sum += math.Min(u, 1)
				calmTicks++
			} else {
				chaosPeak = math.Max(chaosPeak, u)
			}
		}
		measure := "peak"
		if c.Type == sim.KindQueue {
			measure, peak = "mean", sum/float64(max(1, calmTicks))
		}
		peak = math.Min(clean(peak), maxReportedUtilization)
		chaosPeak = math.Min(clean(chaosPeak), maxReportedUtilization)
		cp := ComponentPeak{ID: c.ID, Type: c.Type, PeakUtilization: peak, ChaosPeakUtilization: chaosPeak,
			Measure: measure, Healthy: peak < HealthyUtilization}
		ev.Healthy = ev.Healthy && cp.Healthy
		if peak > busiest {
			busiest, ev.Busiest = peak, c.ID
		}
		ev.Components[i] = cp
	}
	ev.Passed = len(ev.Failures) == 0
	for _, c := range ev.Conditions {
		ev.Passed = ev.Passed && c.Passed
	}
	ev.Why = []sim.Why{}
	if !ev.Passed {
		for _, w := range res.Summary.Why {
			if w.EndSec > ev.Window.StartSec {
				ev.Why = append(ev.Why, w)
			}
		}
		ev.Why = append(ev.Why, undrainedWhy(res, ev.Failures)...)
	}
	if ev.Passed {
		s := Score(ev)
		ev.Score = &s
		ev.ScoreParts = scoreParts(ev)
		ev.Stars = l.StarsFor(ev)
	}
	return ev
}

// undrained finds queues still holding acknowledged writes when the run ends. The engine
// calls a backlog lost when it has not shrunk over the last fifth of the run, which a
// backlog that shrinks in a lull but never drains over a whole cycle escapes. So a level
// also asks that every queue be (almost) empty at the end: more than one second of the
// level's asynchronous writes still queued is "undrained:<queue>", a structural failure
// like lost_data. Level authors end their runs in a calm for this reason.
func (l *Level) undrained(res *sim.Result, steady []sim.Tick, already []string) []string {
	if len(res.Ticks) == 0 || len(steady) == 0 {
		return nil
	}
	fresh := 0.0
	for i := range steady {
		fresh += steady[i].FreshRPS
	}
	oneSecond := math.Max(1, fresh/float64(len(steady))*l.Run.Mix.AsyncWrite)
	last := &res.Ticks[len(res.Ticks)-1]
	var out []string
	for i, c := range res.Components {
		if c.Type != sim.KindQueue || slices.Contains(already, "lost_data:"+c.ID) {
			continue
		}
		if last.Components[i].Backlog > oneSecond {
			out = append(out, "undrained:"+c.ID)
		}
	}
	return out
}

// undrainedWhy explains the level's own structural failure in the timeline: a queue still
// holding acknowledged writes at the end lost them, from when its backlog last stood empty.
func undrainedWhy(res *sim.Result, failures []string) []sim.Why {
	var out []sim.Why
	ticks := res.Ticks
	dt := res.TickMs / 1000
	for _, f := range failures {
		id, ok := strings.CutPrefix(f, "undrained:")
		if !ok {
			continue
		}
		i := slices.IndexFunc(res.Components, func(c sim.ComponentInfo) bool { return c.ID == id })
		if i < 0 || len(ticks) == 0 {
			continue
		}
		k := len(ticks)
		for k > 0 && ticks[k-1].Components[i].Backlog > 0.5 {
			k--
		}
		var offered, fresh float64
		for _, t := range ticks[min(k, len(ticks)-1):] {
			offered, fresh = offered+t.OfferedRPS, fresh+t.FreshRPS
		}
		amp := 1.0
		if fresh > 0 {
			amp = math.Max(1, math.Round(offered/fresh*100)/100)
		}
		out = append(out, sim.Why{StartSec: math.Round(float64(min(k, len(ticks)-1))*dt*1000) / 1000, EndSec: ticks[len(ticks)-1].T,
			Component: id, Cause: sim.CauseLostWrites,
			Detail: fmt.Sprintf("%s still held %.0f acknowledged writes when the run ended: they were never stored", id,
				ticks[len(ticks)-1].Components[i].Backlog),
			Advice: fmt.Sprintf("add workers to %s, or capacity to the database they write to", id), RetryAmplification: amp})
	}
	return out
}

func condition(name string, measured, target float64, unit, detail string) Condition {
	measured = clean(measured)
	return Condition{Name: name, Passed: measured <= target, Measured: measured, Target: target,
		Margin: target - measured, Unit: unit, Detail: detail}
}

// checkEvents applies the level's resilience requirements to the engine's measurements.
func (l *Level) checkEvents(res *sim.Result) []EventCheck {
	out := make([]EventCheck, 0, len(res.Summary.Events))
	if l.Resilience == nil {
		return out
	}
	ceiling, deadline := l.Resilience.ErrorCeiling, l.Resilience.RecoveryDeadlineSec
	runEnd := res.Summary.DurationSec
	for _, imp := range res.Summary.Events {
		e := EventCheck{ID: imp.ID, Kind: imp.Kind, StartSec: imp.StartSec, EndSec: imp.EndSec,
			ErrorRate: clean(imp.ErrorRate), ErrorCeiling: ceiling, RecoveryDeadlineSec: deadline,
			LostRequests: clean(imp.Lost)}
		e.CeilingHeld = e.ErrorRate <= ceiling
		recovery := math.Max(0, runEnd-imp.EndSec) // never recovered: at least until the end
		if imp.RecoverySec != nil {
			r := clean(*imp.RecoverySec)
			e.RecoverySec = &r
			recovery = r
			e.Recovered = r <= deadline
		}
		e.Usage = math.Max(e.ErrorRate/ceiling, recovery/deadline)
		e.Passed = e.CeilingHeld && e.Recovered
		out = append(out, e)
	}
	return out
}

// percentile is the nearest-rank percentile: the smallest value with at least p of the
// values at or below it (0 for none). It sorts xs, which judge makes for it.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	k := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(k, 0), len(xs)-1)]
}

// clean keeps results encodable: JSON has no NaN or infinities.
func clean(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case math.IsInf(x, 1):
		return math.MaxFloat64
	case math.IsInf(x, -1):
		return -math.MaxFloat64
	}
	return x
}

// Condition returns the named condition of the evaluation.
func (ev *Evaluation) Condition(name string) (Condition, bool) {
	for _, c := range ev.Conditions {
		if c.Name == name {
			return c, true
		}
	}
	return Condition{}, false
}

// Failing lists the names of the failed checks: conditions, then structural failures.
func (ev *Evaluation) Failing() []string {
	var out []string
	for _, c := range ev.Conditions {
		if !c.Passed {
			out = append(out, c.Name)
		}
	}
	return append(out, ev.Failures...)
}

func (ev *Evaluation) String() string {
	verdict := "FAIL"
	if ev.Passed {
		verdict = fmt.Sprintf("PASS (score %d)", *ev.Score)
	}
	return fmt.Sprintf("%s: %s", ev.Level, verdict)
}
