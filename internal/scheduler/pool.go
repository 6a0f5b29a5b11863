package scheduler

import (
	"context"
	"errors"
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

// run runs fn on a worker, waiting for one within ctx. kind labels the
// metrics (simulation, submission, hint, level).
func (p *pool) run(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	select {
	case p.admitted <- struct{}{}:
	default:
		p.m.Rejections.Inc()
		return ErrBusy
	}
	defer func() { <-p.admitted }()
	select {
	case p.workers <- struct{}{}:
	default:
		p.m.SimWaits.WithLabelValues(kind).Inc()
		p.m.QueueDepth.Inc()
		select {
		case p.workers <- struct{}{}:
			p.m.QueueDepth.Dec()
		case <-ctx.Done():
			p.m.QueueDepth.Dec()
			p.m.Simulations.WithLabelValues(kind, outcome(ctx.Err())).Inc()
			return ctx.Err()
		}
	}
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
