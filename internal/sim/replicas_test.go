package sim

import "testing"

// A database reads from the primary and its replicas by spare capacity, or from the replicas
// only; a replica may have its own instance type, speed and price.
func TestReadsFromReplicasOnly(t *testing.T) {
	design := func(params string) Design {
		return mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":10}},
		 {"id":"db","type":"database","params":`+params+`}],"edges":[{"from":"app","to":"db"}]}`)
	}
	cfg := constant(1000, 20)
	cfg.Mix = Mix{Read: 0.8, Write: 0.2}
	input := func(r *Result) float64 {
		return steadyComp(r, "db", func(c ComponentTick) float64 { return c.InputRPS })
	}
	spread := mustRun(t, design(`{"read_replicas":1}`), cfg)
	only := mustRun(t, design(`{"read_replicas":1,"read_from":"replicas"}`), cfg)
	// Both carry 800 reads, 200 writes and 80 replayed (less the app's and database's
	// load-dependent errors, a few in ten thousand): the same total.
	for name, in := range map[string]float64{"spread": input(spread), "replicas": input(only)} {
		if !near(in, 1080, 1e-3) {
			t.Errorf("%s: database input %.1f q/s, want 800 reads + 200 writes + 80 replayed", name, in)
		}
	}
	// The replica alone serves 800 reads plus its 80 of replay: 70% of 1,250 q/s; spread
	// over both nodes, neither is that busy.
	if u := steadyComp(only, "db", func(c ComponentTick) float64 { return c.Utilization }); !near(u, 880.0/1250, 1e-3) {
		t.Errorf("replicas only: busiest node at %.4f, want the replica's 880/1250", u)
	}
	if u := steadyComp(spread, "db", func(c ComponentTick) float64 { return c.Utilization }); u >= 880.0/1250 {
		t.Errorf("spread: busiest node at %.4f, want below the replica-only 0.704", u)
	}
}

func TestReplicaWithItsOwnInstanceType(t *testing.T) {
	// Twelve app replicas: ten would each stand at 97% and refuse a little of their own.
	d := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":12}},
	 {"id":"db","type":"database","params":{"read_replicas":2,"read_from":"replicas","replica_instance_type":"db.large"}}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := constant(3000, 20)
	cfg.Mix = Mix{Read: 0.9, Write: 0.1}
	r := mustRun(t, d, cfg)
	// Each large replica serves 2,500 q/s: 1,350 reads and 120 of replay is 59%.
	if u := steadyComp(r, "db", func(c ComponentTick) float64 { return c.Utilization }); !near(u, 1470.0/2500, 1e-3) {
		t.Errorf("busiest node at %.4f, want a large replica's 1470/2500", u)
	}
	// One standard primary ($120 a month) and two large replicas ($240 each).
	want := (120.0 + 2*240) / hoursPerMonth
	if c := steadyComp(r, "db", func(c ComponentTick) float64 { return c.CostPerHour }); !near(c, want, 1e-9) {
		t.Errorf("cost %.5f $/h, want %.5f", c, want)
	}
	if e := steady(r, errRate); e > 0.005 {
		t.Errorf("error rate %.4f, want ~0", e)
	}
}
