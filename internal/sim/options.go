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
