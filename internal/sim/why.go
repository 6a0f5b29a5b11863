package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The "why it happened" timeline. Every failing tick (more than 5% of the attempts offered
// in it failed: refused, failed inside a component or timed out at the client) is
// diagnosed: its lost attempts are counted where and why they were lost, and the largest
// group names the tick's cause. Consecutive failing ticks with the same cause form a
// stretch; the summary lists the stretches (doc.go has the rules, diagnose.go the
// diagnosis of one tick).

// Cause says why a stretch of ticks failed.
type Cause string

// Causes of failure.
const (
	// CauseSaturated: the demand on a tier's own work exceeds its capacity, or it is still
	// working off the backlog such a demand left behind.
	CauseSaturated Cause = "saturated"
	// CauseNodeFailed: a failed node still receives requests: nothing routes around it, or
	// the balancer in front has no health checks, or its checks have not noticed yet.
	CauseNodeFailed Cause = "node_failed"
	// CausePartition: requests are sent across a cut network link.
	CausePartition Cause = "partition"
	// CauseBreakerOpen: a gateway's circuit breaker is open (or probing) and answers 503.
	CauseBreakerOpen Cause = "breaker_open"
	// CauseRateLimited: a gateway's rate limit refuses the excess (429).
	CauseRateLimited Cause = "rate_limited"
	// CauseThrottled: a serverless function is out of concurrency (429).
	CauseThrottled Cause = "throttled"
	// CauseTimeouts: attempts miss the client's deadline though no tier is saturated (a
	// slow hop, injected latency).
	CauseTimeouts Cause = "timeouts"
	// CauseNoRoute: a request class has nowhere to go from a component: an app with no
	// database to read from or write to, a CDN with no origin for its misses, a balancer
	// with nothing behind it.
	CauseNoRoute Cause = "no_route"
	// CauseLostWrites: a queue acknowledged writes its consumers never stored.
	CauseLostWrites Cause = "lost_writes"
	// CauseReplicationLag: a database's replicas fall behind and never catch up.
	CauseReplicationLag Cause = "replication_lag"
)

// Why is one stretch of the "why it happened" timeline.
type Why struct {
	StartSec  float64 `json:"start_sec"`
	EndSec    float64 `json:"end_sec"`
	Component string  `json:"component"`
	Cause     Cause   `json:"cause"`
	// Detail says in words what the engine measured; Advice what would address it.
	Detail string `json:"detail"`
	Advice string `json:"advice"`
	// RetryAmplification is attempts offered ÷ fresh requests over the stretch (≥ 1):
	// how much the clients' retries multiplied the load on top of the cause.
	RetryAmplification float64 `json:"retry_amplification"`
}

// maxWhy bounds the timeline; a run that changes cause more often lists its first stretches.
const maxWhy = 32

// buildWhy turns the diagnosed failing ticks into stretches: ticks with the same cause at
// the same component, consecutive or less than a second apart, form one; a stretch shorter
// than a second right after another is folded into it, so that a cause that flickers does
// not shred the timeline. Nothing is folded into a later stretch: no cause starts before
// its first tick.
func (m *model) buildWhy(causes causeLog) []Why {
	if len(causes) == 0 {
		return nil
	}
	dt := m.dt
	gap := max(1, int(math.Round(1/dt)))
	type seg struct{ from, to int } // indices into causes (runs of ticks), inclusive
	same := func(a, b *causeRun) bool { return a.names() == b.names() }
	var segs []seg
	for i := range causes {
		if n := len(segs); n > 0 {
			last := &causes[segs[n-1].to]
			if same(last, &causes[i]) && causes[i].first()-last.last() <= gap {
				segs[n-1].to = i
				continue
			}
		}
		segs = append(segs, seg{i, i})
	}
	short := func(s seg) bool { return causes[s.to].last()-causes[s.from].first()+1 < gap }
	adjacent := func(a, b seg) bool { return causes[b.from].first()-causes[a.to].last() <= gap }
	var merged []seg
	for _, s := range segs {
		n := len(merged)
		if short(s) && n > 0 && adjacent(merged[n-1], s) {
			merged[n-1].to = s.to // folded into the stretch before
			continue
		}
		merged = append(merged, s)
	}
	// Folding can leave neighbours with the same cause: join them.
	var out []seg
	for _, s := range merged {
		if n := len(out); n > 0 && adjacent(out[n-1], s) && same(&causes[m.dominant(causes, out[n-1])], &causes[m.dominant(causes, s)]) {
			out[n-1].to = s.to
			continue
		}
		out = append(out, s)
	}
	whys := make([]Why, 0, min(len(out), maxWhy))
	for _, s := range out {
		if len(whys) == maxWhy {
			break
		}
		whys = append(whys, m.describe(causes, s.from, s.to))
	}
	return whys
}

// dominant is the run whose cause is named for causes[from..to]: the cause of most of its
// ticks (the earliest on a tie).
func (m *model) dominant(causes causeLog, s struct{ from, to int }) int {
	type tally struct {
		k        causeName
		first, n int
	}
	var buf [8]tally
	counts := buf[:0] // a stretch has few distinct causes: a list beats a map
	for i := s.from; i <= s.to; i++ {
		k := causes[i].names()
		j := 0
		for j < len(counts) && counts[j].k != k {
			j++
		}
		if j == len(counts) {
			counts = append(counts, tally{k: k, first: i})
		}
		counts[j].n += causes[i].ticks()
	}
	best, bestN := s.from, 0
	for _, c := range counts {
		if c.n > bestN || c.n == bestN && c.first < best {
			best, bestN = c.first, c.n
		}
	}
	return best
}

// describe writes the stretch causes[from..to] in words.
func (m *model) describe(causes causeLog, from, to int) Why {
	k := m.dominant(causes, struct{ from, to int }{from, to})
	c := causes[k].diagnosis()
	var attempts, fresh, a, b float64
	n := 0.0
	draining := false
	for i := from; i <= to; i++ {
		x := &causes[i]
		named := x.names() == causes[k].names()
		// Tick by tick, not multiplied by the run's length: the timeline's figures are the
		// same additions, bit for bit, as if every tick were recorded on its own.
		for range causes[i].ticks() {
			attempts += x.attempts
			fresh += x.fresh
			if named {
				a, b, n = a+x.a, b+x.b, n+1
				draining = x.draining
			}
		}
	}
	a, b = a/n, b/n
	amp := 1.0
	if fresh > 0 {
		amp = max(1, math.Round(attempts/fresh*100)/100)
	}
	w := Why{StartSec: float64(causes[from].first()) * m.dt, EndSec: float64(causes[to].last()+1) * m.dt,
		Component: m.comps[c.comp].id, Cause: c.cause, RetryAmplification: amp}
	w.StartSec, w.EndSec = round3(w.StartSec), round3(w.EndSec)
	comp := &m.comps[c.comp]
	id := comp.id
	switch c.cause {
	case CauseSaturated:
		where, was := m.poolName(c.pool)
		if draining {
			w.Detail = fmt.Sprintf("%s %s still working off a backlog of %s requests (%s s of work)", where, was, count(a), decimal(b))
		} else {
			w.Detail = fmt.Sprintf("%s %s offered %s req/s against a capacity of %s req/s (%.0f%%)", where, was, count(a), count(b), 100*a/math.Max(b, 1e-9))
			if b <= 0 {
				w.Detail = fmt.Sprintf("%s %s offered %s req/s and had no capacity at all", where, was, count(a))
			}
		}
		if c.edge >= 0 {
			w.Detail += fmt.Sprintf(", its workers waiting %s ms longer on %s → %s (injected latency)",
				count(m.extraOf(causes, from, to, c.edge)*1000), id, m.comps[m.edgeTo[c.edge]].id)
		}
		w.Advice = saturatedAdvice(comp)
	case CauseNodeFailed:
		switch {
		case c.lb < 0:
			w.Detail = fmt.Sprintf("%s has failed and nothing routes around it: %s of attempts failed there", id, share(a))
			w.Advice = fmt.Sprintf("run a second %s behind a load balancer with health checks", id)
		case !m.comps[c.lb].healthChecks:
			w.Detail = fmt.Sprintf("%s has failed and %s, without health checks, still sends it its share: %s of attempts failed there", id, m.comps[c.lb].id, share(a))
			w.Advice = fmt.Sprintf("turn on health_checks at %s, and give the other backends room to carry %s's share", m.comps[c.lb].id, id)
		case draining:
			w.Detail = fmt.Sprintf("%s has failed and %s has no healthy backend left to send its share to: %s of attempts failed", id, m.comps[c.lb].id, share(a))
			w.Advice = fmt.Sprintf("keep more than one backend behind %s able to serve", m.comps[c.lb].id)
		default:
			lb := &m.comps[c.lb]
			w.Detail = fmt.Sprintf("%s has failed; %s's health checks notice it only after %s to %s s (%d failed checks %s s apart), until then its share fails: %s of attempts",
				id, lb.id, decimal(lb.detectSec-lb.checkIntervalSec), decimal(lb.detectSec), lb.unhealthyThreshold, decimal(lb.checkIntervalSec), share(a))
			w.Advice = fmt.Sprintf("check more often (health_check_interval_sec) or after fewer failures (unhealthy_threshold) at %s, and keep spare capacity behind it", lb.id)
		}
	case CausePartition:
		from, to := m.comps[m.edgeFrm[c.edge]].id, m.comps[m.edgeTo[c.edge]].id
		if comp.kind == KindQueue {
			w.Detail = fmt.Sprintf("the link %s → %s was cut: %s's workers could not store their jobs, and once it was full it refused %s of attempts", from, to, id, share(a))
			w.Advice = fmt.Sprintf("give %s a buffer that holds the backlog of the cut", id)
		} else {
			w.Detail = fmt.Sprintf("the link %s → %s was cut: %s of attempts were sent across it and failed", from, to, share(a))
			w.Advice = fmt.Sprintf("give %s another way to %s's work (a second instance behind a balancer with health checks)", from, to)
		}
	case CauseBreakerOpen:
		w.Detail = fmt.Sprintf("%s's circuit breaker was open, answering 503 to %s of attempts, because too many requests failed below it", id, share(a))
		w.Advice = fmt.Sprintf("fix what fails behind %s; the breaker only keeps it from making things worse", id)
	case CauseRateLimited:
		w.Detail = fmt.Sprintf("%s was offered %s req/s and its rate limit admits %s req/s; the excess got 429", id, count(a), count(b))
		w.Advice = fmt.Sprintf("raise rate_limit_rps at %s if what is behind it can take more", id)
	case CauseThrottled:
		w.Detail = fmt.Sprintf("%s needed %s executions at once and may run %s; the excess was throttled (429)", id, count(a), count(b))
		w.Advice = fmt.Sprintf("raise max_concurrency of %s or make each execution shorter", id)
	case CauseNoRoute:
		w.Detail = fmt.Sprintf("%s has nowhere to send %s: %s of attempts failed there", id, classWords(c.classes), share(a))
		w.Advice = noRouteAdvice(comp, c.classes)
	case CauseTimeouts:
		if c.edge >= 0 {
			w.Detail = fmt.Sprintf("the call %s → %s was %s ms slower (injected latency) and attempts missed the client's %s ms deadline",
				m.comps[m.edgeFrm[c.edge]].id, id, count(a*1000), count(m.v.cfg.Client.TimeoutMs))
			w.Advice = fmt.Sprintf("stop retrying into the slow call (a retry budget) or take %s off the request path", id)
		} else {
			w.Detail = fmt.Sprintf("%s took %s ms per request on average and attempts missed the client's %s ms deadline", id, count(a*1000), count(m.v.cfg.Client.TimeoutMs))
			w.Advice = fmt.Sprintf("make %s faster or move its work off the request path", id)
		}
	}
	if amp >= 1.05 {
		w.Detail += fmt.Sprintf("; retries multiplied the load ×%s", strconv.FormatFloat(amp, 'f', -1, 64))
	}
	return w
}

// extraOf is the mean injected latency on edge e over the ticks of causes[from..to] that
// name it.
func (m *model) extraOf(causes causeLog, from, to, e int) float64 {
	sum, n := 0.0, 0
	for i := from; i <= to; i++ {
		if x := &causes[i]; int(x.edge) == e {
			for range causes[i].ticks() {
				sum += x.ex
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// poolName names a pool in a detail, with the verb that agrees with it: a database node by
// its role, a queue's consumers as its workers.
func (m *model) poolName(p int) (name, was string) {
	pl := &m.pools[p]
	c := &m.comps[pl.comp]
	switch c.kind {
	case KindDatabase:
		if len(c.pools) > 1 {
			if p == c.pools[0] {
				return c.id + "'s primary", "was"
			}
			for k, q := range c.pools {
				if q == p {
					return fmt.Sprintf("%s's replica %d", c.id, k), "was"
				}
			}
		}
	case KindQueue:
		if p == c.pools[1] {
			return c.id + "'s workers", "were"
		}
	}
	return c.id, "was"
}

// classWords names the request classes of a no_route mask for a player.
func classWords(mask uint8) string {
	words := [numClasses]string{"static files", "reads", "writes", "asynchronous writes"}
	var out []string
	for c := range numClasses {
		if mask&(1<<c) != 0 {
			out = append(out, words[c])
		}
	}
	switch len(out) {
	case 0:
		return "its requests"
	case 1:
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// noRouteAdvice says what a component needs behind it for the classes it cannot pass on.
func noRouteAdvice(c *component, mask uint8) string {
	const static, async = 1 << ClassStatic, 1 << ClassAsyncWrite
	switch {
	case c.kind == KindCDN:
		return fmt.Sprintf("connect %s to an origin (a balancer, gateway or service) for its misses and dynamic requests", c.id)
	case c.kind == KindLoadBalancer || c.kind == KindAPIGateway:
		return fmt.Sprintf("connect %s to a service that can serve its requests", c.id)
	case mask == async:
		return fmt.Sprintf("connect %s to a queue or a database for its asynchronous writes", c.id)
	case mask&^static != 0:
		return fmt.Sprintf("connect %s to a database (reads may go through a cache in front of it)", c.id)
	}
	return fmt.Sprintf("connect %s to where its requests are served", c.id)
}

func saturatedAdvice(c *component) string {
	switch c.kind {
	case KindDatabase:
		return fmt.Sprintf("add capacity to %s (connections, read replicas, a faster instance type) or put a cache in front of it", c.id)
	case KindAppService:
		return fmt.Sprintf("add replicas to %s, or make the calls its workers wait on faster", c.id)
	case KindContainerPool:
		return fmt.Sprintf("raise max_replicas of %s or scale out sooner", c.id)
	case KindServerless:
		return fmt.Sprintf("raise max_concurrency of %s or make each execution shorter", c.id)
	case KindQueue:
		return fmt.Sprintf("add workers to %s, or capacity to the database they write to", c.id)
	case KindCache:
		return fmt.Sprintf("give %s more nodes or a larger instance type", c.id)
	}
	return fmt.Sprintf("add instances to %s", c.id)
}

// structuralWhy adds the run's structural failures to the timeline: a queue that lost
// acknowledged writes from when its backlog last stood empty, and a database whose replicas
// never catch up from when their lag last stood at zero, both until the end of the run.
func (m *model) structuralWhy(res *Result, st *runState, whys []Why) []Why {
	ticks := res.Ticks
	n := len(ticks)
	if n == 0 {
		return whys
	}
	amplification := func(from int) float64 {
		var offered, fresh float64
		for k := from; k < n; k++ {
			offered += ticks[k].OfferedRPS
			fresh += ticks[k].FreshRPS
		}
		if fresh <= 0 {
			return 1
		}
		return max(1, math.Round(offered/fresh*100)/100)
	}
	since := func(i int, busy func(ct *ComponentTick) bool) int {
		k := n
		for k > 0 && busy(&ticks[k-1].Components[i]) {
			k--
		}
		return min(k, n-1)
	}
	for _, f := range res.Summary.Failures {
		kind, id, _ := strings.Cut(f, ":")
		i, ok := m.v.index[id]
		if !ok {
			continue
		}
		var w Why
		switch kind {
		case "lost_data":
			k := since(i, func(ct *ComponentTick) bool { return ct.Backlog > 0.5 })
			steady := float64(n-n/5) * m.dt
			in, drain := st.acc.comps[i].enqueued/steady, st.acc.comps[i].drainable/steady
			w = Why{Component: id, Cause: CauseLostWrites,
				Detail: fmt.Sprintf("%s took in %s jobs/s while its workers could finish %s/s: %s acknowledged writes were never stored",
					id, count(in), count(drain), count(res.Summary.LostWrites)),
				Advice: saturatedAdvice(&m.comps[i])}
			w.StartSec = float64(k) * m.dt
		case "replication_lag":
			k := since(i, func(ct *ComponentTick) bool { return ct.LagMs > 0 })
			w = Why{Component: id, Cause: CauseReplicationLag,
				Detail: fmt.Sprintf("%s's replicas fell %s s behind and never caught up: each replays every write at 40%% of its cost on top of its reads",
					id, decimal(ticks[n-1].Components[i].LagMs/1000)),
				Advice: fmt.Sprintf("give %s more or faster replicas, or take reads off them", id)}
			w.StartSec = float64(k) * m.dt
		default:
			continue
		}
		w.StartSec, w.EndSec = round3(w.StartSec), round3(float64(n)*m.dt)
		w.RetryAmplification = amplification(int(math.Round(w.StartSec / m.dt)))
		whys = append(whys, w)
	}
	// In order of time; a structural failure after the stretches that begin with it.
	slices.SortStableFunc(whys, func(a, b Why) int { return cmp.Compare(a.StartSec, b.StartSec) })
	return whys
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// count writes a rate or amount for a player: whole numbers with thousands separators,
// one decimal below ten.
func count(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "∞"
	}
	if math.Abs(x) < 10 && x != math.Trunc(x) {
		return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
	}
	s := strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func decimal(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

func share(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
