package main

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["RATE_LIMIT_SIM"] = "2"
	env["RATE_LIMIT_PLAYER"] = "4"
	s := startServer(t, env)
	simulate := req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": design(2), "max_points": 10}}
	s.must(t, 200, simulate, nil)
	s.must(t, 200, simulate, nil)
	r := s.do(t, simulate)
	if r.status != 429 || r.header.Get("Retry-After") == "" || r.problem(t).Code != "rate_limited" {
		t.Fatalf("third simulation: %d %v %s", r.status, r.header, r.body)
	}
	// Other routes are not simulation-limited; a player has a limit of
	// their own, which anonymous requests do not count against.
	p := s.newPlayer(t, "hasty")
	me := req{method: "GET", path: "/v1/players/me", token: p.token}
	for range 4 {
		s.must(t, 200, me, nil)
	}
	if r := s.do(t, me); r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Errorf("fifth request of a player: %d", r.status)
	}
	s.must(t, 200, req{method: "GET", path: "/v1/challenges"}, nil)
	metrics := string(s.must(t, 200, req{method: "GET", path: "/metrics"}, nil).body)
	for _, want := range []string{`backpressure_rate_limited_total{limit="simulation"} 1`, `backpressure_rate_limited_total{limit="player"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	env = testEnv(t)
	env["RATE_LIMIT_IP"] = "3"
	s = startServer(t, env)
	for range 3 {
		s.must(t, 200, req{method: "GET", path: "/v1/challenges"}, nil)
	}
	if r := s.do(t, req{method: "GET", path: "/v1/challenges"}); r.status != 429 {
		t.Errorf("fourth request from one address: %d", r.status)
	}
	// Probes and metrics are never limited; a forged X-Forwarded-For does
	// not buy a new address (no proxy is trusted).
	s.must(t, 200, req{method: "GET", path: "/healthz"}, nil)
	if r := s.do(t, req{method: "GET", path: "/v1/challenges", header: map[string]string{"X-Forwarded-For": "203.0.113.9"}}); r.status != 429 {
		t.Errorf("X-Forwarded-For escaped the limit: %d", r.status)
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["CORS_ORIGINS"] = "https://play.example.com, https://other.example.com"
	s := startServer(t, env)
	preflight := func(origin string) *response {
		return s.send(t, req{method: "OPTIONS", path: "/v1/challenges/" + tutorial + "/submissions", header: map[string]string{
			"Origin":                         origin,
			"Access-Control-Request-Method":  "POST",
			"Access-Control-Request-Headers": "authorization,content-type,idempotency-key",
		}})
	}
	r := preflight("https://play.example.com")
	if r.status >= 300 || r.header.Get("Access-Control-Allow-Origin") != "https://play.example.com" {
		t.Errorf("allowed origin: %d %v", r.status, r.header)
	}
	if h := strings.ToLower(r.header.Get("Access-Control-Allow-Headers")); !strings.Contains(h, "idempotency-key") || !strings.Contains(h, "authorization") {
		t.Errorf("allowed headers %q", h)
	}
	if r := preflight("https://evil.example.com"); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin allowed: %v", r.header)
	}
	r = s.do(t, req{method: "GET", path: "/v1/challenges", header: map[string]string{"Origin": "https://play.example.com"}})
	if r.header.Get("Access-Control-Allow-Origin") != "https://play.example.com" || !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("simple request: %v", r.header)
	}
	// Without CORS_ORIGINS, browsers on other origins get nothing.
	plain := startServer(t, testEnv(t))
	r = plain.do(t, req{method: "GET", path: "/v1/challenges", header: map[string]string{"Origin": "https://play.example.com"}})
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS without configuration: %v", r.header)
	}
}

func TestInMemoryStore(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	delete(env, "DATABASE_URL")
	s := startServer(t, env)
	if !strings.Contains(s.logs.String(), "no DATABASE_URL: using the in-memory store; scores will not survive a restart") {
		t.Errorf("no warning about the in-memory store; logs:\n%s", s.logs)
	}
	s.must(t, 200, req{method: "GET", path: "/readyz"}, nil)
	p := s.newPlayer(t, "ephemeral")
	res := s.submit(t, p, tutorial, design(2))
	if res.Rank == nil || *res.Rank != 1 {
		t.Errorf("submission: %+v", res)
	}
	var page boardPage
	s.must(t, 200, req{method: "GET", path: boardPath(tutorial, nil)}, &page)
	if page.Total != 1 {
		t.Errorf("board: %+v", page)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	secret := "s3cr3t-password"
	env := map[string]string{
		"PORT":              "http",
		"SIM_WORKERS":       "0",
		"SIM_TIMEOUT":       "soon",
		"ADMIN_TOKEN":       "short",
		"DATABASE_URL":      "mysql://root:" + secret + "@db/x",
		"CORS_ORIGINS":      "play.example.com",
		"TRUSTED_PROXIES":   "10.0.0.1",
		"RATE_LIMIT_IP":     "-1",
		"LOG_LEVEL":         "loud",
		"MAX_BODY_BYTES":    "1",
		"RATE_LIMIT_WINDOW": "0s",
		// Database connection settings.
		"DATABASE_DIRECT_URL": "mysql://root:" + secret + "@db/x",
		"DATABASE_MAX_CONNS":  "0",
		"DATABASE_QUERY_MODE": "prepared",
	}
	err := run(t.Context(), []string{"server"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil {
		t.Fatal("run accepted a bad configuration")
	}
	for name := range maps.Keys(env) {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "short") {
		t.Errorf("the error echoes a secret: %v", err)
	}
}

func TestListenError(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := testEnv(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	env["PORT"] = port
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = run(ctx, []string{"server"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("run on a taken port: %v", err)
	}
}

// TestGracefulShutdown cancels run's context while a submission is in
// flight (its body still arriving): the submission completes with 201 and
// is stored, then run returns cleanly.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	p := s.newPlayer(t, "patient")
	body, _ := json.Marshal(map[string]any{"design": design(2)})
	pr, pw := io.Pipe()
	httpReq, err := http.NewRequest("POST", s.base+"/v1/challenges/"+tutorial+"/submissions", pr)
	if err != nil {
		t.Fatal(err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Authorization", "Bearer "+p.token)
	type result struct {
		resp *http.Response
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(httpReq)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- result{resp: resp, body: b, err: err}
	}()
	if _, err := pw.Write(body[:10]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server is reading the body
	stopped := make(chan error, 1)
	go func() { stopped <- s.shutdown() }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatal("the server did not start shutting down")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// New connections are refused while the old one drains.
	time.Sleep(50 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.base, "http://"), time.Second); err == nil {
		c.Close()
		t.Error("the server still accepts connections while shutting down")
	}
	if _, err := pw.Write(body[10:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	res := <-done
	if res.err != nil {
		t.Fatalf("in-flight submission: %v", res.err)
	}
	if res.resp.StatusCode != http.StatusCreated {
		t.Fatalf("in-flight submission: %d %s", res.resp.StatusCode, res.body)
	}
	if err := <-stopped; err != nil {
		t.Errorf("run: %v", err)
	}
	if n := s.count(t, "submissions"); n != 1 {
		t.Errorf("%d submissions stored, want 1", n)
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Error(`no "stopped" in the log`)
	}
}

func TestHealthcheckCommand(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	env := map[string]string{"PORT": port, "HOST": "127.0.0.1"}
	var out strings.Builder
	if err := run(t.Context(), []string{"server", "healthcheck"}, func(k string) string { return env[k] }, &out, io.Discard); err != nil || out.String() != "ok\n" {
		t.Errorf("healthcheck: %v %q", err, out.String())
	}
	if err := run(t.Context(), []string{"server", "frobnicate"}, func(k string) string { return env[k] }, io.Discard, io.Discard); err == nil {
		t.Error("unknown command accepted")
	}
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"server", "healthcheck"}, func(k string) string { return env[k] }, io.Discard, io.Discard); err == nil {
		t.Error("healthcheck of a stopped server passed")
	}
}

// TestSimulationDeadline: a run that outlives SIM_TIMEOUT is abandoned and
// reported as 503 with Retry-After, and nothing is stored.
func TestSimulationDeadline(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["SIM_TIMEOUT"] = "1ns"
	s := startServer(t, env)
	r := s.do(t, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": tutorial, "design": design(2)}})
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.problem(t).Code != "unavailable" {
		t.Errorf("simulation past its deadline: %d %v %s", r.status, r.header, r.body)
	}
	p := s.newPlayer(t, "late")
	r = s.do(t, req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: p.token, body: map[string]any{"design": design(2)}})
	if r.status != 503 {
		t.Errorf("submission past its deadline: %d %s", r.status, r.body)
	}
	if n := s.count(t, "submissions"); n != 0 {
		t.Errorf("%d submissions stored", n)
	}
	metrics := string(s.must(t, 200, req{method: "GET", path: "/metrics"}, nil).body)
	if !strings.Contains(metrics, `backpressure_simulations_total{kind="simulation",outcome="timeout"} 1`) {
		t.Error("the timeout is not in the metrics")
	}
}
