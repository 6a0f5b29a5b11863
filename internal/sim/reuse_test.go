package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// runReuse runs d both ways: every tick computed, and repeated ticks reused.
func runReuse(t *testing.T, d Design, cfg Config) (full, reused []byte, n int) {
	t.Helper()
	for _, disable := range []bool{true, false} {
		p, err := Prepare(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.RunWith(context.Background(), RunOptions{DisableReuse: disable})
		if err != nil {
			t.Fatal(err)
		}
		if disable {
			full = encode(t, r)
			if p.m.reused != 0 {
				t.Fatalf("reuse disabled, yet %d ticks reused", p.m.reused)
			}
		} else {
			reused, n = encode(t, r), p.m.reused
		}
	}
	return full, reused, n
}

// A reused tick is exactly what the full computation gives: every golden case, run both ways,
// gives the same bytes, and the constant-traffic ones do reuse ticks.
func TestReuseIsExact(t *testing.T) {
	total := 0
	for name, mk := range goldenCases() {
		d, cfg := mk()
		full, reused, n := runReuse(t, d, cfg)
		if !bytes.Equal(full, reused) {
			t.Errorf("%s: the result with tick reuse (%d ticks reused) differs from the full computation", name, n)
		}
		total += n
		t.Logf("%s: %d ticks reused", name, n)
	}
	if total == 0 {
		t.Error("no tick was reused in any case")
	}
}

// Each component's mean and p99 latency are computed only for the ticks a caller returns;
// those ticks are as in the full run, and every other figure of every tick is too.
func TestPointsOnlyDisplay(t *testing.T) {
	for _, name := range []string{"service/20", "random/6/constant", "random/13", "random/24/constant"} {
		d, cfg := goldenCases()[name]()
		full := mustRun(t, d, cfg)
		for _, points := range []int{-1, 7, 100} {
			p, err := Prepare(d, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.RunWith(context.Background(), RunOptions{Points: points})
			if err != nil {
				t.Fatal(err)
			}
			every := DownsampleEvery(len(full.Ticks), points)
			want := *full
			want.Ticks = make([]Tick, len(full.Ticks))
			for k := range full.Ticks {
				want.Ticks[k] = full.Ticks[k]
				want.Ticks[k].Components = append([]ComponentTick(nil), full.Ticks[k].Components...)
				if points < 0 || ((k+1)%every != 0 && k != len(full.Ticks)-1) {
					for i := range want.Ticks[k].Components {
						want.Ticks[k].Components[i].MeanMs, want.Ticks[k].Components[i].P99Ms = 0, 0
					}
				}
			}
			if points > 0 {
				// The returned ticks' figures follow the same rule over fewer ticks: they
				// may differ from the full run's within the latency tolerance.
				for k := range want.Ticks {
					for i := range want.Ticks[k].Components {
						w, g := want.Ticks[k].Components[i].P99Ms, got.Ticks[k].Components[i].P99Ms
						if math.Abs(w-g) > 0.05*w+1e-9 {
							t.Errorf("%s points=%d tick %d component %d: p99 %g, full run %g", name, points, k, i, g, w)
						}
						got.Ticks[k].Components[i].P99Ms = w
					}
				}
			}
			if !bytes.Equal(encode(t, &want), encode(t, got)) {
				t.Errorf("%s points=%d: the result differs from the full run beyond the components' latency", name, points)
			}
		}
	}
}

// A standing queue is a fixed point, or a short cycle of states that come back bit for bit,
// once the traffic is constant: its ticks are repeated, and they are exactly what the full
// computation gives. Where a queue loses attempts, the retries of the two request types
// (reads and writes) feed back each through its own type, and their rounding settles into
// a cycle of a few ticks rather than a point; where a single room's refusals are the
// losses, a retry sent at once is refused at once (atonce.go), nothing feeds back, and the
// queue stands still.
func TestQueuedReuseIsExact(t *testing.T) {
	catalog := `"catalog":{"app.small":{"kind":"app_service","price_per_hour":0.05,"speed":1,"load_error_factor":0.001,"default":true},
		"db.standard":{"kind":"database","price_per_hour":0.16,"speed":1,"load_error_factor":0.001,"default":true}}`
	design := `{"components":[{"id":"app","type":"app_service","params":{"replicas":%d,"queue_per_replica":%d}},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`
	for _, c := range []struct {
		name     string
		replicas int
		room     int // waiting places per replica
		tickMs   int
		rps      float64
		cycle    bool // the run's state cycles rather than stands still
	}{
		{"queue standing, room not full", 1, 64, 250, 300, false},
		{"waiting room full", 8, 64, 250, 1500, true},
		{"small waiting room full, cycling", 1, 8, 100, 900, true},
	} {
		var d Design
		var cfg Config
		if err := json.Unmarshal([]byte(fmt.Sprintf(design, c.replicas, c.room)), &d); err != nil {
			t.Fatal(err)
		}
		conf := fmt.Sprintf(`{"tick_ms":%d,"duration_sec":120,"traffic":{"kind":"constant","rps":%g},
			"mix":{"static":0,"read":0.95,"write":0.05,"async_write":0},"client":{"timeout_ms":1000,"max_retries":1},%s}`, c.tickMs, c.rps, catalog)
		if err := json.Unmarshal([]byte(conf), &cfg); err != nil {
			t.Fatal(err)
		}
		full, reused, n := runReuse(t, d, cfg)
		if !bytes.Equal(full, reused) {
			t.Errorf("%s: the result with tick reuse (%d ticks reused) differs from the full computation", c.name, n)
		}
		r := mustRun(t, d, cfg)
		if last := r.Ticks[len(r.Ticks)-1]; last.Queued <= 0 {
			t.Errorf("%s: no queue stands at the end (%g queued): the case tests nothing", c.name, last.Queued)
		}
		p, err := Prepare(d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n < len(r.Ticks)/2 || (p.m.cycled > 0) != c.cycle {
			t.Errorf("%s: %d of %d ticks reused, %d in cycles", c.name, n, len(r.Ticks), p.m.cycled)
		}
		t.Logf("%s: %d of %d ticks reused, %d in cycles", c.name, n, len(r.Ticks), p.m.cycled)
	}
}

// A closed breaker over a steady downstream stands still, with a client deadline or none:
// its window leaves out the answers to requests sent before it last changed state only
// for as long as such answers can come, and then its ticks are reused, exactly.
func TestSteadyBreakerIsReused(t *testing.T) {
	for _, timeoutMs := range []float64{1000, 0} {
		d, cfg := breakerOverFailedApp(0.4)()
		cfg.Chaos, cfg.Client.TimeoutMs = nil, timeoutMs
		full, reused, n := runReuse(t, d, cfg)
		if !bytes.Equal(full, reused) {
			t.Errorf("timeout %v ms: the result with tick reuse (%d ticks reused) differs from the full computation", timeoutMs, n)
		}
		if n == 0 {
			t.Errorf("timeout %v ms: no tick reused under constant traffic and a closed breaker", timeoutMs)
		}
	}
}

// A function whose instances are all warm and which refuses nothing names no time: once its
// cold starts are over, its ticks are repeated, exactly, while it keeps the instances its
// first tick started (idle timeout beyond the run) and after it reclaims them (within). One
// that throttles in every tick with every slot warm refuses over the tick in one piece,
// which names no time, and is repeated too.
func TestQuietFunctionIsReused(t *testing.T) {
	for _, c := range []struct {
		name        string
		concurrency int
		idleSec     int
		// reusedAtLeast is the share of the ticks repeated: most of them for a function
		// that settles at once; some for one whose refusals come back as retries and settle
		// only when the retry stream does.
		reusedAtLeast float64
	}{
		{"warm, within its concurrency, reclaiming", 400, 10, 0.9},
		{"warm, within its concurrency, keeping the first tick's", 400, 600, 0.9},
		{"throttling in every tick, every slot warm", 10, 10, 0.1},
	} {
		d := mustDesign(t, fmt.Sprintf(`{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":%d,
		  "service_time_ms":20,"cold_start_ms":250,"idle_timeout_sec":%d,"memory_mb":1024}}],"edges":[]}`, c.concurrency, c.idleSec))
		cfg := constant(1000, 60)
		cfg.Mix = Mix{Static: 1}
		full, reused, n := runReuse(t, d, cfg)
		if !bytes.Equal(full, reused) {
			t.Errorf("%s: the result with tick reuse (%d ticks reused) differs from the full computation", c.name, n)
		}
		ticks := len(mustRun(t, d, cfg).Ticks)
		if float64(n) < c.reusedAtLeast*float64(ticks) {
			t.Errorf("%s: %d of %d ticks reused", c.name, n, ticks)
		}
		t.Logf("%s: %d of %d ticks reused", c.name, n, ticks)
	}
}
