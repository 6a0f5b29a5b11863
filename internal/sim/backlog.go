package sim

import "math"

// Waiting work by age. Every node keeps what waits in its pool's queue as cohorts, one per
// tick of arrival, so that the engine knows how long each request has been waiting and
// when its client gives up. A pool serves its queue first in, first out: the oldest
// cohorts first, then the tick's own arrivals.
//
// A cohort holds live work (attempts whose client still waits for the answer) and ghost
// work (attempts whose client has given up: the server does not know, so the work stays
// queued, is served in its turn and passes on to the calls below, using capacity for an
// answer nobody reads). At the end of every tick a client node's live cohorts whose age
// (time since the client sent them) has reached the client timeout turn into ghosts: those
// attempts time out in that tick, and their retries are sent from it. Background work
// (queue consumers, replication) has no client and never times out.
//
// The ring keeps the cohorts of the last slots ticks; older work is merged into one cohort
// (old). For a client node everything in old is past its deadline already, since the ring
// spans the timeout.

// cohort is the work that joined a node's queue in one tick.
type cohort struct {
	live, ghost float64
	arrived     float64 // mean time it joined the queue (s), over live and ghost
	born        float64 // mean time the clients sent the live part (s)
}

func (c *cohort) total() float64 { return c.live + c.ghost }

// merge adds b to c, keeping the means of its times.
func (c *cohort) merge(b cohort) {
	if t := c.total() + b.total(); t > 0 {
		c.arrived = (c.total()*c.arrived + b.total()*b.arrived) / t
	}
	if l := c.live + b.live; l > 0 {
		c.born = (c.live*c.born + b.live*b.born) / l
	}
	c.live += b.live
	c.ghost += b.ghost
}

// maxCohortSlots bounds the ring: beyond it old work is one cohort, and a live part in it
// times out all at once (timeouts longer than the ring are rare and long).
const maxCohortSlots = 256

// cohortSlots is how many ticks of arrivals a node's ring keeps: enough that work older than
// the ring is past the client's timeout.
func cohortSlots(timeoutSec, dt float64) int {
	if !(timeoutSec > 0) {
		return 1
	}
	return min(maxCohortSlots, int(math.Ceil(timeoutSec/dt-1e-9))+1)
}

// initQueues gives every node its ring and every pool its scratch, from two allocations.
func (m *model) initQueues() {
	k := m.slots
	ring := make([]cohort, len(m.nodes)*k)
	for i := range m.nodes {
		m.nodes[i].q = ring[i*k : (i+1)*k : (i+1)*k]
	}
	frac := make([]float64, len(m.pools)*(k+2))
	for p := range m.pools {
		m.pools[p].frac = frac[p*(k+2) : (p+1)*(k+2) : (p+1)*(k+2)]
	}
}

// slotAt is the ring slot of position j in the pool's service order at tick t: position 0
// is old, 1..slots the ring from the oldest entry tick (t − slots) to the newest (t − 1),
// slots+1 the tick's own arrivals.
func (m *model) slotAt(nd *node, j int) *cohort { return &nd.q[(m.tick+j-1)%m.slots] }

// fifo shares the pool's processed work over its queue in service order: pl.frac[j] is the
// share of position j served this tick. It sets pl.wait, the mean time the served work
// waited in the queue.
func (m *model) fifo(pl *pool, admittedNew float64) {
	k := m.slots
	fr := pl.frac
	if pl.fracEnd != k+1 {
		clear(fr) // positions 0..k are only ever set with a queue
	}
	pl.wait, pl.fracEnd = 0, k+1
	if pl.backlog0 <= 0 {
		fr[k+1] = 0
		if admittedNew > 0 {
			fr[k+1] = fullShare(pl.processed / admittedNew)
		}
		return
	}
	clear(fr)
	oldArrived := 0.0
	for _, n := range pl.nodes {
		nd := &m.nodes[n]
		if nd.backlog <= 0 {
			continue
		}
		o := nd.old.total()
		fr[0] += o
		oldArrived += o * nd.old.arrived
		for j := 1; j <= k; j++ {
			fr[j] += m.slotAt(nd, j).total()
		}
	}
	fr[k+1] = admittedNew
	tMid := (float64(m.tick) + 0.5) * m.dt
	rem, waitSum := pl.processed, 0.0
	pl.fracEnd = -1
	for j := range fr {
		tot := fr[j]
		fr[j] = 0
		if tot <= 0 || rem <= 0 {
			continue
		}
		f := fullShare(rem / tot)
		rem -= f * tot
		fr[j] = f
		pl.fracEnd = j
		switch {
		case j == 0:
			waitSum += f * (tMid*tot - oldArrived)
		case j <= k:
			waitSum += f * tot * float64(k-j+1) * m.dt
		}
	}
	if pl.processed > 0 {
		pl.wait = max(0, waitSum/pl.processed)
	}
}

// fullShare clamps a served share to [0, 1], taking rounding next to 1 as all of it.
func fullShare(f float64) float64 {
	if f > 1-1e-12 {
		return 1
	}
	return max(0, f)
}

// serveQueue takes node nd's part of what its pool served: of its queue by the pool's
// shares, and of its admitted arrivals. It sets the node's processed amounts and the mean
// age of the live work it served.
func (m *model) serveQueue(pl *pool, nd *node) {
	k := m.slots
	fr := pl.frac
	fNew := fr[k+1]
	pLive, pGhost := nd.admLive*fNew, nd.admGhost*fNew
	ageSum := pLive * nd.inAge
	if nd.backlog > 0 {
		tMid := (float64(m.tick) + 0.5) * m.dt
		for j := 0; j <= min(k, pl.fracEnd); j++ {
			f := fr[j]
			if f == 0 {
				continue
			}
			c := &nd.old
			if j > 0 {
				c = m.slotAt(nd, j)
			}
			pLive += f * c.live
			pGhost += f * c.ghost
			ageSum += f * c.live * (tMid - c.born)
		}
	}
	nd.processed, nd.gProcessed = pLive, pGhost
	nd.outAge = nd.inAge
	if pLive > 0 {
		nd.outAge = ageSum / pLive
	}
}

// settle moves every queue on by one tick once the tick's flows are final: served work
// leaves, unserved arrivals join as the tick's cohort, and live work whose client timeout
// has passed turns into ghosts. It returns the attempts that timed out waiting.
func (m *model) settle() (expired float64) {
	k, dt := m.slots, m.dt
	tEnd := float64(m.tick+1) * dt
	tMid := tEnd - dt/2
	tau := m.timeoutSec
	for p := range m.pools {
		pl := &m.pools[p]
		fr := pl.frac
		if !pl.failed && pl.backlog0 <= 0 && pl.backlog1 <= 0 && !pl.keeps {
			continue // nothing waited and nothing is left: every node's queue stays empty
		}
		for _, n := range pl.nodes {
			nd := &m.nodes[n]
			if pl.failed {
				if !pl.durable && nd.backlog > 0 {
					nd.clearQueue() // its live part failed as errors; ghosts vanish unseen
				}
				continue
			}
			newLive := nd.admLive*(1-fr[k+1]) + nd.keep
			newGhost := nd.admGhost * (1 - fr[k+1])
			if nd.backlog <= 0 && newLive+newGhost <= 0 {
				continue
			}
			if nd.backlog > 0 {
				for j := 0; j <= min(k, pl.fracEnd); j++ {
					if f := fr[j]; f > 0 {
						c := &nd.old
						if j > 0 {
							c = m.slotAt(nd, j)
						}
						c.live *= 1 - f
						c.ghost *= 1 - f
					}
				}
			}
			// The oldest ring slot leaves the ring; the tick's arrivals take its place.
			s := m.slotAt(nd, 1)
			nd.old.merge(*s)
			*s = cohort{live: newLive, ghost: newGhost, arrived: tMid, born: tMid - nd.inAge}
			var total, live float64
			expire := tau > 0 && !nd.background
			for j := 0; j <= k; j++ {
				c := &nd.old
				if j > 0 {
					c = &nd.q[j-1]
				}
				if expire && c.live > 0 && tEnd-c.born >= tau {
					c.ghost += c.live
					nd.expired += c.live
					c.live = 0
				}
				total += c.total()
				live += c.live
			}
			if total < 1e-9 {
				// A rounding residue, not a waiting request.
				nd.clearQueue()
				total, live = 0, 0
			}
			nd.backlog, nd.liveQueued = total, live
			expired += nd.expired
		}
	}
	return expired
}

func (nd *node) clearQueue() {
	clear(nd.q)
	nd.old = cohort{}
	nd.backlog, nd.liveQueued = 0, 0
}

// push queues amount of live work that arrives outside the pool's own flow (jobs back to
// their queue, replication held back by a cut link) as part of the newest cohort.
func (m *model) push(nd *node, amount float64) {
	if amount <= 0 {
		return
	}
	s := &nd.q[m.tick%m.slots]
	tMid := (float64(m.tick) + 0.5) * m.dt
	s.merge(cohort{live: amount, arrived: tMid, born: tMid})
	nd.backlog += amount
	nd.liveQueued += amount
}
