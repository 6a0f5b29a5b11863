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
//
// Cohorts are kept by age, never by the time on the clock, so that a queue standing steady
// is the same state from one tick to the next, bit for bit, and tick reuse can repeat its
// ticks (state.go). A ring slot's age is its place in the ring, read in age order from the
// current tick on: the cohort that joined j ticks ago has waited j ticks, from the middle of
// the tick it joined to the middle of this one. What a ring slot carries besides its amounts
// is how long its live part had already been on its way when it joined (sent: the age its
// clients' attempts had, a constant while it waits). old carries the mean time its work has
// waited (waited, over live and ghost) and the mean age of its live part (sent), both as of
// the middle of the tick that reads it; each tick's end moves them on by one tick.

// cohort is the work that joined a node's queue in one tick (or, for old, before the ring).
type cohort struct {
	live, ghost float64
	waited      float64 // old only: mean time in the queue (s), over live and ghost; 0 in the ring
	sent        float64 // mean time since the clients sent the live part (s): when it joined (ring), now (old)
}

func (c *cohort) total() float64 { return c.live + c.ghost }

// merge adds b to c, b's times measured from the same moment as c's, keeping their means.
func (c *cohort) merge(b cohort) {
	if t := c.total() + b.total(); t > 0 {
		c.waited = (c.total()*c.waited + b.total()*b.waited) / t
	}
	if l := c.live + b.live; l > 0 {
		c.sent = (c.live*c.sent + b.live*b.sent) / l
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
	m.rings = make([]cohort, len(m.nodes)*k)
	for i := range m.nodes {
		m.nodes[i].q = m.rings[i*k : (i+1)*k : (i+1)*k]
	}
	m.fracs = make([]float64, len(m.pools)*(k+2))
	for p := range m.pools {
		m.pools[p].frac = m.fracs[p*(k+2) : (p+1)*(k+2) : (p+1)*(k+2)]
	}
}

// slotAt is the ring slot of position j in the pool's service order this tick: position 0
// is old, 1..slots the ring from the oldest (joined slots ticks ago) to the newest (joined
// in the last tick), slots+1 the tick's own arrivals. Position j has waited slots − j + 1
// ticks at the middle of this tick. Where the ring starts (m.ring) moves on by one slot with
// every computed tick, and stays where it is in a repeated one (state.go), whose queues
// stand as they were in age order.
func (m *model) slotAt(nd *node, j int) *cohort { return &nd.q[(m.ring+j-1)%m.slots] }

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
	oldWaited := 0.0
	nodes := m.nodes // in a local: the stores to fr cannot move it, so it is loaded once
	for _, n := range pl.nodes {
		nd := &nodes[n]
		if nd.backlog <= 0 {
			continue
		}
		o := nd.old.total()
		fr[0] += o
		oldWaited += o * nd.old.waited
		// Positions 1..k are the ring from where it starts, round to its beginning.
		wrap := fr[1+k-m.ring : k+1]
		for j, c := range nd.q[m.ring:] {
			fr[1+j] += c.total()
		}
		for j, c := range nd.q[:m.ring] {
			wrap[j] += c.total()
		}
	}
	fr[k+1] = admittedNew
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
			waitSum += f * oldWaited
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
		for j := 0; j <= min(k, pl.fracEnd); j++ {
			f := fr[j]
			if f == 0 {
				continue
			}
			c, age := &nd.old, nd.old.sent
			if j > 0 {
				c = m.slotAt(nd, j)
				age = float64(k-j+1)*m.dt + c.sent
			}
			pLive += f * c.live
			pGhost += f * c.ghost
			ageSum += f * c.live * age
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
	tau := m.timeoutSec
	// In locals: the loop's stores cannot move them, so their headers are loaded once (and
	// the pools' index needs no bounds check).
	pools, nodes := m.pools, m.nodes
	for p := range pools {
		pl := &pools[p]
		fr := pl.frac
		if !pl.failed && pl.backlog0 <= 0 && pl.backlog1 <= 0 && !pl.keeps {
			continue // nothing waited and nothing is left: every node's queue stays empty
		}
		for _, n := range pl.nodes {
			nd := &nodes[n]
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
			// The oldest ring slot (k ticks in the queue at the middle of this tick) leaves
			// the ring for old; the tick's arrivals take its place. old moves on by a tick.
			s := m.slotAt(nd, 1)
			wait := float64(k) * dt
			nd.old.merge(cohort{live: s.live, ghost: s.ghost, waited: wait, sent: wait + s.sent})
			old := &nd.old
			switch {
			case old.total() <= 0:
				*old = cohort{}
			case old.live <= 0:
				old.waited, old.sent = old.waited+dt, 0
			default:
				old.waited, old.sent = old.waited+dt, old.sent+dt
			}
			*s = cohort{live: newLive, ghost: newGhost, sent: nd.inAge}
			expire := tau > 0 && !nd.background
			// Ages at the end of this tick, in age order: old, then the ring from its
			// oldest slot (k − 1 ticks and a half in the queue) to the tick's own, which
			// starts one slot on from where the ring started this tick.
			if expire && old.live > 0 && old.sent-dt/2 >= tau {
				old.ghost += old.live
				nd.expired += old.live
				old.live, old.sent = 0, 0
			}
			var total, live float64
			total += old.total()
			live += old.live
			from := m.ring + 1
			if from == k {
				from = 0
			}
			j := 1
			for _, seg := range [2][]cohort{nd.q[from:], nd.q[:from]} {
				for i := range seg {
					c := &seg[i]
					if expire && c.live > 0 && float64(k-j)*dt+dt/2+c.sent >= tau {
						c.ghost += c.live
						nd.expired += c.live
						c.live = 0
					}
					total += c.total()
					live += c.live
					j++
				}
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
	m.ring = (m.ring + 1) % k
	return expired
}

func (nd *node) clearQueue() {
	clear(nd.q)
	nd.old = cohort{}
	nd.backlog, nd.liveQueued = 0, 0
}

// push queues amount of live work that arrives outside the pool's own flow (jobs back to
// their queue, replication held back by a cut link) as part of the newest cohort, the
// tick's own, as work its clients sent now.
func (m *model) push(nd *node, amount float64) {
	if amount <= 0 {
		return
	}
	nd.q[(m.ring+m.slots-1)%m.slots].merge(cohort{live: amount}) // settle has moved the ring on
	nd.backlog += amount
	nd.liveQueued += amount
}
