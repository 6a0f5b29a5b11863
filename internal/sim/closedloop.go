package sim

import "math"

// Closed loops. A worker held through a synchronous call cannot make another call until the
// callee answers, so a pool reached only by held calls never has more of them in it than
// the callers have workers: W held workers are a closed population of W. Taken as an open
// stream at the same rate (M/M/c), the calls would keep arriving while the callee's queue
// is long, when in fact the callers who are waiting in it cannot send; the open queue waits
// too long and, through the hold time, lets too little through (10 queue consumers of 5 ms
// on a database of 4 × 5 ms store 667 writes/s as an open stream, 775/s as the closed loop
// they are).
//
// Such a pool is a finite-source queue (the machine-repairman model): N sources, each
// sending at rate γ while it is not in the pool, c workers, at most K = min(N, c + waiting
// places) in the pool. Its stationary distribution is a product form, so for a given γ
// its attempts, loss, occupancy and wait are exact. The engine's flow gives the pool its
// arrival rate λ; the closed loop takes the γ whose attempts are λ. For a saturated caller,
// whose workers are all busy, λ = W ÷ (own service + hold) and the hold-time solution
// (holdtime.go) then lands on γ = 1 ÷ own service: exactly the closed system of W workers
// alternating between their own work and the call. The closed loop is a function of λ
// alone, so the hold time r(h) stays a function of the hold and falls as it grows; it is
// solved by the same regula falsi, not by a second iteration beside it.
//
// The population is the workers of the nearest holding pool above each of the pool's nodes
// (each such pool counted once); a pool that also takes calls no held worker waits for (an
// ingress, a gateway, a queue's consumers, replication) is an open queue as before. The
// population bounds each callee separately: the workers of a caller that splits its calls
// over several callees count in full for each.

// closedNegligibleExp is −ln 10⁻⁷: a closed pool whose open queue would hold the whole
// population at once with a chance below e^(−closedNegligibleExp) (bounded by ρ^(N−c)) is
// computed as the open M/M/c, which the closed loop then changes by nothing worth its cost.
const closedNegligibleExp = 16.11809565095832

// closedTermEps ends the sums of the product form: terms past the mode fall monotonically,
// and once one is below this share of the sum the rest cannot move it.
const closedTermEps = 1e-13

// closedOverrun: a closed pool sent up to this share more than its capacity within the
// tick's hold-time solve is still a finite-source queue (whose fluid backlog takes the
// excess); a consistent closed loop never sends more than capacity, so only a pool sent
// clearly more (a cache flush's misses, a traffic spike) is a fluid queue that fills.
const closedOverrun = 1e-2

// closedDrain is the least share of capacity at which a closed pool works off a backlog
// left from a time it was sent more than it could serve.
const closedDrain = 1e-3

// closedLoop is what a pool knows about the held callers that feed it.
type closedLoop struct {
	holders    []int             // pools whose held workers are its only sources; nil: open
	anc        []int             // per node of the pool: the node of the nearest holding pool above it
	population int               // the holders' workers this tick
	memo       *finiteSourceMemo // shared by every closed pool of the model
}

// initClosedLoops finds, for every pool, the holding pools whose workers are the only ones
// that call it.
func (m *model) initClosedLoops() {
	holder := make([]int, len(m.nodes))  // nearest holding pool above each node; -1: none
	ancNode := make([]int, len(m.nodes)) // its node on the path
	open := make([]bool, len(m.pools))
	for i := range m.nodes { // parents come before their children
		nd := &m.nodes[i]
		holder[i] = -1
		if nd.parent >= 0 && !nd.deferred {
			par := &m.nodes[nd.parent]
			holder[i], ancNode[i] = holder[nd.parent], ancNode[nd.parent]
			if par.pool >= 0 && m.pools[par.pool].holds {
				holder[i], ancNode[i] = par.pool, nd.parent
			}
		}
		if nd.pool < 0 {
			continue
		}
		pl := &m.pools[nd.pool]
		if holder[i] < 0 || holder[i] == nd.pool {
			open[nd.pool] = true
			continue
		}
		if !containsInt(pl.closed.holders, holder[i]) {
			pl.closed.holders = append(pl.closed.holders, holder[i])
		}
		pl.closed.anc = append(pl.closed.anc, ancNode[i])
	}
	var memo *finiteSourceMemo
	for p := range m.pools {
		cl := &m.pools[p].closed
		if open[p] || m.pools[p].unlimited {
			cl.holders, cl.anc = nil, nil
			continue
		}
		if len(cl.holders) > 0 {
			if memo == nil {
				memo = new(finiteSourceMemo)
			}
			cl.memo = memo
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// setPopulations counts each closed pool's sources for this tick (autoscaling changes them).
func (m *model) setPopulations() {
	for _, p := range m.closedSet { // an open pool's population stays 0
		cl := &m.pools[p].closed
		population := 0
		for _, h := range cl.holders {
			population += m.pools[h].workers
		}
		cl.population = population
	}
}

// finiteSource is the stationary state of a finite-source queue, unnormalised: sums over
// the states n = 0..K of q(n) and of what the measures need.
type finiteSource struct {
	n, c, k  int
	r        float64 // γ × service time: one source's offered load while it is out
	sum      float64 // Σ q(n)
	in       float64 // Σ n q(n)
	queued   float64 // Σ (n − c)⁺ q(n)
	waitSend float64 // Σ_{c ≤ n < K} (N − n) q(n): attempts that find every worker busy, and room
	full     float64 // q(K)
}

// eval fills the sums for r. q(n)/q(n−1) = (N − n + 1) r ÷ min(n, c) falls with n, so the
// terms rise to a mode and fall after it; they are summed outwards from the mode (q = 1
// there, nothing overflows) until they no longer count. The work is the spread of the
// distribution, not the population. Each run of states is summed by a loop of its own,
// which adds only the sums a state of that run has a part in, each in the same order as
// term by term (closedloop_test.go holds the term-by-term sums it must equal bit for bit):
// below the workers nobody queues or waits, and no state below the mode is the full one.
func (fs *finiteSource) eval(r float64) {
	fs.r = r
	n, c, k := fs.n, fs.c, fs.k
	// The mode: the last state whose ratio is at least 1.
	mode := int(math.Floor(float64(n+1) * r / (1 + r)))
	if mode > c {
		mode = max(c, int(math.Floor(float64(n+1)-float64(c)/r)))
	}
	mode = max(0, min(k, mode))
	var sum, in, queued, waitSend, full float64
	// The mode itself.
	sum, in = 1, float64(mode)
	if mode > c {
		queued = float64(mode - c)
	}
	if mode >= c && mode < k {
		waitSend = float64(n - mode)
	}
	if mode == k {
		full = 1
	}
	// Upwards, the states below the workers first. Their counts are carried as floats: whole
	// numbers, so exactly what converting j and N − j + 1 would give.
	q := 1.0
	j, up := mode+1, true
	below := min(k, c-1)
	for fj, fnj := float64(j), float64(n-j+1); j <= below; j++ {
		q *= fnj * r / fj
		sum += q
		in += fj * q
		if q < closedTermEps*sum {
			up = false
			break
		}
		fj++
		fnj--
	}
	if below == k && j >= k && j > mode {
		full = q // the room is full below the workers: the run ended at K
	}
	if up {
		// Here too the counts are carried as floats, and the differences of two are taken
		// as floats: whole numbers far below 2⁵³, so each is exactly the converted count.
		fc := float64(c)
		for fj, fnj := float64(j), float64(n-j+1); j <= k; j++ {
			q *= fnj * r / fc
			sum += q
			in += fj * q
			if j > c {
				queued += (fj - fc) * q
			}
			if j < k {
				waitSend += (fnj - 1) * q
			} else {
				full = q
			}
			if q < closedTermEps*sum {
				break
			}
			fj++
			fnj--
		}
	}
	// Downwards: state j − 1 < mode ≤ K is never the full one; from c down nobody waits.
	q = 1.0
	j = mode
	for ; j > c; j-- {
		q *= float64(c) / (float64(n-j+1) * r)
		sum += q
		in += float64(j-1) * q
		if j-1 > c {
			queued += float64(j-1-c) * q
		}
		waitSend += float64(n-j+1) * q
		if q < closedTermEps*sum {
			j = 0
			break
		}
	}
	for fj, fnj := float64(j), float64(n-j+1); j >= 1; j-- {
		q *= fj / (fnj * r)
		sum += q
		in += (fj - 1) * q
		if q < closedTermEps*sum {
			break
		}
		fj--
		fnj++
	}
	fs.sum, fs.in, fs.queued, fs.waitSend, fs.full = sum, in, queued, waitSend, full
}

// finiteSourceMemo keeps the last finite-source states the model evaluated, whichever pool
// asked for them. Pools that mirror each other (a tier's replicas, the stores of a sharded
// database, the callees of one caller's split) are closed loops of the same population,
// workers and room, sent the same share of the same calls: within a tick's pass they ask
// for the very same state, one after the other or a pool or two apart, and eval is the
// closed loop's main cost. The state is a function of (N, c, K, r) alone, so a state kept
// for the same four inputs, r compared bit for bit, is exactly what eval would compute
// again.
type finiteSourceMemo struct {
	rBits  [finiteSourceMemoSize]uint64 // each slot's r, bit for bit, for a short scan
	states [finiteSourceMemoSize]finiteSource
	last   int // the slot written last: the scan starts there, the newest first
}

// finiteSourceMemoSize (a power of two) is the states kept: enough for mirrors asked for a
// pool or two apart, few enough that a state nobody asked for yet is looked for quickly.
const finiteSourceMemoSize = 4

// state returns the finite-source state for (n, c, k, r), from the memo or evaluated. An
// empty slot has n = 0, which no closed pool asks for.
func (fm *finiteSourceMemo) state(n, c, k int, r float64) *finiteSource {
	bits := math.Float64bits(r)
	for d := range finiteSourceMemoSize {
		i := (fm.last - d) & (finiteSourceMemoSize - 1)
		if fm.rBits[i] == bits {
			if fs := &fm.states[i]; fs.n == n && fs.c == c && fs.k == k {
				return fs
			}
		}
	}
	fm.last = (fm.last + 1) & (finiteSourceMemoSize - 1)
	fm.rBits[fm.last] = bits
	fs := &fm.states[fm.last]
	fs.n, fs.c, fs.k = n, c, k
	fs.eval(r)
	return fs
}

// busy is Σ min(n, c) q(n): the mean of busy workers times the sum.
func (fs *finiteSource) busy() float64 { return fs.in - fs.queued }

// attempts is the sources' attempt rate × service time: γ Σ (N − n) p(n) × S = r (N − L).
func (fs *finiteSource) attempts() float64 { return fs.r * (float64(fs.n)*fs.sum - fs.in) / fs.sum }

// closedQueue sets the pool's numbers for this tick as the finite-source queue its held
// callers make, for arrival rate lambda and workers of rate mu. It reports false when the
// pool is to be taken as an open queue: it is not closed, it is sent more than it can
// serve (a fluid queue builds, bounded by closedWaitBound), or the open queue would almost
// never hold the whole population (closedNegligibleExp).
//
// The sources' rate γ is λ ÷ (N − L): the calls arriving over the sources not in the pool.
// L, the callers' workers in the pool now, is what the callers' hold says (Little's law):
// each node's arrivals × the hold of the workers above it, as far as it is spent here. For
// a caller whose every request calls the pool that is its hold itself, the variable the
// hold-time solve closes in on; for a saturated caller, λ = W ÷ (own service + hold) and γ
// is 1 ÷ own service whatever the hold: the closed system of W workers exactly, and the
// pool's response no longer depends on the hold (the solve ends in two passes). Read from
// the arrival rate instead, the finite-source state is ill-conditioned near saturation:
// its waits from a third full to all but full lie within the last thousandth of capacity.
func (m *model) closedQueue(pl *pool, lambda, mu float64) bool {
	cl := &pl.closed
	nPop, c := cl.population, pl.workers
	if nPop <= 0 || c <= 0 || !(lambda > 0) || lambda >= pl.capRate*(1+closedOverrun) {
		return false
	}
	k := nPop
	if !math.IsInf(pl.buffer, 1) {
		k = min(nPop, c+int(min(pl.buffer, maxBuffer)))
	}
	if k >= nPop && nPop > c && lambda < pl.capRate && pl.backlog0 <= 0 {
		// The open queue holds N or more with probability C ρ^(N−c) ≤ ρ^(N−c), and
		// −ln ρ ≥ x + x²/2 + x³/3 with x = 1 − ρ: no logarithm needed to tell most cases.
		x := 1 - lambda/pl.capRate
		if float64(nPop-c)*x*(1+x*(0.5+x/3)) > closedNegligibleExp {
			return false
		}
		if float64(nPop-c)*-math.Log1p(-x) > closedNegligibleExp {
			return false
		}
	}
	// The callers' workers in the pool, by their holds.
	inPool := 0.0
	// In locals, and anc resliced to the pool's nodes (one each): no header reloads, and
	// no bounds check on anc.
	nodes, pools, anc := m.nodes, m.pools, cl.anc[:len(pl.nodes)]
	for i, n := range pl.nodes {
		nd := &nodes[n]
		// A call is in the pool while it waits and is served there and, if the pool holds
		// its workers too, while they wait on their own calls: its share of the time the
		// caller's node spends in calls, carried to what the caller's hold now says.
		t := pl.holdMean
		if pl.holds {
			t += nd.downMean
		}
		if a := &nodes[anc[i]]; a.downMean > 0 {
			t *= pools[a.pool].holdSec / a.downMean
		}
		inPool += (nd.in + nd.gin) / m.dt * t
	}
	away := max(float64(nPop)-inPool, 1e-9*float64(nPop))
	fs := cl.memo.state(nPop, c, k, lambda/away/mu)
	out := float64(nPop)*fs.sum - fs.in // Σ (N − n) q(n): attempts ÷ γ
	lost := 0.0
	if out > 0 {
		lost = float64(nPop-k) * fs.full / out
	}
	pl.rejected = pl.in * lost
	// The finite-source state holds the queue the callers make. A backlog left from a time
	// the pool was sent more than it could serve drains with the capacity left over, and at
	// least at closedDrain of capacity: a closed loop at capacity leaves none over, and the
	// backlog, a part of the queue the state already holds, would stay for good.
	admitted := pl.in - pl.rejected
	pl.processed = min(pl.backlog0+admitted, max(pl.capRate*m.dt, admitted+closedDrain*pl.capRate*m.dt))
	pl.backlog1 = pl.backlog0 + admitted - pl.processed
	if fs.queued > 0 && fs.waitSend > 0 {
		// Of the attempts let in, those that find every worker busy wait; the mean wait is
		// Lq ÷ λ admitted, so the exponential's rate is γ Σ(N−n)q over n ≥ c ÷ Σ(n−c)q.
		accepted := out - float64(nPop-k)*fs.full
		pl.stage.WaitProb = min(1, fs.waitSend/accepted)
		pl.stage.WaitRate = fs.r * mu * fs.waitSend / fs.queued
	}
	return true
}

// closedWaitBound is the longest a call can wait in a pool reached only by held calls whose
// waiting room holds the whole population: N − c queued ahead of it at most, (N − c) ÷
// capacity. It is +Inf for an open pool or one whose room is smaller than the population
// (the room bounds that one). The finite-source queue tends to it as its arrivals near
// capacity, so a saturated closed pool waits no longer than its callers can make it, and
// the wait does not jump as the arrivals cross capacity within the tick's solve.
func (pl *pool) closedWaitBound() float64 {
	nPop, c := pl.closed.population, pl.workers
	if nPop <= 0 || pl.capRate <= 0 {
		return math.Inf(1)
	}
	if !math.IsInf(pl.buffer, 1) && float64(nPop-c) > pl.buffer {
		return math.Inf(1)
	}
	return float64(max(0, nPop-c)) / pl.capRate
}

// boundClosedWait keeps the stochastic wait of a closed pool within closedWaitBound.
func (pl *pool) boundClosedWait() {
	s := &pl.stage
	b := pl.closedWaitBound()
	if math.IsInf(b, 1) || !(s.WaitProb > 0 && s.WaitRate > 0) || s.WaitProb/s.WaitRate <= b {
		return
	}
	if b <= 0 {
		s.WaitProb, s.WaitRate = 0, 0
		return
	}
	s.WaitRate = s.WaitProb / b
}
