package challenges

import (
	"math"

	"backpressure/internal/sim"
)

// Prices before a run. A design's cost per hour is known only once it runs (autoscalers,
// per-request charges), but its range is known before: CostEstimate's Low is what its units
// cost idle (autoscaled pools at their floor, per-request charges at nothing), its High what
// they cost at their ceilings with every per-request charge at the most requests the level
// can send (its traffic's peak, with chaos spikes, times one plus the client's retries) and
// every function execution as long as it may last (max_execution_ms). The engine's cost rule
// is the tick's price in sim's recordComponents: units × price per hour, replicas at their
// own type's price, queue workers per hour, per-request charges per million, functions per
// GB-second of execution, and a balancer's health checks per million probes (a probe of
// each backend every interval: sim.ProbeCostPerHour), which cost the same whatever the
// load, so Low and High both count them.
// TestCostEstimateContainsTheMeasuredCost holds every reference solution and starting
// design of the campaign inside its range.

// CostRange bounds a design's mean cost per hour on a level, in dollars.
type CostRange struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// CostEstimate is the range d's cost per hour falls in on the level, before it runs.
func (l *Level) CostEstimate(d sim.Design) CostRange {
	if l.c == nil {
		return CostRange{}
	}
	peak := l.peakAttemptsRPS()
	callees := map[string]int{}
	for _, e := range d.Edges {
		callees[e.From]++
	}
	var r CostRange
	for _, comp := range d.Components {
		low, high := l.componentCost(comp, peak, callees[comp.ID])
		r.Low += low
		r.High += high
	}
	return r
}

// fixedHourly is what a design costs an hour before any request: its units at their
// hourly prices, autoscaled pools at their floor.
func (l *Level) fixedHourly(d sim.Design) float64 { return l.CostEstimate(d).Low }

// componentCost is one component's range: idle at its floor, and at its ceiling with
// peak attempts a second passing through it (backends: how many components it calls).
func (l *Level) componentCost(comp sim.Component, peak float64, backends int) (low, high float64) {
	cat := l.c.cfg.Catalog
	specs := map[string]sim.ParamSpec{}
	for _, s := range sim.Params(comp.Type) {
		specs[s.Name] = s
	}
	num := func(name string) float64 {
		if s, ok := specs[name]; ok {
			return numberOf(mustJSON(currentValue(comp, s)))
		}
		return 0
	}
	typeOf := func(name string) sim.InstanceType {
		t := ""
		if s, ok := specs[name]; ok {
			t, _ = currentValue(comp, s).(string)
		}
		if t == "" {
			t = defaultType(cat, comp.Type)
		}
		return cat[t]
	}
	it := typeOf("instance_type")
	perRequest := peak * 3600 / 1e6 * it.PricePerMillion
	switch comp.Type {
	case sim.KindLoadBalancer:
		checks, _ := currentValue(comp, specs["health_checks"]).(bool)
		low = it.PricePerHour*max(1, num("instances")) +
			sim.ProbeCostPerHour(checks, num("health_check_interval_sec"), backends, it.PricePerMillionProbes)
	case sim.KindAPIGateway:
		low = it.PricePerHour * max(1, num("instances"))
	case sim.KindAppService:
		low = it.PricePerHour * max(1, num("replicas"))
	case sim.KindContainerPool:
		low = it.PricePerHour * max(1, num("min_replicas"))
		return low, it.PricePerHour*max(1, num("min_replicas"), num("max_replicas")) + perRequest
	case sim.KindDatabase:
		rt := it
		if t, _ := currentValue(comp, specs["replica_instance_type"]).(string); t != "" {
			rt = cat[t]
		}
		low = it.PricePerHour + rt.PricePerHour*num("read_replicas")
	case sim.KindQueue:
		low = it.PricePerHour + it.PricePerWorkerHour*num("workers")
	case sim.KindServerless:
		// Each execution lasts at most max_execution_ms, whatever it waits on.
		gbSec := peak * num("max_execution_ms") / 1000 * num("memory_mb") / 1024
		return 0, perRequest + gbSec*3600*it.PricePerGBSecond
	case sim.KindCache:
		nodes := 1.0
		if it.MemoryGB > 0 {
			if mem := num("memory_gb"); mem > 0 {
				nodes = math.Ceil(mem/it.MemoryGB - 1e-9)
			}
		}
		low = it.PricePerHour * nodes
	default:
		low = it.PricePerHour
	}
	return low, low + perRequest
}

// peakAttemptsRPS is the most attempts a second the level's clients may send over the
// evaluation window: the traffic's peak, spikes and traffic_spike chaos included, times one
// plus the client's retries.
func (l *Level) peakAttemptsRPS() float64 {
	tick := l.Run.TickMs
	if tick <= 0 {
		tick = 100
	}
	dt := tick / 1000
	peak := 0.0
	for t := l.WarmupSec(); t <= l.Run.DurationSec+1e-9; t += dt {
		rate := l.Run.Traffic.Rate(t)
		for _, e := range l.Run.Chaos {
			if e.Kind == sim.ChaosTrafficSpike && t >= e.AtSec && t < e.AtSec+e.DurationSec && e.Params.Multiplier > 1 {
				rate *= e.Params.Multiplier
			}
		}
		peak = max(peak, rate)
	}
	return peak * float64(1+max(0, l.Run.Client.MaxRetries))
}
