package sim

import "math"

// An attempt sent to a crashed component, or across a cut link, fails the instant it gets
// there, however loaded anything is. A client with no backoff sends its retry that same
// instant, and the retry is dealt like any attempt of its type: behind a balancer still
// dealing to the crashed backend, it goes to another backend, or to the crashed one again,
// and is served or fails within the tick. So these retries are attempts of the tick their
// failure is in, not of the next, and the tick is solved with them.
//
// What makes this solvable is that such a failure does not depend on the load: the share f
// of a type's attempts that meet it is the routes' shares, the same for a retry as for a
// fresh attempt. An attempt with r retries left makes 1 + f + … + f^r attempts within the
// tick, of which f^(r+1) fail for good; the tick is solved with the attempts so multiplied,
// and again if the share it finds is not the one it assumed (a backend just down or taken
// out, a balancer dealing by outstanding requests, which shares by load).
//
// Every other failure keeps its retry for the next tick, or is refused again at once
// (atonce.go): whether a refusal or a timeout meets the retry too depends on how long the
// failure's spell lasts, which the tick's state does not say (BENCHMARKS.md, "A full room's
// refusals retried at once").

// failedAtOnceShare is, per request type, the share of its attempts that failed at once
// this tick: sent to a crashed component or across a cut link. typeIn is each type's
// attempts at its entry points.
func (m *model) failedAtOnceShare(typeIn *[numClasses]float64) (f [numClasses]float64) {
	nodes, pools := m.nodes, m.pools
	for i := range nodes {
		nd := &nodes[i]
		if nd.background {
			continue
		}
		lost := nd.cut
		if nd.pool >= 0 && pools[nd.pool].failed {
			lost += nd.in // what waited there when it failed is not an attempt of this instant
		}
		if lost > 0 && typeIn[nd.class] > 0 {
			f[nd.class] += lost / typeIn[nd.class]
		}
	}
	for c := range f {
		f[c] = min(f[c], 1)
	}
	return f
}

// failedAtOnceRounds bounds how often a tick is solved for its retries of attempts that
// failed at once; failedAtOnceTolerance is when the share that failed has settled.
const (
	failedAtOnceRounds    = 3
	failedAtOnceTolerance = 1e-4
)

// solveRetryingFailedAtOnce solves the tick with the retries, sent within it, of the
// attempts that fail at once. typeIn is each type's attempts at its entry points as the
// tick began, st.genShare their generations. The share that fails is first taken to be the
// last tick's (st.failedShare): while a backend stays down it does not move, and the tick
// is solved once; where it moved, the tick is solved again with the share it found. It sets
// st.lostInTick, by type the attempts that failed at once and were retried within the tick
// or given up, and st.retriedInTick, how many were retried; st.genShare becomes the
// generations of all the tick's attempts. It returns the retries sent.
func (m *model) solveRetryingFailedAtOnce(st *runState, typeIn *[numClasses]float64, fresh float64) float64 {
	st.lostInTick, st.retriedInTick = [numClasses]float64{}, [numClasses]float64{}
	if !m.retriesAtOnce() || (!st.events.down && !st.events.cut) {
		st.failedShare = [numClasses]float64{}
		m.solveTick(st)
		return 0
	}
	copy(st.genShareBegan, st.genShare) // the generations as the tick began (sendFailedAtOnce)
	used := st.failedShare              // the share the tick's retries are sent for
	var in, found [numClasses]float64
	total := 0.0
	for round := 1; ; round++ {
		total = m.sendFailedAtOnce(st, typeIn, &used, &in, fresh)
		m.solveTick(st)
		found = m.failedAtOnceShare(&in)
		settled := true
		for c := range found {
			settled = settled && math.Abs(found[c]-used[c]) <= failedAtOnceTolerance
		}
		if settled || round == failedAtOnceRounds {
			break
		}
		used = found
	}
	st.failedShare = found
	// What failed at once of the generations with retries left was retried in the tick as far
	// as the share the retries were sent for; any more waits for the next tick with the
	// tick's other failures, so that every fresh request is served or given up once.
	maxR := len(st.retryDelay) - 1
	for c := range numClasses {
		top := st.genShare[retrySlot(maxR, c)] * in[c]
		st.lostInTick[c] = min(used[c]*(in[c]-top)+found[c]*top, found[c]*in[c])
	}
	return total
}

// sendFailedAtOnce sets each type's attempts at its entry points, and their generations, for
// a share f[type] failing at once: generation h's attempts are those that began as it and
// the retries of generation h − 1's that failed. in becomes each type's attempts. The
// retries are the budget's first call (retry_budget: at most that share of the tick's fresh
// requests). It returns the retries sent.
func (m *model) sendFailedAtOnce(st *runState, typeIn, f, in *[numClasses]float64, fresh float64) float64 {
	maxR := len(st.retryDelay) - 1
	// The attempts of generation h that began the tick are typeIn × its share as it began.
	began, retries := st.genShareBegan, st.inTickGen
	total := 0.0
	for c := range numClasses {
		carry := 0.0
		for h := range maxR + 1 {
			i := retrySlot(h, c)
			retries[i] = carry
			carry = (typeIn[c]*began[i] + carry) * f[c]
			total += retries[i]
		}
	}
	scale := 1.0
	if b := m.v.cfg.Client.RetryBudget; b > 0 && total > b*fresh {
		scale = b * fresh / total
	}
	total = 0
	for c := range numClasses {
		st.retriedInTick[c] = 0
		in[c] = typeIn[c]
		if f[c] == 0 { // its attempts and their shares as the tick began
			for h := range maxR + 1 {
				i := retrySlot(h, c)
				st.genShare[i] = began[i]
			}
			for _, r := range m.roots[c] {
				m.nodes[r].in = typeIn[c] / float64(len(m.roots[c]))
			}
			continue
		}
		for h := 1; h <= maxR; h++ {
			st.retriedInTick[c] += retries[retrySlot(h, c)] * scale
		}
		in[c] += st.retriedInTick[c]
		for h := range maxR + 1 {
			i := retrySlot(h, c)
			st.genShare[i] = (typeIn[c]*began[i] + retries[i]*scale) / in[c]
		}
		for _, r := range m.roots[c] {
			m.nodes[r].in = in[c] / float64(len(m.roots[c]))
		}
		total += st.retriedInTick[c]
	}
	return total
}
