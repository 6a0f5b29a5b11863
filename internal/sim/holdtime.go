package sim

import "math"

// Hold times. A worker that calls synchronously is held for the mean response time of its
// calls, and that response time depends on how many calls the held workers let through: a
// longer hold lets fewer through, which makes the callee faster. For one pool the response
// r(h) its calls take when its workers are held h falls as h grows, so r(h) = h has exactly
// one solution. Near a callee's saturation r is steep, and a damped plain iteration
// overshoots from one side to the other, tick after tick: the numbers of a tier at constant
// load oscillated. Each tick therefore brackets the solution per pool and closes in on it
// by regula falsi (the Illinois variant, which keeps shrinking both ends), so a steady load
// gives steady numbers.

// initHolding lists what the hold-time solve visits: the nodes whose mean response a hold
// time reads (those of holding pools and everything below them; above the first holding
// pool, an ingress, a gateway or their balancer, and in replication nothing waits on a
// response), children first for the bottom-up sums; the holding pools; and the closed pools
// (closedloop.go, after initClosedLoops), whose populations the holders' workers make. The
// three lists share one allocation.
func (m *model) initHolding() {
	lists := make([]int, 0, len(m.nodes)+2*len(m.pools))
	for i := len(m.nodes) - 1; i >= 0; i-- { // children always follow their parent
		if m.heldBelow(i) {
			lists = append(lists, i)
			if p := m.nodes[i].pool; p >= 0 {
				m.pools[p].heldVar = true
			}
		}
	}
	m.holding = lists[:len(lists):len(lists)]
	lists = lists[len(lists):]
	for p := range m.pools {
		if pl := &m.pools[p]; pl.holds {
			lists = append(lists, p)
			pl.holdLo, pl.holdHi = math.NaN(), math.NaN() // no bracket yet (resetHoldBrackets)
		}
	}
	m.holders = lists[:len(lists):len(lists)]
	lists = lists[len(lists):]
	for p := range m.pools {
		if len(m.pools[p].closed.holders) > 0 {
			lists = append(lists, p)
		}
	}
	m.closedSet = lists
}

// heldBelow reports whether node n or a node above it is in a holding pool.
func (m *model) heldBelow(n int) bool {
	for ; n >= 0; n = m.nodes[n].parent {
		if nd := &m.nodes[n]; nd.pool >= 0 && m.pools[nd.pool].holds {
			return true
		}
	}
	return false
}

// resetHoldBrackets forgets the last tick's brackets: each tick solves from its own start.
// It also counts the held workers that bound each closed loop this tick (closedloop.go).
// Most ticks' solves end on their first pass, which leaves the bracket alone: nextHold
// marks every bracket it changes with a side, so a pool with none (holdSide 0) still has
// the empty one it was given (initHolding) or last reset to.
func (m *model) resetHoldBrackets() {
	m.setPopulations()
	for _, p := range m.holders { // no other pool has a hold to solve
		if pl := &m.pools[p]; pl.holdSide != 0 {
			pl.holdLo, pl.holdHi = math.NaN(), math.NaN()
			pl.holdSide = 0
		}
	}
}

// nextHold takes r, the response time the pool's calls had with its workers held holdSec,
// and chooses the next hold. It reports whether holdSec was already the solution.
func (pl *pool) nextHold(r float64) bool {
	h := pl.holdSec
	g := r - h
	if math.Abs(g) <= holdTolerance*(pl.serviceSec+h) {
		pl.holdSec = r
		return true
	}
	side := 1
	if g > 0 {
		pl.holdLo, pl.gLo = h, g // the solution is longer than h
		if pl.holdSide == 1 {
			pl.gHi /= 2 // Illinois: the other end has not moved twice
		}
	} else {
		side = -1
		pl.holdHi, pl.gHi = h, g
		if pl.holdSide == -1 {
			pl.gLo /= 2
		}
	}
	pl.holdSide = side
	if math.IsNaN(pl.holdLo) || math.IsNaN(pl.holdHi) || pl.holdLo >= pl.holdHi {
		// No bracket yet: a damped step, which overshoots soon enough to make one.
		pl.holdSec = 0.5 * (h + r)
		return false
	}
	next := pl.holdLo + pl.gLo*(pl.holdHi-pl.holdLo)/(pl.gLo-pl.gHi)
	if !(next > pl.holdLo && next < pl.holdHi) {
		next = 0.5 * (pl.holdLo + pl.holdHi)
	}
	pl.holdSec = next
	return false
}
