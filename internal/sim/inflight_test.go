package sim

import (
	"bytes"
	"testing"
)

// Worked by hand: 30 of a pool's 32 workers held by calls 200 ms long when their delay ended
// at 10 s, each worker serving 62.5 requests a second once back. Over a 50 ms tick the held
// share falls as 1 − s ÷ 0.2, so on average 30 × 0.875 are held in the first tick and
// 30 × 0.125 in the fourth; the calls return at 150 a second throughout.
func TestReleasedCapacity(t *testing.T) {
	pl := pool{workers: 32, releaseWorkers: 30, releaseSec: 0.2, releaseAt: 10}
	for _, tt := range []struct {
		t0     float64
		want   float64
		wantOK bool
	}{
		{10, (32-30*0.875)*62.5 + 150, true},
		{10.15, (32-30*0.125)*62.5 + 150, true},
		{10.2, 0, false}, // every call has returned
		{9.95, 0, false}, // before the delay ended
	} {
		got, ok := pl.releasedCapacity(tt.t0, 0.05, 62.5)
		if ok != tt.wantOK || !near(got, tt.want, 1e-9) {
			t.Errorf("tick from %.2f s: %.3f a second (%v), want %.3f (%v)", tt.t0, got, ok, tt.want, tt.wantOK)
		}
	}
	if held := pl.heldAt(10.05); !near(held, 30*0.75, 1e-12) {
		t.Errorf("held at 10.05 s: %.3f, want %.3f", held, 30*0.75)
	}
}

// A delay on a tier it slows but does not saturate is a fixed point, and its ticks are
// reused; the last one is computed all the same, for the workers its calls hold, so the run
// is what the full computation gives: in the first tick after the delay the tier's workers
// are still mostly held by its calls, and it reads busier than it does once they are back.
func TestDelayEndingAfterReusedTicks(t *testing.T) {
	d := mustDesign(t, `{"components":[
	 {"id":"app","type":"app_service","params":{"replicas":4,"concurrency":8,"service_time_ms":10}},
	 {"id":"db","type":"database","params":{"connections":20,"query_time_ms":5}}],
	 "edges":[{"from":"app","to":"db"}]}`)
	cfg := Config{TickMs: 50, DurationSec: 12, Traffic: Traffic{Kind: "constant", RPS: 200}, Mix: Mix{Read: 1},
		Client: Client{TimeoutMs: 5000},
		Chaos: []ChaosEvent{{Kind: ChaosLatencyInjection, AtSec: 2, DurationSec: 8, From: "app", To: "db",
			Params: ChaosParams{ExtraLatencyMs: 100}}}}
	full, reused, n := runReuse(t, d, cfg)
	if !bytes.Equal(full, reused) {
		t.Errorf("the result with tick reuse (%d ticks reused) differs from the full computation", n)
	}
	if n < 150 { // before, during and after the delay
		t.Errorf("%d of 240 ticks reused: the delay's ticks are not, and the case tests nothing", n)
	}
	r := mustRun(t, d, cfg)
	first, after := r.Ticks[200].Components[0].Utilization, r.Ticks[220].Components[0].Utilization
	if !(first > 1.5*after) {
		t.Errorf("the app read %.2f busy in the first tick after the delay and %.2f a second on: want its workers still held by the delayed calls at first", first, after)
	}
}
