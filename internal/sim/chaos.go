package sim

import "fmt"

// ChaosKind names a kind of chaos event.
type ChaosKind string

// Chaos event kinds (seed simulation-design).
const (
	ChaosNodeFailure      ChaosKind = "node_failure"      // Target stops serving for the duration
	ChaosTrafficSpike     ChaosKind = "traffic_spike"     // ingress × Params.Multiplier for the duration
	ChaosCacheFlush       ChaosKind = "cache_flush"       // Target cache or CDN loses its contents
	ChaosNetworkPartition ChaosKind = "network_partition" // the From→To edge drops all traffic
	ChaosLatencyInjection ChaosKind = "latency_injection" // the From→To edge is Params.ExtraLatencyMs slower
)

var chaosKinds = []ChaosKind{ChaosNodeFailure, ChaosTrafficSpike, ChaosCacheFlush, ChaosNetworkPartition, ChaosLatencyInjection}

// ChaosEvent strikes at AtSec and lasts DurationSec (a cache flush is instantaneous; its
// effect lasts the warm-up).
type ChaosEvent struct {
	ID          string      `json:"id,omitempty"` // defaults to "<kind>@<at_sec>s"
	Kind        ChaosKind   `json:"kind"`
	AtSec       float64     `json:"at_sec"`
	DurationSec float64     `json:"duration_sec,omitempty"`
	Target      string      `json:"target,omitempty"` // component id (node_failure, cache_flush)
	From        string      `json:"from,omitempty"`   // edge (network_partition, latency_injection)
	To          string      `json:"to,omitempty"`
	Params      ChaosParams `json:"params,omitempty"`
}

// ChaosParams are the parameters of an event; which apply depends on its kind.
type ChaosParams struct {
	Multiplier     float64  `json:"multiplier,omitempty"`       // traffic_spike
	WarmupSec      *float64 `json:"warmup_sec,omitempty"`       // cache_flush; default: the cache's own warmup_sec or the CDN's ttl_sec
	ExtraLatencyMs float64  `json:"extra_latency_ms,omitempty"` // latency_injection
}

func validateChaos(v *validated, errs *Problems) {
	events := v.cfg.Chaos
	if len(events) > MaxChaosEvents {
		errs.addf("chaos", "has %d events; the limit is %d", len(events), MaxChaosEvents)
		return
	}
	// Defaults are filled into a copy: the caller's configuration is never changed.
	v.cfg.Chaos = append([]ChaosEvent(nil), events...)
	events = v.cfg.Chaos
	ids := map[string]int{}
	edges := map[[2]string]bool{}
	for _, e := range v.design.Edges {
		edges[[2]string{e.From, e.To}] = true
	}
	for i := range events {
		e := &events[i]
		p := fmt.Sprintf("chaos[%d]", i)
		okAt := checkNumber(errs, p+".at_sec", e.AtSec, 0, 1e7)
		if okAt && v.cfg.DurationSec > 0 && e.AtSec >= v.cfg.DurationSec {
			errs.addf(p+".at_sec", "is at or after the end of the run (%g s)", v.cfg.DurationSec)
		}
		okDur := checkNumber(errs, p+".duration_sec", e.DurationSec, 0, 1e7)
		if e.ID == "" {
			e.ID = fmt.Sprintf("%s@%gs", e.Kind, e.AtSec)
		}
		if len(e.ID) > maxIDLen {
			errs.addf(p+".id", "is longer than %d characters", maxIDLen)
		}
		if j, dup := ids[e.ID]; dup {
			errs.addf(p+".id", "%q is already the id of chaos[%d]", e.ID, j)
		}
		ids[e.ID] = i
		needsDuration := e.Kind != ChaosCacheFlush
		if okDur && needsDuration && e.DurationSec <= 0 {
			errs.add(p+".duration_sec", "must be positive for "+string(e.Kind))
		}
		target := func(allowed ...Kind) {
			if e.Target == "" {
				errs.add(p+".target", "is required for "+string(e.Kind))
				return
			}
			idx, ok := v.index[e.Target]
			if !ok {
				errs.addf(p+".target", "%q is not a component of this design", e.Target)
				return
			}
			if len(allowed) > 0 {
				k := v.design.Components[idx].Type
				for _, a := range allowed {
					if a == k {
						return
					}
				}
				errs.addf(p+".target", "%q is a %s; %s needs one of %v", e.Target, k, e.Kind, allowed)
			}
		}
		edge := func() {
			if e.From == "" || e.To == "" {
				errs.add(p, string(e.Kind)+" needs from and to naming an edge of the design")
				return
			}
			if !edges[[2]string{e.From, e.To}] {
				errs.addf(p, "the design has no edge %s → %s", e.From, e.To)
			}
		}
		noTarget := func() {
			if e.Target != "" {
				errs.add(p+".target", "is not used by "+string(e.Kind))
			}
		}
		noEdge := func() {
			if e.From != "" || e.To != "" {
				errs.add(p, string(e.Kind)+" does not take from/to")
			}
		}
		switch e.Kind {
		case ChaosNodeFailure:
			target()
			noEdge()
		case ChaosTrafficSpike:
			noTarget()
			noEdge()
			if checkNumber(errs, p+".params.multiplier", e.Params.Multiplier, 0, 100) && e.Params.Multiplier <= 0 {
				errs.add(p+".params.multiplier", "must be positive")
			}
		case ChaosCacheFlush:
			target(KindCache, KindCDN)
			noEdge()
			if e.Params.WarmupSec != nil {
				checkNumber(errs, p+".params.warmup_sec", *e.Params.WarmupSec, 0, 86_400)
			}
		case ChaosNetworkPartition:
			noTarget()
			edge()
		case ChaosLatencyInjection:
			noTarget()
			edge()
			if checkNumber(errs, p+".params.extra_latency_ms", e.Params.ExtraLatencyMs, 0, 600_000) && e.Params.ExtraLatencyMs <= 0 {
				errs.add(p+".params.extra_latency_ms", "must be positive")
			}
		case "":
			errs.addf(p+".kind", "is required (one of %v)", chaosKinds)
		default:
			errs.addf(p+".kind", "%q is not a chaos event (one of %v)", e.Kind, chaosKinds)
		}
		if e.Kind != ChaosTrafficSpike && e.Params.Multiplier != 0 {
			errs.add(p+".params.multiplier", "is only used by traffic_spike")
		}
		if e.Kind != ChaosLatencyInjection && e.Params.ExtraLatencyMs != 0 {
			errs.add(p+".params.extra_latency_ms", "is only used by latency_injection")
		}
		if e.Kind != ChaosCacheFlush && e.Params.WarmupSec != nil {
			errs.add(p+".params.warmup_sec", "is only used by cache_flush")
		}
	}
	// A node cannot fail while it is already down, nor an edge be cut twice at once.
	for i := range events {
		for j := 0; j < i; j++ {
			a, b := events[i], events[j]
			if a.Kind != b.Kind || (a.Kind != ChaosNodeFailure && a.Kind != ChaosNetworkPartition) {
				continue
			}
			if a.Target != b.Target || a.From != b.From || a.To != b.To {
				continue
			}
			if a.AtSec < b.AtSec+b.DurationSec && b.AtSec < a.AtSec+a.DurationSec {
				errs.addf(fmt.Sprintf("chaos[%d]", i), "overlaps chaos[%d]: the same %s cannot strike twice at once", j, a.Kind)
			}
		}
	}
}
