package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
	"backpressure/internal/store/memstore"
)

// TestBusyIs503 fills the pool and checks that a simulation request is
// refused at once with 503, Retry-After and a problem (without the hold of
// refusals, TestRefusalHeldOutsideInFlight, which would only delay it).
func TestBusyIs503(t *testing.T) {
	s := newServer(Deps{Store: memstore.New(), Config: Config{SimWorkers: 1, SimQueue: 0, RefusalHold: -1}})
	ctx := t.Context()
	if err := rules.LoadCampaign(ctx, s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	h := s.routes()
	block := make(chan struct{})
	go func() {
		_ = s.sched.Background(ctx, scheduler.KindSimulation, func(context.Context) error { <-block; return nil })
	}()
	defer close(block)
	waitFor(t, func() bool { return s.sched.Running(scheduler.KindSimulation) == 1 })

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
