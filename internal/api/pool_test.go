package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"backpressure/internal/game"
	"backpressure/internal/store/memstore"
)

func TestPoolBounds(t *testing.T) {
	m := newMetrics()
	p := newPool(1, 1, m)
	release := make(chan struct{})
	running := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- p.run(t.Context(), "test", func(context.Context) error {
			close(running)
			<-release
			return nil
		})
	}()
	<-running
	// The second job waits in the queue...
	second := make(chan error, 1)
	go func() {
		second <- p.run(t.Context(), "test", func(context.Context) error { return nil })
	}()
	waitFor(t, func() bool { return testutil.ToFloat64(m.queueDepth) == 1 })
	// ...and a third finds the queue full.
	err := p.run(t.Context(), "test", func(context.Context) error { t.Error("ran a rejected job"); return nil })
	if game.ErrorCode(err) != eBusy {
		t.Fatalf("third job: %v, want busy", err)
	}
	if got := testutil.ToFloat64(m.rejections); got != 1 {
		t.Errorf("rejections = %g", got)
	}
	// A waiting job whose context ends leaves the queue.
	ctx, cancel := context.WithCancel(t.Context())
	p2 := newPool(1, 1, newMetrics())
	block := make(chan struct{})
	go func() { _ = p2.run(t.Context(), "test", func(context.Context) error { <-block; return nil }) }()
	waitFor(t, func() bool { return len(p2.workers) == 1 })
	waiting := make(chan error, 1)
	go func() { waiting <- p2.run(ctx, "test", func(context.Context) error { return nil }) }()
	waitFor(t, func() bool { return len(p2.admitted) == 2 })
	cancel()
	if err := <-waiting; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	close(block)

	close(release)
	if err := <-first; err != nil {
		t.Error(err)
	}
	if err := <-second; err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.queueDepth); got != 0 {
		t.Errorf("queue depth after draining = %g", got)
	}
	if got := testutil.ToFloat64(m.simulations.WithLabelValues("test", "ok")); got != 2 {
		t.Errorf("ok jobs = %g", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBusyIs503 fills the pool and checks that a simulation request is
// refused at once with 503, Retry-After and a problem (without the hold of
// refusals, TestRefusalHeldOutsideInFlight, which would only delay it).
func TestBusyIs503(t *testing.T) {
	s := newServer(Deps{Store: memstore.New(), Config: Config{SimWorkers: 1, SimQueue: 0, RefusalHold: -1}})
	ctx := t.Context()
	if err := LoadCampaign(ctx, s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	h := s.routes()
	block := make(chan struct{})
	go func() {
		_ = s.sched.pools[kindSimulation].run(ctx, "test", func(context.Context) error { <-block; return nil })
	}()
	defer close(block)
	waitFor(t, func() bool { return len(s.sched.pools[kindSimulation].workers) == 1 })

	body := `{"level": "first-request", "design": {"components": [{"id": "app", "type": "app_service"}]}}`
	rq := httptest.NewRequest("POST", "/v1/simulations", strings.NewReader(body))
	rq.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, rq)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("full pool: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if !strings.Contains(w.Body.String(), `"code":"busy"`) || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("body %s", w.Body)
	}
	if time.Since(start) > time.Second {
		t.Error("a full pool made the request wait")
	}
}

// TestInFlightLimitShedsLoad checks that a request beyond MAX_INFLIGHT is refused at once
// with a 503 problem and Retry-After, and that the slot comes back when a request ends.
func TestInFlightLimitShedsLoad(t *testing.T) {
	s := newServer(Deps{Store: memstore.New(), Config: Config{MaxInFlight: 1}})
	entered, release := make(chan struct{}), make(chan struct{})
	h := s.limitInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		w.WriteHeader(http.StatusNoContent)
	}))
	first := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(first, httptest.NewRequest("GET", "/v1/x", nil))
		close(done)
	}()
	<-entered
	second := httptest.NewRecorder()
	h.ServeHTTP(second, httptest.NewRequest("GET", "/v1/x", nil))
	if second.Code != http.StatusServiceUnavailable || second.Header().Get("Retry-After") == "" ||
		second.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("second request: %d %v %s, want a 503 problem with Retry-After", second.Code, second.Header(), second.Body)
	}
	close(release)
	<-done
	if first.Code != http.StatusNoContent {
		t.Errorf("first request: %d, want it served", first.Code)
	}
	third := httptest.NewRecorder()
	go func() { <-entered }()
	h.ServeHTTP(third, httptest.NewRequest("GET", "/v1/x", nil))
	if third.Code != http.StatusNoContent {
		t.Errorf("request after the first ended: %d, want it served", third.Code)
	}
}
