package sim

import (
	"fmt"
	"math"
)

// Least-connections. The balancer sends each request to the backend with the fewest
// requests outstanding (sent and not yet answered), so what it keeps level is the backends'
// outstanding counts, not their utilisation. By Little's law a backend with L outstanding
// whose requests stay T in it answers L ÷ T a second, up to its capacity: at a common
// level L each backend draws min(L ÷ T, capacity), and L is the level at which their sum
// is the balancer's throughput λ. Below saturation the shares go as 1 ÷ T (a backend twice
// as slow gets half as much, whatever its size); a backend whose L ÷ T would pass its
// capacity runs full, its extra outstanding requests waiting there, and the rest share
// what is left; when λ passes every capacity they share by capacity. A backend that answers
// at once (a dead one, or one behind a cut link, both failing at once) never has anything
// outstanding and draws everything until the health checks take it out
// (TestLeastConnectionsLevelsOutstanding).
//
// T is what a request spends from the balancer's send to its answer besides waiting for a
// worker: the backend's own service, the calls its worker is held through, a fixed latency
// and the link's injected delay, as the tick's state has them.

// outstandingShares sets the share weight of each of node n's children by least-connections:
// min(L ÷ T, capacity) at the common level L, +Inf for a backend that answers at once. If a
// child has no pool of its own (a database's nodes behind it), the balancer sees no level
// the engine can reckon, and every child weighs 1.
func (m *model) outstandingShares(n int, st *runState) {
	nd := &m.nodes[n]
	f := m.sameLevel[n]
	if f < 0 {
		m.levelOutstanding(nd, st)
		return
	}
	// A level already set in this call of resolvePool, by this node (its ghost work is
	// shared after its live work) or by another node of its group, was set from the same
	// reads: the balancer's pool, resolved before its nodes are finished, and the backends'
	// pools and links, which nothing in a pool's resolution changes.
	// out has a share per child: resliced to their number, it needs no bounds check.
	nodes, out := m.nodes, m.levelOut[f][:len(nd.children)]
	if m.levelAt[f] != m.resolving {
		m.levelOutstanding(nd, st)
		for i, ch := range nd.children {
			c := &nodes[ch]
			out[i] = levelShare{share: c.share, leveled: c.leveled, places: c.levelPlaces}
		}
		m.levelAt[f] = m.resolving
		return
	}
	for i, ch := range nd.children {
		c, o := &nodes[ch], &out[i]
		c.share, c.leveled, c.levelPlaces = o.share, o.leveled, o.places
	}
}

// levelShare is what a least-connections level set on one backend (outstandingShares).
type levelShare struct {
	share   float64
	leveled bool
	places  float64
}

// levelOutstanding sets the shares of node nd's children (outstandingShares).
func (m *model) levelOutstanding(nd *node, st *runState) {
	lambda := 0.0
	if nd.pool >= 0 {
		lambda = m.pools[nd.pool].processed / m.dt // what the balancer passes on, ghosts included
	}
	// First pass: every backend unsaturated, L = λ ÷ Σ 1/T. It also keeps the capacities
	// the rounds below compare with, worked out once per backend from the same reads as T:
	// nothing here changes what backendCapacity reads, so each is the value it would give.
	var caps backendCaps
	inv := 0.0
	nodes := m.nodes // in a local: the stores through c cannot move it, so it is loaded once
	for i, ch := range nd.children {
		c := &nodes[ch]
		if c.pool < 0 {
			m.evenShares(nd)
			return
		}
		pl := &m.pools[c.pool]
		if pl.failed || st.cutOff(c.edge) {
			c.share = math.Inf(1) // a failed backend, or one behind a cut link, answers at once
			continue
		}
		busy := pl.serviceSec + pl.holdSec // T's first sum, and backendCapacity's
		t := busy + pl.fixedSec
		if c.edge >= 0 {
			t += st.extraSec[c.edge]
		}
		if t <= 0 {
			c.share = math.Inf(1)
			continue
		}
		c.share = 1 / t // 1/T for now
		inv += 1 / t
		if i < len(caps) {
			caps[i] = poolCapacity(pl, busy)
		}
	}
	if inv <= 0 || !(lambda > 0) {
		return // no backend with a time in system, or no traffic: shares as 1 ÷ T
	}
	// The level rises as backends saturate: each round takes the backends that L ÷ T would
	// push past their capacity out of the unsaturated sum. It ends within one round per
	// backend, since the level never falls.
	level := lambda / inv
	for range nd.children {
		full, rest := 0.0, 0.0
		for i, ch := range nd.children {
			c := &nodes[ch]
			if math.IsInf(c.share, 1) {
				continue
			}
			if capRate := caps.of(m, i, c); level*c.share >= capRate {
				full += capRate
			} else {
				rest += c.share
			}
		}
		if rest <= 0 {
			break // all saturated: by capacity
		}
		next := (lambda - full) / rest
		if next <= level {
			break
		}
		level = next
	}
	for i, ch := range nd.children {
		c := &nodes[ch]
		if math.IsInf(c.share, 1) {
			continue
		}
		capRate := caps.of(m, i, c)
		if level*c.share < capRate {
			c.share *= level
			continue
		}
		// Saturated: it serves at capacity with level requests outstanding, capacity × T of
		// them in service or on their way, the rest waiting.
		c.leveled, c.levelPlaces = true, max(0, level-capRate/c.share)
		c.share = capRate
	}
}

// backendCapacity is the rate a backend answers at when every worker is busy: its workers ÷
// the time each request holds one (+Inf for a pool without a worker limit), as its queue
// reckons it.
func (m *model) backendCapacity(c *node) float64 {
	pl := &m.pools[c.pool]
	return poolCapacity(pl, pl.serviceSec+pl.holdSec)
}

// poolCapacity is backendCapacity for pool pl whose requests hold a worker busy seconds.
func poolCapacity(pl *pool, busy float64) float64 {
	if pl.unlimited {
		return math.Inf(1)
	}
	return float64(pl.workers) * (1 / busy)
}

// backendCaps keeps the capacities of a balancer's first backends for one call of
// outstandingShares, on the stack: the rounds read each up to once a round, and working it
// out costs a division. Backends past the first len(backendCaps) (few balancers have so
// many) have theirs worked out each time.
type backendCaps [16]float64

// of is the capacity of child i, c, as backendCapacity gives it.
func (bc *backendCaps) of(m *model, i int, c *node) float64 {
	if i < len(bc) {
		return bc[i]
	}
	return m.backendCapacity(c)
}

// takeAll settles the weights of node nd's children when a least-connections backend that
// answers at once (+Inf) is in the rotation: those share everything evenly. It returns the
// total of the weights.
func takeAll(m *model, nd *node, total float64) float64 {
	if !math.IsInf(total, 1) {
		return total
	}
	total = 0
	for _, ch := range nd.children {
		c := &m.nodes[ch]
		if math.IsInf(c.share, 1) {
			c.share = 1
			total++
		} else {
			c.share = 0
		}
	}
	return total
}

// initSameLevels groups the least-connections balancer nodes that would set the same level:
// those of one pool (or none) whose children are the same pools over the same links, in
// the same order (the balancer's routes for each class of request). The first of each
// group keeps the level for the others.
func (m *model) initSameLevels() {
	first := map[string]int{}
	var key []byte
	m.sameLevel = make([]int, len(m.nodes))
	m.levelOut = make([][]levelShare, len(m.nodes))
	m.levelAt = make([]uint64, len(m.nodes))
	for i := range m.nodes {
		nd := &m.nodes[i]
		m.sameLevel[i] = -1
		if nd.split != splitOutstanding {
			continue
		}
		key = fmt.Appendf(key[:0], "%d", nd.pool)
		for _, ch := range nd.children {
			key = fmt.Appendf(key, " %d/%d", m.nodes[ch].pool, m.nodes[ch].edge)
		}
		f, ok := first[string(key)]
		if !ok {
			f = i
			first[string(key)] = i
			m.levelOut[i] = make([]levelShare, len(nd.children))
		}
		m.sameLevel[i] = f
	}
}
