package sim

import (
	"context"
	"fmt"
)

// Cost is the work of one run, known before it starts: its request paths (the nodes of its
// route trees, which the tick loop visits every tick) times its ticks, in path-ticks, the
// measure the engine's own limit on one run (MaxRunCost) is stated in. It compiles the
// design but runs nothing; invalid input returns Problems, as Run would.
func Cost(d Design, cfg Config) (int64, error) {
	v, err := validate(d, cfg)
	if err != nil {
		return 0, err
	}
	m, err := compile(v)
	if err != nil {
		return 0, err
	}
	return int64(len(m.nodes)) * int64(v.ticks), nil
}

// MaxRunCost is the most path-ticks one run may cost; a larger design is invalid.
const MaxRunCost = maxNodeTicks

// MaxRouteNodes bounds the request paths of one design.
const MaxRouteNodes = maxRouteNodes

// RunBounded is Run for a design allowed at most maxPaths request paths: it compiles the
// design once, refuses it (Problems at "edges") past the bound, and otherwise runs it and
// returns its Cost as well.
func RunBounded(ctx context.Context, d Design, cfg Config, maxPaths int) (*Result, int64, error) {
	v, err := validate(d, cfg)
	if err != nil {
		return nil, 0, err
	}
	m, err := compile(v)
	if err != nil {
		return nil, 0, err
	}
	if len(m.nodes) > maxPaths {
		return nil, 0, Problems{{Path: "edges", Reason: fmt.Sprintf(
			"the design has %d request paths; this level allows at most %d: simplify the calls between services", len(m.nodes), maxPaths)}}
	}
	res, err := m.run(ctx)
	return res, int64(len(m.nodes)) * int64(v.ticks), err
}
