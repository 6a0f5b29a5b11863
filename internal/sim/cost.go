package sim

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
