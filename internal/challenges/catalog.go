package challenges

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"backpressure/internal/sim"
)

// knobs are the parameters a player chooses. Every other parameter of a kind describes the
// level's world (how long the app's code takes, how often a read hits the cache, how many
// connections a database node has) and is fixed by the level: if a player could set
// service_time_ms or connections, capacity would be free and the budget meaningless. A
// parameter the engine adds later is a world parameter until it is listed here.
var knobs = map[sim.Kind][]string{
	sim.KindLoadBalancer: {"instances", "algorithm", "health_checks", "health_check_interval_sec", "unhealthy_threshold",
		"instance_type"},
	sim.KindAPIGateway: {"instances", "rate_limit_rps", "breaker_error_threshold", "breaker_window_sec",
		"breaker_open_sec", "breaker_probe_ratio", "instance_type"},
	sim.KindAppService: {"replicas", "queue_per_replica", "instance_type"},
	sim.KindContainerPool: {"min_replicas", "max_replicas", "target_utilization", "queue_per_replica",
		"scale_in_delay_sec", "instance_type"},
	sim.KindServerless: {"max_concurrency", "max_execution_ms", "memory_mb", "instance_type"},
	sim.KindCache:      {"instance_type"},
	sim.KindCDN:        {"instance_type"},
	sim.KindDatabase: {"read_replicas", "queue_per_connection", "read_from", "instance_type",
		"replica_instance_type"},
	sim.KindQueue: {"workers", "buffer", "instance_type"},
}

// Knobs returns the parameters of a kind a player may set, in the engine's table order.
func Knobs(k sim.Kind) []string {
	var out []string
	for _, s := range sim.Params(k) {
		if slices.Contains(knobs[k], s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// compiled is what Parse derives from a valid level.
type compiled struct {
	cfg   sim.Config
	kinds map[sim.Kind]*kindInfo
	order []sim.Kind // offered kinds, in sim.Kinds() order

	// scratch holds the memory the level's runs lend each other (sim.Scratch): the
	// buffers tick reuse copies carried states into are the same size for every design of
	// a similar shape, so a server scoring submission after submission on one level makes
	// them once instead of once a run. It never changes a result (sim.Scratch).
	scratch sync.Pool
}

// kindInfo is the effective rule set of one offered kind.
type kindInfo struct {
	kind     sim.Kind
	maxCount int
	specs    map[string]sim.ParamSpec
	// world maps every parameter the player may not change to its value.
	world map[string]any
	// inject holds the parameters the level fixes explicitly, as they are passed to the
	// engine (the others are at the engine's defaults already).
	inject        map[string]json.RawMessage
	instanceTypes []string
	// ranges are the bounds of every numeric knob.
	ranges map[string][2]float64
	// memoryFromType: a cache's memory_gb is its instance type's memory. The engine prices
	// instance types but always reads memory_gb (default 1 GB), so memory would otherwise
	// be free to set and the larger type no larger.
	memoryFromType bool
}

// isKnob: the player chooses this parameter here (a knob the level did not fix).
func (k *kindInfo) isKnob(name string) bool {
	_, fixed := k.world[name]
	_, known := k.specs[name]
	return known && !fixed && slices.Contains(knobs[k.kind], name)
}

// PriceList returns the engine's default price list with the level's additions.
func (c Catalog) PriceList() sim.Catalog {
	out := sim.DefaultCatalog()
	maps.Copy(out, c.InstanceTypes)
	return out
}

// compileCatalog derives the catalog's rules and the engine configuration. The
// configuration is usable even when the rules are not (ok is false), so that the engine can
// still check the run.
func (l *Level) compileCatalog(ps *Problems) (c *compiled, ok bool) {
	cat := l.Catalog
	prices := cat.PriceList()
	c = &compiled{kinds: map[sim.Kind]*kindInfo{}}
	ok = true
	if len(cat.Components) == 0 {
		ps.add("catalog.components", "must offer at least one component type")
		ok = false
	}
	known := sim.Kinds()
	for _, k := range sortedKeys(cat.Components) {
		if !slices.Contains(known, k) {
			ps.addf(join("catalog.components", string(k)), "is not a component type (known: %s)", quoteList(known))
			ok = false
		}
	}
	engineCat := sim.Catalog{}
	for _, k := range known {
		rules, offered := cat.Components[k]
		if !offered {
			continue
		}
		path := join("catalog.components", string(k))
		ki := &kindInfo{kind: k, maxCount: rules.MaxCount, specs: map[string]sim.ParamSpec{},
			world: map[string]any{}, inject: map[string]json.RawMessage{}, ranges: map[string][2]float64{}}
		for _, s := range sim.Params(k) {
			ki.specs[s.Name] = s
		}
		if rules.MaxCount < 1 || rules.MaxCount > sim.MaxComponents {
			ps.addf(path+".max_count", "must be between 1 and %d, not %d", sim.MaxComponents, rules.MaxCount)
			ok = false
		}
		// Instance types: the listed ones, else every one of this kind in the price list.
		ofKind := func(name string) bool { it, found := prices[name]; return found && it.Kind == k }
		if len(rules.InstanceTypes) == 0 {
			for _, name := range sortedKeys(prices) {
				if ofKind(name) {
					ki.instanceTypes = append(ki.instanceTypes, name)
				}
			}
			if len(ki.instanceTypes) == 0 {
				ps.addf(path, "the price list has no instance type for %s; add one under catalog.instance_types", k)
				ok = false
			}
		}
		for i, name := range rules.InstanceTypes {
			p := index(path+".instance_types", i)
			switch it, found := prices[name]; {
			case !found:
				ps.addf(p, "%q is not in the price list (for %s: %s)", name, k, quoteList(priceNames(prices, k)))
				ok = false
			case it.Kind != k:
				ps.addf(p, "%q is a %s type, not a %s type", name, it.Kind, k)
				ok = false
			case slices.Contains(ki.instanceTypes, name):
				ps.addf(p, "%q is listed twice", name)
			default:
				ki.instanceTypes = append(ki.instanceTypes, name)
			}
		}
		for _, name := range ki.instanceTypes {
			engineCat[name] = prices[name]
		}
		// World parameters: the level's value, else the engine's default.
		for _, name := range sortedKeys(rules.Fixed) {
			p := join(path+".fixed", name)
			spec, found := ki.specs[name]
			switch {
			case name == "instance_type":
				ps.add(p, "cannot be fixed here: list the offered types in instance_types")
				ok = false
				continue
			case !found:
				ps.addf(p, "is not a parameter of %s (known: %s)", k, strings.Join(paramNames(k), ", "))
				ok = false
				continue
			}
			v, reason := paramValue(spec, rules.Fixed[name])
			if reason != "" {
				ps.add(p, reason)
				ok = false
				continue
			}
			ki.world[name] = v
			ki.inject[name] = canonical(rules.Fixed[name])
		}
		for _, s := range sim.Params(k) {
			if _, set := ki.world[s.Name]; !set && !slices.Contains(knobs[k], s.Name) {
				ki.world[s.Name] = s.Default
			}
		}
		if _, fixed := rules.Fixed["memory_gb"]; k == sim.KindCache && !fixed {
			delete(ki.world, "memory_gb")
			ki.memoryFromType = true
		}
		// Knob limits.
		for _, name := range sortedKeys(rules.Limits) {
			p := join(path+".limits", name)
			spec, found := ki.specs[name]
			switch {
			case !found:
				ps.addf(p, "is not a parameter of %s (known: %s)", k, strings.Join(paramNames(k), ", "))
				ok = false
				continue
			case !ki.isKnob(name):
				ps.addf(p, "is not a player's choice here (it is fixed), so it takes no limits")
				ok = false
				continue
			case spec.Type != "number" && spec.Type != "integer":
				ps.addf(p, "is a %s parameter; limits apply to numbers only", spec.Type)
				ok = false
				continue
			}
			r := rules.Limits[name]
			lo, hi := spec.Min, spec.Max
			if r.Min != nil {
				lo = *r.Min
			}
			if r.Max != nil {
				hi = *r.Max
			}
			for _, end := range []struct {
				name string
				v    *float64
			}{{"min", r.Min}, {"max", r.Max}} {
				if end.v == nil {
					continue
				}
				x := *end.v
				switch {
				case x < spec.Min || x > spec.Max:
					ps.addf(p+"."+end.name, "must be within the engine's range %g to %g, not %g", spec.Min, spec.Max, x)
					ok = false
				case spec.Type == "integer" && x != math.Trunc(x):
					ps.addf(p+"."+end.name, "must be a whole number, not %g", x)
					ok = false
				}
			}
			if lo > hi {
				ps.addf(p, "min (%g) is above max (%g)", lo, hi)
				ok = false
			}
			ki.ranges[name] = [2]float64{lo, hi}
		}
		for _, s := range sim.Params(k) {
			if _, set := ki.ranges[s.Name]; !set && ki.isKnob(s.Name) && (s.Type == "number" || s.Type == "integer") {
				ki.ranges[s.Name] = [2]float64{s.Min, s.Max}
			}
		}
		c.kinds[k] = ki
		c.order = append(c.order, k)
	}
	// Instance types the level adds must be well-formed even when not offered.
	for name, it := range cat.InstanceTypes {
		if _, listed := engineCat[name]; !listed {
			engineCat[name] = it
		}
	}
	r := l.Run
	c.cfg = sim.Config{TickMs: r.TickMs, DurationSec: r.DurationSec, Traffic: r.Traffic, Mix: r.Mix, Client: r.Client,
		WorkingSetGB: r.WorkingSetGB, Chaos: r.Chaos, Catalog: engineCat}
	if !ok {
		// The engine still needs prices for whatever the starting design names.
		maps.Copy(c.cfg.Catalog, prices)
	}
	return c, ok
}

// prepareDesign checks a design against the catalog's rules and the level's chaos schedule,
// and returns the design the engine runs: the player's, with the level's fixed parameters
// filled in. Problems' paths are relative to the design.
//
// A level's own starting design skips the chaos check (checkChaos false): for the author
// the engine reports a missing target where it is named, in run.chaos.
func (c *compiled) prepareDesign(l *Level, d sim.Design, checkChaos bool) (sim.Design, Problems) {
	var ps Problems
	counts := map[sim.Kind]int{}
	eff := sim.Design{Components: make([]sim.Component, len(d.Components)), Edges: slices.Clone(d.Edges)}
	for i, comp := range d.Components {
		path := index("components", i)
		eff.Components[i] = comp
		ki, offered := c.kinds[comp.Type]
		if !offered {
			ps.addf(path+".type", "%q is not available in this level (available: %s)", comp.Type, quoteList(c.order))
			continue
		}
		counts[comp.Type]++
		for _, name := range sortedKeys(comp.Params) {
			raw := comp.Params[name]
			spec, known := ki.specs[name]
			if !known || isNull(raw) {
				continue // the engine reports unknown parameters
			}
			p := join(path+".params", name)
			v, reason := paramValue(spec, raw)
			if reason != "" {
				continue // the engine reports malformed values
			}
			if w, fixed := ki.world[name]; fixed && !sameValue(v, w) {
				ps.addf(p, "is fixed by this level at %s; remove it from your design", formatValue(w))
			}
			if (name == "instance_type" || name == "replica_instance_type") && v != "" && !slices.Contains(ki.instanceTypes, v.(string)) {
				ps.addf(p, "%q is not offered in this level (offered: %s)", v, quoteList(ki.instanceTypes))
			}
		}
		for _, name := range sortedKeys(ki.ranges) {
			r := ki.ranges[name]
			spec := ki.specs[name]
			x := spec.Default.(float64)
			if raw, set := comp.Params[name]; set && !isNull(raw) {
				v, reason := paramValue(spec, raw)
				if reason != "" {
					continue
				}
				x = v.(float64)
			}
			if x < r[0] || x > r[1] {
				verb := "is"
				if _, set := comp.Params[name]; !set {
					verb = "defaults to"
				}
				ps.addf(join(path+".params", name), "%s %g; this level allows %g to %g", verb, x, r[0], r[1])
			}
		}
		inject := ki.inject
		if ki.memoryFromType {
			typeName := defaultType(c.cfg.Catalog, comp.Type)
			if raw, set := comp.Params["instance_type"]; set {
				if v, reason := paramValue(ki.specs["instance_type"], raw); reason == "" && v != "" {
					typeName = v.(string)
				}
			}
			if it, found := c.cfg.Catalog[typeName]; found && it.MemoryGB > 0 {
				if raw, set := comp.Params["memory_gb"]; set && !isNull(raw) {
					if v, reason := paramValue(ki.specs["memory_gb"], raw); reason == "" && v != it.MemoryGB {
						ps.addf(join(path+".params", "memory_gb"), "comes with the instance type (%s has %g GB); choose another instance_type for more memory", typeName, it.MemoryGB)
					}
				}
				inject = maps.Clone(inject)
				inject["memory_gb"] = mustJSON(it.MemoryGB)
			}
		}
		if len(inject) > 0 {
			params := maps.Clone(comp.Params)
			if params == nil {
				params = map[string]json.RawMessage{}
			}
			maps.Copy(params, inject)
			eff.Components[i].Params = params
		}
	}
	for _, k := range c.order {
		if n, most := counts[k], c.kinds[k].maxCount; n > most {
			ps.addf("components", "has %d %s components; this level allows at most %d", n, k, most)
		}
	}
	if !checkChaos {
		return eff, ps
	}
	// Chaos strikes components and edges by name: the design must keep them.
	ids := map[string]sim.Kind{}
	for _, comp := range d.Components {
		ids[comp.ID] = comp.Type
	}
	startKinds := map[string]sim.Kind{}
	for _, comp := range l.StartingDesign.Components {
		startKinds[comp.ID] = comp.Type
	}
	edges := map[sim.Edge]bool{}
	for _, e := range d.Edges {
		edges[e] = true
	}
	for i, e := range l.Run.Chaos {
		name := e.ID
		if name == "" {
			name = string(e.Kind)
		}
		if e.Target != "" {
			k, found := ids[e.Target]
			switch {
			case !found:
				ps.addf("components", "needs a component with id %q: the level's chaos event %q (run.chaos[%d]) strikes it", e.Target, name, i)
			case k != startKinds[e.Target] && startKinds[e.Target] != "":
				ps.addf("components", "component %q must be a %s, as in the starting design: the level's chaos event %q (run.chaos[%d]) strikes it", e.Target, startKinds[e.Target], name, i)
			}
		}
		if e.From != "" && e.To != "" && !edges[sim.Edge{From: e.From, To: e.To}] {
			ps.addf("edges", "needs the edge %s → %s: the level's chaos event %q (run.chaos[%d]) strikes it", e.From, e.To, name, i)
		}
	}
	return eff, ps
}

// flushWarmup is how long the target of a cache flush takes to warm up again.
func (c *compiled) flushWarmup(l *Level, e sim.ChaosEvent) float64 {
	if e.Params.WarmupSec != nil {
		return *e.Params.WarmupSec
	}
	for _, comp := range l.StartingDesign.Components {
		if comp.ID != e.Target {
			continue
		}
		name := "warmup_sec"
		if comp.Type == sim.KindCDN {
			name = "ttl_sec"
		}
		if c != nil {
			if ki := c.kinds[comp.Type]; ki != nil {
				if w, ok := ki.world[name].(float64); ok {
					return w
				}
			}
		}
		for _, s := range sim.Params(comp.Type) {
			if s.Name == name {
				return s.Default.(float64)
			}
		}
	}
	return 0
}

// jsonValue decodes the first JSON value of raw, as a json.Decoder into an any would: a
// design's parameters are mostly plain numbers, which need no decoder.
func jsonValue(raw json.RawMessage) (any, bool) {
	if n := len(raw); n > 0 && (raw[0] == '-' || '0' <= raw[0] && raw[0] <= '9') && '0' <= raw[n-1] && raw[n-1] <= '9' && json.Valid(raw) {
		if x, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return x, true
		}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// paramValue decodes a parameter value as the engine would: float64 for numbers, bool,
// string. It returns a reason when the value is malformed or out of the engine's range.
func paramValue(spec sim.ParamSpec, raw json.RawMessage) (any, string) {
	v, ok := jsonValue(raw)
	if !ok {
		return nil, "must be a JSON value"
	}
	switch spec.Type {
	case "number", "integer":
		x, ok := v.(float64)
		if !ok {
			return nil, "must be a number"
		}
		if spec.Type == "integer" && x != math.Trunc(x) {
			return nil, fmt.Sprintf("must be a whole number, not %g", x)
		}
		if x < spec.Min || x > spec.Max {
			return nil, fmt.Sprintf("must be between %g and %g, not %g", spec.Min, spec.Max, x)
		}
		return x, ""
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, "must be true or false"
		}
		return b, ""
	case "enum":
		s, ok := v.(string)
		if !ok || !slices.Contains(spec.Enum, s) {
			return nil, fmt.Sprintf("must be one of %s", quoteList(spec.Enum))
		}
		return s, ""
	default:
		s, ok := v.(string)
		if !ok {
			return nil, "must be a string"
		}
		return s, ""
	}
}

func sameValue(a, b any) bool { return a == b }

func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("%g", x)
	case string:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprint(v)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func canonical(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

func priceNames(prices sim.Catalog, k sim.Kind) []string {
	var out []string
	for _, name := range sortedKeys(prices) {
		if prices[name].Kind == k {
			out = append(out, name)
		}
	}
	return out
}

func paramNames(k sim.Kind) []string {
	var out []string
	for _, s := range sim.Params(k) {
		out = append(out, s.Name)
	}
	return out
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// Knobs returns the parameters of kind k a player may set on this level (the kind's knobs
// less those the level fixes), in the engine's table order; nil if the level does not
// offer k.
func (l *Level) Knobs(k sim.Kind) []string {
	if l.c == nil || l.c.kinds[k] == nil {
		return nil
	}
	ki := l.c.kinds[k]
	var out []string
	for _, s := range sim.Params(k) {
		if ki.isKnob(s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// Fixed returns the parameters of kind k this level fixes, with their values (float64,
// bool or string); nil if the level does not offer k. A cache's memory_gb, which comes
// with its instance type, is not listed.
func (l *Level) Fixed(k sim.Kind) map[string]any {
	if l.c == nil || l.c.kinds[k] == nil {
		return nil
	}
	return maps.Clone(l.c.kinds[k].world)
}
