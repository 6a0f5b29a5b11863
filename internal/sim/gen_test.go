package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
)

// randomDesign builds a plausible layered design from a seed: an optional CDN, a balancer,
// one to three app tiers, an optional cache, a database with replicas, an optional queue.
func randomDesign(seed uint64) (Design, Config) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var d Design
	add := func(id string, k Kind, params map[string]any) {
		raw := map[string]json.RawMessage{}
		for name, v := range params {
			b, _ := json.Marshal(v)
			raw[name] = b
		}
		d.Components = append(d.Components, Component{ID: id, Type: k, Params: raw})
	}
	edge := func(a, b string) { d.Edges = append(d.Edges, Edge{From: a, To: b}) }
	front := "lb"
	if rng.IntN(3) == 0 {
		add("gw", KindAPIGateway, map[string]any{"rate_limit_rps": float64(rng.IntN(3000)),
			"breaker_error_threshold": rng.Float64() * 0.8, "breaker_window_sec": 1 + rng.Float64()*5})
		edge("gw", "lb")
		front = "gw"
	}
	if rng.IntN(2) == 0 {
		add("cdn", KindCDN, map[string]any{"hit_ratio": rng.Float64()})
		edge("cdn", front)
	}
	algs := []string{"round_robin", "least_connections", "consistent_hash"}
	add("lb", KindLoadBalancer, map[string]any{"algorithm": algs[rng.IntN(3)]})
	apps := 1 + rng.IntN(3)
	hasCache, hasQueue := rng.IntN(2) == 0, rng.IntN(2) == 0
	add("db", KindDatabase, map[string]any{"connections": 2 + rng.IntN(30), "query_time_ms": 1 + rng.Float64()*20,
		"read_replicas": rng.IntN(3), "queue_per_connection": rng.IntN(300)})
	if hasCache {
		add("cache", KindCache, map[string]any{"hit_ratio": rng.Float64()})
	}
	if hasQueue {
		add("q", KindQueue, map[string]any{"workers": rng.IntN(40), "job_time_ms": 1 + rng.Float64()*30, "buffer": 1 + rng.IntN(5000)})
		edge("q", "db")
	}
	for i := 0; i < apps; i++ {
		id := fmt.Sprintf("app%d", i)
		switch rng.IntN(4) {
		case 0:
			add(id, KindContainerPool, map[string]any{"min_replicas": 1 + rng.IntN(3), "max_replicas": 4 + rng.IntN(6),
				"scale_out_delay_sec": rng.Float64() * 20, "scale_in_delay_sec": rng.Float64() * 20})
		case 1:
			add(id, KindServerless, map[string]any{"max_concurrency": 1 + rng.IntN(200), "cold_start_ms": rng.Float64() * 500,
				"idle_timeout_sec": rng.Float64() * 10, "max_execution_ms": 10 + rng.Float64()*1000})
		default:
			add(id, KindAppService, map[string]any{"replicas": 1 + rng.IntN(6), "concurrency": 1 + rng.IntN(16),
				"service_time_ms": 1 + rng.Float64()*40, "queue_per_replica": rng.IntN(100)})
		}
		edge("lb", id)
		edge(id, "db")
		if hasCache {
			edge(id, "cache")
		}
		if hasQueue {
			edge(id, "q")
		}
	}
	shares := [4]float64{rng.Float64(), rng.Float64(), rng.Float64(), rng.Float64()}
	sum := shares[0] + shares[1] + shares[2] + shares[3]
	cfg := Config{TickMs: 100, DurationSec: 30,
		Traffic: Traffic{Kind: "wave", RPS: 100 + rng.Float64()*2000, PeriodSec: 20},
		Mix:     Mix{Static: shares[0] / sum, Read: shares[1] / sum, Write: shares[2] / sum},
		Client:  Client{TimeoutMs: 50 + rng.Float64()*2000, MaxRetries: rng.IntN(4), RetryBudget: float64(rng.IntN(2)) * 0.2},
	}
	cfg.Mix.AsyncWrite = 1 - cfg.Mix.Static - cfg.Mix.Read - cfg.Mix.Write
	cfg.Traffic.AmplitudeRPS = cfg.Traffic.RPS * rng.Float64()
	// A chaos schedule drawn from every kind that has a target in this design.
	at := func() float64 { return float64(rng.IntN(25)) }
	for k := rng.IntN(4); k > 0; k-- {
		e := ChaosEvent{AtSec: at(), DurationSec: 1 + float64(rng.IntN(5))}
		switch rng.IntN(5) {
		case 0:
			e.Kind, e.Params.Multiplier = ChaosTrafficSpike, 1+rng.Float64()*4
		case 1:
			e.Kind, e.Target = ChaosNodeFailure, d.Components[rng.IntN(len(d.Components))].ID
		case 2:
			if !hasCache {
				continue
			}
			e.Kind, e.Target, e.DurationSec = ChaosCacheFlush, "cache", 0
		case 3:
			ed := d.Edges[rng.IntN(len(d.Edges))]
			e.Kind, e.From, e.To = ChaosNetworkPartition, ed.From, ed.To
		case 4:
			ed := d.Edges[rng.IntN(len(d.Edges))]
			e.Kind, e.From, e.To, e.Params.ExtraLatencyMs = ChaosLatencyInjection, ed.From, ed.To, rng.Float64()*500
		}
		e.ID = fmt.Sprintf("e%d", k)
		cfg.Chaos = append(cfg.Chaos, e)
	}
	// Overlapping failures of one target are invalid by design; keep the first.
	var kept []ChaosEvent
	for _, e := range cfg.Chaos {
		clash := false
		for _, k := range kept {
			if k.Kind == e.Kind && (e.Kind == ChaosNodeFailure || e.Kind == ChaosNetworkPartition) &&
				k.Target == e.Target && k.From == e.From && k.To == e.To {
				clash = true
			}
		}
		if !clash {
			kept = append(kept, e)
		}
	}
	cfg.Chaos = kept
	return d, cfg
}
