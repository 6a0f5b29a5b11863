package sim

import (
	"context"
	"errors"
)

// Cost is the work of one run, known before it starts: its request paths (the nodes of its
// route trees, which the tick loop visits every tick) times its ticks, in path-ticks, the
// measure the engine's own limit on one run (MaxRunCost) is stated in. It compiles the
// design but runs nothing; invalid input returns Problems, as Run would.
func Cost(d Design, cfg Config) (int64, error) {
	p, err := Prepare(d, cfg)
	if err != nil {
		return 0, err
	}
	return p.cost, nil
}

// MaxRunCost is the most path-ticks one run may cost; a larger design is invalid.
const MaxRunCost = maxNodeTicks

// MaxRouteNodes bounds the request paths of one design.
const MaxRouteNodes = maxRouteNodes

// Prepared is a design compiled for one run under a configuration: its cost is known
// before it runs, and Run runs it once.
type Prepared struct {
	m    *model
	cost int64
	ran  bool
}

// Prepare validates and compiles a design for one run; invalid input returns Problems,
// as Run would.
func Prepare(d Design, cfg Config) (*Prepared, error) {
	v, err := validate(d, cfg)
	if err != nil {
		return nil, err
	}
	m, err := compile(v)
	if err != nil {
		return nil, err
	}
	return &Prepared{m: m, cost: int64(len(m.nodes)) * int64(v.ticks)}, nil
}

// Cost is the run's Cost.
func (p *Prepared) Cost() int64 { return p.cost }

// Paths is the number of request paths of the design.
func (p *Prepared) Paths() int { return len(p.m.nodes) }

// Run runs the prepared design. A Prepared runs once: the run consumes the model's state.
func (p *Prepared) Run(ctx context.Context) (*Result, error) {
	if p.ran {
		return nil, errors.New("sim: a prepared run was run twice")
	}
	p.ran = true
	return p.m.run(ctx)
}
