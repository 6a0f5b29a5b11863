package scheduler

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// pool runs simulations of one kind (see scheduler) on a bounded number of workers with a bounded
// queue in front of them. A job that finds the queue full is refused at
// once (503 with Retry-After) rather than making everyone wait longer; a
// job whose context ends while it waits leaves the queue.
type pool struct {
	// admitted holds a token per job running or waiting: capacity
	// workers+queue.
	admitted chan struct{}
	// workers holds a token per running job: capacity workers.
	workers chan struct{}
	// waiting counts the jobs of run waiting for a worker: a job of
	// runDeferred lets them all go first.
	waiting atomic.Int64
	m       *Metrics
}

func newPool(workers, queue int, m *Metrics) *pool {
	return &pool{
		admitted: make(chan struct{}, workers+queue),
		workers:  make(chan struct{}, workers),
		m:        m,
	}
}

// full reports whether a job would be refused now (a hint, not a promise: run decides).
func (p *pool) full() bool { return len(p.admitted) == cap(p.admitted) }

// EBUSY is the error code of a full queue (the transport answers 503 with Retry-After).
const EBUSY = "busy"

// ErrBusy is the refusal of a full queue.
var ErrBusy error = game.Errorf(EBUSY, "the server is busy running simulations; retry after the time in Retry-After")

// admit takes a place among the jobs running or waiting, if there is one.
func (p *pool) admit() bool {
	select {
	case p.admitted <- struct{}{}:
		return true
	default:
		p.m.Rejections.Inc()
		return false
	}
}

// run runs fn on a worker, waiting for one within ctx. kind labels the
// metrics (simulation, submission, hint, level).
func (p *pool) run(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	if !p.admit() {
		return ErrBusy
	}
	defer func() { <-p.admitted }()
	select {
	case p.workers <- struct{}{}:
	default:
		p.m.SimWaits.WithLabelValues(kind).Inc()
		p.m.QueueDepth.Inc()
		p.waiting.Add(1)
		select {
		case p.workers <- struct{}{}:
			p.waiting.Add(-1)
			p.m.QueueDepth.Dec()
		case <-ctx.Done():
			p.waiting.Add(-1)
			p.m.QueueDepth.Dec()
			p.m.Simulations.WithLabelValues(kind, outcome(ctx.Err())).Inc()
			return ctx.Err()
		}
	}
	return p.work(ctx, kind, fn)
}

// deferredPoll is how often a deferred job looks for a worker no job of run
// is waiting for.
const deferredPoll = 2 * time.Millisecond

// runDeferred is run for a job that gives way: it takes a worker only when
// no job of run is waiting for one, so a job of run waits for at most the
// deferred jobs already running. A deferred job that finds no such worker
// within wait is refused with ErrBusy (its caller tries again later).
func (p *pool) runDeferred(ctx context.Context, kind string, wait time.Duration, fn func(ctx context.Context) error) error {
	if !p.admit() {
		return ErrBusy
	}
	defer func() { <-p.admitted }()
	giveUp := time.NewTimer(wait)
	defer giveUp.Stop()
	poll := time.NewTicker(deferredPoll)
	defer poll.Stop()
	for {
		if p.waiting.Load() == 0 {
			select {
			case p.workers <- struct{}{}:
				return p.work(ctx, kind, fn)
			default:
			}
		}
		select {
		case <-poll.C:
		case <-giveUp.C:
			p.m.Rejections.Inc()
			return ErrBusy
		case <-ctx.Done():
			p.m.Simulations.WithLabelValues(kind, outcome(ctx.Err())).Inc()
			return ctx.Err()
		}
	}
}

// work runs fn on the worker its caller holds, and gives the worker back.
func (p *pool) work(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	defer func() { <-p.workers }()
	p.m.Running.Inc()
	defer p.m.Running.Dec()
	start := time.Now()
	err := fn(ctx)
	p.m.SimDuration.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	p.m.Simulations.WithLabelValues(kind, outcome(err)).Inc()
	return err
}

func outcome(err error) string {
	if _, ok := challenges.AsProblems(err); ok {
		return "invalid"
	}
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "error"
}
