// Package scheduler decides when simulation work runs and who pays for it: fair queues
// by kind of work and by player, budgets of simulation cost over time, and hints that
// yield to submissions. It is shared by the game's rules (internal/rules: submissions,
// event final runs, duels) and the transport (dry runs, hints, level uploads).
//
// Simulation work is scheduled by kind and by player, so that no one can take it away
// from the others:
//   - each kind has workers of its own: submissions never wait behind hints or dry runs;
//   - a player (or, anonymously, a client address) has at most one hint and
//     Config.DryRunsPerPlayer dry runs in flight, and a budget of simulation cost over time
//     (Config.BudgetBurst, Config.BudgetPerSecond) from which every run is paid
//     before it starts; beyond either, a rate-limit refusal that says when to retry.
//
// It never simulates by itself (the caller's function does), never imports net/http,
// and keeps no state replicas could disagree on beyond this process's own load.
package scheduler

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"backpressure/internal/game"
)

// Config sizes a Scheduler; its callers fill in the defaults (api.Config.WithDefaults).
type Config struct {
	// Workers submissions run at once; Queue more may wait for a worker. Dry runs
	// (and level uploads), hints and the server's own work have half as many workers
	// each (at least one).
	Workers int
	Queue   int
	// BudgetBurst and BudgetPerSecond are each player's budget of simulation cost
	// (path-ticks, sim.Cost); a rate of 0 or less turns the budget off.
	BudgetBurst     int64
	BudgetPerSecond int64
	// DryRunsPerPlayer dry runs of one player may be in flight at once (and one hint).
	DryRunsPerPlayer int
}

// Scheduler runs simulation work fairly; see the package comment.
type Scheduler struct {
	pools  map[string]*pool // by kind
	budget *budget
	limits map[string]int // in flight per player, by kind; absent: no limit
	mu     sync.Mutex
	flying map[flightKey]int
	m      *Metrics
	// submissions in progress, and when the last one ended (unix ns): hints yield to them.
	submissions    atomic.Int64
	lastSubmission atomic.Int64
	yieldMax       time.Duration // hintYieldMax; tests lengthen it
}

type flightKey struct {
	who, kind string
}

// Kinds of simulation work.
const (
	KindSubmission = "submission"
	KindSimulation = "simulation" // a dry run
	KindHint       = "hint"
	KindLevel      = "level" // validating an uploaded level
	KindEvent      = "event" // an event's final runs or a duel's, done by the server itself
)

// New returns a scheduler of cfg's size whose budgets refill by now; m counts what it does.
func New(cfg Config, now func() time.Time, m *Metrics) *Scheduler {
	side := max(1, cfg.Workers/2)
	dry := newPool(side, cfg.Queue, m)
	return &Scheduler{
		pools: map[string]*pool{
			KindSubmission: newPool(cfg.Workers, cfg.Queue, m),
			KindSimulation: dry,
			KindLevel:      dry,
			KindHint:       newPool(side, side, m),
			KindEvent:      newPool(side, cfg.Queue, m),
		},
		budget:   newBudget(cfg.BudgetBurst, cfg.BudgetPerSecond, now),
		limits:   map[string]int{KindHint: 1, KindSimulation: cfg.DryRunsPerPlayer},
		flying:   map[flightKey]int{},
		m:        m,
		yieldMax: hintYieldMax,
	}
}

// Run pays for a job of the given kind from who's budget, within who's in-flight limit for
// the kind, and runs it on the kind's workers. A refusal is a *RetryError saying when to
// try again. The job's cost (costOf, which compiles the design) is worked out only once
// the cheap refusals (in flight, a full queue) have passed, so that refusing a flood
// costs little.
func (sc *Scheduler) Run(ctx context.Context, who, kind string, costOf func() (int64, error), fn func(ctx context.Context) error) error {
	if n, limited := sc.limits[kind]; limited {
		done, err := sc.Admit(who, kind, n)
		if err != nil {
			return err
		}
		defer done()
	}
	p := sc.pools[kind]
	if p.full() {
		p.m.Rejections.Inc()
		return ErrBusy
	}
	cost, err := costOf()
	if err != nil {
		return err
	}
	if err := sc.Charge(who, kind, cost); err != nil {
		return err
	}
	started := false
	err = p.run(ctx, kind, func(ctx context.Context) error {
		started = true
		return fn(ctx)
	})
	if !started {
		sc.budget.refund(who, cost)
	}
	return err
}

// Admit takes one of who's places for work of the given kind, of which who has
// limit at once, until done is called; beyond them, a *RetryError.
func (sc *Scheduler) Admit(who, kind string, limit int) (done func(), err error) {
	sc.mu.Lock()
	k := flightKey{who, kind}
	if sc.flying[k] >= limit {
		sc.mu.Unlock()
		sc.m.RateLimited.WithLabelValues(kind + "_in_flight").Inc()
		return nil, &RetryError{After: time.Second, Err: game.Errorf(game.ERATELIMIT,
			"you already have %d %s request(s) running, the most one player may; retry when one has finished", limit, kind)}
	}
	sc.flying[k]++
	sc.mu.Unlock()
	return func() {
		sc.mu.Lock()
		if sc.flying[k]--; sc.flying[k] <= 0 {
			delete(sc.flying, k)
		}
		sc.mu.Unlock()
	}, nil
}

// Charge pays cost from who's budget for simulation work of the given kind that runs
// later, not as one job of who's (a duel's runs, made once both designs are in). A
// refusal is a *RetryError, as Run's.
func (sc *Scheduler) Charge(who, kind string, cost int64) error {
	if ok, wait := sc.budget.charge(who, cost); !ok {
		sc.m.RateLimited.WithLabelValues("simulation_budget").Inc()
		secs := int(math.Ceil(wait.Seconds()))
		return &RetryError{After: time.Duration(max(1, secs)) * time.Second, Err: game.Errorf(game.ERATELIMIT,
			"this %s costs %d units of simulation and your budget holds less; it refills at %d units a second (retry after %s)",
			kind, cost, int64(sc.budget.rate), fmt.Sprint(time.Duration(secs)*time.Second))}
	}
	sc.m.SimCost.WithLabelValues(kind).Add(float64(cost))
	return nil
}

// Hints yield to submissions. A hint is up to challenges.MaxHintRuns runs; before each
// it waits while a scored submission is in progress anywhere in its request (decoding,
// simulating, storing, answering: submitting) or finished less than hintYieldGrace ago
// (a player submitting again at once is still submitting), polling every hintYieldPoll.
// So a hint's run starts only when no submission needs the CPUs (a run already going
// finishes first: the engine is not interrupted inside a run). The wait for one run is
// at most hintYieldMax, so a hint still progresses, slowly, under a steady stream of
// submissions (its deadline, HintTimeout, still bounds it all). Measured in
// RELIABILITY.md ("Attacks and their bounds", scripts/flood.sh).
const (
	hintYieldPoll  = time.Millisecond
	hintYieldGrace = 5 * time.Millisecond
	hintYieldMax   = 100 * time.Millisecond
)

// Submitting marks a scored submission in progress until the returned func is called.
func (sc *Scheduler) Submitting() (done func()) {
	sc.submissions.Add(1)
	return func() {
		sc.lastSubmission.Store(time.Now().UnixNano())
		sc.submissions.Add(-1)
	}
}

// submissionsBusy reports whether a submission is in progress or has just finished.
func (sc *Scheduler) submissionsBusy() bool {
	return sc.submissions.Load() > 0 || time.Since(time.Unix(0, sc.lastSubmission.Load())) < hintYieldGrace
}

// YieldToSubmissions is a hint's challenges.HintLimits.Yield.
func (sc *Scheduler) YieldToSubmissions(ctx context.Context) {
	if !sc.submissionsBusy() {
		return
	}
	sc.m.HintYields.Inc()
	deadline := time.NewTimer(sc.yieldMax)
	defer deadline.Stop()
	poll := time.NewTicker(hintYieldPoll)
	defer poll.Stop()
	for sc.submissionsBusy() {
		select {
		case <-poll.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Background runs work the server does for itself (an event's final runs) on the kind's
// workers: no player pays for it and no player's limit applies, but it never takes the
// submissions' workers.
func (sc *Scheduler) Background(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	return sc.pools[kind].run(ctx, kind, fn)
}

// Deferred is Background for work that gives way to the kind's other work (a duel settled
// by a job rather than in its player's request): it takes a worker only when no job of
// Background is waiting for one, so that a burst of deferred work never stands in front of
// work a player is waiting for. Not given a worker within wait, it is refused with
// ErrBusy, to be tried again later.
func (sc *Scheduler) Deferred(ctx context.Context, kind string, wait time.Duration, fn func(ctx context.Context) error) error {
	return sc.pools[kind].runDeferred(ctx, kind, wait, fn)
}

// Running is how many jobs hold a worker of kind's pool now.
func (sc *Scheduler) Running(kind string) int { return len(sc.pools[kind].workers) }

// RetryError is a refusal that says how long to wait before trying again (an HTTP
// transport sends it as Retry-After).
type RetryError struct {
	After time.Duration
	Err   error
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// Metrics are the collectors the scheduler counts in.
func (sc *Scheduler) Metrics() *Metrics { return sc.m }
