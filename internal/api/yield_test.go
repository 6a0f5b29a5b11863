package api

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"backpressure/internal/store/memstore"
)

// A hint's next run waits while a submission is in progress and goes on once none is; it
// does not wait when none is, and its context ends the wait.
func TestHintYieldsToSubmissions(t *testing.T) {
	s := newServer(Deps{Store: memstore.New()})
	sc := s.sched
	sc.yieldMax = time.Hour
	ctx := t.Context()
	sc.yieldToSubmissions(ctx) // nothing in progress: no wait (the test would hang)

	done := sc.submitting()
	resumed := make(chan struct{})
	go func() {
		sc.yieldToSubmissions(ctx)
		close(resumed)
	}()
	waitFor(t, func() bool { return testutil.ToFloat64(sc.m.hintYields) >= 1 })
	select {
	case <-resumed:
		t.Fatal("the hint went on while a submission was in progress")
	default:
	}
	done()
	<-resumed

	done = sc.submitting()
	defer done()
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan struct{})
	go func() {
		sc.yieldToSubmissions(cctx)
		close(cancelled)
	}()
	cancel()
	<-cancelled
}
