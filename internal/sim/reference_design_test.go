package sim

// How the reference simulator reads a Design (the mapping its header documents). It uses
// only the package's exported surface — Params for defaults, the catalog for capacities —
// so that it stays independent of how the engine compiles a design.

import (
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
	class    Class
	deadline float64
	hold     float64 // s a slow database holds its connection after the query (refOptions)
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
	kind   Kind
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
	cfg   Config
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
	c Component
}

func (p refParams) raw(name string) (json.RawMessage, any) {
	for _, s := range Params(p.c.Type) {
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

func refInstanceType(cat Catalog, c Component, p refParams) InstanceType {
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

func refSpeed(it InstanceType) float64 {
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
func newRefModel(d Design, cfg Config, seed uint64) (*refModel, error) {
	return newRefModelWith(d, cfg, seed, refOptions{})
}

// newRefModelWith is newRefModel with readings of the configuration other than the default.
func newRefModelWith(d Design, cfg Config, seed uint64, opt refOptions) (*refModel, error) {
	if cfg.TickMs == 0 {
		cfg.TickMs = defaultTickMs
	}
	cat := cfg.Catalog
	if len(cat) == 0 {
		cat = DefaultCatalog()
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
	kindOf := map[string]Kind{}
	for _, c := range d.Components {
		kindOf[c.ID] = c.Type
	}
	firstCallee := func(id string, k Kind) string {
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
		case KindLoadBalancer:
			n := p.f("instances")
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*n, refBalancerServiceSec, int(float64(it.BufferPerUnit)*n))}
		case KindAPIGateway:
			n := p.f("instances")
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*n, refGatewayServiceSec, int(float64(it.BufferPerUnit)*n))}
		case KindAppService:
			for r := 0; r < p.i("replicas"); r++ {
				rc.pools = append(rc.pools, newRefPool(m.s, fmt.Sprintf("%s/%d", c.ID, r), p.i("concurrency"),
					p.f("service_time_ms")/1000/refSpeed(it), p.i("queue_per_replica")))
			}
		case KindCache:
			mem := p.f("memory_gb")
			if mem == 0 {
				mem = math.Max(it.MemoryGB, 0.01)
			}
			units := 1.0
			if it.MemoryGB > 0 {
				units = math.Ceil(mem/it.MemoryGB - 1e-9)
			}
			rc.pools = []*refPool{refFixedPool(m.s, c.ID, it.CapacityRPS*units, refCacheServiceSec, int(float64(it.BufferPerUnit)*units))}
		case KindDatabase:
			if p.i("read_replicas") > 0 {
				return nil, fmt.Errorf("%s: read replicas are not modelled by the reference", c.ID)
			}
			conns := p.i("connections")
			rc.pools = []*refPool{newRefPool(m.s, c.ID, conns, p.f("query_time_ms")/1000/refSpeed(it), p.i("queue_per_connection")*conns)}
		case KindQueue:
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
		pools := rc.pools
		if c.Type == KindQueue {
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
		last := rc.pools[len(rc.pools)-1]
		if c.Type != KindQueue {
			last = nil
		}
		all := rc.pools
		rc.served = func() int {
			if last != nil {
				return last.served
			}
			n := 0
			for _, pl := range all {
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
	for _, c := range d.Components {
		p := refParams{c}
		rc := m.comps[c.ID]
		switch c.Type {
		case KindLoadBalancer:
			b := &refBalancer{m: m, comp: rc, algorithm: p.s("algorithm"), health: p.b("health_checks"),
				intervalSec: p.f("health_check_interval_sec"), unhealthyAfter: p.i("unhealthy_threshold")}
			if b.algorithm == "consistent_hash" {
				return nil, fmt.Errorf("%s: consistent hashing is not modelled by the reference", c.ID)
			}
			for _, to := range callees[c.ID] {
				if kindOf[to] != KindAppService {
					return nil, fmt.Errorf("%s: the reference balances over app services only", c.ID)
				}
				b.backends = append(b.backends, &refBackend{comp: m.comps[to], hop: edge(c.ID, to), up: true})
			}
			rc.hop = b
		case KindAPIGateway:
			if len(callees[c.ID]) != 1 {
				return nil, fmt.Errorf("%s: the reference's gateway forwards to exactly one component", c.ID)
			}
			to := callees[c.ID][0]
			if k := kindOf[to]; k != KindAppService && k != KindLoadBalancer {
				return nil, fmt.Errorf("%s: the reference's gateway forwards to an app service or a balancer, not %s", c.ID, k)
			}
			rc.hop = newRefGateway(m, rc, p, edge(c.ID, to))
		case KindAppService:
			app := &refApp{m: m, comp: rc}
			db := edge(c.ID, firstCallee(c.ID, KindDatabase))
			if cache := firstCallee(c.ID, KindCache); cache != "" {
				cc := m.comps[cache]
				p := refParams{d.Components[slicesIndex(d, cache)]}
				hit := p.f("hit_ratio")
				if ws := cfg.WorkingSetGB; ws > 0 {
					mem := p.f("memory_gb")
					if mem == 0 {
						mem = refInstanceType(cat, d.Components[slicesIndex(d, cache)], p).MemoryGB
					}
					if mem < ws {
						hit *= mem / ws
					}
				}
				ch := &refCache{m: m, comp: cc, target: hit, warmup: p.f("warmup_sec"), flushedAt: math.Inf(-1), miss: db}
				cc.hop = ch
				app.read = edge(c.ID, cache)
			} else {
				app.read = db
			}
			app.write = db
			app.async = db
			if q := firstCallee(c.ID, KindQueue); q != "" {
				app.async = edge(c.ID, q)
			}
			rc.hop = app
		case KindDatabase:
			rc.hop = &refDatabase{comp: rc}
		case KindQueue:
			rc.hop = &refQueue{m: m, comp: rc, write: edge(c.ID, firstCallee(c.ID, KindDatabase))}
		}
	}
	for _, c := range d.Components {
		if incoming[c.ID] == 0 && (c.Type == KindLoadBalancer || c.Type == KindAppService || c.Type == KindAPIGateway) {
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

func slicesIndex(d Design, id string) int {
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
		case ChaosNetworkPartition:
			reply(refErrored)
			return
		case ChaosLatencyInjection:
			extra += ev.Params.ExtraLatencyMs / 1000
		}
	}
	if extra > 0 && e.m.opt.slowDatabase && e.to.kind == KindDatabase {
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
		if ev.Kind == ChaosNetworkPartition && ev.From == e.from && ev.To == e.to.id && now >= ev.AtSec && now < ev.AtSec+ev.DurationSec {
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
	b.comp.pools[0].arrive(&refJob{fail: reply, start: func(release func()) {
		release()
		be := b.pick()
		if be == nil {
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

// refApp is an app service: replicas fed round-robin, each its own pool; its worker is
// held through its synchronous call.
type refApp struct {
	m                  *refModel
	comp               *refComp
	next               int
	read, write, async refHop
}

func (a *refApp) call(r *refReq, reply func(refOutcome)) {
	reply = once(reply)
	a.next++
	pl := a.comp.pools[a.next%len(a.comp.pools)]
	var down refHop
	switch r.class {
	case ClassRead:
		down = a.read
	case ClassWrite:
		down = a.write
	case ClassAsyncWrite:
		down = a.async
	}
	pl.arrive(&refJob{fail: reply, start: func(release func()) {
		if r.class == ClassStatic {
			release()
			reply(refOK)
			return
		}
		if down == nil {
			release()
			reply(refErrored)
			return
		}
		down.call(r, func(o refOutcome) {
			release()
			reply(o)
		})
	}})
}

// refCache answers hits itself and sends misses on to the database; it holds nothing.
type refCache struct {
	m         *refModel
	comp      *refComp
	target    float64
	warmup    float64
	flushedAt float64
	flushWarm float64
	miss      refHop
}

func (c *refCache) hitRatio(now float64) float64 {
	since := now - c.flushedAt
	if math.IsInf(c.flushedAt, -1) || c.flushWarm <= 0 || since >= c.flushWarm {
		return c.target
	}
	return c.target * math.Max(0, since) / c.flushWarm
}

func (c *refCache) call(r *refReq, reply func(refOutcome)) {
	c.comp.pools[0].arrive(&refJob{fail: reply, start: func(release func()) {
		release()
		if c.m.s.rng.Float64() < c.hitRatio(c.m.s.now) {
			reply(refOK)
			return
		}
		if c.miss == nil {
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
	pl.arrive(&refJob{fail: reply, start: func(release func()) {
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
}

func (q *refQueue) call(r *refReq, reply func(refOutcome)) {
	broker, consumers := q.comp.pools[0], q.comp.pools[1]
	broker.arrive(&refJob{fail: reply, start: func(release func()) {
		release()
		if !consumers.hasRoom() {
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
				q.write.call(&refReq{class: ClassAsyncWrite}, func(o refOutcome) {
					if epoch != consumers.epoch {
						return // the consumer failed meanwhile and the message is already back
					}
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
