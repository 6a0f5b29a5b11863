package challenges

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"backpressure/internal/sim"
)

// layeredDesign is a gateway in front of n apps, each calling each of n more apps, each
// calling each of n databases: the most request paths for its components.
func layeredDesign(n int) sim.Design {
	d := sim.Design{Components: []sim.Component{{ID: "gw", Type: "load_balancer"}}}
	for i := range n {
		d.Components = append(d.Components, sim.Component{ID: fmt.Sprintf("a%d", i), Type: "app_service"},
			sim.Component{ID: fmt.Sprintf("b%d", i), Type: "app_service"}, sim.Component{ID: fmt.Sprintf("db%d", i), Type: "database"})
		d.Edges = append(d.Edges, sim.Edge{From: "gw", To: fmt.Sprintf("a%d", i)})
		for j := range n {
			d.Edges = append(d.Edges, sim.Edge{From: fmt.Sprintf("a%d", i), To: fmt.Sprintf("b%d", j)},
				sim.Edge{From: fmt.Sprintf("b%d", i), To: fmt.Sprintf("db%d", j)})
		}
	}
	return d
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestCalibrateRunCost measures the CPU of runs shaped to be slow in each way a level can
// make them slow, per unit of the cost sim.Cost and RunCost charge. It runs only with
// BACKPRESSURE_CALIBRATE=1 (it measures, it does not check): its figures set the weights of
// costWeights.
func TestCalibrateRunCost(t *testing.T) {
	if os.Getenv("BACKPRESSURE_CALIBRATE") == "" {
		t.Skip("set BACKPRESSURE_CALIBRATE=1 to measure")
	}
	base := func(ticks int) sim.Config {
		return sim.Config{TickMs: 100, DurationSec: float64(ticks) / 10, Traffic: sim.Traffic{Kind: "constant", RPS: 500},
			Mix: sim.Mix{Read: 0.7, Write: 0.3}, Client: sim.Client{TimeoutMs: 2000}}
	}
	type variant struct {
		name string
		cfg  func(c *sim.Config)
	}
	variants := []variant{
		{"constant", func(c *sim.Config) {}},
		{"steps 1000", func(c *sim.Config) {
			c.Traffic.Kind = "step"
			for i := range 1000 {
				c.Traffic.Steps = append(c.Traffic.Steps, sim.TrafficStep{AtSec: float64(i) * c.DurationSec / 1000, RPS: float64(300 + 200*(i%2))})
			}
		}},
		{"spikes 1000", func(c *sim.Config) {
			for i := range 1000 {
				c.Traffic.Spikes = append(c.Traffic.Spikes, sim.TrafficSpike{AtSec: float64(i) * c.DurationSec / 1000, DurationSec: 0.05, RPS: 100})
			}
		}},
		{"latency chaos 100", func(c *sim.Config) {
			for i := range 100 {
				c.Chaos = append(c.Chaos, sim.ChaosEvent{Kind: sim.ChaosLatencyInjection, AtSec: c.DurationSec * (0.1 + 0.8*float64(i)/100),
					DurationSec: c.DurationSec / 5, From: "gw", To: fmt.Sprintf("a%d", i%4), Params: sim.ChaosParams{ExtraLatencyMs: 50}})
			}
		}},
		{"failure chaos 100", func(c *sim.Config) {
			for i := range 100 {
				c.Chaos = append(c.Chaos, sim.ChaosEvent{Kind: sim.ChaosNodeFailure, AtSec: c.DurationSec * (0.1 + 0.8*float64(i)/100),
					DurationSec: c.DurationSec / 200, Target: fmt.Sprintf("db%d", i%4)})
			}
		}},
		{"retries 3", func(c *sim.Config) {
			c.Client.MaxRetries, c.Client.TimeoutMs, c.Traffic.RPS = 3, 50, 5000
		}},
		{"steps 1000 retries 3", func(c *sim.Config) {
			c.Client.MaxRetries, c.Client.TimeoutMs, c.Client.BackoffMs, c.Client.BackoffMultiplier = 3, 50, 200, 2
			c.Traffic.Kind = "step"
			for i := range 1000 {
				c.Traffic.Steps = append(c.Traffic.Steps, sim.TrafficStep{AtSec: float64(i) * c.DurationSec / 1000, RPS: float64(3000 + 2000*(i%2))})
			}
		}},
		{"steps 1000 retries 10", func(c *sim.Config) {
			c.Client.MaxRetries, c.Client.TimeoutMs, c.Client.BackoffMs, c.Client.BackoffMultiplier = 10, 50, 200, 2
			c.Traffic.Kind = "step"
			for i := range 1000 {
				c.Traffic.Steps = append(c.Traffic.Steps, sim.TrafficStep{AtSec: float64(i) * c.DurationSec / 1000, RPS: float64(3000 + 2000*(i%2))})
			}
		}},
	}
	for _, n := range []int{4, 12} {
		d := layeredDesign(n)
		for _, v := range variants {
			cfg := base(600)
			v.cfg(&cfg)
			p, err := sim.Prepare(d, cfg)
			if err != nil {
				t.Fatalf("%s: %v", v.name, err)
			}
			start := cpuTime()
			if _, err := p.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			cpu := cpuTime() - start
			units := p.Cost()
			t.Logf("n=%d %-18s paths %5d ticks 600 path-ticks %8d cpu %7.1f ms  %6.1f ns/path-tick", n, v.name, p.Paths(), units, cpu.Seconds()*1000, float64(cpu.Nanoseconds())/float64(units))
		}
	}
}
