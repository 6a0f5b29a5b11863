package sim

import (
	"context"
	"errors"
)

// RunOptions change how a run is computed and which of its display-only figures it fills,
// never a number it reports: the zero value is Run's.
type RunOptions struct {
	// DisableReuse computes every tick in full, even one that repeats the last exactly
	// (state.go). The result is the same byte for byte; the option exists to prove it.
	DisableReuse bool
	// Points says which ticks the caller returns, for the display-only figures of each
	// component (its mean and p99 latency, which no summary, verdict or diagnosis reads):
	// 0 every tick; n > 0 the ticks a timeline cut down to n points keeps (every k-th tick,
	// k = ⌈ticks ÷ n⌉, and the last: DownsampleEvery); negative none. On the other ticks
	// they are 0.
	Points int
	// Stop, if set, is called after each tick with the result so far (its components and
	// Ticks[:t+1] filled in, the later ticks and the summary not yet) and may end the run
	// there: RunWith then returns ErrStopped and no result. It is for a caller that needs
	// only part of what a run would tell, such as a search whose candidate can no longer
	// matter once its first ticks are known; it must not change the result.
	Stop func(res *Result, t int) bool
	// Scratch, if set, lends the run the memory an earlier run given the same Scratch left
	// in it, and takes this run's when it ends, however it ends: a caller running design
	// after design (a fix-hint search) then makes the buffers of tick reuse once rather than
	// once a run. A Scratch belongs to one run at a time: it must not be given to a run while
	// another given it has not returned.
	Scratch *Scratch
}

// Scratch is memory a caller lends its runs, one run at a time: the buffers tick reuse
// copies carried states into (state.go), the log of failing ticks the timeline of causes is
// built from (diagnose.go), and the tick records of a run that returned no result (stopped
// or cancelled, or recycled), which the next run's result is made in. A run writes a
// state buffer before it reads it, and zeroes lent records as a new allocation is zeroed,
// so what a run computes never depends on the Scratch or on the runs before it.
type Scratch struct {
	states [][]byte // emptied, each of any capacity
	ticks  []Tick   // records of a run that returned none, or nil
	comps  []ComponentTick
	causes causeLog // emptied: the failing ticks' log of an earlier run (diagnose.go)
}

// takeRecords is room for the ticks and component ticks of a run of nt ticks and nc
// components, zeroed: lent by the Scratch if it holds enough, else new. A nil Scratch lends
// nothing.
func (sc *Scratch) takeRecords(nt, nc int) ([]Tick, []ComponentTick) {
	if sc == nil || cap(sc.ticks) < nt || cap(sc.comps) < nt*nc {
		return make([]Tick, nt), make([]ComponentTick, nt*nc)
	}
	ticks, comps := sc.ticks[:cap(sc.ticks)], sc.comps[:cap(sc.comps)]
	sc.ticks, sc.comps = nil, nil
	clear(ticks[:nt])
	clear(comps[:nt*nc])
	return ticks, comps
}

// Recycle gives the Scratch the tick records of a result made by a run lent it, once the
// caller has read all it needs of res: the next run lent the Scratch makes its result in
// them, and res must not be read again. A result that did not come from a run is left alone.
func (sc *Scratch) Recycle(res *Result) {
	if sc == nil || res.records == nil {
		return
	}
	sc.giveRecords(res.Ticks[:cap(res.Ticks)], res.records)
	res.Ticks, res.records = nil, nil
}

// giveRecords keeps the records of a run that returns no result, for the next run.
func (sc *Scratch) giveRecords(ticks []Tick, comps []ComponentTick) {
	if sc != nil {
		sc.ticks, sc.comps = ticks, comps
	}
}

// takeCauses is room for a run's log of failing ticks, empty: the Scratch's if it holds
// one, else nil to grow from. A run appends to the log before it reads it.
func (sc *Scratch) takeCauses() causeLog {
	if sc == nil {
		return nil
	}
	log := sc.causes[:0]
	sc.causes = nil
	return log
}

// giveCauses keeps a finished run's log of failing ticks for the next run: no result
// holds it (the timeline built from it is its own).
func (sc *Scratch) giveCauses(log causeLog) {
	if sc != nil && cap(log) > 0 {
		sc.causes = log[:0]
	}
}

// ErrStopped is RunWith's error for a run that RunOptions.Stop ended.
var ErrStopped = errors.New("sim: the run was stopped by its caller")

// DownsampleEvery is k for a timeline of ticks ticks cut down to at most points points: the
// ticks kept are every k-th (k−1, 2k−1, ...) and the last. 1 when all fit.
func DownsampleEvery(ticks, points int) int {
	if points <= 0 || ticks <= points {
		return 1
	}
	return (ticks + points - 1) / points
}

// detailed reports whether tick t's display-only figures are computed.
func (m *model) detailed(t int) bool {
	switch p := m.opts.Points; {
	case p == 0:
		return true
	case p < 0:
		return false
	}
	every := DownsampleEvery(m.v.ticks, m.opts.Points)
	return (t+1)%every == 0 || t == m.v.ticks-1
}

// RunWith runs the prepared design with options. A Prepared runs once.
func (p *Prepared) RunWith(ctx context.Context, o RunOptions) (*Result, error) {
	if p.ran {
		return nil, errors.New("sim: a prepared run was run twice")
	}
	p.ran = true
	p.m.opts = o
	return p.m.run(ctx)
}

// Reused is how many ticks the run repeated exactly rather than computed (state.go).
func (p *Prepared) Reused() int { return p.m.reused }
