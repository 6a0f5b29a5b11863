package sim

import "slices"

// A delay injected on a call holds the caller's worker for as long as the call takes. When
// the delay ends, the calls already under way still take it: a worker that made its call a
// moment before is held almost the whole call more. So the workers come back as their calls
// return, spread over one call's length, not all at once in the tick the delay ends, and a
// tier that stood saturated behind the delay stays so while they do.
//
// The last tick a delay acts in notes per pool the workers its calls through delayed links
// hold (Little's law: the calls a second times how long one takes) and how long one takes.
// With those calls begun evenly over their length L, the share still held s seconds after
// the delay ended is 1 − s/L. The pool serves new work at the new speed with the workers
// that are back, and the calls that return finish their requests (pool.queueing).

// markDelayable lists the nodes called across a link by a pool that holds its workers
// through the call, where a delay on the link holds the caller's workers, and their pools.
func (m *model) markDelayable() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.edge < 0 || nd.parent < 0 {
			continue
		}
		if p := m.nodes[nd.parent].pool; p >= 0 && m.pools[p].holds {
			m.delayable = append(m.delayable, i)
			if !slices.Contains(m.delayCallers, p) {
				m.delayCallers = append(m.delayCallers, p)
			}
		}
	}
}

// noteDelayedCalls sets, for each pool, the workers held by its calls through delayed links
// this tick, and their mean length.
func (m *model) noteDelayedCalls(st *runState) {
	for _, p := range m.delayCallers {
		m.pools[p].delayedWorkers, m.pools[p].delayedSec = 0, 0
	}
	dt := m.dt
	for _, i := range m.delayable {
		nd := &m.nodes[i]
		calls := nd.in + nd.gin // whether or not their clients still wait
		if !(st.extraSec[nd.edge] > 0) || !(calls > 0) {
			continue
		}
		pl := &m.pools[m.nodes[nd.parent].pool]
		call := nd.meanResp // the link's delay included
		pl.delayedWorkers += calls / dt * call
		pl.delayedSec += calls / dt * call * call // weighted by the workers each holds
	}
	for _, p := range m.delayCallers {
		if pl := &m.pools[p]; pl.delayedWorkers > 0 {
			pl.delayedSec /= pl.delayedWorkers
			pl.delayedWorkers = min(pl.delayedWorkers, float64(pl.workers))
		}
	}
}

// releaseHeldCalls starts, at t0, the release of the workers held in the last tick by the
// calls of each pool that calls through a link whose delay fell at t0 (before[e] is link
// e's delay in the last tick, st.extraSec[e] in this one). A pool with delays on two links,
// of which one ends, releases the calls of both: the note does not tell them apart.
func (m *model) releaseHeldCalls(st *runState, before []float64, t0 float64) {
	for _, i := range m.delayable {
		nd := &m.nodes[i]
		if !(st.extraSec[nd.edge] < before[nd.edge]) {
			continue
		}
		pl := &m.pools[m.nodes[nd.parent].pool]
		if pl.delayedWorkers > pl.heldAt(t0) {
			pl.releaseWorkers, pl.releaseSec, pl.releaseAt = pl.delayedWorkers, pl.delayedSec, t0
		}
	}
}

// heldAt is how many of the pool's workers calls made before a delay ended still hold at
// time t.
func (pl *pool) heldAt(t float64) float64 {
	s := t - pl.releaseAt
	if !(pl.releaseWorkers > 0) || s >= pl.releaseSec*(1-1e-9) || s < 0 {
		return 0
	}
	return pl.releaseWorkers * (1 - s/pl.releaseSec)
}

// releasedCapacity is what the pool serves a second over the tick [t0, t0 + dt) while calls
// made before a delay ended still hold some of its workers: the calls that return, and new
// work at rate mu a worker on the workers that are back. ok is false when none are held.
func (pl *pool) releasedCapacity(t0, dt, mu float64) (perSec float64, ok bool) {
	length := pl.releaseSec
	a := t0 - pl.releaseAt
	if !(pl.releaseWorkers > 0) || a >= length*(1-1e-9) || a < 0 {
		return 0, false // none held, or every call returned (t0 and the end, each ticks × dt, round apart)
	}
	b := min(a+dt, length)
	held := pl.releaseWorkers * ((b - a) - (b*b-a*a)/(2*length)) / dt // on average over the tick
	returned := pl.releaseWorkers * (b - a) / length / dt
	return (float64(pl.workers)-held)*mu + returned, true
}
