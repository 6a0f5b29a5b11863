package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// builders return functions that add a component (parameters as JSON) and an edge to d.
func (d *Design) builders() (add func(id string, k Kind, params string), edge func(from, to string)) {
	add = func(id string, k Kind, params string) {
		var p map[string]json.RawMessage
		if params != "" {
			mustJSON(params, &p)
		}
		d.Components = append(d.Components, Component{ID: id, Type: k, Params: p})
	}
	edge = func(from, to string) { d.Edges = append(d.Edges, Edge{From: from, To: to}) }
	return add, edge
}

// serviceDesign is a realistic design of n ≥ 20 components with every kind: a CDN, a
// gateway and a balancer in front of an autoscaled web tier, which calls services through
// an internal balancer; each service owns its cache, database and, for writes, a queue.
// Groups of six components (service, cache, database, queue, plus a serverless search and a
// second service) are added until n is reached.
func serviceDesign(n int) Design {
	var d Design
	add, edge := d.builders()
	add("cdn", KindCDN, `{"hit_ratio":0.85}`)
	add("gw", KindAPIGateway, `{"instances":2,"rate_limit_rps":20000,"breaker_error_threshold":0.5}`)
	add("lb", KindLoadBalancer, `{"instances":4}`)
	add("web", KindContainerPool, `{"min_replicas":4,"max_replicas":20,"concurrency":32,"service_time_ms":4}`)
	add("mesh", KindLoadBalancer, `{"instances":2,"algorithm":"least_connections"}`)
	edge("cdn", "gw")
	edge("gw", "lb")
	edge("lb", "web")
	edge("web", "mesh")
	for g := 0; len(d.Components)+6 <= n || g == 0; g++ {
		svc, alt := fmt.Sprintf("svc%d", g), fmt.Sprintf("fn%d", g)
		add(svc, KindAppService, `{"replicas":4,"concurrency":16,"service_time_ms":10}`)
		add(alt, KindServerless, `{"max_concurrency":400,"service_time_ms":15}`)
		add("cache"+svc, KindCache, `{"hit_ratio":0.8}`)
		add("db"+svc, KindDatabase, `{"connections":40,"read_replicas":2}`)
		add("q"+svc, KindQueue, `{"workers":20}`)
		add("dbfn"+svc, KindDatabase, `{"connections":20}`)
		edge("mesh", svc)
		edge("mesh", alt)
		edge(svc, "cache"+svc)
		edge(svc, "db"+svc)
		edge(svc, "q"+svc)
		edge("q"+svc, "db"+svc)
		edge(alt, "dbfn"+svc)
	}
	for len(d.Components) < n {
		id := fmt.Sprintf("extra%d", len(d.Components))
		add(id, KindAppService, `{"replicas":2}`)
		edge("mesh", id)
		edge(id, "dbsvc0")
	}
	return d
}

func benchChaos() []ChaosEvent {
	return []ChaosEvent{
		{Kind: ChaosTrafficSpike, AtSec: 120, DurationSec: 30, Params: ChaosParams{Multiplier: 2}},
		{Kind: ChaosCacheFlush, AtSec: 200, Target: "cachesvc0"},
		{Kind: ChaosNodeFailure, AtSec: 300, DurationSec: 20, Target: "fn0"},
		{Kind: ChaosNetworkPartition, AtSec: 400, DurationSec: 10, From: "mesh", To: "svc0"},
		{Kind: ChaosLatencyInjection, AtSec: 500, DurationSec: 30, From: "svc0", To: "dbsvc0", Params: ChaosParams{ExtraLatencyMs: 50}},
	}
}

// benchDesign is a flat design of n components (n ≥ 8): n−5 app tiers behind one balancer,
// each reading through one cache, writing to one replicated database and queueing
// asynchronous writes: the most paths per component a design of that size can have.
func benchDesign(n int) Design {
	var d Design
	add, edge := d.builders()
	add("cdn", KindCDN, `{"hit_ratio":0.85}`)
	add("lb", KindLoadBalancer, `{"instances":2,"algorithm":"least_connections"}`)
	add("cache", KindCache, `{"hit_ratio":0.8,"memory_gb":4}`)
	add("db", KindDatabase, `{"connections":40,"read_replicas":2}`)
	add("q", KindQueue, `{"workers":20}`)
	edge("cdn", "lb")
	edge("q", "db")
	apps := n - 5
	for i := 0; i < apps; i++ {
		id := fmt.Sprintf("app%d", i)
		add(id, KindAppService, `{"replicas":3,"concurrency":8,"service_time_ms":12}`)
		edge("lb", id)
		edge(id, "cache")
		edge(id, "db")
		edge(id, "q")
	}
	return d
}

func benchConfig(ticks int) Config {
	return Config{TickMs: 100, DurationSec: float64(ticks) / 10,
		Traffic: Traffic{Kind: "wave", RPS: 2000, AmplitudeRPS: 1200, PeriodSec: 300,
			Spikes: []TrafficSpike{{AtSec: 100, DurationSec: 20, RPS: 2500}}},
		Mix:    Mix{Static: 0.3, Read: 0.5, Write: 0.1, AsyncWrite: 0.1},
		Client: Client{TimeoutMs: 800, MaxRetries: 2, BackoffMs: 100, BackoffMultiplier: 2}}
}

// BenchmarkRun keeps its sub-benchmark names stable so figures can be followed over time.
// It runs the service design with every component kind and a chaos schedule of every kind.
func BenchmarkRun(b *testing.B) {
	for _, size := range []struct{ components, ticks int }{{20, 6000}, {64, 6000}, {20, 36000}, {64, 36000}} {
		b.Run(fmt.Sprintf("components=%d/ticks=%d", size.components, size.ticks), func(b *testing.B) {
			cfg := benchConfig(size.ticks)
			cfg.Chaos = benchChaos()
			benchmarkRuns(b, serviceDesign(size.components), cfg)
		})
	}
}

// BenchmarkRunFlat is the worst case for a design's size: every app tier reaches every store.
func BenchmarkRunFlat(b *testing.B) {
	for _, size := range []struct{ components, ticks int }{{20, 6000}, {64, 6000}} {
		b.Run(fmt.Sprintf("components=%d/ticks=%d", size.components, size.ticks), func(b *testing.B) {
			benchmarkRuns(b, benchDesign(size.components), benchConfig(size.ticks))
		})
	}
}

func benchmarkRuns(b *testing.B, d Design, cfg Config) {
	if err := Validate(d, cfg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), d, cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunSteady is the flat design under constant traffic with no chaos and no
// asynchronous writes (so no queue stands): after a few ticks every tick repeats the last
// one exactly, and the engine copies it (state.go). reuse=off computes every tick: the
// difference is what tick reuse saves, the reuse=on figure the floor of a repeated tick.
// (The service design does not settle: its autoscaler and its functions' warm instances
// keep moving under constant load.)
func BenchmarkRunSteady(b *testing.B) {
	for _, reuse := range []string{"on", "off"} {
		b.Run(fmt.Sprintf("components=20/ticks=6000/reuse=%s", reuse), func(b *testing.B) {
			d := benchDesign(20)
			cfg := benchConfig(6000)
			cfg.Traffic = Traffic{Kind: "constant", RPS: 2000}
			cfg.Mix = Mix{Static: 0.3, Read: 0.6, Write: 0.1}
			if err := Validate(d, cfg); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			reused := 0
			for b.Loop() {
				p, err := Prepare(d, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.RunWith(context.Background(), RunOptions{DisableReuse: reuse == "off"}); err != nil {
					b.Fatal(err)
				}
				reused = p.Reused()
			}
			b.ReportMetric(float64(reused), "reused-ticks")
		})
	}
}
