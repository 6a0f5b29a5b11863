package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// paramType is the JSON type a parameter accepts.
type paramType int

const (
	paramNumber paramType = iota // any finite number in [Min, Max]
	paramInt                     // an integral number in [Min, Max]
	paramBool
	paramEnum // one of Enum
	paramString
)

// ParamSpec documents one parameter of one component kind. The table below is the single
// source of truth for validation, defaults, the JSON Schema and the player-facing docs.
type ParamSpec struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"` // number, integer, boolean, enum, string
	Min     float64  `json:"min,omitempty"`
	Max     float64  `json:"max,omitempty"`
	Default any      `json:"default,omitempty"`
	Enum    []string `json:"enum,omitempty"`
	Doc     string   `json:"doc"`
	typ     paramType
}

func num(name string, lo, hi, def float64, doc string) ParamSpec {
	return ParamSpec{Name: name, Type: "number", Min: lo, Max: hi, Default: def, Doc: doc, typ: paramNumber}
}

func integer(name string, lo, hi, def float64, doc string) ParamSpec {
	return ParamSpec{Name: name, Type: "integer", Min: lo, Max: hi, Default: def, Doc: doc, typ: paramInt}
}

func boolean(name string, def bool, doc string) ParamSpec {
	return ParamSpec{Name: name, Type: "boolean", Default: def, Doc: doc, typ: paramBool}
}

func enum(name string, def string, values []string, doc string) ParamSpec {
	return ParamSpec{Name: name, Type: "enum", Default: def, Enum: values, Doc: doc, typ: paramEnum}
}

func str(name string, def string, doc string) ParamSpec {
	return ParamSpec{Name: name, Type: "string", Default: def, Doc: doc, typ: paramString}
}

// Limits on numbers are explicit so that no design can make the engine overflow or spin:
// a pool never has more than maxWorkers workers, a buffer never more than maxBuffer places.
const (
	maxWorkers = 10_000
	// maxCacheNodes bounds a cache cluster (memory_gb over its instance type's memory).
	maxCacheNodes = 64
	maxBuffer     = 10_000_000
)

var commonParams = []ParamSpec{
	str("instance_type", "", "catalog instance type; empty means the catalog's default for this kind"),
}

// paramTable lists every parameter of every kind. Units are in the names.
var paramTable = map[Kind][]ParamSpec{
	KindLoadBalancer: {
		integer("instances", 1, 1000, 1, "balancer instances; capacity and buffer scale with them"),
		enum("algorithm", "round_robin", []string{"round_robin", "least_connections", "consistent_hash"},
			"how requests are split over backends: round-robin splits evenly and deals each backend a more regular stream (shorter waits), least-connections to the backend with the fewest requests outstanding (a slow backend gets less, a dead one that fails at once everything until the health checks notice), consistent hash by each backend's share of a hash ring"),
		boolean("health_checks", true, "route around failed or cut-off backends once the checks notice; without them a failed backend still receives its share, which fails"),
		num("health_check_interval_sec", 0.1, 3600, 5, "time between two health checks of a backend"),
		integer("unhealthy_threshold", 1, 100, 2, "failed checks in a row before a backend is taken out: until then, (threshold − 1) to threshold intervals after it fails (the checks' phase decides), its share still fails; a repaired backend is let back in at its next passing check"),
	},
	KindAPIGateway: {
		integer("instances", 1, 1000, 1, "gateway instances; capacity and buffer scale with them"),
		num("rate_limit_rps", 0, 1e7, 0, "requests per second admitted, as a token bucket holding one second's worth, full at the start: after a quieter spell up to a second's worth more passes at once; the excess gets 429 (0 = no limit)"),
		num("auth_latency_ms", 0, 10_000, 5, "authentication overhead added to every request"),
		num("breaker_error_threshold", 0, 1, 0.5, "downstream error rate that opens the circuit breaker (0 = no breaker)"),
		num("breaker_window_sec", 0.1, 3600, 10, "window over which the downstream error rate is averaged"),
		num("breaker_open_sec", 0.1, 3600, 5, "how long the breaker stays open before probing"),
		num("breaker_probe_ratio", 0.001, 1, 0.05, "share of traffic let through while half-open"),
	},
	KindAppService: {
		integer("replicas", 1, 10_000, 1, "replicas, each with its own workers and waiting room, dealt requests in turn"),
		integer("concurrency", 1, 10_000, 6, "requests one replica serves at once (workers per replica)"),
		num("service_time_ms", 0.01, 600_000, 15, "own work per request, excluding synchronous downstream calls"),
		integer("queue_per_replica", 0, 1_000_000, 64, "waiting places of each replica's own room; a replica with its room full rejects (503)"),
	},
	KindContainerPool: {
		integer("min_replicas", 1, 10_000, 2, "replicas the autoscaler never goes below (also the starting count)"),
		integer("max_replicas", 1, 10_000, 10, "replicas the autoscaler never goes above"),
		num("target_utilization", 0.05, 1, 0.6, "utilisation the autoscaler steers towards"),
		integer("concurrency", 1, 10_000, 6, "requests one replica serves at once"),
		num("service_time_ms", 0.01, 600_000, 15, "own work per request, excluding synchronous downstream calls"),
		integer("queue_per_replica", 0, 1_000_000, 64, "waiting places of each replica's own room; a replica with its room full rejects (503)"),
		num("scale_out_delay_sec", 0, 3600, 90, "time from the decision to scale out until new replicas serve"),
		num("scale_in_delay_sec", 0, 7200, 300, "time utilisation must stay low before replicas are removed"),
	},
	KindServerless: {
		integer("max_concurrency", 1, 10_000, 1000, "concurrent executions; beyond it requests are throttled (429)"),
		num("service_time_ms", 0.01, 900_000, 20, "execution time per request, excluding synchronous downstream calls"),
		num("cold_start_ms", 0, 60_000, 250, "extra latency of an invocation that has to start a new instance"),
		num("idle_timeout_sec", 0, 86_400, 600, "an instance idle this long is reclaimed, so the next invocation starts cold"),
		num("max_execution_ms", 1, 900_000, 30_000, "executions longer than this are terminated as errors"),
		integer("memory_mb", 128, 10_240, 1024, "memory per instance, billed per GB-second; CPU comes with it: service_time_ms is at 1,024 MB, and more memory is faster up to 1,769 MB"),
	},
	KindCache: {
		num("hit_ratio", 0, 1, 0.8, "share of reads found in the cache once warm, with enough memory"),
		num("memory_gb", 0, 10_000, 0, "memory (0 = the instance type's); beyond one node's memory the cache becomes a cluster of as many nodes, each priced; below the level's working set the hit ratio drops in proportion"),
		num("warmup_sec", 0, 86_400, 60, "time for the hit ratio to rebuild linearly after a flush"),
	},
	KindCDN: {
		num("hit_ratio", 0, 1, 0.9, "share of static requests served at the edge once warm"),
		num("ttl_sec", 0, 86_400, 300, "time for the hit ratio to rebuild linearly after a purge"),
	},
	KindDatabase: {
		integer("connections", 1, 10_000, 10, "connections in the pool of each node (workers)"),
		num("query_time_ms", 0.01, 600_000, 8, "time one query holds a connection"),
		integer("queue_per_connection", 0, 1_000_000, 200, "waiting queries per connection before rejects"),
		integer("read_replicas", 0, 64, 0, "read replicas; each serves reads and replays every write at 40% of its cost"),
		enum("read_from", "spread", []string{"spread", "replicas"},
			"where reads go: spread over the primary and the replicas in proportion to their spare capacity, or to the replicas only, leaving the primary to the writes"),
		str("replica_instance_type", "", "catalog database type of the read replicas; empty means the primary's"),
	},
	KindQueue: {
		integer("workers", 0, 100_000, 4, "consumers; each processes one job at a time"),
		num("job_time_ms", 0.01, 600_000, 20, "worker time per job, excluding its database write"),
		integer("buffer", 1, maxBuffer, 10_000, "messages the queue holds; when full, producers' writes fail"),
	},
}

// Params returns the parameter table of a kind (nil for an unknown kind), common parameters last.
func Params(k Kind) []ParamSpec {
	specs, ok := paramTable[k]
	if !ok {
		return nil
	}
	return append(append([]ParamSpec(nil), specs...), commonParams...)
}

// paramValues is a component's parameters after validation: every spec'd name present.
type paramValues struct {
	nums map[string]float64
	strs map[string]string
}

func (p paramValues) f(name string) float64 { return p.nums[name] }
func (p paramValues) i(name string) int     { return int(p.nums[name]) }
func (p paramValues) b(name string) bool    { return p.nums[name] != 0 }
func (p paramValues) s(name string) string  { return p.strs[name] }

// decodeParams checks raw parameters against the kind's table and fills defaults.
// Every problem is reported, each with its JSON path.
func decodeParams(kind Kind, raw map[string]json.RawMessage, path func() string, errs *Problems) paramValues {
	own := paramTable[kind]
	n := len(own) + len(commonParams)
	vals := paramValues{nums: make(map[string]float64, n), strs: map[string]string{}}
	for k := range n {
		var spec *ParamSpec
		if k < len(own) {
			spec = &own[k]
		} else {
			spec = &commonParams[k-len(own)]
		}
		p := func() string { return path() + "." + spec.Name } // only a problem needs its path
		v, present := raw[spec.Name]
		if present && isJSONNull(v) {
			present = false
		}
		switch spec.typ {
		case paramNumber, paramInt:
			x := spec.Default.(float64)
			if present {
				var ok bool
				if x, ok = decodeNumber(v, p, spec, errs); !ok {
					x = spec.Default.(float64)
				}
			}
			vals.nums[spec.Name] = x
		case paramBool:
			b := spec.Default.(bool)
			if present {
				if err := json.Unmarshal(v, &b); err != nil {
					errs.add(p(), "must be true or false")
					b = spec.Default.(bool)
				}
			}
			vals.nums[spec.Name] = 0
			if b {
				vals.nums[spec.Name] = 1
			}
		case paramEnum, paramString:
			s := spec.Default.(string)
			if present {
				if err := json.Unmarshal(v, &s); err != nil {
					errs.add(p(), "must be a string")
					s = spec.Default.(string)
				} else if spec.typ == paramEnum && !contains(spec.Enum, s) {
					errs.add(p(), fmt.Sprintf("must be one of %v, not %q", spec.Enum, s))
					s = spec.Default.(string)
				} else if len(s) > maxIDLen {
					errs.add(p(), fmt.Sprintf("is longer than %d characters", maxIDLen))
				}
			}
			vals.strs[spec.Name] = s
		}
	}
	known := func(name string) bool {
		_, num := vals.nums[name]
		_, str := vals.strs[name]
		return num || str
	}
	unknown := false
	for name := range raw {
		unknown = unknown || !known(name)
	}
	if unknown { // sorting and listing the names costs only a design that has a problem
		specs := Params(kind)
		for _, name := range sortedKeys(raw) { // in the order of the names, as a player reads them
			if !known(name) {
				errs.add(path()+"."+name, fmt.Sprintf("is not a parameter of %s (known: %s)", kind, specNames(specs)))
			}
		}
	}
	return vals
}

func decodeNumber(v json.RawMessage, path func() string, spec *ParamSpec, errs *Problems) (float64, bool) {
	n, ok := numberText(v)
	if !ok {
		errs.add(path(), "must be a number")
		return 0, false
	}
	x, err := strconv.ParseFloat(n, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		errs.add(path(), "must be a finite number")
		return 0, false
	}
	if spec.typ == paramInt && x != math.Trunc(x) {
		errs.add(path(), fmt.Sprintf("must be a whole number, not %s", n))
		return 0, false
	}
	if x < spec.Min || x > spec.Max {
		errs.add(path(), fmt.Sprintf("must be between %g and %g, not %s", spec.Min, spec.Max, n))
		return 0, false
	}
	return x, true
}

// numberText is the text of the JSON number v, as a decoder reads it.
func numberText(v json.RawMessage) (string, bool) {
	if numberLiteral(v) {
		return string(v), true // what the decoder would make of it
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return "", false
	}
	return n.String(), true
}

// numberLiteral: v is one JSON number and nothing else, not even space around it, so a
// decoder would read it as exactly its text. A design's parameters are mostly numbers, and
// a decoder for each cost more than the rest of the checks.
func numberLiteral(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	first, last := v[0], v[len(v)-1]
	return (first == '-' || '0' <= first && first <= '9') && '0' <= last && last <= '9' && json.Valid(v)
}

func isJSONNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func specNames(specs []ParamSpec) string {
	var b bytes.Buffer
	for i, s := range specs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Name)
	}
	return b.String()
}
