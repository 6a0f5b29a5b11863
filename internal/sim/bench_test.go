package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// benchDesign is a realistic design of n components (n ≥ 8): a CDN and a balancer in front
// of app tiers that read through a cache, write to a replicated database and hand
// asynchronous writes to a queue.
func benchDesign(n int) Design {
	var d Design
	add := func(id string, k Kind, params string) {
		var p map[string]json.RawMessage
		if params != "" {
			mustJSON(params, &p)
		}
		d.Components = append(d.Components, Component{ID: id, Type: k, Params: p})
	}
	edge := func(a, b string) { d.Edges = append(d.Edges, Edge{From: a, To: b}) }
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
func BenchmarkRun(b *testing.B) {
	for _, size := range []struct{ components, ticks int }{{20, 6000}, {64, 6000}, {20, 36000}, {64, 36000}} {
		b.Run(fmt.Sprintf("components=%d/ticks=%d", size.components, size.ticks), func(b *testing.B) {
			d, cfg := benchDesign(size.components), benchConfig(size.ticks)
			if err := Validate(d, cfg); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(context.Background(), d, cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
