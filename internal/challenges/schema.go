package challenges

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"backpressure/internal/sim"
)

// GenerateSchema builds the JSON Schema (draft 2020-12) of level files from the Go types
// that Parse decodes into and from the engine's parameter tables, so that the schema an
// author's editor uses cannot drift from what Parse accepts. challenges/level.schema.json
// is its output, kept in step by a golden test (go test ./internal/challenges -run
// TestSchema -update). The schema checks shape, names, types and ranges; the rules that
// relate fields to each other (a chaos target must exist, the starting design must fail)
// are Parse's alone.
func GenerateSchema() ([]byte, error) {
	g := &schemaGen{defs: map[string]any{}}
	root := g.object(reflect.TypeFor[Level](), "Level")
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["title"] = "Backpressure level"
	root["description"] = "One challenge of Backpressure: the run, the targets, the catalog and the starting design. " +
		"Check a file with: backpressure validate FILE"
	root["$defs"] = g.defs
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if len(g.missing) > 0 {
		return buf.Bytes(), fmt.Errorf("schema: fields without a description: %s", strings.Join(g.missing, ", "))
	}
	return buf.Bytes(), nil
}

type schemaGen struct {
	defs    map[string]any
	missing []string
}

// schemaDocs describes every field, keyed Type.json_name.
var schemaDocs = map[string]string{
	"Level.$schema":         "Path or URL of this schema, for editors; ignored by the game.",
	"Level.slug":            "Stable identifier: lowercase words joined by hyphens.",
	"Level.title":           "Title shown to players (at most 100 characters).",
	"Level.briefing":        "What the player is told, in Markdown: the system, the traffic, what is expected.",
	"Level.difficulty":      "Place on the campaign's curve.",
	"Level.version":         "Version of the level, from 1; bump it whenever the level changes. The server stores the level under this number.",
	"Level.history":         "What each version changed, oldest first; the last entry is the level's version.",
	"Level.stars":           "The level's par: the scores that earn a passing run its second and third star (one star for passing).",
	"Revision.version":      "The version this entry describes.",
	"Revision.change":       "What the version changed, in words a player reads.",
	"Level.lesson":          "What the level teaches: mechanics a passing design cannot leave out, proven by the server's search.",
	"Lesson.mechanics":      "Mechanics a passing design must use; the server searches for the best design leaving each out and expects it to fail.",
	"Lesson.teaches":        "The lesson in one sentence, for the player.",
	"Stars.two":             "The score that earns a second star.",
	"Stars.three":           "The score that earns a third star; above stars.two.",
	"Level.run":             "The engine run: tick, duration, traffic, request mix, client behaviour and chaos schedule.",
	"Level.sla":             "Targets over the evaluation window (the last 80% of the run).",
	"Level.budget_per_hour": "Maximum mean cost per hour over the evaluation window, in dollars.",
	"Level.resilience":      "What must hold around each chaos event; required when run.chaos is not empty.",
	"Level.catalog":         "What the player may build with: component types, instance types, prices and limits.",
	"Level.starting_design": "The design the player starts from. It must fail the level.",
	"Level.starting_fails":  "Why the starting design fails, in the verdict's own terms; the server runs it and refuses the level if it fails another way.",
	"StartingFails.checks":  "The checks the starting design fails, as the verdict lists them: failing conditions (latency, errors, cost, resilience, in that order), then structural failures (lost_data:QUEUE, undrained:QUEUE, ...).",
	"StartingFails.causes":  "The component and cause of each stretch of the verdict's \"why it happened\", each pair once, in the order it first appears; empty when no stretch fails (a p99 just over its target).",
	"FailCause.component":   "A component of the starting design.",
	"FailCause.cause":       "Why the stretch failed there, as the verdict names it: saturated, node_failed, partition, breaker_open, rate_limited, throttled, timeouts, no_route, lost_writes or replication_lag.",

	"Run.tick_ms":        "Simulated milliseconds per tick (default 100). Runs may have at most 3000 ticks.",
	"Run.duration_sec":   "Simulated seconds in all; the first 20% is warm-up and not evaluated.",
	"Run.traffic":        "Offered load over time.",
	"Run.mix":            "Share of each request class; the shares sum to 1.",
	"Run.client":         "How clients behave when a request fails or is slow.",
	"Run.working_set_gb": "Size of the data reads touch; a smaller cache hits proportionally less (0: always fits).",
	"Run.chaos":          "Chaos events, each after the warm-up, each leaving room for its recovery deadline.",

	"SLA.p99_latency_ms": "Target for the 99th percentile of the per-tick p99 latency, in milliseconds.",
	"SLA.error_rate":     "Target for the mean per-tick error rate, a share (0.01 = 1%).",

	"Resilience.error_ceiling":         "Maximum mean error rate while each chaos event acts, a share.",
	"Resilience.recovery_deadline_sec": "Maximum seconds from the end of each event until the system is back within its pre-event baseline.",

	"Catalog.components":     "Component types the player may use, with their rules.",
	"Catalog.instance_types": "Instance types added to the engine's default price list, or replacing entries of it by name.",

	"KindRules.max_count":      "How many components of this type a design may have.",
	"KindRules.instance_types": "Instance types offered for this type; empty offers every one in the price list.",
	"KindRules.fixed":          "Parameters fixed for every component of this type. Parameters that describe the world rather than a choice are always fixed, here or at the engine's default.",
	"KindRules.limits":         "Narrower ranges for numeric parameters the player chooses.",

	"Range.min": "Lowest value allowed (default: the engine's).",
	"Range.max": "Highest value allowed (default: the engine's).",

	"Traffic.kind":          "Shape of the curve: constant, ramp, step or wave (diurnal).",
	"Traffic.rps":           "Requests per second: the constant level, the start of a ramp or step, the mean of a wave.",
	"Traffic.to_rps":        "Ramp: the level reached at end_sec.",
	"Traffic.start_sec":     "Ramp: when the ramp starts.",
	"Traffic.end_sec":       "Ramp: when the ramp ends.",
	"Traffic.steps":         "Step: level changes, in time order.",
	"Traffic.amplitude_rps": "Wave: amplitude around rps (at most rps).",
	"Traffic.period_sec":    "Wave: length of one cycle.",
	"Traffic.phase_sec":     "Wave: shift of the cycle, in seconds.",
	"Traffic.spikes":        "Extra load on top of the curve for a while.",

	"TrafficStep.at_sec": "When the level changes.",
	"TrafficStep.rps":    "The new level.",

	"TrafficSpike.at_sec":       "When the spike starts.",
	"TrafficSpike.duration_sec": "How long it lasts.",
	"TrafficSpike.rps":          "Requests per second added.",

	"Mix.static":      "Static files: answered by a CDN on a hit, else by the app.",
	"Mix.read":        "Reads: cache-aside through a cache, else the database.",
	"Mix.write":       "Synchronous writes at the database primary.",
	"Mix.async_write": "Writes acknowledged by a queue and written later; without a queue, synchronous.",

	"Client.timeout_ms":         "A request slower than this fails at the client.",
	"Client.max_retries":        "Retries of one failed request (0 to 10).",
	"Client.backoff_ms":         "Delay before the first retry (0: next tick).",
	"Client.backoff_multiplier": "Each later retry waits this many times longer (default 2).",
	"Client.retry_budget":       "Caps retries per tick at this share of fresh requests (0: no cap).",

	"ChaosEvent.id":           "Name of the event (default kind@at_sec).",
	"ChaosEvent.kind":         "What happens.",
	"ChaosEvent.at_sec":       "When it strikes.",
	"ChaosEvent.duration_sec": "How long it lasts (a cache flush lasts its warm-up instead).",
	"ChaosEvent.target":       "Component id struck by node_failure or cache_flush; the player's design must keep it.",
	"ChaosEvent.from":         "Caller of the edge struck by network_partition or latency_injection.",
	"ChaosEvent.to":           "Callee of that edge; the player's design must keep the edge.",
	"ChaosEvent.params":       "Parameters of the event's kind.",

	"ChaosParams.multiplier":       "traffic_spike: factor on the offered load.",
	"ChaosParams.warmup_sec":       "cache_flush: time to warm up again (default: the cache's warmup_sec or the CDN's ttl_sec).",
	"ChaosParams.extra_latency_ms": "latency_injection: milliseconds added to every call over the edge.",

	"Design.components": "The boxes of the diagram.",
	"Design.edges":      "Calls between them.",

	"Component.id":     "Unique name: letters, digits, '_', '.', '-'.",
	"Component.type":   "Component type; the level's catalog says which are offered.",
	"Component.params": "Parameters of the type; missing ones take the engine's defaults.",

	"Edge.from": "Caller's id.",
	"Edge.to":   "Callee's id.",

	"InstanceType.kind":                     "Component type this instance type is for.",
	"InstanceType.price_per_hour":           "Dollars per hour per unit (instance, replica, node, cache, queue, CDN).",
	"InstanceType.price_per_million":        "Dollars per million requests handled (CDN, queue, gateway, serverless).",
	"InstanceType.price_per_worker_hour":    "Dollars per hour per queue worker.",
	"InstanceType.price_per_million_probes": "Balancer: dollars per million health-check probes (one per backend every health_check_interval_sec while health_checks is on).",
	"InstanceType.price_per_gb_second":      "Serverless: dollars per GB-second of execution.",
	"InstanceType.speed":                    "Divides service times: 2 is twice as fast (1 = reference).",
	"InstanceType.capacity_rps":             "Throughput of one unit of a fixed-capacity type (balancer, gateway, cache, CDN, queue broker).",
	"InstanceType.buffer_per_unit":          "Waiting places per unit of a fixed-capacity type.",
	"InstanceType.memory_gb":                "Memory of a cache node.",
	"InstanceType.base_error_rate":          "Own error rate at no load.",
	"InstanceType.load_error_factor":        "Error rate added at full load (times utilisation cubed).",
	"InstanceType.default":                  "The type used when a component names none.",
}

// schemaRequired lists required properties per type.
var schemaRequired = map[string][]string{
	"Level":         {"slug", "title", "briefing", "difficulty", "version", "run", "sla", "budget_per_hour", "catalog", "starting_design"},
	"Run":           {"duration_sec", "traffic", "mix", "client"},
	"SLA":           {"p99_latency_ms", "error_rate"},
	"Resilience":    {"error_ceiling", "recovery_deadline_sec"},
	"Catalog":       {"components"},
	"KindRules":     {"max_count"},
	"Traffic":       {"kind", "rps"},
	"TrafficStep":   {"at_sec", "rps"},
	"TrafficSpike":  {"at_sec", "duration_sec", "rps"},
	"Client":        {"timeout_ms"},
	"ChaosEvent":    {"kind", "at_sec"},
	"Design":        {"components"},
	"Component":     {"id", "type"},
	"Edge":          {"from", "to"},
	"InstanceType":  {"kind"},
	"Revision":      {"version", "change"},
	"Stars":         {"two", "three"},
	"Lesson":        {"mechanics", "teaches"},
	"StartingFails": {"checks"},
	"FailCause":     {"component", "cause"},
}

// schemaExtra adds keywords to a field's schema.
var schemaExtra = map[string]map[string]any{
	"Level.slug":                       {"pattern": slugPattern.String(), "maxLength": maxSlugLen},
	"Level.title":                      {"minLength": 1, "maxLength": maxTitleLen},
	"Level.briefing":                   {"minLength": 1, "maxLength": MaxBriefingBytes},
	"Level.version":                    {"minimum": 1},
	"Level.history":                    {"maxItems": maxHistory},
	"Revision.version":                 {"minimum": 1},
	"Revision.change":                  {"minLength": 1, "maxLength": maxChangeLen},
	"Stars.two":                        {"exclusiveMinimum": ScoreBase, "maximum": MaxScore},
	"Lesson.mechanics":                 {"minItems": 1, "items": map[string]any{"type": "string", "enum": Mechanics()}},
	"Lesson.teaches":                   {"minLength": 1, "maxLength": maxChangeLen},
	"StartingFails.checks":             {"minItems": 1},
	"Stars.three":                      {"exclusiveMinimum": ScoreBase, "maximum": MaxScore},
	"Level.budget_per_hour":            {"exclusiveMinimum": 0},
	"Run.tick_ms":                      {"minimum": 10, "maximum": 10000},
	"Run.duration_sec":                 {"exclusiveMinimum": 0},
	"Run.working_set_gb":               {"minimum": 0},
	"SLA.p99_latency_ms":               {"exclusiveMinimum": 0},
	"SLA.error_rate":                   {"exclusiveMinimum": 0, "exclusiveMaximum": 1},
	"Resilience.error_ceiling":         {"exclusiveMinimum": 0, "maximum": 1},
	"Resilience.recovery_deadline_sec": {"exclusiveMinimum": 0},
	"KindRules.max_count":              {"minimum": 1, "maximum": sim.MaxComponents},
	"Traffic.kind":                     {"enum": []string{"constant", "ramp", "step", "wave"}},
	"Traffic.rps":                      {"minimum": 0, "maximum": sim.MaxRPS, "not": tinyRate},
	"Traffic.to_rps":                   {"minimum": 0, "maximum": sim.MaxRPS, "not": tinyRate},
	"Traffic.amplitude_rps":            {"minimum": 0, "maximum": sim.MaxRPS, "not": tinyRate},
	"TrafficStep.rps":                  {"minimum": 0, "maximum": sim.MaxRPS, "not": tinyRate},
	"TrafficSpike.rps":                 {"minimum": 0, "maximum": sim.MaxRPS, "not": tinyRate},
	// The smallest tick is 10 ms; Parse checks the period against the level's own tick.
	"Traffic.period_sec":                    {"minimum": 0.01, "maximum": 1e7},
	"Traffic.phase_sec":                     {"minimum": -1e7, "maximum": 1e7},
	"TrafficStep.at_sec":                    {"minimum": 0, "maximum": 1e7},
	"TrafficSpike.at_sec":                   {"minimum": 0, "maximum": 1e7},
	"TrafficSpike.duration_sec":             {"exclusiveMinimum": 0, "maximum": 1e7},
	"Mix.static":                            {"minimum": 0, "maximum": 1},
	"Mix.read":                              {"minimum": 0, "maximum": 1},
	"Mix.write":                             {"minimum": 0, "maximum": 1},
	"Mix.async_write":                       {"minimum": 0, "maximum": 1},
	"Client.timeout_ms":                     {"minimum": 0},
	"Client.max_retries":                    {"minimum": 0, "maximum": 10},
	"Client.backoff_multiplier":             {"minimum": 0, "maximum": 10},
	"Client.retry_budget":                   {"minimum": 0, "maximum": 10},
	"ChaosEvent.at_sec":                     {"minimum": 0},
	"ChaosEvent.duration_sec":               {"minimum": 0},
	"ChaosParams.multiplier":                {"minimum": 0, "maximum": 100},
	"Component.id":                          {"pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$", "maxLength": 64},
	"InstanceType.price_per_hour":           {"minimum": 0},
	"InstanceType.price_per_million":        {"minimum": 0},
	"InstanceType.price_per_worker_hour":    {"minimum": 0},
	"InstanceType.price_per_million_probes": {"minimum": 0},
	"InstanceType.price_per_gb_second":      {"minimum": 0},
	"InstanceType.speed":                    {"minimum": 0},
	"InstanceType.capacity_rps":             {"minimum": 0},
	"InstanceType.buffer_per_unit":          {"minimum": 0},
	"InstanceType.memory_gb":                {"minimum": 0},
	"InstanceType.base_error_rate":          {"minimum": 0, "maximum": 1},
	"InstanceType.load_error_factor":        {"minimum": 0, "maximum": 1},
}

// tinyRate is the range of rates a level may not name (see MinTrafficRPS).
var tinyRate = map[string]any{"exclusiveMinimum": 0, "exclusiveMaximum": MinTrafficRPS}

var (
	kindType       = reflect.TypeFor[sim.Kind]()
	chaosKindType  = reflect.TypeFor[sim.ChaosKind]()
	difficultyType = reflect.TypeFor[Difficulty]()
)

// object returns the schema of a struct type (the root, or a $defs entry's body).
func (g *schemaGen) object(t reflect.Type, name string) map[string]any {
	props := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		jname, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jname == "-" {
			continue
		}
		key := name + "." + jname
		var s map[string]any
		switch key {
		case "Catalog.components":
			s = g.kindRulesByKind()
		case "Component.params":
			s = map[string]any{"type": "object"} // per-kind schemas come from Component's allOf
		default:
			s = g.typeSchema(f.Type)
		}
		if d, ok := schemaDocs[key]; ok {
			s["description"] = d
		} else {
			g.missing = append(g.missing, key)
		}
		for k, v := range schemaExtra[key] {
			s[k] = v
		}
		props[jname] = s
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if req := schemaRequired[name]; len(req) > 0 {
		out["required"] = req
	}
	if name == "Component" {
		out["allOf"] = g.paramsByKind()
	}
	return out
}

func (g *schemaGen) typeSchema(t reflect.Type) map[string]any {
	switch t {
	case kindType:
		return map[string]any{"enum": sim.Kinds()}
	case chaosKindType:
		return map[string]any{"enum": []sim.ChaosKind{sim.ChaosNodeFailure, sim.ChaosTrafficSpike, sim.ChaosCacheFlush,
			sim.ChaosNetworkPartition, sim.ChaosLatencyInjection}}
	case difficultyType:
		return map[string]any{"enum": Difficulties()}
	case rawMessageType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.typeSchema(t.Elem())
	case reflect.Struct:
		name := t.Name()
		if _, done := g.defs[name]; !done {
			g.defs[name] = nil // reserve against recursion
			g.defs[name] = g.object(t, name)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.typeSchema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.typeSchema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	}
	return map[string]any{}
}

// kindRulesByKind is catalog.components: one property per component type, whose fixed
// and limits name that type's parameters.
func (g *schemaGen) kindRulesByKind() map[string]any {
	base := g.typeSchema(reflect.TypeFor[KindRules]())
	props := map[string]any{}
	for _, k := range sim.Kinds() {
		fixed := map[string]any{}
		var numeric []string
		for _, spec := range sim.Params(k) {
			if spec.Name == "instance_type" {
				continue
			}
			fixed[spec.Name] = paramSchema(spec)
			if (spec.Type == "number" || spec.Type == "integer") && contains(knobs[k], spec.Name) {
				numeric = append(numeric, spec.Name)
			}
		}
		limits := map[string]any{"type": "object", "additionalProperties": map[string]any{"$ref": "#/$defs/Range"}}
		if len(numeric) > 0 {
			limits["propertyNames"] = map[string]any{"enum": numeric}
		} else {
			limits["maxProperties"] = 0
		}
		props[string(k)] = map[string]any{
			"allOf": []any{base, map[string]any{"properties": map[string]any{
				"fixed":  map[string]any{"type": "object", "properties": fixed, "additionalProperties": false},
				"limits": limits,
			}}},
		}
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false, "minProperties": 1}
}

// paramsByKind gives a component's params the schema of its type's parameter table.
func (g *schemaGen) paramsByKind() []any {
	var out []any
	for _, k := range sim.Kinds() {
		props := map[string]any{}
		for _, spec := range sim.Params(k) {
			props[spec.Name] = paramSchema(spec)
		}
		out = append(out, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"const": k}}, "required": []string{"type"}},
			"then": map[string]any{"properties": map[string]any{"params": map[string]any{"type": "object", "properties": props, "additionalProperties": false}}},
		})
	}
	return out
}

func paramSchema(spec sim.ParamSpec) map[string]any {
	s := map[string]any{"description": spec.Doc}
	switch spec.Type {
	case "number", "integer":
		s["type"] = spec.Type
		s["minimum"], s["maximum"] = spec.Min, spec.Max
		s["default"] = spec.Default
	case "boolean":
		s["type"] = "boolean"
		s["default"] = spec.Default
	case "enum":
		s["enum"] = spec.Enum
		s["default"] = spec.Default
	default:
		s["type"] = "string"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
