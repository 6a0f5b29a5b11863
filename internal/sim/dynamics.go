package sim

import "math"

// preTick updates what changes with time inside components before the tick's requests
// arrive: autoscalers acting on the last tick's utilisation, caches and CDNs warming up
// after a flush.
func (m *model) preTick(t0 float64, st *runState) {
	comps := m.comps // in a local, the loop cannot move it: no bounds check
	for i := range comps {
		c := &comps[i]
		switch c.kind {
		case KindContainerPool:
			m.autoscale(c, t0)
		case KindAPIGateway:
			c.gate.begin(t0, t0+m.dt)
		case KindCache, KindCDN:
			c.hitNow = c.hitTarget
			if !math.IsInf(c.flushedAt, -1) {
				since := t0 - c.flushedAt
				if c.flushWarm <= 0 || since >= c.flushWarm {
					c.flushedAt = math.Inf(-1)
				} else {
					// The hit ratio rebuilds linearly over the warm-up (seed simulation-design).
					c.hitNow = c.hitTarget * math.Max(0, since) / c.flushWarm
				}
			}
		}
	}
}

// postTick lets components react to how the tick went: breakers observe their downstream,
// functions keep or reclaim warm instances.
func (m *model) postTick(t int, st *runState) {
	comps := m.comps // in a local, the loop cannot move it: no bounds check
	for i := range comps {
		c := &comps[i]
		switch {
		case c.gate != nil:
			c.gate.spend(m.dt)
			if c.gate.threshold <= 0 {
				continue // no breaker: the downstream's outcome moves nothing
			}
			o := m.gateTick(c, t, st)
			if c.gate.state == BreakerHalfOpen {
				o.nowSec = m.gateNow(c, st) // a probe's fate reads it
			}
			c.gate.observe(o)
		case c.fn != nil:
			c.fn.settle(&m.pools[c.pools[0]], m.dt)
		}
	}
}
