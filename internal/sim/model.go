package sim

import (
	"fmt"
	"math"
	"sort"
)

// nodeRole says what a route node does with the requests its pool finishes.
type nodeRole uint8

const (
	roleForward  nodeRole = iota // pass everything to the children (balancers, gateways, calls)
	roleServe                    // answer here (static files at an app, queries at a database node)
	roleCache                    // answer hits here, pass misses to the children
	roleEnqueue                  // acknowledge once stored in the queue; a full queue refuses
	roleDispatch                 // no pool: split over the database's nodes
	roleUnrouted                 // the class has nowhere to go from here: fail
)

// splitRule says how a node's forwarded requests are shared among its children.
type splitRule uint8

const (
	splitEven        splitRule = iota // round-robin balancers, gateways, calls
	splitOutstanding                  // least-connections balancers: outstanding requests level (outstanding.go)
	splitRing                         // consistent-hash balancers: each child's share of the ring
	splitSpare                        // database reads: in proportion to spare capacity
)

// node is one visit of one request class to one pool along a path; the nodes of a class form
// a tree rooted at an ingress. Counts are requests per tick.
type node struct {
	pool       int // -1 for dispatch nodes
	comp       int
	parent     int
	edge       int // design edge from the parent's component to this one; -1 if none
	class      Class
	role       nodeRole
	split      splitRule
	background bool // not a client request: queue consumers, job writes, replica replay
	deferred   bool // the edge from the parent closes a cycle: input arrives a tick late
	write      bool // a write at a database node (replicas replay it)
	replay     bool // a replica's replication stream (background root)
	consumer   bool // a queue's consumers (background root)
	roundRobin bool // a round-robin balancer's node: roundRobinWays counts its backends
	source     int  // replay: the primary pool whose writes it replays
	rrWays     int  // fed by a round-robin balancer splitting over this many backends; 0 if not
	children   []int
	weights    []float64 // static split weights (consistent hash), else nil
	pathStart  int       // this node's path, root first, in model.paths
	pathLen    int
	subtreeEnd int // the nodes of its subtree are those from it up to this one, excluded

	// State carried between ticks.
	backlog    float64  // all work waiting in its queue, live and ghost (backlog.go)
	liveQueued float64  // the live part: attempts whose client still waits
	q          []cohort // waiting work by tick of arrival, a ring (backlog.go)
	old        cohort   // waiting work older than the ring
	pendingIn  float64  // deferred input arriving next tick

	// Scratch of the current tick.
	in         float64 // arrivals (a root's are set before the tick's passes)
	held       float64 // replay held back by a cut link
	meanResp   float64 // mean seconds from arrival here to the answer, downstream included
	downMean   float64 // mean seconds spent in calls below this node
	downVar    float64 // their variance (s²)
	respVar    float64 // the variance of meanResp's time (s²)
	pathMean   float64 // mean seconds from the ingress to this node's answer
	share      float64 // scratch split weight
	shareTotal float64 // sum of the children's shares
	demand     float64 // requests that would arrive if nothing upstream refused or throttled
	bareResp   float64 // mean seconds from arrival here to the answer if no pool queued
	nodeFlows          // cleared at the start of every pass (resetFlows)
}

// nodeFlows are what one pass of a tick sends through a node, in one block so that a pass
// clears them at once.
type nodeFlows struct {
	rejected, processed, errors, ok, terminal, lost float64
	pushback                                        float64 // refused by a full queue
	refusedAtOnce                                   float64 // retries sent at once, refused here again (atonce.go)
	cut                                             float64 // sent to this node across a cut link, lost at the parent
	pendingNext                                     float64 // deferred output for next tick

	// Ghost work (its client has given up) and ages.
	gin, gProcessed, gok float64 // ghost arrivals, served, finished without error
	lateDone             float64 // ghost work answered here: late completions
	admLive, admGhost    float64 // the tick's arrivals admitted to the pool
	keep                 float64 // replication a replica queues instead of refusing
	inAge, outAge        float64 // mean age (s since the client sent it) of live work arriving, and served
	expired              float64 // live work whose client timeout passed while it waited
	// A least-connections balancer's level saturates this backend: it holds levelPlaces
	// waiting and no more (outstanding.go).
	leveled     bool
	levelPlaces float64
}

// pool is a pool of workers: an M/M/c queue below saturation, a fluid backlog above it.
type pool struct {
	comp       int
	workers    int
	serviceSec float64 // mean own service time
	fixedSec   float64 // deterministic own latency (authentication, cold starts)
	buffer     float64 // waiting places beyond the workers; 0 = none (Erlang B); +Inf = unbounded
	unlimited  bool    // as many workers as needed (CDN edge): no queueing
	nominalRPS float64 // capacity used to report the utilisation of an unlimited pool
	holds      bool    // a worker stays busy during synchronous downstream calls
	rooms      int     // waiting rooms its backlog is dealt over in turn (an app's replicas); 0 or 1: one
	durable    bool    // the backlog survives a failure (a queue)
	baseErr    float64
	loadErr    float64
	nodes      []int
	closed     closedLoop // the held callers that are its only sources (closedloop.go)
	heldVar    bool       // a node of its is one whose response a hold reads (holdtime.go): it keeps stageVar
	// Workers held by calls made before a delay on them ended, the calls' length and when it
	// ended; and the workers calls through delayed links hold in the last tick, and those
	// calls' length (inflight.go).
	releaseWorkers, releaseSec, releaseAt float64
	delayedWorkers, delayedSec            float64

	// Scratch of the current tick.
	failed                                  bool
	holdSec                                 float64 // mean time a worker waits on downstream calls
	holdVar                                 float64 // its variance (s²), for the busy time's (busyCV2)
	holdLo, holdHi, gLo, gHi                float64 // this tick's bracket of the hold time (holdtime.go)
	holdSide                                int
	stochWait, stochNext                    float64 // mean stochastic wait (s) a room's queue has built: carried, and as this tick leaves it
	in, rejected, processed, backlog0       float64
	backlog1, capRate, util, errRate, wProc float64
	wIn                                     float64 // writes and replay arriving (not reads)
	bareHold                                float64 // mean time its workers would wait on calls if no callee queued
	demand                                  float64
	gated                                   float64 // refused at a gateway's door: rate limit or open breaker
	stage                                   Stage
	nodeRejected, nodeFailed                float64   // over its nodes: refused (rejects, a full queue's push-back), failed (errors, nowhere to go)
	meanSec                                 float64   // stageMean(stage)
	stageVar                                float64   // stageVar(stage), kept only if heldVar
	holdMean, holdExtra                     float64   // mean time of a call arriving now (queueWait), and its difference from meanSec
	ownSec                                  float64   // meanSec less the queue's wait: what a request's age gains here besides waiting
	frac                                    []float64 // share of each queue position served this tick (backlog.go)
	fracEnd                                 int       // last position with a share
	keeps                                   bool      // a replica queues refused replication this tick
	wait                                    float64   // mean time the served work waited in the queue
	levelPlaces                             float64   // waiting places a least-connections level leaves it; +Inf: unbounded
	ghostProcessed                          float64   // served work whose client had given up: wasted
}

// component holds what the engine knows of one design component besides its pools.
type component struct {
	id    string
	kind  Kind
	p     paramValues
	it    InstanceType
	rit   InstanceType // a database's replicas' instance type
	pools []int
	edges []int // outgoing design edges

	hitTarget float64 // cache/CDN hit ratio when warm
	warmupSec float64
	flushedAt float64 // start of the latest warm-up; -Inf when warm
	flushWarm float64 // length of that warm-up
	hitNow    float64

	units float64 // priced units this tick (instances, replicas, nodes)

	queueBuffer  float64 // queues: messages it holds
	queueWorkers float64 // queues: consumer workers, priced per hour
	memoryGB     float64 // serverless: memory per execution, priced per GB-second

	healthChecks bool // balancers: send nothing to failed or cut-off backends once detected
	// Balancers: a failed or cut-off backend is detected between detectSec − checkIntervalSec
	// and detectSec after it went down (checks every checkIntervalSec at a phase nobody
	// knows, unhealthyThreshold failures in a row; health.go).
	checkIntervalSec   float64
	unhealthyThreshold int
	detectSec          float64
	failedSince        float64 // when the current failure began; +Inf while up
	failStart          float64 // scratch: the earliest start among the active failures
	failEnd            float64 // scratch: the latest end among the active failures
	down               outage  // its failures as health checks see them (health.go)
	failed             bool    // any of its pools stopped by chaos this tick

	gate   *gateState   // api gateways
	scaler *scalerState // container pools
	fn     *fnState     // serverless functions
}

// model is a validated design compiled for the tick loop.
type model struct {
	v     *validated
	dt    float64
	comps []component
	pools []pool
	nodes []node
	roots [numClasses][]int // client roots per class, one per ingress
	// classEnd[c] is where the nodes of request type c's trees end: a type's trees follow
	// the type before it's, and background work comes after the last type's.
	classEnd  [numClasses]int
	order     []int // pools in processing order
	paths     []int // node indices, root first, for each node's path
	edgeTo    []int // design edge index → component index of its target
	edgeFrm   []int
	primary   []int // per component: the database primary pool, or -1
	replay    []int // replay nodes (background) of replicas
	answering []int // client nodes that can answer a request (the others' terminal is always 0)
	// answeringEnd[c] is where request type c's nodes end in answering (classEnd).
	answeringEnd [numClasses]int
	committing   []int // nodes with something for commit: replay (held back), deferred input, job writes
	refusedAgain []int // client nodes whose refusals a retry sent at once meets again (atonce.go)
	delayable    []int // nodes called across a link by a pool that holds its workers (inflight.go)
	delayCallers []int // those pools
	atOnce       bool  // the client retries at once and some node's refusals are met again
	consumers    []int // queue consumer nodes
	holding      []int // nodes a hold reads the response of, children first (holdtime.go)
	holders      []int // pools that hold their workers during calls (holdtime.go)
	closedSet    []int // pools reached only by held calls (closedloop.go)

	tooManyRoutes bool
	sinkNode      int

	resolving uint64 // counts the calls of resolvePool: what a kept level was set in (outstanding.go)
	// Least-connections balancer nodes that set the same level (outstanding.go), by node:
	// the group's first node (-1 for other nodes), and on the first the shares it set last
	// and the call of resolvePool they were set in.
	sameLevel []int
	levelOut  [][]levelShare
	levelAt   []uint64

	splitOut []float64 // scratch of a split: each child's share of phases with it out (health.go)
	splitW   []float64

	slots      int       // cohorts in every node's ring (backlog.go)
	rings      []cohort  // every node's ring, in node order: one allocation (initQueues) a carried state copies at once
	fracs      []float64 // every pool's queue shares (pool.frac), in pool order, likewise
	timeoutSec float64   // the client's timeout; 0 = none
	tick       int       // the tick being resolved
	ring       int       // the ring slot of every node's oldest cohort (backlog.go); moved on by computed ticks only

	opts   RunOptions
	reused int // ticks the run repeated instead of computing (state.go)
	cycled int // of those, ticks repeated as part of a cycle (state.go)
}

// fixed service times of the fixed-capacity kinds: small enough not to matter, large
// enough that the capacity maps onto a whole number of workers.
const (
	balancerServiceSec = 0.0005
	gatewayServiceSec  = 0.001
	cacheServiceSec    = 0.001
	cdnServiceSec      = 0.005
	brokerServiceSec   = 0.001
	replayCost         = 0.4  // a replica replays a write at 40% of its cost (seed simple-model)
	fnFullCoreMB       = 1769 // function memory that buys a full core
	saturationCap      = 0.98 // utilisation at which the stochastic wait stops growing and the fluid backlog takes over
)

func compile(v *validated) (*model, error) {
	m := &model{v: v, dt: v.dt, sinkNode: -1, timeoutSec: v.cfg.Client.TimeoutMs / 1000}
	m.slots = cohortSlots(m.timeoutSec, m.dt)
	d := v.design
	n := len(d.Components)
	m.comps = make([]component, n)
	m.primary = make([]int, n)
	for i, c := range d.Components {
		m.primary[i] = -1
		m.comps[i] = component{id: c.ID, kind: c.Type, p: v.params[i], it: v.types[i], rit: v.replicaTypes[i],
			flushedAt: math.Inf(-1), failedSince: math.Inf(1), down: noOutage()}
		m.addPools(i)
	}
	m.edgeTo = make([]int, len(d.Edges))
	m.edgeFrm = make([]int, len(d.Edges))
	for i, e := range d.Edges {
		from, to := v.index[e.From], v.index[e.To]
		m.edgeFrm[i], m.edgeTo[i] = from, to
		m.comps[from].edges = append(m.comps[from].edges, i)
	}
	m.buildRoutes()
	if m.tooManyRoutes {
		return nil, Problems{{Path: "edges", Reason: fmt.Sprintf(
			"the services call each other in so many ways that requests have more than %d distinct paths; simplify the calls between services", maxRouteNodes)}}
	}
	if work := len(m.nodes) * v.ticks; work > maxNodeTicks {
		return nil, Problems{{Path: "duration_sec", Reason: fmt.Sprintf(
			"a design with %d request paths simulated for %d ticks is too large to run (%d path-ticks; the limit is %d): shorten the run or lengthen its ticks",
			len(m.nodes), v.ticks, work, maxNodeTicks)}}
	}
	m.orderPools()
	m.initQueues()
	m.initClosedLoops()
	m.initHolding()
	m.initSameLevels()
	for i := range m.nodes {
		nd := &m.nodes[i]
		if !nd.background && (nd.role == roleCache || nd.role == roleEnqueue || nd.role == roleServe && len(nd.children) == 0) {
			m.answering = append(m.answering, i)
		}
		if nd.replay || nd.deferred || nd.background && nd.write && nd.parent >= 0 {
			m.committing = append(m.committing, i)
		}
		if nd.consumer {
			m.consumers = append(m.consumers, i)
		}
	}
	m.markRefusedAgain()
	m.markDelayable()
	for class, end := range m.classEnd { // answering is in node order
		m.answeringEnd[class] = sort.SearchInts(m.answering, end)
	}
	return m, nil
}

// maxNodeTicks bounds the work of one run (route nodes × ticks), about ten seconds of one core.
const maxNodeTicks = 50_000_000

func speedOf(it InstanceType) float64 {
	if it.Speed > 0 {
		return it.Speed
	}
	return 1
}

func (m *model) newPool(comp int, p pool) int {
	p.comp = comp
	m.pools = append(m.pools, p)
	idx := len(m.pools) - 1
	m.comps[comp].pools = append(m.comps[comp].pools, idx)
	return idx
}

// fixedPool is a pool whose capacity is given in requests per second per unit.
func fixedPool(units float64, it InstanceType, serviceSec float64) pool {
	capRPS := it.CapacityRPS * units
	w := int(math.Max(1, math.Round(capRPS*serviceSec)))
	return pool{workers: w, serviceSec: float64(w) / capRPS, buffer: float64(it.BufferPerUnit) * units,
		baseErr: it.BaseErrorRate, loadErr: it.LoadErrorFactor, nominalRPS: capRPS}
}

func (m *model) addPools(i int) {
	c := &m.comps[i]
	p, it := c.p, c.it
	speed := speedOf(it)
	switch c.kind {
	case KindLoadBalancer:
		c.units = p.f("instances")
		c.healthChecks = p.b("health_checks")
		c.checkIntervalSec, c.unhealthyThreshold = p.f("health_check_interval_sec"), p.i("unhealthy_threshold")
		c.detectSec = c.checkIntervalSec * float64(c.unhealthyThreshold)
		m.newPool(i, fixedPool(c.units, it, balancerServiceSec))
	case KindAPIGateway:
		c.units = p.f("instances")
		pl := fixedPool(c.units, it, gatewayServiceSec)
		pl.fixedSec = p.f("auth_latency_ms") / 1000
		m.newPool(i, pl)
		timeout := m.timeoutSec
		if !(timeout > 0) {
			timeout = math.Inf(1) // no deadline: the gateway waits for the answer
		}
		c.gate = newGate(p, m.dt, timeout)
	case KindAppService:
		c.units = p.f("replicas")
		m.newPool(i, pool{workers: p.i("replicas") * p.i("concurrency"), serviceSec: p.f("service_time_ms") / 1000 / speed,
			buffer: p.f("queue_per_replica") * c.units, holds: true, rooms: p.i("replicas"), baseErr: it.BaseErrorRate, loadErr: it.LoadErrorFactor})
	case KindContainerPool:
		c.units = p.f("min_replicas")
		c.scaler = newScaler(p, m.dt)
		m.newPool(i, pool{workers: p.i("min_replicas") * p.i("concurrency"), serviceSec: p.f("service_time_ms") / 1000 / speed,
			buffer: p.f("queue_per_replica") * c.units, holds: true, rooms: p.i("min_replicas"), baseErr: it.BaseErrorRate, loadErr: it.LoadErrorFactor})
	case KindServerless:
		c.fn = newFn(p, m.dt)
		c.memoryGB = p.f("memory_mb") / 1024
		// CPU comes with memory: service_time_ms is at 1,024 MB; less memory is slower, more is
		// faster up to a full core at 1,769 MB (as on the large public function platforms).
		memSpeed := min(p.f("memory_mb"), fnFullCoreMB) / 1024
		m.newPool(i, pool{workers: p.i("max_concurrency"), serviceSec: p.f("service_time_ms") / 1000 / speed / memSpeed,
			holds: true, baseErr: it.BaseErrorRate, loadErr: it.LoadErrorFactor})
	case KindCache:
		// Memory comes from the instance type; asking for more than one node holds makes a
		// cluster of as many nodes as needed, each priced and each adding throughput.
		mem := p.f("memory_gb")
		if mem == 0 {
			mem = max(it.MemoryGB, 0.01)
		}
		c.units = 1
		if it.MemoryGB > 0 {
			c.units = math.Ceil(mem/it.MemoryGB - 1e-9)
		}
		c.hitTarget = p.f("hit_ratio")
		if ws := m.v.cfg.WorkingSetGB; ws > 0 && mem < ws {
			c.hitTarget *= mem / ws
		}
		c.warmupSec = p.f("warmup_sec")
		c.hitNow = c.hitTarget
		m.newPool(i, fixedPool(c.units, it, cacheServiceSec))
	case KindCDN:
		c.units = 1
		c.hitTarget = p.f("hit_ratio")
		c.warmupSec = p.f("ttl_sec")
		c.hitNow = c.hitTarget
		pl := fixedPool(1, it, cdnServiceSec)
		pl.unlimited, pl.serviceSec = true, cdnServiceSec
		m.newPool(i, pl)
	case KindDatabase:
		nodes := 1 + p.i("read_replicas")
		c.units = float64(nodes)
		for k := 0; k < nodes; k++ {
			nt := it
			if k > 0 {
				nt = c.rit // a replica may have its own instance type
			}
			idx := m.newPool(i, pool{workers: p.i("connections"), serviceSec: p.f("query_time_ms") / 1000 / speedOf(nt),
				buffer: p.f("queue_per_connection") * p.f("connections"), baseErr: nt.BaseErrorRate, loadErr: nt.LoadErrorFactor})
			if k == 0 {
				m.primary[i] = idx
			}
		}
	case KindQueue:
		c.units = 1
		c.queueBuffer, c.queueWorkers = p.f("buffer"), p.f("workers")
		broker := fixedPool(1, it, brokerServiceSec)
		m.newPool(i, broker)
		m.newPool(i, pool{workers: p.i("workers"), serviceSec: p.f("job_time_ms") / 1000 / speed, buffer: math.Inf(1),
			holds: true, durable: true, baseErr: it.BaseErrorRate, loadErr: it.LoadErrorFactor})
	}
}
