package sim

import (
	"math"
	"testing"
)

// A balancer dealing in turn to two apps, one of them crashed and kept in by no health
// check, 300 static requests a second, clients retrying twice with no backoff. Half the
// attempts meet the crashed app and fail the instant they get there, and their retries,
// sent that instant, are dealt again: within the tick, an attempt makes 1 + ½ + ¼ attempts,
// of which ⅛ fail for good. So from the failure's first tick: 525 attempts a second, 225 of
// them retries, 262.5 served by the live app and 262.5 failed at the crashed one, and 37.5
// requests given up. In the first tick after the repair the attempts are the 300 fresh
// ones: nothing failed in the last tick is left to retry.
//
// The same across a cut link: an app whose only way to its database is cut fails every read
// at once, so every read makes its three attempts within the tick and fails.
func TestRetriesOfAttemptsFailedAtOnceComeInTheirTick(t *testing.T) {
	// The apps' small load-dependent error rate and tail past the deadline move the figures
	// by a few millionths.
	within := func(got, want float64) bool { return math.Abs(got-want) <= 1e-4*want }
	tickAt := func(r *Result, sec float64) Tick { // the tick starting at sec
		for _, tk := range r.Ticks {
			if tk.T > sec+r.TickMs/2000 {
				return tk
			}
		}
		t.Fatalf("no tick after %.2f s", sec)
		return Tick{}
	}

	d := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer","params":{"health_checks":false}},
		{"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}}],
		"edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`)
	cfg := constant(300, 30)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	cfg.Chaos = []ChaosEvent{{ID: "a-down", Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "a"}}
	r := mustRun(t, d, cfg)
	for _, sec := range []float64{10, 15} {
		tk := tickAt(r, sec)
		if !within(tk.OfferedRPS, 525) || !within(tk.RetryRPS, 225) || !within(tk.ErrorRPS, 262.5) || !within(tk.ServedRPS, 262.5) {
			t.Errorf("a crashed, tick ending %.1f s: %.3f offered, %.3f retries, %.3f failed, %.3f served rps; want 525, 225, 262.5 and 262.5",
				tk.T, tk.OfferedRPS, tk.RetryRPS, tk.ErrorRPS, tk.ServedRPS)
		}
		if a, b := tk.Components[comp(r, "a")], tk.Components[comp(r, "b")]; !within(a.InputRPS, 262.5) || !within(b.InputRPS, 262.5) {
			t.Errorf("a crashed, tick ending %.1f s: a takes %.3f rps and b %.3f; want 262.5 each", tk.T, a.InputRPS, b.InputRPS)
		}
	}
	if tk := tickAt(r, 20); !within(tk.OfferedRPS, 300) || tk.RetryRPS > 0.01 {
		t.Errorf("first tick after the repair: %.3f offered, %.3f retries; want 300 and none", tk.OfferedRPS, tk.RetryRPS)
	}
	// Fresh requests are kept count of: each is served or given up, none is pending.
	if s := r.Summary; !within(s.Dropped, s.Fresh-s.Served) || !within(s.Dropped, 37.5*10) {
		t.Errorf("%.1f fresh, %.1f served, %.1f given up; want 37.5 a second for 10 s given up", s.Fresh, s.Served, s.Dropped)
	}

	cut := mustDesign(t, `{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],
		"edges":[{"from":"app","to":"db"}]}`)
	cfg = constant(100, 30)
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	cfg.Chaos = []ChaosEvent{{ID: "cut", Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 10, From: "app", To: "db"}}
	r = mustRun(t, cut, cfg)
	if tk := tickAt(r, 10); !within(tk.OfferedRPS, 300) || !within(tk.ErrorRPS, 300) || tk.ServedRPS != 0 {
		t.Errorf("cut, first tick: %.3f offered, %.3f failed, %.3f served rps; want 300, 300 and none", tk.OfferedRPS, tk.ErrorRPS, tk.ServedRPS)
	}
	if tk := tickAt(r, 20); !within(tk.OfferedRPS, 100) {
		t.Errorf("first tick after the cut heals: %.3f offered; want the 100 fresh", tk.OfferedRPS)
	}
}
