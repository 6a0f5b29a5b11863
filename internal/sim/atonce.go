package sim

// A client with no backoff sends its retry the instant its attempt is refused. Where the
// refusal came from a pool the request cannot route around, reached through nothing that
// takes time, the retry arrives there in that same instant and finds it as full as it was:
// a throttled function's slots still starting, a rate limit's bucket still empty, an open
// breaker still open, a single waiting room still full. It is refused too, and so is every
// retry after it: the request fails for good within the tick, having made all its attempts.
//
// The engine otherwise sends a retry with no backoff in the next tick, dealt like fresh
// attempts, which is right where the next tick's state is what the retry would meet. For
// these refusals it is not: by the next tick a throttled function's cold starts may be
// ready, and the retries would find slots that no retry sent at once could find.
//
// Only a pool with one room qualifies: a service whose replicas each keep a room deals a
// retry to the next replica's, which may have a place. A half-open breaker lets a share of
// the requests at its door through as probes, retries as well: its refusals are retried in
// the next tick as before.

// markRefusedAgain finds the client nodes whose refusals meet the same pool again when
// retried at once: the only route of their request type reaches them through balancers and
// gateways that forward everything to one backend. Whether the pool has one room is read
// each tick (an autoscaler changes it).
func (m *model) markRefusedAgain() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.background || nd.pool < 0 || len(m.roots[nd.class]) != 1 {
			continue
		}
		alone := true
		for p := nd.parent; p >= 0 && alone; p = m.nodes[p].parent {
			a := &m.nodes[p]
			k := m.comps[a.comp].kind
			alone = a.role == roleForward && len(a.children) == 1 && (k == KindLoadBalancer || k == KindAPIGateway)
		}
		if alone {
			m.refusedAgain = append(m.refusedAgain, i)
		}
	}
	m.atOnce = m.retriesAtOnce() && len(m.refusedAgain) > 0
}

// retriesAtOnce reports whether the client sends a retry the instant an attempt fails.
func (m *model) retriesAtOnce() bool {
	cl := m.v.cfg.Client
	return cl.MaxRetries > 0 && cl.BackoffMs <= 0
}

// refusalsMetAgain sets st.lostAtOnce: by request type, the tick's attempts refused where
// a retry sent at once is refused again (markRefusedAgain).
func (m *model) refusalsMetAgain(st *runState) {
	if !m.atOnce {
		return // st.lostAtOnce and the per-component sums stay zero for the run
	}
	st.lostAtOnce = [numClasses]float64{}
	if st.atOnceSent {
		clear(st.atOnceIn)
		clear(st.atOnceRefused)
		st.atOnceSent = false
	}
	for _, i := range m.refusedAgain {
		nd := &m.nodes[i]
		if refused := nd.rejected + nd.pushback; refused > 0 && m.refusesAgain(nd) {
			st.lostAtOnce[nd.class] += refused
		}
	}
}

// refusesAgain reports whether the pool of node nd refuses a retry sent the instant it
// refused the attempt: it has one room, and if it is a gateway, its breaker is not letting
// a share of the requests through as probes, which would let that share of the retries in.
func (m *model) refusesAgain(nd *node) bool {
	if m.pools[nd.pool].rooms > 1 {
		return false
	}
	g := m.comps[nd.comp].gate
	return g == nil || g.share == 0 || g.share == 1
}

// attemptsLeft is, per attempt of request type class lost this tick, how many retries its
// client has left: the tick's attempts of that type by generation (genShare).
func (st *runState) attemptsLeft(class Class) float64 {
	maxR := len(st.retryDelay) - 1
	left := 0.0
	for g := range maxR {
		left += st.genShare[retrySlot(g, class)] * float64(maxR-g)
	}
	return left
}

// sendRetriesAtOnce adds the retries refused at once, left[type] for each attempt refused
// (attemptsLeft) scaled by the retry budget's share, to the components they pass and to the
// one that refuses them, and returns how many there were.
func (m *model) sendRetriesAtOnce(st *runState, left *[numClasses]float64, scale float64) float64 {
	total := 0.0
	for _, i := range m.refusedAgain {
		nd := &m.nodes[i]
		refused := nd.rejected + nd.pushback
		if refused <= 0 || left[nd.class] == 0 || !m.refusesAgain(nd) {
			continue
		}
		retries := refused * left[nd.class] * scale
		nd.refusedAtOnce = retries
		st.atOnceSent = true
		total += retries
		st.atOnceRefused[nd.comp] += retries
		for n := i; n >= 0; n = m.nodes[n].parent {
			st.atOnceIn[m.nodes[n].comp] += retries
		}
	}
	return total
}
