package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func gatewayApp(gw string) string {
	return `{"components":[{"id":"gw","type":"api_gateway","params":` + gw + `},
	 {"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],
	 "edges":[{"from":"gw","to":"app"},{"from":"app","to":"db"}]}`
}

// Every cause of failure is named at the component that caused it, with what was measured.
func TestWhyNamesTheCause(t *testing.T) {
	reads := func(rps, sec float64, chaos ...ChaosEvent) Config {
		cfg := constant(rps, sec)
		cfg.Chaos = chaos
		return cfg
	}
	archDesign, archCfg := archSim("")
	tests := []struct {
		name      string
		design    string
		cfg       Config
		component string
		cause     Cause
		detail    string // a substring of the detail
	}{
		{"a database short of capacity", "", archCfg, "db", CauseSaturated, "against a capacity of 250 req/s"},
		{"an app whose own work plus the bare time of its calls exceeds its workers",
			`{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			constant(300, 20), "app", CauseSaturated, "app was offered 300 req/s against a capacity of 261 req/s (115%)"},
		{"a database at its limit under an app whose workers wait on it and overflow first",
			// The app alone needs 540 × (15 + 8) ms of 16 workers: 78%. The database is the cause.
			// (At 490 req/s the closed loop of 16 held workers passes 494/s: nothing fails.)
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4,"concurrency":4}},
			 {"id":"db","type":"database","params":{"connections":4,"query_time_ms":8}}],"edges":[{"from":"app","to":"db"}]}`,
			constant(540, 20), "db", CauseSaturated, "db was offered 540 req/s against a capacity of 500 req/s (108%)"},
		{"a dead backend behind a balancer without health checks",
			`{"components":[{"id":"lb","type":"load_balancer","params":{"health_checks":false}},
			 {"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],
			 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"a","to":"db"},{"from":"b","to":"db"}]}`,
			reads(400, 30, ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "b"}),
			"b", CauseNodeFailed, "lb, without health checks, still sends it its share: 50% of attempts"},
		{"a dead backend before the balancer's health checks notice",
			`{"components":[{"id":"lb","type":"load_balancer"},
			 {"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],
			 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"},{"from":"a","to":"db"},{"from":"b","to":"db"}]}`,
			reads(400, 30, ChaosEvent{ID: "b-down", Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 15, Target: "b"}),
			"b", CauseNodeFailed, "lb's health checks notice it only after 5 to 10 s (2 failed checks 5 s apart)"},
		{"every backend dead behind a balancer whose checks took them out",
			`{"components":[{"id":"lb","type":"load_balancer","params":{"health_check_interval_sec":0.5}},
			 {"id":"a","type":"app_service","params":{"replicas":4}},{"id":"b","type":"app_service","params":{"replicas":4}}],
			 "edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`,
			func() Config {
				c := reads(400, 30, ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 15, Target: "a"},
					ChaosEvent{ID: "b-down", Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 15, Target: "b"})
				c.Mix = Mix{Static: 1}
				return c
			}(),
			"a", CauseNodeFailed, "lb has no healthy backend left"},
		{"a dead database nothing routes around",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			reads(300, 30, ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "db"}),
			"db", CauseNodeFailed, "nothing routes around it"},
		{"a cut link to the database",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			reads(300, 30, ChaosEvent{Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 10, From: "app", To: "db"}),
			"db", CausePartition, "the link app → db was cut: 100% of attempts"},
		{"every backend cut off from a balancer that routes around cut links",
			`{"components":[{"id":"lb","type":"load_balancer","params":{"health_check_interval_sec":1}},{"id":"a","type":"app_service","params":{"replicas":4}}],
			 "edges":[{"from":"lb","to":"a"}]}`,
			func() Config {
				c := reads(300, 30, ChaosEvent{Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 10, From: "lb", To: "a"})
				c.Mix = Mix{Static: 1}
				return c
			}(),
			"a", CausePartition, "the link lb → a was cut"},
		{"a queue cut off from its database fills up",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":8}},
			 {"id":"q","type":"queue","params":{"workers":8,"buffer":1000}},{"id":"db","type":"database"}],
			 "edges":[{"from":"app","to":"q"},{"from":"app","to":"db"},{"from":"q","to":"db"}]}`,
			func() Config {
				c := reads(400, 40, ChaosEvent{Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 15, From: "q", To: "db"})
				c.Mix = Mix{Read: 0.5, AsyncWrite: 0.5}
				return c
			}(),
			"q", CausePartition, "the link q → db was cut: q's workers could not store their jobs"},
		{"an app whose workers wait on a slowed call",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4,"concurrency":8}},{"id":"db","type":"database","params":{"connections":10}}],
			 "edges":[{"from":"app","to":"db"}]}`,
			reads(500, 40, ChaosEvent{Kind: ChaosLatencyInjection, AtSec: 10, DurationSec: 10, From: "app", To: "db",
				Params: ChaosParams{ExtraLatencyMs: 300}}),
			"app", CauseSaturated, "its workers waiting 300 ms longer on app → db (injected latency)"},
		{"an open circuit breaker",
			gatewayApp(`{"breaker_error_threshold":0.5,"breaker_window_sec":1,"breaker_open_sec":5}`),
			reads(200, 40, ChaosEvent{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 15, Target: "db"}),
			"gw", CauseBreakerOpen, "circuit breaker was open"},
		{"a rate limit below the traffic",
			gatewayApp(`{"rate_limit_rps":200}`), reads(300, 20),
			"gw", CauseRateLimited, "its rate limit admits 200 req/s"},
		{"a function out of concurrency",
			`{"components":[{"id":"fn","type":"serverless","params":{"max_concurrency":10,"service_time_ms":100}}],"edges":[]}`,
			func() Config { c := constant(200, 10); c.Mix = Mix{Static: 1}; return c }(),
			"fn", CauseThrottled, "needed 20 executions at once and may run 10"},
		{"injected latency beyond the client's deadline",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":20,"concurrency":60}},{"id":"db","type":"database","params":{"connections":50}}],
			 "edges":[{"from":"app","to":"db"}]}`,
			func() Config {
				c := reads(200, 40, ChaosEvent{Kind: ChaosLatencyInjection, AtSec: 10, DurationSec: 10, From: "app", To: "db",
					Params: ChaosParams{ExtraLatencyMs: 3000}})
				c.Client.TimeoutMs = 1000
				return c
			}(),
			"db", CauseTimeouts, "the call app → db was 3,000 ms slower"},
		{"an app with no database to write to",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4}}],"edges":[]}`,
			func() Config { c := constant(200, 20); c.Mix = Mix{Read: 0.8, Write: 0.2}; return c }(),
			"app", CauseNoRoute, "app has nowhere to send reads and writes: 100% of attempts failed there"},
		{"a CDN with no origin for its misses",
			`{"components":[{"id":"cdn","type":"cdn","params":{"hit_ratio":0.5}},{"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],
			 "edges":[{"from":"app","to":"db"}]}`,
			func() Config { c := constant(200, 20); c.Mix = Mix{Static: 1}; return c }(),
			"cdn", CauseNoRoute, "cdn has nowhere to send static files"},
		{"a queue whose workers cannot keep up",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":8}},
			 {"id":"q","type":"queue","params":{"workers":2,"job_time_ms":20,"buffer":1000000}},{"id":"db","type":"database"}],
			 "edges":[{"from":"app","to":"q"},{"from":"app","to":"db"},{"from":"q","to":"db"}]}`,
			func() Config { c := constant(400, 30); c.Mix = Mix{Read: 0.5, AsyncWrite: 0.5}; return c }(),
			"q", CauseLostWrites, "acknowledged writes were never stored"},
		{"a replica that cannot keep up",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":200}},{"id":"db","type":"database","params":{"read_replicas":1}}],
			 "edges":[{"from":"app","to":"db"}]}`,
			func() Config {
				c := constant(3000, 30)
				c.Mix = Mix{Read: 2.0 / 3, Write: 1.0 / 3}
				c.Client.TimeoutMs = 0
				return c
			}(),
			"db", CauseReplicationLag, "never caught up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := archDesign
			if tt.design != "" {
				d = mustDesign(t, tt.design)
			}
			r := mustRun(t, d, tt.cfg)
			var found *Why
			for i, w := range r.Summary.Why {
				if w.Component == tt.component && w.Cause == tt.cause && strings.Contains(w.Detail, tt.detail) {
					found = &r.Summary.Why[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("why = %+v, want %s %s saying %q", r.Summary.Why, tt.component, tt.cause, tt.detail)
			}
			if found.Advice == "" || found.RetryAmplification < 1 || found.EndSec <= found.StartSec {
				t.Errorf("entry %+v: want advice, amplification ≥ 1 and a stretch of time", *found)
			}
		})
	}
}

// A chaos event's stretch starts and ends with the failure it causes.
func TestWhyStretchFollowsTheFailure(t *testing.T) {
	tests := []struct {
		name, design       string
		mix                Mix
		from, to, toWithin float64
	}{
		{"a database down for 10 s",
			`{"components":[{"id":"app","type":"app_service","params":{"replicas":4}},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			Mix{Read: 0.5, Static: 0.5}, 10, 20, 1},
		{"a backend down for 15 s, noticed after 5 to 10 s",
			`{"components":[{"id":"lb","type":"load_balancer"},{"id":"a","type":"app_service","params":{"replicas":4}},
			 {"id":"db","type":"app_service","params":{"replicas":4}}],"edges":[{"from":"lb","to":"a"},{"from":"lb","to":"db"}]}`,
			// Its half of the attempts fails until 15 s, then falls linearly to none at
			// 20 s: under 5% from 19.5 s.
			Mix{Static: 1}, 10, 19.5, 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := constant(300, 30)
			cfg.Mix = tt.mix
			cfg.Chaos = []ChaosEvent{{Kind: ChaosNodeFailure, AtSec: 10, DurationSec: 10, Target: "db"}}
			if strings.Contains(tt.name, "15 s") {
				cfg.Chaos[0].DurationSec = 15
			}
			r := mustRun(t, mustDesign(t, tt.design), cfg)
			if len(r.Summary.Why) != 1 {
				t.Fatalf("why = %+v, want one stretch", r.Summary.Why)
			}
			w := r.Summary.Why[0]
			if w.Component != "db" || w.Cause != CauseNodeFailed || w.StartSec != tt.from || w.EndSec < tt.to || w.EndSec > tt.to+tt.toWithin {
				t.Errorf("stretch %s %s %g–%g s, want db node_failed from %g s to %g s", w.Component, w.Cause, w.StartSec, w.EndSec, tt.from, tt.to)
			}
		})
	}
}

// A balancer that has taken every cut-off backend out has nowhere to send requests: the
// partition stays the cause for as long as it lasts, not only until the checks notice.
func TestWhyPartitionOutlastsDetection(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"lb","type":"load_balancer","params":{"health_check_interval_sec":1}},
	 {"id":"a","type":"app_service","params":{"replicas":4}}],"edges":[{"from":"lb","to":"a"}]}`)
	cfg := constant(300, 30)
	cfg.Mix = Mix{Static: 1}
	cfg.Chaos = []ChaosEvent{{Kind: ChaosNetworkPartition, AtSec: 10, DurationSec: 10, From: "lb", To: "a"}}
	why := mustRun(t, d, cfg).Summary.Why
	if len(why) != 1 || why[0].Cause != CausePartition || why[0].StartSec != 10 || why[0].EndSec != 20 {
		t.Errorf("why = %+v, want one partition from 10 s to 20 s", why)
	}
}

// Requests with no route at all (reads at an app with no store) are named as such, at the
// component they cannot leave, and not put down to a tier that is not saturated.
func TestWhyNamesRequestsWithNoRoute(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"a","type":"app_service","params":{"replicas":4}}],"edges":[]}`)
	cfg := constant(300, 10)
	cfg.Mix = Mix{Read: 0.5, Static: 0.5}
	r := mustRun(t, d, cfg)
	if r.Summary.FirstFailingSec == nil {
		t.Fatal("no failing tick: the reads have nowhere to go and must fail")
	}
	why := r.Summary.Why
	if len(why) != 1 || why[0].Cause != CauseNoRoute || why[0].Component != "a" || !strings.Contains(why[0].Detail, "nowhere to send reads: 50%") {
		t.Errorf("why = %+v, want one no_route at a for its reads, half the attempts", why)
	}
}

// Retries multiply the load on top of the cause, and the entry says by how much.
func TestWhyReportsRetryAmplification(t *testing.T) {
	d, cfg := archSim("")
	none := cfg
	none.Client.MaxRetries = 0
	without := mustRun(t, d, none).Summary.Why
	with := mustRun(t, d, cfg).Summary.Why
	if len(without) == 0 || len(with) == 0 {
		t.Fatalf("why without retries %+v, with %+v: want both failing", without, with)
	}
	if without[0].RetryAmplification != 1 {
		t.Errorf("amplification without retries %v, want 1", without[0].RetryAmplification)
	}
	if a := with[0].RetryAmplification; a < 1.5 || a > 2 {
		t.Errorf("amplification with one retry %v, want between 1.5 and 2", a)
	}
	if !strings.Contains(with[0].Detail, "retries multiplied the load ×") {
		t.Errorf("detail %q does not mention the retries", with[0].Detail)
	}
}

// A run with no failing tick names no cause, only the busiest component.
func TestWhyIsEmptyOnAPassingRun(t *testing.T) {
	d, cfg := archSim(`{"id":"cache","type":"cache","params":{"hit_ratio":0.6}},`)
	s := mustRun(t, d, cfg).Summary
	if s.Why == nil || len(s.Why) != 0 {
		t.Errorf("why = %#v, want an empty list", s.Why)
	}
	if s.Busiest != "app" {
		t.Errorf("busiest %q, want app", s.Busiest)
	}
}

func TestCountFormatsForPlayers(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{{0, "0"}, {2.46, "2.5"}, {999.6, "1,000"}, {1240, "1,240"}, {1234567, "1,234,567"}, {-4200, "-4,200"}} {
		if got := count(tt.x); got != tt.want {
			t.Errorf("count(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}

// Stretches: the same cause less than a second apart is one stretch; a flicker shorter than
// a second folds into the stretch before it; nothing starts before its first tick.
func TestBuildWhyStretches(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"a","type":"app_service"},{"id":"b","type":"app_service"}],"edges":[]}`)
	v, err := validate(d, constant(100, 10))
	if err != nil {
		t.Fatal(err)
	}
	m, err := compile(v)
	if err != nil {
		t.Fatal(err)
	}
	// ticks lists the failing ticks (100 ms each) and the component failing in each.
	type span struct{ from, to, comp int }
	causes := func(spans ...span) causeLog {
		var out causeLog
		for _, s := range spans {
			for k := s.from; k <= s.to; k++ {
				out.add(tickCause{tick: k, cause: CauseNodeFailed, comp: s.comp, pool: -1, edge: -1, lb: -1,
					attempts: 2, fresh: 1, a: 0.5})
			}
		}
		return out
	}
	type stretch struct {
		from, to float64
		comp     string
	}
	tests := []struct {
		name  string
		ticks causeLog
		want  []stretch
	}{
		{"one cause", causes(span{10, 29, 0}), []stretch{{1, 3, "a"}}},
		{"a gap under a second joins", causes(span{10, 19, 0}, span{25, 29, 0}), []stretch{{1, 3, "a"}}},
		{"a gap over a second splits", causes(span{10, 19, 0}, span{31, 40, 0}), []stretch{{1, 2, "a"}, {3.1, 4.1, "a"}}},
		{"a flicker folds into the stretch before", causes(span{10, 19, 0}, span{20, 22, 1}, span{23, 39, 0}), []stretch{{1, 4, "a"}}},
		{"a short lead keeps its own start", causes(span{10, 12, 1}, span{13, 39, 0}), []stretch{{1, 1.3, "b"}, {1.3, 4, "a"}}},
		{"a change of cause for longer than a second", causes(span{10, 29, 0}, span{30, 49, 1}), []stretch{{1, 3, "a"}, {3, 5, "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []stretch
			for _, w := range m.buildWhy(tt.ticks) {
				got = append(got, stretch{w.StartSec, w.EndSec, w.Component})
				if w.RetryAmplification != 2 {
					t.Errorf("amplification %v, want 2 attempts per fresh request", w.RetryAmplification)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(stretch{})); diff != "" {
				t.Errorf("stretches (-want +got):\n%s", diff)
			}
		})
	}
}

// The failing ticks are recorded as runs: a tick joins the run before it only if it follows
// it at once with the same diagnosis, so the runs give back every tick as diagnosed.
func TestCauseLogRuns(t *testing.T) {
	at := func(tick int, comp int, a float64) tickCause {
		return tickCause{tick: tick, cause: CauseSaturated, comp: comp, pool: 0, edge: -1, lb: -1, attempts: 2, fresh: 1, a: a}
	}
	ticks := []tickCause{at(3, 0, 1), at(4, 0, 1), at(5, 0, 1), at(6, 0, 2), at(8, 0, 2), at(9, 1, 2), at(10, 1, 2)}
	var log causeLog
	for _, d := range ticks {
		log.add(d)
	}
	if got, want := len(log), 4; got != want {
		t.Errorf("%d runs, want %d", got, want)
	}
	var back []tickCause
	for _, r := range log {
		for k := range r.ticks() {
			d := r.diagnosis()
			d.tick += k
			back = append(back, d)
		}
	}
	if diff := cmp.Diff(ticks, back, cmp.AllowUnexported(tickCause{})); diff != "" {
		t.Errorf("ticks from the runs (-recorded +given back):\n%s", diff)
	}
}

// Idle names what no request of the mix visits: a database under an app that only serves
// static files, and a call back up a path, which closes a cycle.
func TestIdleNamesWhatNothingVisits(t *testing.T) {
	tests := []struct {
		name   string
		design string
		mix    Mix
		comps  []string
		edges  []int
	}{
		{"everything used", `{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			Mix{Read: 1}, nil, nil},
		{"static files only: the database is idle", `{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],"edges":[{"from":"app","to":"db"}]}`,
			Mix{Static: 1}, []string{"db"}, []int{0}},
		{"a call back to the balancer closes a cycle",
			`{"components":[{"id":"lb","type":"load_balancer"},{"id":"app","type":"app_service"},{"id":"db","type":"database"},{"id":"cdn","type":"cdn"}],
			 "edges":[{"from":"cdn","to":"lb"},{"from":"lb","to":"app"},{"from":"app","to":"db"},{"from":"app","to":"lb"}]}`,
			Mix{Read: 0.5, Write: 0.5}, nil, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := constant(10, 5)
			cfg.Mix = tt.mix
			p, err := Prepare(mustDesign(t, tt.design), cfg)
			if err != nil {
				t.Fatal(err)
			}
			comps, edges := p.Idle()
			if diff := cmp.Diff(tt.comps, comps); diff != "" {
				t.Errorf("idle components (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.edges, edges); diff != "" {
				t.Errorf("idle edges (-want +got):\n%s", diff)
			}
		})
	}
}
