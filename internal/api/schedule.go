package api

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"backpressure/internal/game"
)

// Simulation work is scheduled by kind and by player, so that no one can take it away
// from the others:
//   - each kind has workers of its own: submissions never wait behind hints or dry runs;
//   - a player (or, anonymously, a client address) has at most one hint and
//     Config.DryRunsPerPlayer dry runs in flight, and a budget of simulation cost over time
//     (Config.SimBudgetBurst, Config.SimBudgetPerSecond) from which every run is paid
//     before it starts; beyond either, 429 with Retry-After.
type scheduler struct {
	pools  map[string]*pool // by kind
	budget *budget
	limits map[string]int // in flight per player, by kind; absent: no limit
	mu     sync.Mutex
	flying map[flightKey]int
	m      *metrics
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
	kindSubmission = "submission"
	kindSimulation = "simulation" // a dry run
	kindHint       = "hint"
	kindLevel      = "level" // validating an uploaded level
	kindEvent      = "event" // an event's final runs, done by the server itself
)

func newScheduler(cfg Config, now func() time.Time, m *metrics) *scheduler {
	side := max(1, cfg.SimWorkers/2)
	dry := newPool(side, cfg.SimQueue, m)
	return &scheduler{
		pools: map[string]*pool{
			kindSubmission: newPool(cfg.SimWorkers, cfg.SimQueue, m),
			kindSimulation: dry,
			kindLevel:      dry,
			kindHint:       newPool(side, side, m),
			kindEvent:      newPool(side, cfg.SimQueue, m),
		},
		budget:   newBudget(cfg.SimBudgetBurst, cfg.SimBudgetPerSecond, now),
		limits:   map[string]int{kindHint: 1, kindSimulation: cfg.DryRunsPerPlayer},
		flying:   map[flightKey]int{},
		m:        m,
		yieldMax: hintYieldMax,
	}
}

// run pays for a job of the given kind from who's budget, within who's in-flight limit for
// the kind, and runs it on the kind's workers. A refusal sets Retry-After on w. The job's
// cost (costOf, which compiles the design) is worked out only once the cheap refusals
// (in flight, a full queue) have passed, so that refusing a flood costs little.
func (sc *scheduler) run(ctx context.Context, w http.ResponseWriter, who, kind string, costOf func() (int64, error), fn func(ctx context.Context) error) error {
	if n, limited := sc.limits[kind]; limited {
		sc.mu.Lock()
		k := flightKey{who, kind}
		if sc.flying[k] >= n {
			sc.mu.Unlock()
			sc.m.rateLimited.WithLabelValues(kind + "_in_flight").Inc()
			w.Header().Set("Retry-After", "1")
			return errorf(game.ERATELIMIT, "you already have %d %s request(s) running, the most one player may; retry when one has finished", n, kind)
		}
		sc.flying[k]++
		sc.mu.Unlock()
		defer func() {
			sc.mu.Lock()
			if sc.flying[k]--; sc.flying[k] <= 0 {
				delete(sc.flying, k)
			}
			sc.mu.Unlock()
		}()
	}
	p := sc.pools[kind]
	if p.full() {
		p.m.rejections.Inc()
		return errBusy
	}
	cost, err := costOf()
	if err != nil {
		return err
	}
	if ok, wait := sc.budget.charge(who, cost); !ok {
		sc.m.rateLimited.WithLabelValues("simulation_budget").Inc()
		secs := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(1, secs)))
		return errorf(game.ERATELIMIT, "this %s costs %d units of simulation and your budget holds less; it refills at %d units a second (retry after %s)",
			kind, cost, int64(sc.budget.rate), fmt.Sprint(time.Duration(secs)*time.Second))
	}
	sc.m.simCost.WithLabelValues(kind).Add(float64(cost))
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

// submitting marks a scored submission in progress until the returned func is called.
func (sc *scheduler) submitting() (done func()) {
	sc.submissions.Add(1)
	return func() {
		sc.lastSubmission.Store(time.Now().UnixNano())
		sc.submissions.Add(-1)
	}
}

// submissionsBusy reports whether a submission is in progress or has just finished.
func (sc *scheduler) submissionsBusy() bool {
	return sc.submissions.Load() > 0 || time.Since(time.Unix(0, sc.lastSubmission.Load())) < hintYieldGrace
}

// yieldToSubmissions is a hint's challenges.HintLimits.Yield.
func (sc *scheduler) yieldToSubmissions(ctx context.Context) {
	if !sc.submissionsBusy() {
		return
	}
	sc.m.hintYields.Inc()
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

// background runs work the server does for itself (an event's final runs) on the kind's
// workers: no player pays for it and no player's limit applies, but it never takes the
// submissions' workers.
func (sc *scheduler) background(ctx context.Context, kind string, fn func(ctx context.Context) error) error {
	return sc.pools[kind].run(ctx, kind, fn)
}
