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
}

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
