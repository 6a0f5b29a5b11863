package reference

// How the reference simulator reads a Design (the mapping its header documents). It uses
// only the package's exported surface — Params for defaults, the catalog for capacities —
// so that it stays independent of how the engine compiles a design.

import (
	"backpressure/internal/sim"
	"encoding/json"
	"fmt"
	"math"
)

// Service times the engine gives its fixed-capacity kinds; the reference turns the
// catalog's capacity into workers the same way, so both simulate the same pools.
const (
	refBalancerServiceSec = 0.0005
	refCacheServiceSec    = 0.001
	refBrokerServiceSec   = 0.001
	refGatewayServiceSec  = 0.001
)

// refReq is one attempt travelling through the design; deadline is when its client gives
// up (+Inf without a timeout).
type refReq struct {
	class    sim.Class
	deadline float64
	hold     float64 // s a slow database holds its connection after the query (refOptions)
	// loss is where the attempt is and where it was lost, for the "why" (nil for a queue's
	// own writes, which no client waits for). A copy of the request shares it.
	loss *refLoss
}

// refLoss follows one attempt: the first place that failed it and why, the pool it waits
// in, and the last component that took it into service.
type refLoss struct {
	comp    string
	cause   sim.Cause
	waiting *refPool
	at      string
}

// lose records where the attempt failed: the first failure is where it was lost, what
// follows is that failure travelling back to the client.
func (r *refReq) lose(comp string, cause sim.Cause) {
	if r.loss != nil && r.loss.comp == "" {
		r.loss.comp, r.loss.cause = comp, cause
	}
}

// refOptions are readings of a configuration that the game's schema leaves to the level:
// slowDatabase takes a latency injection on an edge into a database as the database being
// slow, its connection held through the delay, rather than the network.
type refOptions struct {
	slowDatabase bool
}

// refHop is anything a request can be sent to: a component or an edge in front of one.
type refHop interface {
	call(r *refReq, reply func(refOutcome))
}

// refComp is one component of the design as the reference sees it.
type refComp struct {
	id     string
	kind   sim.Kind
	pools  []*refPool
	failed bool
	hop    refHop
	// served counts what the component finished (per tick, for the scenario metrics).
	served func() int
	// waiting and room give the fill of its waiting rooms.
	waiting func() int
	room    int
}

// refModel is a design compiled for the reference simulator.
type refModel struct {
	s     *refSim
	cfg   sim.Config
	dt    float64
	ticks int
	comps map[string]*refComp
	order []string // component ids in design order (deterministic iteration)
	edges map[[2]string]*refEdge
	entry refHop
	rec   *refRecord
	// retryTokens is the clients' retry budget (a token bucket; see depositRetryToken).
	retryTokens float64
	opt         refOptions
}

// once makes a reply safe to call more than once: only the first call counts. A pool that
// holds its worker through a call needs it: when its node fails it answers for the request
// at once, and the callee's answer, when it comes, must be ignored. Pools that hold nothing
// answer exactly once (a failure drops their scheduled completion).
func once(f func(refOutcome)) func(refOutcome) {
	done := false
	return func(o refOutcome) {
		if !done {
			done = true
			f(o)
		}
	}
}

// refParams reads a component's parameters with the kind's documented defaults.
type refParams struct {
	c sim.Component
}

func (p refParams) raw(name string) (json.RawMessage, any) {
	for _, s := range sim.Params(p.c.Type) {
		if s.Name == name {
			return p.c.Params[name], s.Default
		}
	}
	panic(fmt.Sprintf("%s has no parameter %s", p.c.Type, name))
}

func (p refParams) f(name string) float64 {
	raw, def := p.raw(name)
	x := def.(float64)
	if raw != nil {
		if err := json.Unmarshal(raw, &x); err != nil {
			panic(err)
		}
	}
	return x
}

func (p refParams) i(name string) int { return int(p.f(name)) }

func (p refParams) b(name string) bool {
	raw, def := p.raw(name)
	x := def.(bool)
	if raw != nil {
		if err := json.Unmarshal(raw, &x); err != nil {
			panic(err)
		}
	}
	return x
}

func (p refParams) s(name string) string {
	raw, def := p.raw(name)
	x := def.(string)
	if raw != nil {
		if err := json.Unmarshal(raw, &x); err != nil {
			panic(err)
		}
	}
	return x
}

func refInstanceType(cat sim.Catalog, c sim.Component, p refParams) sim.InstanceType {
	if name := p.s("instance_type"); name != "" {
		return cat[name]
	}
	for _, it := range cat {
		if it.Kind == c.Type && it.Default {
			return it
		}
	}
	panic("no default instance type for " + string(c.Type))
}

func refSpeed(it sim.InstanceType) float64 {
	if it.Speed > 0 {
		return it.Speed
	}
	return 1
}

// refFixedPool is a fixed-capacity kind's pool: the catalog's rps as whole workers.
func refFixedPool(s *refSim, name string, capRPS, serviceSec float64, buffer int) *refPool {
	w := int(math.Max(1, math.Round(capRPS*serviceSec)))
	return newRefPool(s, name, w, float64(w)/capRPS, buffer)
}

// newRefModel maps a design onto reference pools and hops.
func newRefModel(d sim.Design, cfg sim.Config, seed uint64) (*refModel, error) {
	return newRefModelWith(d, cfg, seed, refOptions{})
}

// newRefModelWith is newRefModel with readings of the configuration other than the default.
func newRefModelWith(d sim.Design, cfg sim.Config, seed uint64, opt refOptions) (*refModel, error) {
	if cfg.TickMs == 0 {
		cfg.TickMs = defaultTickMs
	}
	cat := cfg.Catalog
	if len(cat) == 0 {
		cat = sim.DefaultCatalog()
	}
	m := &refModel{s: newRefSim(seed), cfg: cfg, dt: cfg.TickMs / 1000, comps: map[string]*refComp{},
		edges: map[[2]string]*refEdge{}, opt: opt}
	m.ticks = int(math.Round(cfg.DurationSec / m.dt))
	callees := map[string][]string{}
	incoming := map[string]int{}
	for _, e := range d.Edges {
		callees[e.From] = append(callees[e.From], e.To)
		incoming[e.To]++
	}
	kindOf := map[string]sim.Kind{}
	for _, c := range d.Components {
		kindOf[c.ID] = c.Type
	}
	firstCallee := func(id string, k sim.Kind) string {
		for _, to := range callees[id] {
			if kindOf[to] == k {
				return to
			}
		}
		return ""
	}
	// Pools first, then the hops between them (a hop needs its callee's component).
	for _, c := range d.Components {
		p := refParams{c}
		it := refInstanceType(cat, c, p)
		rc := &refComp{id: c.ID, kind: c.Type}
		switch c.Type {
		case sim.KindLoadBalancer:
			n := p.f("instances")
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*n, refBalancerServiceSec, int(float64(it.BufferPerUnit)*n))}
		case sim.KindAPIGateway:
			n := p.f("instances")
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*n, refGatewayServiceSec, int(float64(it.BufferPerUnit)*n))}
		case sim.KindAppService:
			for r := 0; r < p.i("replicas"); r++ {
				rc.pools = append(rc.pools, newRefPool(m.s, fmt.Sprintf("%s/%d", c.ID, r), p.i("concurrency"),
					p.f("service_time_ms")/1000/refSpeed(it), p.i("queue_per_replica")))
			}
		case sim.KindCache:
			mem := p.f("memory_gb")
			if mem == 0 {
				mem = math.Max(it.MemoryGB, 0.01)
			}
			units := 1.0
			if it.MemoryGB > 0 {
				units = math.Ceil(mem/it.MemoryGB - 1e-9)
			}
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*units, refCacheServiceSec, int(float64(it.BufferPerUnit)*units))}
		case sim.KindContainerPool:
			for r := 0; r < p.i("min_replicas"); r++ {
				rc.pools = append(rc.pools, newRefPool(m.s, fmt.Sprintf("%s/%d", c.ID, r), p.i("concurrency"),
					p.f("service_time_ms")/1000/refSpeed(it), p.i("queue_per_replica")))
			}
		case sim.KindServerless:
			// Its executions are counted by the function itself (refFunction).
		case sim.KindCDN:
			rc.pools = []*refPool{newRefPool(m.s, c.ID, math.MaxInt32, refCDNServiceSec, 0)}
		case sim.KindDatabase:
			conns := p.i("connections")
			rc.pools = []*refPool{newRefPool(m.s, c.ID, conns, p.f("query_time_ms")/1000/refSpeed(it), p.i("queue_per_connection")*conns)}
			rit := it
			if name := p.s("replica_instance_type"); name != "" {
				rit = cat[name]
			}
			for r := 0; r < p.i("read_replicas"); r++ {
				rc.pools = append(rc.pools, newRefPool(m.s, fmt.Sprintf("%s/replica%d", c.ID, r), conns,
					p.f("query_time_ms")/1000/refSpeed(rit), p.i("queue_per_connection")*conns))
			}
		case sim.KindQueue:
			broker := refFixedPool(m.s, c.ID+"/broker", it.CapacityRPS, refBrokerServiceSec, it.BufferPerUnit)
			consumers := newRefPool(m.s, c.ID+"/consumers", p.i("workers"), p.f("job_time_ms")/1000/refSpeed(it), p.i("buffer"))
			consumers.durable = true
			rc.pools = []*refPool{broker, consumers}
		default:
			return nil, fmt.Errorf("%s: %s is not modelled by the reference", c.ID, c.Type)
		}
		for _, pl := range rc.pools {
			rc.room += max(0, pl.buffer)
		}
		if c.Type == sim.KindCDN {
			rc.room = 0 // an edge has no waiting room
		}
		pools := rc.pools
		if c.Type == sim.KindQueue {
			pools = pools[1:] // a queue's fill is its message buffer
			rc.room = max(0, pools[0].buffer)
		}
		rc.waiting = func() int {
			n := 0
			for _, pl := range pools {
				n += len(pl.waiting)
			}
			return n
		}
		var last *refPool // a queue's: its consumers
		if c.Type == sim.KindQueue {
			last = rc.pools[len(rc.pools)-1]
		}
		rc.served = func() int {
			if last != nil {
				return last.served
			}
			n := 0
			for _, pl := range rc.pools { // an autoscaler's replicas as they are now
				n += pl.served
			}
			return n
		}
		m.comps[c.ID] = rc
		m.order = append(m.order, c.ID)
	}
	edge := func(from, to string) refHop {
		if to == "" {
			return nil
		}
		e := &refEdge{m: m, from: from, to: m.comps[to]}
		m.edges[[2]string{from, to}] = e
		return e
	}
	// services is what a component forwards to among the services and balancers it calls,
	// dealt in turn (nil: none).
	services := func(id string) refHop {
		var hops []refHop
		for _, to := range callees[id] {
			if isForwarder(kindOf[to]) {
				hops = append(hops, edge(id, to))
			}
		}
		switch len(hops) {
		case 0:
			return nil
		case 1:
			return hops[0]
		}
		return &refSplit{hops: hops}
	}
	it := func(c sim.Component, p refParams) sim.InstanceType { return refInstanceType(cat, c, p) }
	computeCalls := func(id string) refCalls {
		db := edge(id, firstCallee(id, sim.KindDatabase))
		next := db
		if db == nil {
			next = services(id)
		}
		calls := refCalls{read: next, write: next, async: next}
		if cache := firstCallee(id, sim.KindCache); cache != "" {
			cc := m.comps[cache]
			cp := refParams{d.Components[slicesIndex(d, cache)]}
			hit := cp.f("hit_ratio")
			if ws := cfg.WorkingSetGB; ws > 0 {
				mem := cp.f("memory_gb")
				if mem == 0 {
					mem = it(d.Components[slicesIndex(d, cache)], cp).MemoryGB
				}
				if mem < ws {
					hit *= mem / ws
				}
			}
			cc.hop = &refCache{m: m, comp: cc, refHitRatio: refHitRatio{target: hit, warm: cp.f("warmup_sec"), flushedAt: math.Inf(-1)}, miss: next}
			calls.read = edge(id, cache)
		}
		if q := firstCallee(id, sim.KindQueue); q != "" {
			calls.async = edge(id, q)
		}
		return calls
	}
	for _, c := range d.Components {
		p := refParams{c}
		rc := m.comps[c.ID]
		switch c.Type {
		case sim.KindLoadBalancer:
			b := &refBalancer{m: m, comp: rc, algorithm: p.s("algorithm"), health: p.b("health_checks"),
				intervalSec: p.f("health_check_interval_sec"), unhealthyAfter: p.i("unhealthy_threshold")}
			if b.algorithm == "consistent_hash" {
				return nil, fmt.Errorf("%s: consistent hashing is not modelled by the reference", c.ID)
			}
			for _, to := range callees[c.ID] {
				if !isCompute(kindOf[to]) {
					return nil, fmt.Errorf("%s: the reference balances over services only", c.ID)
				}
				b.backends = append(b.backends, &refBackend{comp: m.comps[to], hop: edge(c.ID, to), up: true})
			}
			rc.hop = b
		case sim.KindAPIGateway:
			if len(callees[c.ID]) != 1 {
				return nil, fmt.Errorf("%s: the reference's gateway forwards to exactly one component", c.ID)
			}
			to := callees[c.ID][0]
			if k := kindOf[to]; !isForwarder(k) || k == sim.KindAPIGateway {
				return nil, fmt.Errorf("%s: the reference's gateway forwards to a service or a balancer, not %s", c.ID, k)
			}
			rc.hop = newRefGateway(m, rc, p, edge(c.ID, to))
		case sim.KindAppService, sim.KindContainerPool:
			app := &refApp{m: m, comp: rc, calls: computeCalls(c.ID), live: rc.pools}
			if c.Type == sim.KindContainerPool {
				app.scaler = &refScaler{a: app, minR: p.i("min_replicas"), maxR: p.i("max_replicas"), conc: p.i("concurrency"),
					target: p.f("target_utilization"), outDelay: p.f("scale_out_delay_sec"), inDelay: p.f("scale_in_delay_sec"),
					serviceSec: p.f("service_time_ms") / 1000 / refSpeed(refInstanceType(cat, c, p)), queue: p.i("queue_per_replica"),
					lowSince: -1}
			}
			rc.hop = app
		case sim.KindServerless:
			mem := p.f("memory_mb")
			f := &refFunction{m: m, comp: rc, calls: computeCalls(c.ID), maxConc: p.i("max_concurrency"),
				serviceSec: p.f("service_time_ms") / 1000 / refSpeed(refInstanceType(cat, c, p)) / (math.Min(mem, refFnFullCoreMB) / 1024),
				cold:       p.f("cold_start_ms") / 1000, idle: p.f("idle_timeout_sec"), maxExec: p.f("max_execution_ms") / 1000}
			rc.served = func() int { return f.finished }
			rc.hop = f
		case sim.KindCDN:
			cdn := &refCDN{m: m, comp: rc, refHitRatio: refHitRatio{target: p.f("hit_ratio"), warm: p.f("ttl_sec"), flushedAt: math.Inf(-1)},
				origin: services(c.ID)}
			rc.hop = cdn
		case sim.KindDatabase:
			if firstCallee(c.ID, sim.KindDatabase) != "" {
				return nil, fmt.Errorf("%s: replication between primaries is not modelled by the reference", c.ID)
			}
			if len(rc.pools) > 1 {
				rc.hop = &refDBNodes{m: m, comp: rc, replicasOnly: p.s("read_from") == "replicas",
					replaySec: refReplayCost * p.f("query_time_ms") / 1000 / refSpeed(it(c, p))}
			} else {
				rc.hop = &refDatabase{comp: rc}
			}
		case sim.KindQueue:
			rc.hop = &refQueue{m: m, comp: rc, write: edge(c.ID, firstCallee(c.ID, sim.KindDatabase))}
		}
	}
	for _, c := range d.Components {
		if incoming[c.ID] == 0 && entryKinds[c.Type] {
			if m.entry != nil {
				return nil, fmt.Errorf("the reference takes one ingress; %s is a second", c.ID)
			}
			m.entry = m.comps[c.ID].hop
		}
	}
	if m.entry == nil {
		return nil, fmt.Errorf("no ingress")
	}
	return m, nil
}

// defaultTickMs is a configuration's tick when it names none (Config.TickMs's default).
const defaultTickMs = 100

// isCompute: the kinds that run a service's own work.
func isCompute(k sim.Kind) bool {
	return k == sim.KindAppService || k == sim.KindContainerPool || k == sim.KindServerless
}

// isForwarder: the kinds a service sends its requests on to.
func isForwarder(k sim.Kind) bool {
	return isCompute(k) || k == sim.KindLoadBalancer || k == sim.KindAPIGateway
}

// entryKinds are the kinds that take traffic from outside when nothing calls them.
var entryKinds = map[sim.Kind]bool{
	sim.KindLoadBalancer: true, sim.KindAPIGateway: true, sim.KindCDN: true,
	sim.KindAppService: true, sim.KindContainerPool: true, sim.KindServerless: true,
}

func slicesIndex(d sim.Design, id string) int {
	for i, c := range d.Components {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// refEdge is a call from one component to another: where partitions cut and injected
// latency waits (the caller, if it holds, holds through it).
type refEdge struct {
	m    *refModel
	from string
	to   *refComp
}

func (e *refEdge) call(r *refReq, reply func(refOutcome)) {
	now := e.m.s.now
	extra := 0.0
	for _, ev := range e.m.cfg.Chaos {
		if ev.From != e.from || ev.To != e.to.id || now < ev.AtSec || now >= ev.AtSec+ev.DurationSec {
			continue
		}
		switch ev.Kind {
		case sim.ChaosNetworkPartition:
			r.lose(e.to.id, sim.CausePartition)
			reply(refErrored)
			return
		case sim.ChaosLatencyInjection:
			extra += ev.Params.ExtraLatencyMs / 1000
		}
	}
	if extra > 0 && e.m.opt.slowDatabase && e.to.kind == sim.KindDatabase {
		slow := *r
		slow.hold = extra
		e.to.hop.call(&slow, reply)
		return
	}
	if extra > 0 {
		e.m.s.at(now+extra, func() { e.to.hop.call(r, reply) })
		return
	}
	e.to.hop.call(r, reply)
}

func (e *refEdge) cut(now float64) bool {
	for _, ev := range e.m.cfg.Chaos {
		if ev.Kind == sim.ChaosNetworkPartition && ev.From == e.from && ev.To == e.to.id && now >= ev.AtSec && now < ev.AtSec+ev.DurationSec {
			return true
		}
	}
	return false
}

// refBackend is one backend of a balancer as the balancer believes it to be.
type refBackend struct {
	comp        *refComp
	hop         refHop
	up          bool // as far as health checks know
	failedProbe int
	outstanding int
}

// refBalancer splits requests over its backends after its own (tiny) service.
type refBalancer struct {
	m         *refModel
	comp      *refComp
	backends  []*refBackend
	algorithm string // round_robin, random, least_connections
	health    bool
	next      int
	// Health checks: every intervalSec, a backend out after unhealthyAfter failures in a row.
	intervalSec    float64
	unhealthyAfter int
}

func (b *refBalancer) call(r *refReq, reply func(refOutcome)) {
	b.comp.pools[0].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		be := b.pick()
		if be == nil {
			r.lose(b.comp.id, sim.CauseNodeFailed)
			reply(refErrored)
			return
		}
		be.outstanding++
		be.hop.call(r, once(func(o refOutcome) {
			be.outstanding--
			reply(o)
		}))
	}})
}

func (b *refBalancer) pick() *refBackend {
	var live []*refBackend
	for _, be := range b.backends {
		if !b.health || be.up {
			live = append(live, be)
		}
	}
	if len(live) == 0 {
		return nil
	}
	switch b.algorithm {
	case "random":
		return live[b.m.s.rng.IntN(len(live))]
	case "least_connections":
		best := live[0]
		for _, be := range live[1:] {
			if be.outstanding < best.outstanding {
				best = be
			}
		}
		return best
	}
	b.next++
	return live[b.next%len(live)]
}

// startHealthChecks probes every backend every interval from a random phase.
func (b *refBalancer) startHealthChecks(end float64) {
	if !b.health {
		return
	}
	for _, be := range b.backends {
		be := be
		var probe func()
		probe = func() {
			now := b.m.s.now
			ok := !be.comp.failed
			if e, isEdge := be.hop.(*refEdge); isEdge && e.cut(now) {
				ok = false
			}
			if ok {
				be.failedProbe, be.up = 0, true
			} else if be.failedProbe++; be.failedProbe >= b.unhealthyAfter {
				be.up = false
			}
			if now+b.intervalSec < end {
				b.m.s.at(now+b.intervalSec, probe)
			}
		}
		b.m.s.at(b.m.s.rng.Float64()*b.intervalSec, probe)
	}
}

// refApp is an app service or a container pool: replicas fed in turn, each its own pool;
// its worker is held through its synchronous call. A container pool's autoscaler adds and
// removes replicas (refScaler).
type refApp struct {
	m      *refModel
	comp   *refComp
	next   int
	calls  refCalls
	live   []*refPool // the replicas dealt requests
	scaler *refScaler
	// draining: replicas removed by the autoscaler, finishing what they hold.
	draining []*refPool
}

func (a *refApp) call(r *refReq, reply func(refOutcome)) {
	reply = once(reply)
	a.next++
	pl := a.live[a.next%len(a.live)]
	down, calls := a.calls.of(r.class)
	pl.arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		if !calls {
			release()
			reply(refOK)
			return
		}
		if down == nil {
			release()
			r.lose(a.comp.id, sim.CauseNoRoute)
			reply(refErrored)
			return
		}
		down.call(r, func(o refOutcome) {
			release()
			reply(o)
		})
	}})
}

// addReplica starts one more replica of a container pool.
func (a *refApp) addReplica() {
	sc := a.scaler
	pl := newRefPool(a.m.s, a.comp.id, sc.conc, sc.serviceSec, sc.queue)
	if a.comp.failed {
		pl.failed = true
	}
	a.live = append(a.live, pl)
	a.comp.pools = append(a.comp.pools, pl)
}

// removeReplicas stops dealing requests to the last n replicas.
func (a *refApp) removeReplicas(n int) {
	k := len(a.live) - n
	a.draining = append(a.draining, a.live[k:]...)
	a.live = a.live[:k:k]
}

// refCache answers hits itself and sends misses on to the database; it holds nothing.
type refCache struct {
	m    *refModel
	comp *refComp
	refHitRatio
	miss refHop
}

func (c *refCache) call(r *refReq, reply func(refOutcome)) {
	c.comp.pools[0].arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		if c.m.s.rng.Float64() < c.at(c.m.s.now) {
			reply(refOK)
			return
		}
		if c.miss == nil {
			r.lose(c.comp.id, sim.CauseNoRoute)
			reply(refErrored)
			return
		}
		c.miss.call(r, reply)
	}})
}

// refDatabase is the primary's connection pool.
type refDatabase struct{ comp *refComp }

func (d *refDatabase) call(r *refReq, reply func(refOutcome)) {
	pl := d.comp.pools[0]
	pl.arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		if r.hold <= 0 {
			release()
			reply(refOK)
			return
		}
		epoch := pl.epoch
		pl.s.at(pl.s.now+r.hold, func() {
			if epoch == pl.epoch { // else the node failed meanwhile and answered for it
				release()
				reply(refOK)
			}
		})
	}})
}

// refQueue stores messages at its broker and lets its consumers write them to the database,
// each consumer held through its write.
type refQueue struct {
	m      *refModel
	comp   *refComp
	write  refHop
	stored int // messages written to the database
	// writesCut: the consumers' last write failed across a cut link, so a full queue is
	// refused by the partition rather than by its consumers' pace.
	writesCut bool
}

func (q *refQueue) call(r *refReq, reply func(refOutcome)) {
	broker, consumers := q.comp.pools[0], q.comp.pools[1]
	broker.arrive(&refJob{req: r, fail: reply, start: func(release func()) {
		release()
		if !consumers.hasRoom() {
			cause := sim.CauseSaturated
			if q.writesCut {
				cause = sim.CausePartition
			}
			r.lose(q.comp.id, cause)
			reply(refRejected)
			return
		}
		var msg *refJob
		msg = &refJob{
			// A consumer that fails with its node puts the message back: the queue is durable.
			fail: func(refOutcome) { consumers.requeue(msg) },
			start: func(release func()) {
				if q.write == nil {
					release()
					return
				}
				epoch := consumers.epoch
				w := &refReq{class: sim.ClassAsyncWrite, loss: &refLoss{}}
				q.write.call(w, func(o refOutcome) {
					if epoch != consumers.epoch {
						return // the consumer failed meanwhile and the message is already back
					}
					q.writesCut = o != refOK && w.loss.cause == sim.CausePartition
					release()
					if o == refOK {
						q.stored++
					} else {
						consumers.requeue(msg) // at least once
					}
				})
			},
		}
		consumers.arrive(msg)
		reply(refOK)
	}})
}
