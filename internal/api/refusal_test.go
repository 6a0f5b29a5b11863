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

// A refusal is held, unwritten, for its Retry-After, and while it is held the request
// holds no in-flight place: with one place, another request is served during the hold.
// The held refusal is then written whole (status, Retry-After, problem) when its client
// goes away or the hold ends. Beyond maxHeld, refusals are written at once.
func TestRefusalHeldOutsideInFlight(t *testing.T) {
	s := newServer(Deps{Store: memstore.New(), Config: Config{MaxInFlight: 1, SimWorkers: 1, SimQueue: 0, RefusalHold: time.Hour}})
	s.holds = newRefusalHolds(time.Hour, 1)
	ctx := t.Context()
	if err := rules.LoadCampaign(ctx, s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	h := s.routes()
	// The dry-run pool is full: the next dry run is refused busy.
	block := make(chan struct{})
	go func() {
		_ = s.sched.Background(ctx, scheduler.KindSimulation, func(context.Context) error { <-block; return nil })
	}()
	defer close(block)
	waitFor(t, func() bool { return s.sched.Running(scheduler.KindSimulation) == 1 })

	simulate := func(ctx context.Context) *httptest.ResponseRecorder {
		body := `{"level": "first-request", "design": {"components": [{"id": "app", "type": "app_service"}]}}`
		rq := httptest.NewRequestWithContext(ctx, "POST", "/v1/simulations", strings.NewReader(body))
		rq.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, rq)
		return w
	}
	heldCtx, leave := context.WithCancel(ctx)
	held := make(chan *httptest.ResponseRecorder)
	go func() { held <- simulate(heldCtx) }()
	waitFor(t, func() bool { return len(s.holds.slots) == 1 })

	// The one in-flight place is free while the refusal is held.
	rq := httptest.NewRequest("GET", "/v1/challenges", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, rq)
	if w.Code != http.StatusOK {
		t.Fatalf("a request during the hold: %d %s, want it served", w.Code, w.Body)
	}
	// Every hold is taken: the next refusal is written at once.
	if w := simulate(ctx); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Fatalf("refusal beyond the holds: %d %v %s, want 503 with Retry-After", w.Code, w.Header(), w.Body)
	}
	select {
	case w := <-held:
		t.Fatalf("the held refusal was written before its hold ended: %d", w.Code)
	default:
	}
	leave()
	w = <-held
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
		!strings.Contains(w.Body.String(), `"code":"busy"`) || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("held refusal: %d %v %s, want the busy problem with Retry-After", w.Code, w.Header(), w.Body)
	}
	if n := len(s.holds.slots); n != 0 {
		t.Errorf("%d holds still taken after the held refusal was written", n)
	}
}
