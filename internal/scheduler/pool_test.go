package scheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"backpressure/internal/game"
)

func TestPoolBounds(t *testing.T) {
	m := NewMetrics()
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
	waitFor(t, func() bool { return testutil.ToFloat64(m.QueueDepth) == 1 })
	// ...and a third finds the queue full.
	err := p.run(t.Context(), "test", func(context.Context) error { t.Error("ran a rejected job"); return nil })
	if game.ErrorCode(err) != EBUSY {
		t.Fatalf("third job: %v, want busy", err)
	}
	if got := testutil.ToFloat64(m.Rejections); got != 1 {
		t.Errorf("rejections = %g", got)
	}
	// A waiting job whose context ends leaves the queue.
	ctx, cancel := context.WithCancel(t.Context())
	p2 := newPool(1, 1, NewMetrics())
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
	if got := testutil.ToFloat64(m.QueueDepth); got != 0 {
		t.Errorf("queue depth after draining = %g", got)
	}
	if got := testutil.ToFloat64(m.Simulations.WithLabelValues("test", "ok")); got != 2 {
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

// A deferred job gives way: a job of run that is waiting for the worker gets it first,
// however long the deferred job has waited, and a deferred job given no worker within its
// wait is refused as busy.
func TestDeferredJobsGiveWay(t *testing.T) {
	p := newPool(1, 4, NewMetrics())
	release := make(chan struct{})
	running := make(chan struct{})
	go func() {
		_ = p.run(t.Context(), "test", func(context.Context) error { close(running); <-release; return nil })
	}()
	<-running
	order := make(chan string, 2)
	deferred := make(chan error, 1)
	go func() {
		deferred <- p.runDeferred(t.Context(), "test", time.Minute, func(context.Context) error { order <- "deferred"; return nil })
	}()
	waitFor(t, func() bool { return len(p.admitted) == 2 })
	time.Sleep(5 * deferredPoll) // the deferred job has been waiting for a while
	waited := make(chan error, 1)
	go func() {
		waited <- p.run(t.Context(), "test", func(context.Context) error { order <- "waited"; return nil })
	}()
	waitFor(t, func() bool { return p.waiting.Load() == 1 })
	close(release)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := <-deferred; err != nil {
		t.Fatal(err)
	}
	if first, second := <-order, <-order; first != "waited" || second != "deferred" {
		t.Errorf("ran %s then %s; want the waiting job first", first, second)
	}

	block := make(chan struct{})
	defer close(block)
	go func() { _ = p.run(t.Context(), "test", func(context.Context) error { <-block; return nil }) }()
	waitFor(t, func() bool { return len(p.workers) == 1 })
	err := p.runDeferred(t.Context(), "test", 20*time.Millisecond, func(context.Context) error { t.Error("ran without a worker"); return nil })
	if game.ErrorCode(err) != EBUSY {
		t.Errorf("deferred job with no worker: %v, want busy", err)
	}
}
