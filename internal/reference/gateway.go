package reference

// The reference's API gateway: a rate limit as a token bucket and a circuit breaker that
// judges each request by its own answer, when that answer comes (reference.md).

import (
	"backpressure/internal/sim"
	"math"
)

// refGateway admits what its rate limit and breaker let through, authenticates it and
// forwards it to its one callee.
type refGateway struct {
	m    *refModel
	comp *refComp
	down refHop
	auth float64 // s of authentication before forwarding

	// The rate limit: a bucket of rateLimit tokens a second holding at most one second's.
	rateLimit, tokens, filledAt float64

	// The breaker (threshold 0: none).
	threshold, windowSec, openSec, probeRatio float64
	state                                     sim.Breaker
	// epoch counts the breaker's changes of state: an answer to a request sent in an
	// earlier state is not part of the current one's judgement.
	epoch   int
	window  []refGateOutcome // closed: the answers returned within the last windowSec
	failed  int              // how many of them failed
	credit  float64          // half-open: probes owed, one for every 1 ÷ probeRatio requests
	opened  []float64        // when the breaker opened, each time
	history []refGateState   // every change of state, in order
}

type refGateOutcome struct {
	at     float64
	failed bool
}

// refGateState is a breaker state taken at a time.
type refGateState struct {
	at    float64
	state sim.Breaker
}

func newRefGateway(m *refModel, rc *refComp, p refParams, down refHop) *refGateway {
	g := &refGateway{m: m, comp: rc, down: down, auth: p.f("auth_latency_ms") / 1000,
		rateLimit: p.f("rate_limit_rps"), threshold: p.f("breaker_error_threshold"),
		windowSec: p.f("breaker_window_sec"), openSec: p.f("breaker_open_sec"), probeRatio: p.f("breaker_probe_ratio")}
	g.tokens = g.rateLimit // a day's traffic has been flowing: the bucket starts full
	if g.threshold > 0 {
		g.setState(sim.BreakerClosed)
	}
	return g
}

func (g *refGateway) setState(b sim.Breaker) {
	g.state = b
	g.epoch++
	g.history = append(g.history, refGateState{at: g.m.s.now, state: b})
}

// stateAt is the breaker's state at time t (BreakerNone without a breaker).
func (g *refGateway) stateAt(t float64) sim.Breaker {
	b := sim.BreakerNone
	for _, h := range g.history {
		if h.at > t {
			break
		}
		b = h.state
	}
	return b
}

// admitLimit takes a token from the rate limit's bucket if one is there.
func (g *refGateway) admitLimit() bool {
	if g.rateLimit <= 0 {
		return true
	}
	now := g.m.s.now
	g.tokens = math.Min(g.rateLimit, g.tokens+(now-g.filledAt)*g.rateLimit)
	g.filledAt = now
	if g.tokens < 1 {
		return false
	}
	g.tokens--
	return true
}

func (g *refGateway) call(r *refReq, reply func(refOutcome)) {
	switch g.state {
	case sim.BreakerOpen:
		r.lose(g.comp.id, sim.CauseBreakerOpen)
		reply(refRejected) // 503 at once
		return
	case sim.BreakerHalfOpen:
		if g.credit += g.probeRatio; g.credit < 1 {
			r.lose(g.comp.id, sim.CauseBreakerOpen)
			reply(refRejected)
			return
		}
		g.credit--
	}
	if !g.admitLimit() {
		r.lose(g.comp.id, sim.CauseRateLimited)
		reply(refRejected) // 429
		return
	}
	epoch := g.epoch
	g.comp.pools[0].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		g.m.s.at(g.m.s.now+g.auth, func() {
			judged := false
			judge := func(failed bool) {
				if !judged {
					judged = true
					g.observe(epoch, failed)
				}
			}
			if !math.IsInf(r.deadline, 1) {
				// The gateway waits for its callee as long as the client does.
				g.m.s.at(r.deadline, func() { judge(true) })
			}
			g.down.call(r, func(o refOutcome) {
				judge(o != refOK)
				reply(o)
			})
		})
	}})
}

// observe judges one answer of a request sent in the breaker's epoch.
func (g *refGateway) observe(epoch int, failed bool) {
	if g.threshold <= 0 || epoch != g.epoch {
		return
	}
	now := g.m.s.now
	switch g.state {
	case sim.BreakerHalfOpen:
		// The first probe to answer decides.
		if failed {
			g.open()
		} else {
			g.setState(sim.BreakerClosed)
			g.window, g.failed = g.window[:0], 0
		}
	case sim.BreakerClosed:
		g.window = append(g.window, refGateOutcome{at: now, failed: failed})
		if failed {
			g.failed++
		}
		for len(g.window) > 0 && g.window[0].at <= now-g.windowSec {
			if g.window[0].failed {
				g.failed--
			}
			g.window = g.window[1:]
		}
		if float64(g.failed) > g.threshold*float64(len(g.window)) {
			g.open()
		}
	}
}

func (g *refGateway) open() {
	g.setState(sim.BreakerOpen)
	g.window, g.failed = g.window[:0], 0
	g.opened = append(g.opened, g.m.s.now)
	epoch := g.epoch
	g.m.s.at(g.m.s.now+g.openSec, func() {
		if g.epoch == epoch {
			g.setState(sim.BreakerHalfOpen)
			g.credit = 0
		}
	})
}
