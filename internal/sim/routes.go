package sim

// Routes: every request class follows real paths through the design (seed simple-model).
// From an ingress, balancers and gateways pass requests on; an app serves static files
// itself, reads through its cache (cache-aside: hits answer at the cache, misses go back
// through the app to the database), writes at the database primary, and asynchronous
// writes through a queue whose workers write to the database later. An app that has no
// data store of its own passes a request to the services it calls. A path never visits a
// component twice, so a cycle in the design never makes a request loop.

// maxRouteNodes bounds the route trees. Services that call each other in a dense mesh have
// combinatorially many simple paths; such a design is refused rather than simulated slowly.
const maxRouteNodes = 10_000

func (m *model) newNode(nd node) int {
	if len(m.nodes) >= maxRouteNodes {
		m.tooManyRoutes = true
		return m.sink()
	}
	m.nodes = append(m.nodes, nd)
	idx := len(m.nodes) - 1
	if nd.pool >= 0 {
		m.pools[nd.pool].nodes = append(m.pools[nd.pool].nodes, idx)
	}
	if nd.parent >= 0 {
		m.nodes[nd.parent].children = append(m.nodes[nd.parent].children, idx)
	}
	return idx
}

// sink is a throwaway node returned once the route limit is hit, so building can unwind.
func (m *model) sink() int {
	if m.sinkNode < 0 {
		m.nodes = append(m.nodes, node{pool: -1, parent: -1, edge: -1, role: roleUnrouted})
		m.sinkNode = len(m.nodes) - 1
	}
	return m.sinkNode
}

// balancerSplit is how a balancing algorithm shares requests among its backends.
func balancerSplit(algorithm string) splitRule {
	switch algorithm {
	case "least_connections":
		return splitOutstanding
	case "consistent_hash":
		return splitRing
	}
	return splitEven // round_robin
}

func isCompute(k Kind) bool {
	return k == KindAppService || k == KindContainerPool || k == KindServerless
}

func isForwarder(k Kind) bool {
	return isCompute(k) || k == KindLoadBalancer || k == KindAPIGateway
}

func (m *model) buildRoutes() {
	incoming := make([]int, len(m.comps))
	for _, to := range m.edgeTo {
		incoming[to]++
	}
	onPath := make([]bool, len(m.comps))
	for class := Class(0); class < numClasses; class++ {
		for i, c := range m.comps {
			if incoming[i] == 0 && entryKinds[c.kind] {
				m.roots[class] = append(m.roots[class], m.route(class, i, -1, -1, onPath, false))
			}
		}
		m.classEnd[class] = len(m.nodes)
	}
	// Background work: queue consumers writing jobs, replicas replaying writes.
	for i := range m.comps {
		c := &m.comps[i]
		switch c.kind {
		case KindQueue:
			consumer := m.newNode(node{pool: c.pools[1], comp: i, parent: -1, edge: -1, class: ClassAsyncWrite,
				role: roleServe, background: true, consumer: true})
			for _, e := range c.edges {
				to := m.edgeTo[e]
				m.nodes[consumer].role = roleForward
				m.newNode(node{pool: m.primary[to], comp: to, parent: consumer, edge: e, class: ClassAsyncWrite,
					role: roleServe, background: true, write: true})
			}
		case KindDatabase:
			for _, pl := range c.pools[1:] {
				m.replay = append(m.replay, m.newNode(node{pool: pl, comp: i, parent: -1, edge: -1, class: ClassWrite,
					role: roleServe, background: true, replay: true, source: m.primary[i]}))
			}
			// A database → database edge is a replication link: the peer's primary replays
			// every write this primary takes, like a replica does.
			for _, e := range c.edges {
				peer := m.edgeTo[e]
				m.replay = append(m.replay, m.newNode(node{pool: m.primary[peer], comp: peer, parent: -1, edge: e,
					class: ClassWrite, role: roleServe, background: true, replay: true, source: m.primary[i]}))
			}
		}
	}
	m.buildPaths()
	m.setRingWeights()
}

// route builds the subtree of one class arriving at component comp.
func (m *model) route(class Class, comp, parent, edge int, onPath []bool, bg bool) int {
	if m.tooManyRoutes {
		return m.sink()
	}
	c := &m.comps[comp]
	onPath[comp] = true
	defer func() { onPath[comp] = false }()
	nd := node{pool: -1, comp: comp, parent: parent, edge: edge, class: class, background: bg}
	if len(c.pools) > 0 {
		nd.pool = c.pools[0]
	}
	callees := func(want func(Kind) bool) []int {
		var out []int
		for _, e := range c.edges {
			to := m.edgeTo[e]
			if !onPath[to] && want(m.comps[to].kind) {
				out = append(out, e)
			}
		}
		return out
	}
	forwardTo := func(n int, edges []int) {
		for _, e := range edges {
			m.route(class, m.edgeTo[e], n, e, onPath, bg)
		}
		if len(edges) == 0 {
			m.nodes[n].role = roleUnrouted
		}
	}
	switch {
	case c.kind == KindLoadBalancer || c.kind == KindAPIGateway:
		nd.role = roleForward
		if c.kind == KindLoadBalancer {
			nd.split = balancerSplit(c.p.s("algorithm"))
			nd.roundRobin = nd.split == splitEven
		}
		n := m.newNode(nd)
		forwardTo(n, callees(isForwarder))
		return n
	case c.kind == KindCDN:
		nd.role = roleForward
		if class == ClassStatic {
			nd.role = roleCache
		}
		n := m.newNode(nd)
		origins := callees(isForwarder)
		forwardTo(n, origins)
		if len(origins) == 0 && class == ClassStatic {
			m.nodes[n].role = roleCache // hits still answer; misses have no origin and fail
		}
		return n
	case isCompute(c.kind):
		return m.routeCompute(class, comp, nd, onPath, callees, forwardTo)
	}
	// Stores are reached only through routeCompute; anything else has no route.
	nd.role = roleUnrouted
	return m.newNode(nd)
}

func (m *model) routeCompute(class Class, comp int, nd node, onPath []bool, callees func(func(Kind) bool) []int, forwardTo func(int, []int)) int {
	is := func(k Kind) func(Kind) bool { return func(x Kind) bool { return x == k } }
	caches, dbs, queues := callees(is(KindCache)), callees(is(KindDatabase)), callees(is(KindQueue))
	services := callees(isForwarder)
	nd.role = roleForward
	switch class {
	case ClassStatic:
		nd.role = roleServe
		return m.newNode(nd)
	case ClassRead:
		n := m.newNode(nd)
		switch {
		case len(caches) > 0:
			for _, e := range caches {
				cn := m.newNode(node{pool: m.comps[m.edgeTo[e]].pools[0], comp: m.edgeTo[e], parent: n, edge: e,
					class: class, role: roleCache, background: nd.background})
				m.readFrom(cn, class, dbs, services, onPath, nd.background)
			}
		case len(dbs) > 0 || len(services) > 0:
			m.readFrom(n, class, dbs, services, onPath, nd.background)
		default:
			m.nodes[n].role = roleUnrouted
		}
		return n
	case ClassAsyncWrite:
		if len(queues) > 0 {
			n := m.newNode(nd)
			for _, e := range queues {
				to := m.edgeTo[e]
				m.newNode(node{pool: m.comps[to].pools[0], comp: to, parent: n, edge: e, class: class,
					role: roleEnqueue, background: nd.background})
			}
			return n
		}
		fallthrough // without a queue the app writes synchronously
	default: // ClassWrite
		n := m.newNode(nd)
		switch {
		case len(dbs) > 0:
			for _, e := range dbs {
				to := m.edgeTo[e]
				m.newNode(node{pool: m.primary[to], comp: to, parent: n, edge: e, class: class, role: roleServe,
					write: true, background: nd.background})
			}
		default:
			forwardTo(n, services)
		}
		return n
	}
}

// readFrom hangs the read path after node n: the databases (through a dispatch over their
// nodes) or, without one, the services the app calls. A cache node with neither fails its misses.
func (m *model) readFrom(n int, class Class, dbs, services []int, onPath []bool, bg bool) {
	for _, e := range dbs {
		to := m.edgeTo[e]
		d := m.newNode(node{pool: -1, comp: to, parent: n, edge: e, class: class, role: roleDispatch, split: splitSpare, background: bg})
		db := &m.comps[to]
		for k, pl := range db.pools {
			if k == 0 && len(db.pools) > 1 && db.p.s("read_from") == "replicas" {
				continue // the primary takes writes only
			}
			m.newNode(node{pool: pl, comp: to, parent: d, edge: -1, class: class, role: roleServe, background: bg})
		}
	}
	if len(dbs) == 0 {
		for _, e := range services {
			m.route(class, m.edgeTo[e], n, e, onPath, bg)
		}
	}
}

func (m *model) buildPaths() {
	for i := range m.nodes {
		start := len(m.paths)
		for n := i; n >= 0; n = m.nodes[n].parent {
			m.paths = append(m.paths, n)
		}
		// Reverse into root-first order.
		p := m.paths[start:]
		for a, b := 0, len(p)-1; a < b; a, b = a+1, b-1 {
			p[a], p[b] = p[b], p[a]
		}
		m.nodes[i].pathStart, m.nodes[i].pathLen = start, len(p)
	}
	// Nodes are created depth first, so a subtree is a run of indices ending after the end
	// of its last child's subtree.
	for i := len(m.nodes) - 1; i >= 0; i-- {
		nd := &m.nodes[i]
		nd.subtreeEnd = i + 1
		if k := len(nd.children); k > 0 {
			nd.subtreeEnd = m.nodes[nd.children[k-1]].subtreeEnd
		}
	}
}

// orderPools sorts the pools so that a pool comes after every pool that sends it requests.
// Where the design has a cycle, the edge that closes it is deferred: requests crossing it
// arrive one tick later (seed simulation-design).
func (m *model) orderPools() {
	deps := make([][]int, len(m.pools)) // pool → nodes whose parent pool feeds it
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.pool < 0 {
			continue
		}
		if src := m.sourcePool(i); src >= 0 && src != nd.pool {
			deps[src] = append(deps[src], i)
		}
	}
	state := make([]uint8, len(m.pools)) // 0 new, 1 on stack, 2 done
	var post []int
	var visit func(p int)
	visit = func(p int) {
		state[p] = 1
		for _, n := range deps[p] {
			q := m.nodes[n].pool
			switch state[q] {
			case 0:
				visit(q)
			case 1:
				m.nodes[n].deferred = true
			}
		}
		state[p] = 2
		post = append(post, p)
	}
	for p := range m.pools {
		if state[p] == 0 && !m.hasFeeder(p, deps) {
			visit(p)
		}
	}
	for p := range m.pools {
		if state[p] == 0 {
			visit(p)
		}
	}
	for a, b := 0, len(post)-1; a < b; a, b = a+1, b-1 {
		post[a], post[b] = post[b], post[a]
	}
	m.order = post
}

func (m *model) hasFeeder(p int, deps [][]int) bool {
	for _, ns := range deps {
		for _, n := range ns {
			if m.nodes[n].pool == p {
				return true
			}
		}
	}
	return false
}

// sourcePool is the pool whose output feeds node n: its parent's (through dispatch nodes),
// the broker's for a queue's consumers, the primary's for a replica's replay.
func (m *model) sourcePool(n int) int {
	nd := &m.nodes[n]
	switch {
	case nd.parent >= 0:
		for p := nd.parent; p >= 0; p = m.nodes[p].parent {
			if m.nodes[p].pool >= 0 {
				return m.nodes[p].pool
			}
		}
	case nd.background && m.comps[nd.comp].kind == KindQueue:
		return m.comps[nd.comp].pools[0]
	case nd.replay:
		return nd.source
	}
	return -1
}

// roundRobinWays is over how many backends a round-robin balancer node deals its requests
// this tick (those with a share, dead ones included when nothing checks health); 0 for any
// other node.
func (m *model) roundRobinWays(nd *node) int {
	if !nd.roundRobin { // set when the route was built: no component or kind to read here
		return 0
	}
	ways := 0
	nodes := m.nodes
	for _, ch := range nd.children {
		if nodes[ch].share > 0 {
			ways++
		}
	}
	return ways
}

// arrivalCV2 is the squared coefficient of variation of the interarrival times of the
// requests reaching node nd: a Poisson stream dealt round-robin over n backends gives each
// every n-th arrival, an Erlang-n stream with ca² = 1/n; anything else is taken as Poisson.
func (nd *node) arrivalCV2() float64 {
	if nd.rrWays > 1 {
		return 1 / float64(nd.rrWays)
	}
	return 1
}
