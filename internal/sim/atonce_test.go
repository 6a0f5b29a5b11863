package sim

import (
	"math"
	"testing"
)

// A gateway limiting to 100 rps in front of an app that serves far more, 300 static
// requests a second, clients retrying twice. With no backoff, a request refused for want of
// a token retries the instant it is refused and finds the bucket as empty: every attempt
// after the first is refused too. So each second 100 fresh requests are served and 200 fail
// for good after three attempts: 700 attempts, 400 of them retries, 600 refused, and
// nothing is left to retry in the next tick. With a backoff, the retries come in a later
// tick and compete with fresh requests for the tokens alike, refused at the tick's share p:
// attempts A = 300 (1 + p + p²) with p = 1 − 100 ÷ A, about 791 a second.
func TestRetriesSentAtOnceAreRefusedAtOnce(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"gw","type":"api_gateway","params":{"rate_limit_rps":100}},
		{"id":"app","type":"app_service","params":{"replicas":4}}],"edges":[{"from":"gw","to":"app"}]}`)
	within := func(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance*want }

	cfg := constant(300, 20)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	r := mustRun(t, d, cfg)
	for _, tk := range r.Ticks[len(r.Ticks)/2:] {
		if !within(tk.OfferedRPS, 700, 1e-6) || !within(tk.RetryRPS, 400, 1e-6) || !within(tk.RejectedRPS, 600, 1e-6) || !within(tk.ServedRPS, 100, 1e-3) {
			t.Fatalf("no backoff, at %.1f s: %.3f offered, %.3f retries, %.3f refused, %.3f served rps; want 700, 400, 600 and 100",
				tk.T, tk.OfferedRPS, tk.RetryRPS, tk.RejectedRPS, tk.ServedRPS)
		}
		if gw := tk.Components[0]; !within(gw.InputRPS, 700, 1e-6) || !within(gw.RejectedRPS, 600, 1e-6) {
			t.Fatalf("no backoff, at %.1f s: the gateway takes %.3f rps and refuses %.3f; want 700 and 600", tk.T, gw.InputRPS, gw.RejectedRPS)
		}
	}
	// Fresh requests are kept count of: each is served or given up, none is pending.
	if s := r.Summary; !within(s.Dropped, s.Fresh-s.Served, 1e-6) {
		t.Errorf("no backoff: %.1f fresh, %.1f served, %.1f given up", s.Fresh, s.Served, s.Dropped)
	}

	// The same with a backoff of half a tick: the retries come in the next tick.
	attempts := 300.0
	for range 200 { // the fixed point A = 300 (1 + p + p²), p = 1 − 100 ÷ A, by iteration
		p := 1 - 100/attempts
		attempts = 300 * (1 + p + p*p)
	}
	cfg.Client.BackoffMs = 50
	r = mustRun(t, d, cfg)
	if got := steady(r, func(tk Tick) float64 { return tk.OfferedRPS }); !within(got, attempts, 5e-3) {
		t.Errorf("backoff 50 ms: %.1f attempts a second, want %.1f, the retries meeting the bucket in the next tick at its share", got, attempts)
	}
}

// A refusal is met again at once only where the retry must come back to the pool that
// refused it. Behind a balancer over two apps, a retry may go to the other; one service's
// replicas each keep a room, dealt in turn; several entry points split a request type.
func TestRefusedAgainOnlyWhereTheRouteLeadsBack(t *testing.T) {
	for _, c := range []struct {
		name   string
		design string
		want   []string // the components whose refusals a retry at once meets again
	}{
		{"a gateway in front of an app", `{"components":[{"id":"gw","type":"api_gateway","params":{"breaker_error_threshold":0}},{"id":"app","type":"app_service"}],
			"edges":[{"from":"gw","to":"app"}]}`, []string{"gw", "app"}},
		{"an app calling a database", `{"components":[{"id":"app","type":"app_service"},{"id":"db","type":"database"}],
			"edges":[{"from":"app","to":"db"}]}`, []string{"app"}},
		{"a balancer over two apps", `{"components":[{"id":"lb","type":"load_balancer"},{"id":"a","type":"app_service"},{"id":"b","type":"app_service"}],
			"edges":[{"from":"lb","to":"a"},{"from":"lb","to":"b"}]}`, []string{"lb"}},
		{"two entry points", `{"components":[{"id":"a","type":"app_service"},{"id":"b","type":"app_service"}],"edges":[]}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Prepare(mustDesign(t, c.design), constant(100, 1))
			if err != nil {
				t.Fatal(err)
			}
			m := p.m
			seen := map[string]bool{}
			for _, i := range m.refusedAgain {
				seen[m.comps[m.nodes[i].comp].id] = true
			}
			for _, id := range c.want {
				if !seen[id] {
					t.Errorf("%s: a retry at once does not meet %s again", c.name, id)
				}
				delete(seen, id)
			}
			for id := range seen {
				t.Errorf("%s: a retry at once is taken to meet %s again, which the route may avoid", c.name, id)
			}
		})
	}
}

// Retries sent at once and refused again by the one app behind a gateway pass the gateway:
// it is charged for every request it forwards, those retries among them, as the per-request
// gateway is (its price per million on what it takes in, less what it refuses itself).
func TestGatewayChargesForRetriesSentAtOnce(t *testing.T) {
	d := mustDesign(t, `{"components":[{"id":"gw","type":"api_gateway","params":{"breaker_error_threshold":0}},
		{"id":"app","type":"app_service","params":{"replicas":1,"concurrency":4,"service_time_ms":20,"queue_per_replica":8}}],
		"edges":[{"from":"gw","to":"app"}]}`)
	cfg := constant(400, 20)
	cfg.Mix = Mix{Static: 1}
	cfg.Client = Client{TimeoutMs: 1000, MaxRetries: 2}
	r := mustRun(t, d, cfg)
	it := DefaultCatalog()["gateway.standard"]
	tk := r.Ticks[len(r.Ticks)-1]
	gw := tk.Components[0]
	if gw.InputRPS < 1.5*tk.FreshRPS {
		t.Fatalf("the gateway takes %.1f rps of %.1f fresh: want the retries sent at once among them", gw.InputRPS, tk.FreshRPS)
	}
	want := it.PricePerHour + (gw.InputRPS-gw.RejectedRPS)*3600/1e6*it.PricePerMillion
	if !near(gw.CostPerHour, want, 1e-9) {
		t.Errorf("the gateway costs %.6f an hour, want %.6f: charged for the %.1f rps it forwards", gw.CostPerHour, want, gw.InputRPS-gw.RejectedRPS)
	}
}
