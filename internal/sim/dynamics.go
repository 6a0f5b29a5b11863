package sim

import "math"

// preTick updates what changes with time inside components before the tick's requests
// arrive: caches and CDNs warming up after a flush.
func (m *model) preTick(t0 float64, st *runState) {
	for i := range m.comps {
		c := &m.comps[i]
		switch c.kind {
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
