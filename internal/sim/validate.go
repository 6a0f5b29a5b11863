package sim

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// entryKinds may receive traffic from outside; a component of another kind with no
// incoming edge is unreachable.
var entryKinds = map[Kind]bool{
	KindLoadBalancer: true, KindAPIGateway: true, KindCDN: true,
	KindAppService: true, KindContainerPool: true, KindServerless: true,
}

// calleeKinds lists what each kind may call. Caches and databases call nothing: with
// cache-aside the app, not the cache, asks the database on a miss.
var calleeKinds = map[Kind]map[Kind]bool{
	KindLoadBalancer:  {KindAPIGateway: true, KindAppService: true, KindContainerPool: true, KindServerless: true, KindLoadBalancer: true},
	KindAPIGateway:    {KindLoadBalancer: true, KindAppService: true, KindContainerPool: true, KindServerless: true},
	KindCDN:           {KindLoadBalancer: true, KindAPIGateway: true, KindAppService: true, KindContainerPool: true, KindServerless: true},
	KindAppService:    computeCallees,
	KindContainerPool: computeCallees,
	KindServerless:    computeCallees,
	KindCache:         {},
	KindDatabase:      {KindDatabase: true}, // a replication link between primaries
	KindQueue:         {KindDatabase: true},
}

var computeCallees = map[Kind]bool{
	KindLoadBalancer: true, KindAPIGateway: true, KindAppService: true, KindContainerPool: true,
	KindServerless: true, KindCache: true, KindDatabase: true, KindQueue: true,
}

// validated is a design and configuration that passed every check, with parameters decoded.
type validated struct {
	design Design
	cfg    Config
	params []paramValues
	types  []InstanceType
	// replicaTypes is a database's replicas' instance type (its own type when it names none).
	replicaTypes []InstanceType
	index        map[string]int
	ticks        int
	dt           float64
	catalog      Catalog
}

// Validate checks a design against a configuration and returns every problem at once
// (as Problems), or nil.
func Validate(d Design, cfg Config) error {
	v, err := validate(d, cfg)
	if err != nil {
		return err
	}
	_, err = compile(v)
	return err
}

func validate(d Design, cfg Config) (*validated, error) {
	var errs Problems
	v := &validated{design: d, cfg: cfg, index: map[string]int{}}
	v.catalog = cfg.Catalog
	if len(v.catalog) == 0 {
		v.catalog = DefaultCatalog()
	}
	validateCatalog(v.catalog, cfg.Catalog != nil, &errs)
	validateConfig(v, &errs)

	if len(d.Components) == 0 {
		errs.add("components", "must list at least one component")
	}
	if len(d.Components) > MaxComponents {
		errs.addf("components", "has %d components; the limit is %d", len(d.Components), MaxComponents)
		return nil, errs
	}
	if len(d.Edges) > MaxEdges {
		errs.addf("edges", "has %d edges; the limit is %d", len(d.Edges), MaxEdges)
		return nil, errs
	}
	v.params = make([]paramValues, len(d.Components))
	v.types = make([]InstanceType, len(d.Components))
	v.replicaTypes = make([]InstanceType, len(d.Components))
	for i, c := range d.Components {
		// A problem's path is made only for a problem: most designs have none.
		path := func(field string) string { return fmt.Sprintf("components[%d]", i) + field }
		switch {
		case c.ID == "":
			errs.add(path(".id"), "is required")
		case len(c.ID) > maxIDLen:
			errs.addf(path(".id"), "is longer than %d characters", maxIDLen)
		case !idPattern.MatchString(c.ID):
			errs.add(path(".id"), "may contain only letters, digits, '_', '.' and '-', starting with a letter or digit")
		default:
			if j, dup := v.index[c.ID]; dup {
				errs.addf(path(".id"), "%q is already the id of components[%d]", c.ID, j)
			} else {
				v.index[c.ID] = i
			}
		}
		if _, ok := paramTable[c.Type]; !ok {
			errs.addf(path(".type"), "%q is not a component type (known: %v)", c.Type, kinds)
			continue
		}
		v.params[i] = decodeParams(c.Type, c.Params, func() string { return path(".params") }, &errs)
		v.types[i] = resolveInstanceType(v.catalog, c.Type, v.params[i].s("instance_type"), func() string { return path(".params.instance_type") }, &errs)
		if c.Type == KindDatabase {
			v.replicaTypes[i] = validateReplicas(v, i, func() string { return path(".params") }, &errs)
		}
		if c.Type == KindContainerPool && v.params[i].f("min_replicas") > v.params[i].f("max_replicas") {
			errs.add(path(".params.min_replicas"), "must not exceed max_replicas")
		}
		if w := workersOf(c.Type, v.params[i], v.types[i]); w > maxWorkers {
			errs.addf(path(".params"), "gives %d workers in one pool; the limit is %d", w, maxWorkers)
		}
		if mem, it := v.params[i].f("memory_gb"), v.types[i]; c.Type == KindCache && it.MemoryGB > 0 && mem > maxCacheNodes*it.MemoryGB {
			errs.addf(path(".params.memory_gb"), "needs more than %d nodes of %g GB; choose a larger instance type", maxCacheNodes, it.MemoryGB)
		}
	}

	seen := map[[2]string]int{}
	incoming := make([]int, len(d.Components))
	adj := make([][]int, len(d.Components))
	for i, e := range d.Edges {
		path := func(field string) string { return fmt.Sprintf("edges[%d]", i) + field }
		from, okFrom := v.index[e.From]
		to, okTo := v.index[e.To]
		if !okFrom {
			errs.addf(path(".from"), "%q is not a component of this design", e.From)
		}
		if !okTo {
			errs.addf(path(".to"), "%q is not a component of this design", e.To)
		}
		if !okFrom || !okTo {
			continue
		}
		if from == to {
			errs.add(path(""), "connects a component to itself")
			continue
		}
		if j, dup := seen[[2]string{e.From, e.To}]; dup {
			errs.addf(path(""), "duplicates edges[%d] (%s → %s)", j, e.From, e.To)
			continue
		}
		seen[[2]string{e.From, e.To}] = i
		fk, tk := d.Components[from].Type, d.Components[to].Type
		if allowed, ok := calleeKinds[fk]; ok && !allowed[tk] {
			errs.addf(path(""), "%s cannot call %s%s", kindInWords(fk), kindInWords(tk), calleeHint(fk))
			continue
		}
		incoming[to]++
		adj[from] = append(adj[from], to)
	}

	if len(errs) > 0 {
		return nil, errs
	}
	// Reachability: traffic enters at entry-kind components nothing calls.
	var ingress []int
	for i, c := range d.Components {
		if incoming[i] == 0 && entryKinds[c.Type] {
			ingress = append(ingress, i)
		}
	}
	if len(ingress) == 0 {
		errs.add("components", "has no ingress: traffic enters at a load balancer, gateway, CDN or service that nothing else calls")
		return nil, errs
	}
	reached := make([]bool, len(d.Components))
	stack := append([]int(nil), ingress...)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if reached[n] {
			continue
		}
		reached[n] = true
		stack = append(stack, adj[n]...)
	}
	for i, c := range d.Components {
		if !reached[i] {
			errs.addf(fmt.Sprintf("components[%d]", i), "%q is unreachable: no path leads to it from the ingress", c.ID)
		}
	}
	validateChaos(v, &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return v, nil
}

// validateReplicas checks a database's replica settings and returns its replicas' type.
func validateReplicas(v *validated, i int, path func() string, errs *Problems) InstanceType {
	p := v.params[i]
	replicas := p.i("read_replicas")
	if p.s("read_from") == "replicas" && replicas == 0 {
		errs.add(path()+".read_from", `is "replicas" but the database has no read_replicas: add one, or read from "spread"`)
	}
	name := p.s("replica_instance_type")
	if name == "" {
		return v.types[i]
	}
	if replicas == 0 {
		errs.add(path()+".replica_instance_type", "names a type for read replicas the database does not have: add read_replicas or remove it")
	}
	return resolveInstanceType(v.catalog, KindDatabase, name, func() string { return path() + ".replica_instance_type" }, errs)
}

// kindInWords names a kind for a sentence, with its article: "an app service", not
// "a app_service".
func kindInWords(k Kind) string {
	w := strings.ReplaceAll(string(k), "_", " ")
	if k == KindCDN {
		w = "CDN"
	}
	if k == KindAPIGateway {
		w = "API gateway"
	}
	if w == "" {
		return "a component with no type"
	}
	if strings.ContainsRune("aeiou", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}

func calleeHint(k Kind) string {
	switch k {
	case KindCache:
		return " (caches are cache-aside: connect the app to both the cache and the database)"
	case KindDatabase:
		return " (a database only replicates to another database)"
	case KindQueue:
		return " (a queue's workers write to a database)"
	}
	return ""
}

// workersOf is the largest pool of workers a component can have: the engine's cost of a
// pool grows with its workers, so the limit keeps every run fast.
func workersOf(k Kind, p paramValues, it InstanceType) int {
	switch k {
	case KindAppService:
		return p.i("replicas") * p.i("concurrency")
	case KindContainerPool:
		return p.i("max_replicas") * p.i("concurrency")
	case KindServerless:
		return p.i("max_concurrency")
	case KindDatabase:
		return p.i("connections")
	case KindQueue:
		return p.i("workers")
	case KindLoadBalancer, KindAPIGateway:
		return int(p.f("instances") * it.CapacityRPS * gatewayServiceSec)
	}
	return 0
}

func resolveInstanceType(cat Catalog, kind Kind, name string, path func() string, errs *Problems) InstanceType {
	if name == "" {
		// The kind's default type, else its first; the first by name on a tie.
		var first, firstDefault string
		var found, foundDefault bool
		for n, it := range cat {
			if it.Kind != kind {
				continue
			}
			if !found || n < first {
				first, found = n, true
			}
			if it.Default && (!foundDefault || n < firstDefault) {
				firstDefault, foundDefault = n, true
			}
		}
		switch {
		case foundDefault:
			return cat[firstDefault]
		case found:
			return cat[first]
		}
		errs.addf(path(), "the catalog offers no %s", kind)
		return InstanceType{Kind: kind, Speed: 1}
	}
	it, ok := cat[name]
	if !ok {
		var offered []string
		for _, n := range sortedKeys(cat) {
			if cat[n].Kind == kind {
				offered = append(offered, n)
			}
		}
		errs.addf(path(), "%q is not in the catalog (offered for %s: %v)", name, kind, offered)
		return InstanceType{Kind: kind, Speed: 1}
	}
	if it.Kind != kind {
		errs.addf(path(), "%q is a %s type, not a %s type", name, it.Kind, kind)
	}
	return it
}

func validateCatalog(cat Catalog, custom bool, errs *Problems) {
	// A level's catalog is checked with every design it runs: a sound one costs no more
	// than a look at each entry, and only one with problems is gone through in order.
	for name, it := range cat {
		var ps Problems
		if validateInstanceType(name, it, custom, &ps); len(ps) > 0 {
			for _, name := range sortedKeys(cat) {
				validateInstanceType(name, cat[name], custom, errs)
			}
			return
		}
	}
}

// validateInstanceType checks the catalog's entry name; the paths of its problems are built
// only for a problem.
func validateInstanceType(name string, it InstanceType, custom bool, errs *Problems) {
	path := func(field string) string { return "catalog." + name + field }
	check := func(field string, x, lo, hi float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < lo || x > hi {
			checkNumber(errs, path(field), x, lo, hi)
		}
	}
	if _, ok := paramTable[it.Kind]; !ok {
		errs.addf(path(".kind"), "%q is not a component type", it.Kind)
	}
	check(".price_per_hour", it.PricePerHour, 0, 1e6)
	check(".price_per_million", it.PricePerMillion, 0, 1e6)
	check(".price_per_million_probes", it.PricePerMillionProbes, 0, 1e6)
	check(".price_per_worker_hour", it.PricePerWorkerHour, 0, 1e6)
	check(".price_per_gb_second", it.PricePerGBSecond, 0, 1e3)
	check(".speed", it.Speed, 0, 1000)
	check(".capacity_rps", it.CapacityRPS, 0, MaxRPS*10)
	check(".memory_gb", it.MemoryGB, 0, 1e6)
	check(".base_error_rate", it.BaseErrorRate, 0, 1)
	check(".load_error_factor", it.LoadErrorFactor, 0, 1)
	if it.BufferPerUnit < 0 || it.BufferPerUnit > maxBuffer {
		errs.addf(path(".buffer_per_unit"), "must be between 0 and %d", maxBuffer)
	}
	if fixedCapacity(it.Kind) && it.CapacityRPS <= 0 && custom {
		errs.add(path(".capacity_rps"), "must be positive for this kind")
	}
}

// checkNumber reports a value outside [lo, hi] or not finite.
func checkNumber(errs *Problems, path string, x, lo, hi float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		errs.add(path, "must be a finite number")
		return false
	}
	if x < lo || x > hi {
		errs.addf(path, "must be between %g and %g, not %g", lo, hi, x)
		return false
	}
	return true
}

func validateConfig(v *validated, errs *Problems) {
	cfg := &v.cfg
	if cfg.TickMs == 0 {
		cfg.TickMs = defaultTickMs
	}
	okTick := checkNumber(errs, "tick_ms", cfg.TickMs, 10, 10_000)
	okDur := checkNumber(errs, "duration_sec", cfg.DurationSec, 0, 1e7)
	if okDur && cfg.DurationSec <= 0 {
		errs.add("duration_sec", "must be positive")
		okDur = false
	}
	if okTick && okDur {
		v.dt = cfg.TickMs / 1000
		ticks := math.Ceil(cfg.DurationSec/v.dt - 1e-9)
		if ticks > MaxTicks {
			errs.addf("duration_sec", "gives %.0f ticks of %g ms; the limit is %d", ticks, cfg.TickMs, MaxTicks)
		}
		v.ticks = int(ticks)
	}
	validateTraffic(&cfg.Traffic, errs)

	shares := cfg.Mix.shares()
	sum := 0.0
	okMix := true
	for c, s := range shares {
		okMix = checkNumber(errs, "mix."+Class(c).String(), s, 0, 1) && okMix
		sum += s
	}
	if okMix && math.Abs(sum-1) > 1e-6 {
		errs.addf("mix", "shares must sum to 1, not %g", sum)
	}
	cl := &cfg.Client
	checkNumber(errs, "client.timeout_ms", cl.TimeoutMs, 0, 3_600_000)
	if cl.MaxRetries < 0 || cl.MaxRetries > 10 {
		errs.addf("client.max_retries", "must be between 0 and 10, not %d", cl.MaxRetries)
	}
	checkNumber(errs, "client.backoff_ms", cl.BackoffMs, 0, 600_000)
	if cl.BackoffMultiplier == 0 {
		cl.BackoffMultiplier = 2
	}
	checkNumber(errs, "client.backoff_multiplier", cl.BackoffMultiplier, 1, 10)
	checkNumber(errs, "client.retry_budget", cl.RetryBudget, 0, 10)
	checkNumber(errs, "working_set_gb", cfg.WorkingSetGB, 0, 1e6)
}

func validateTraffic(t *Traffic, errs *Problems) {
	checkNumber(errs, "traffic.rps", t.RPS, 0, MaxRPS)
	switch t.Kind {
	case "constant":
	case "ramp":
		checkNumber(errs, "traffic.to_rps", t.ToRPS, 0, MaxRPS)
		okS := checkNumber(errs, "traffic.start_sec", t.StartSec, 0, 1e7)
		okE := checkNumber(errs, "traffic.end_sec", t.EndSec, 0, 1e7)
		if okS && okE && t.EndSec <= t.StartSec {
			errs.add("traffic.end_sec", "must be after start_sec")
		}
	case "step":
		if len(t.Steps) == 0 {
			errs.add("traffic.steps", "must list at least one step")
		}
		if len(t.Steps) > MaxCurvePoints {
			errs.addf("traffic.steps", "has %d steps; the limit is %d", len(t.Steps), MaxCurvePoints)
		}
		for i, s := range t.Steps {
			p := fmt.Sprintf("traffic.steps[%d]", i)
			ok := checkNumber(errs, p+".at_sec", s.AtSec, 0, 1e7)
			checkNumber(errs, p+".rps", s.RPS, 0, MaxRPS)
			if ok && i > 0 && s.AtSec <= t.Steps[i-1].AtSec {
				errs.add(p+".at_sec", "must be after the previous step's")
			}
		}
	case "wave":
		okA := checkNumber(errs, "traffic.amplitude_rps", t.AmplitudeRPS, 0, MaxRPS)
		if okA && t.AmplitudeRPS > t.RPS {
			errs.add("traffic.amplitude_rps", "must not exceed rps (traffic cannot go negative)")
		}
		okP := checkNumber(errs, "traffic.period_sec", t.PeriodSec, 0, 1e7)
		if okP && t.PeriodSec <= 0 {
			errs.add("traffic.period_sec", "must be positive")
		}
		checkNumber(errs, "traffic.phase_sec", t.PhaseSec, -1e7, 1e7)
	case "":
		errs.add("traffic.kind", "is required (constant, ramp, step or wave)")
	default:
		errs.addf("traffic.kind", "%q is not a traffic curve (constant, ramp, step or wave)", t.Kind)
	}
	if len(t.Spikes) > MaxCurvePoints {
		errs.addf("traffic.spikes", "has %d spikes; the limit is %d", len(t.Spikes), MaxCurvePoints)
	}
	for i, s := range t.Spikes {
		p := fmt.Sprintf("traffic.spikes[%d]", i)
		checkNumber(errs, p+".at_sec", s.AtSec, 0, 1e7)
		if checkNumber(errs, p+".duration_sec", s.DurationSec, 0, 1e7) && s.DurationSec == 0 {
			errs.add(p+".duration_sec", "must be positive")
		}
		checkNumber(errs, p+".rps", s.RPS, 0, MaxRPS)
	}
}
