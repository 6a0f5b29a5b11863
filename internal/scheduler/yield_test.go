package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A hint's next run waits while a submission is in progress and goes on once none is; it
// does not wait when none is, and its context ends the wait.
func TestHintYieldsToSubmissions(t *testing.T) {
	sc := New(Config{Workers: 2}, time.Now, NewMetrics())
	sc.yieldMax = time.Hour
	ctx := t.Context()
	sc.YieldToSubmissions(ctx) // nothing in progress: no wait (the test would hang)

	done := sc.Submitting()
	resumed := make(chan struct{})
	go func() {
		sc.YieldToSubmissions(ctx)
		close(resumed)
	}()
	waitFor(t, func() bool { return testutil.ToFloat64(sc.m.HintYields) >= 1 })
	select {
	case <-resumed:
		t.Fatal("the hint went on while a submission was in progress")
	default:
	}
	done()
	<-resumed

	done = sc.Submitting()
	defer done()
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan struct{})
	go func() {
		sc.YieldToSubmissions(cctx)
		close(cancelled)
	}()
	cancel()
	<-cancelled
}
