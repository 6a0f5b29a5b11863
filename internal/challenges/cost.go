package challenges

import (
	"context"
	"errors"
	"fmt"
	"math"

	"backpressure/internal/sim"
)

// Simulation work is measured in path-ticks: every tick of a run, a unit for each request
// path of the design (sim.Cost) and for each thing of the level that the tick also works
// through: each traffic point (step or spike), each chaos event, and each retry generation
// of each component the catalog permits (tickOverhead). A unit is priced at its cost when
// the engine cannot reuse the last tick's work (changing traffic, chaos): measured at
// 100–270 ns of one core on the test machine (TestCalibrateRunCost; BENCHMARKS.md), where a
// constant load with nothing happening costs 12–60 ns. Every run's cost is known before it
// starts, so the server can budget players' runs and refuse the ones that would cost too
// much.
const (
	// MaxLevelRunCost is the ceiling on a level's worst-case run cost (WorstCaseCost): a
	// level whose largest permitted design could cost more is refused at upload. About a
	// second of one core at the slowest rate seen (400 ns a unit: issue 25's level of 100
	// chaos events), however the level's traffic and chaos are shaped.
	MaxLevelRunCost = 2_500_000
	// MaxHintCost bounds the simulation work of one hint, all its runs together: a hint
	// stops searching before it would exceed it. About four seconds of one core.
	MaxHintCost = 20_000_000
	// pathsPerComponentPair bounds the request paths a level allows per pair of
	// components its catalog permits (see WorstCaseCost).
	pathsPerComponentPair = 8
)

// maxPaths is the most request paths a design may have on the level: eight per pair of the
// components its catalog permits (a tree of every request class through every component,
// branching at every component), and never more than the engine's own limit.
func (l *Level) maxPaths() int64 {
	n := int64(0)
	for _, kr := range l.Catalog.Components {
		n += int64(max(kr.MaxCount, 0))
	}
	return min(int64(sim.MaxRouteNodes), pathsPerComponentPair*n*n)
}

// Ticks is the number of ticks of the level's run.
func (l *Level) Ticks() int64 {
	tick := l.Run.TickMs
	if tick == 0 {
		tick = 100
	}
	if tick <= 0 || l.Run.DurationSec <= 0 || math.IsNaN(tick) || math.IsNaN(l.Run.DurationSec) {
		return 0
	}
	return int64(math.Ceil(l.Run.DurationSec*1000/tick - 1e-9))
}

// WorstCaseCost is the most one run on the level may cost, in path-ticks: its ticks times
// the most request paths it allows and its own work a tick (tickOverhead). Evaluate
// refuses a design that would cost more, so the bound holds for every run.
func (l *Level) WorstCaseCost() int64 { return l.Ticks() * (l.maxPaths() + l.tickOverhead()) }

// tickOverhead is the work of one tick that the level brings whatever the design: a unit
// for each traffic point and chaos event, and for each retry generation of each component
// the catalog permits.
func (l *Level) tickOverhead() int64 {
	r := &l.Run
	return int64(len(r.Traffic.Steps)+len(r.Traffic.Spikes)+len(r.Chaos)) +
		int64(max(r.Client.MaxRetries, 0))*int64(l.componentAllowance())
}

// RunCost is the cost of running d on the level, in path-ticks, computed without running
// it. A design the level refuses returns Problems, as Evaluate does.
func (l *Level) RunCost(d sim.Design) (int64, error) {
	p, err := l.prepare(d)
	if err != nil {
		return 0, err
	}
	return l.costOf(p), nil
}

// costOf is the cost of the prepared run p on the level: its paths' and the level's.
func (l *Level) costOf(p *sim.Prepared) int64 { return p.Cost() + l.Ticks()*l.tickOverhead() }

// prepare checks d against the level's rules and the engine's and compiles it for one
// run, refused past the level's path allowance: after it, the run's cost is known.
func (l *Level) prepare(d sim.Design) (*sim.Prepared, error) {
	if l.c == nil {
		return nil, ErrNotParsed
	}
	eff, ps := l.c.prepareDesign(l, d, true)
	if len(ps) > 0 {
		return nil, l.designError(eff, ps)
	}
	p, err := sim.Prepare(eff, l.c.cfg)
	if err != nil {
		var sp sim.Problems
		if errors.As(err, &sp) {
			return nil, designProblems(sp, nil)
		}
		return nil, err
	}
	if paths := int64(p.Paths()); paths > l.maxPaths() {
		return nil, Problems{{Path: "edges", Reason: fmt.Sprintf(
			"the design has %d request paths; this level allows at most %d (8 per pair of the %d components its catalog permits): simplify the calls between services",
			paths, l.maxPaths(), l.componentAllowance())}}
	}
	return p, nil
}

// run runs a prepared design and judges it.
func (l *Level) run(ctx context.Context, p *sim.Prepared) (*Evaluation, error) {
	return l.runWith(ctx, p, sim.RunOptions{})
}

// Verdict is Evaluate for a caller that keeps the verdict and none of the result: a scored
// submission stores its verdict alone, an event ranks its final runs by theirs. The run
// computes no display-only figures (sim.RunOptions.Points < 0), and once it is judged its
// tick records go back to the level, for its next run to make its result in: the
// Evaluation has no Result. The verdict is Evaluate's, byte for byte.
func (l *Level) Verdict(ctx context.Context, d sim.Design) (*Evaluation, error) {
	p, err := l.prepare(d)
	if err != nil {
		return nil, err
	}
	ev, err := l.runWith(ctx, p, sim.RunOptions{Points: -1})
	if err != nil {
		return nil, err
	}
	l.annotate(d, p, ev)
	// The verdict holds nothing of the ticks (the fix-hint search recycles its candidates'
	// the same way): the level's next run overwrites them.
	l.Release(ev)
	return ev, nil
}

// Release gives an Evaluation's tick records back to the level once its caller has written
// them out (a dry run's response, a duel's stored timeline): the level's next run makes its
// result in the same memory. Neither ev.Result nor anything read from its ticks may be used
// again; ev's verdict may. An Evaluation without a Result (Verdict's) is left alone.
func (l *Level) Release(ev *Evaluation) {
	if ev == nil || ev.Result == nil {
		return
	}
	sc := l.scratch()
	sc.Recycle(ev.Result)
	ev.Result = nil
	l.c.scratch.Put(sc)
}

// scratch is one of the level's Scratches, for one run at a time (catalog.go).
func (l *Level) scratch() *sim.Scratch {
	if sc, _ := l.c.scratch.Get().(*sim.Scratch); sc != nil {
		return sc
	}
	return new(sim.Scratch)
}

func (l *Level) runWith(ctx context.Context, p *sim.Prepared, o sim.RunOptions) (*Evaluation, error) {
	if o.Scratch == nil {
		o.Scratch = l.scratch()
		defer l.c.scratch.Put(o.Scratch)
	}
	res, err := p.RunWith(ctx, o)
	if err != nil {
		return nil, err
	}
	return l.judge(res), nil
}

func (l *Level) componentAllowance() int {
	n := 0
	for _, kr := range l.Catalog.Components {
		n += max(kr.MaxCount, 0)
	}
	return n
}

// HintCost is the most a hint on d may cost: MaxHintCost, or less when the design is
// cheap enough that the hint's run count (MaxHintRuns) binds first. It is known before the
// hint starts.
func (l *Level) HintCost(d sim.Design) (int64, error) {
	c, err := l.RunCost(d)
	if err != nil {
		return 0, err
	}
	return min(MaxHintCost, c*(MaxHintRuns+2)), nil
}
