package sim

import (
	"bytes"
	"context"
	"testing"
)

// Least-connections keeps the backends' outstanding requests level (outstanding.go), worked
// by hand. Behind the balancer, fast has two replicas of 6 workers at 10 ms (1,200 rps) and
// slow one of 6 at 20 ms (300 rps).
//   - 600 rps: at a level of L outstanding each, fast answers L ÷ 10 ms and slow L ÷ 20 ms,
//     150·L a second in all, so L = 4: fast 400 and slow 200, a third, where shares by
//     capacity would send slow a fifth (120).
//   - 1,200 rps: L = 8 would have slow answer 400, past its 300: it runs full and fast takes
//     the other 900, at L = 9; slow holds 9 outstanding, 6 in service and 3 waiting.
//   - A dead backend answers at once, so it never has a request outstanding: it draws every
//     request until the health checks take it out (5 to 10 s with the defaults), and for
//     good without them.
func TestLeastConnectionsLevelsOutstanding(t *testing.T) {
	design := func(checks bool) Design {
		hc := "false"
		if checks {
			hc = "true"
		}
		return mustDesign(t, `{"components":[
		 {"id":"lb","type":"load_balancer","params":{"algorithm":"least_connections","health_checks":`+hc+`}},
		 {"id":"fast","type":"app_service","params":{"replicas":2,"service_time_ms":10}},
		 {"id":"slow","type":"app_service","params":{"service_time_ms":20}}],
		 "edges":[{"from":"lb","to":"fast"},{"from":"lb","to":"slow"}]}`)
	}
	input := func(r *Result, id string) float64 {
		return steadyComp(r, id, func(c ComponentTick) float64 { return c.InputRPS })
	}
	for _, tt := range []struct{ rps, fast, slow, slowUtil float64 }{
		{600, 400, 200, 2.0 / 3},
		{1200, 900, 300, 1},
	} {
		cfg := constant(tt.rps, 20)
		cfg.Mix = Mix{Static: 1}
		r := mustRun(t, design(true), cfg)
		if f, s := input(r, "fast"), input(r, "slow"); !near(f, tt.fast, 1e-6) || !near(s, tt.slow, 1e-6) {
			t.Errorf("%v rps: fast %.3f, slow %.3f rps; want %v and %v", tt.rps, f, s, tt.fast, tt.slow)
		}
		if u := steadyComp(r, "slow", func(c ComponentTick) float64 { return c.Utilization }); !near(u, tt.slowUtil, 1e-6) {
			t.Errorf("%v rps: slow %.4f busy, want %.4f", tt.rps, u, tt.slowUtil)
		}
	}

	// fast fails from 10 s to 30 s at 250 rps, which slow alone can carry; no retries.
	failedShare := func(checks bool, from, to float64) float64 {
		cfg := constant(250, 30)
		cfg.Mix = Mix{Static: 1}
		cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 20, Target: "fast"}}
		r := mustRun(t, design(checks), cfg)
		var failed, offered float64
		for _, tk := range r.Ticks {
			if t0 := tk.T - 0.1; t0 >= from-1e-9 && t0 < to-1e-9 {
				failed += tk.ErrorRPS + tk.RejectedRPS + tk.TimedOutRPS
				offered += tk.OfferedRPS
			}
		}
		return failed / offered
	}
	if f := failedShare(true, 10, 15); !near(f, 1, 1e-9) {
		t.Errorf("before the checks can notice: %.4f of the attempts fail, want all", f)
	}
	if f := failedShare(true, 20, 30); f > 1e-3 {
		t.Errorf("after the checks noticed: %.4f of the attempts fail, want none", f)
	}
	if f := failedShare(false, 10, 30); !near(f, 1, 1e-9) {
		t.Errorf("without health checks: %.4f of the attempts fail, want all", f)
	}
}

// The balancer's route nodes of one group set one level (initSameLevels): a run with every
// node working its level out alone gives the same bytes. The designs send several classes
// of request, live and ghost work, through least-connections balancers whose backends fail,
// are cut off, slow down and saturate.
func TestSameLevelIsExact(t *testing.T) {
	cfg := benchConfig(6000)
	cfg.Chaos = benchChaos()
	for _, c := range []struct {
		name string
		d    Design
		cfg  Config
	}{
		{"service", serviceDesign(20), cfg},
		{"flat", benchDesign(12), benchConfig(600)},
		{"a backend saturated by the level", mustDesign(t, `{"components":[
		 {"id":"lb","type":"load_balancer","params":{"algorithm":"least_connections"}},
		 {"id":"fast","type":"app_service","params":{"replicas":2,"service_time_ms":10}},
		 {"id":"slow","type":"app_service","params":{"service_time_ms":20}}],
		 "edges":[{"from":"lb","to":"fast"},{"from":"lb","to":"slow"}]}`),
			Config{TickMs: 100, DurationSec: 20, Traffic: Traffic{Kind: "constant", RPS: 1200},
				Mix: Mix{Static: 0.5, Read: 0.3, Write: 0.2}, Client: Client{TimeoutMs: 2000}}},
	} {
		var runs [2][]byte
		for i, alone := range []bool{false, true} {
			p, err := Prepare(c.d, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			shared := 0
			for n, f := range p.m.sameLevel {
				if f >= 0 && f != n {
					shared++
				}
				if alone {
					p.m.sameLevel[n] = -1
				}
			}
			if shared == 0 {
				t.Fatalf("%s: no balancer node shares another's level: the test compares nothing", c.name)
			}
			r, err := p.RunWith(context.Background(), RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			runs[i] = encode(t, r)
		}
		if !bytes.Equal(runs[0], runs[1]) {
			t.Errorf("%s: the run with shared levels differs from the one with every level worked out alone", c.name)
		}
	}
}
