package sim

// InstanceType is one priced option of the catalog. Prices are per hour of simulated time
// (a month is 730 hours) plus, for pay-per-use services, per million requests handled.
type InstanceType struct {
	Kind Kind `json:"kind"`
	// PricePerHour is charged per unit: per balancer or gateway instance, per app or pool
	// replica, per database node (primary and each replica), per cache or queue, per CDN.
	PricePerHour float64 `json:"price_per_hour"`
	// PricePerMillion is charged per million requests the component handles (CDN, queue,
	// gateway, serverless invocations).
	PricePerMillion float64 `json:"price_per_million,omitempty"`
	// PricePerMillionProbes prices a balancer's health checks: a probe of each backend
	// (each component it calls) every health_check_interval_sec while health_checks is on.
	PricePerMillionProbes float64 `json:"price_per_million_probes,omitempty"`
	// PricePerWorkerHour prices each queue consumer.
	PricePerWorkerHour float64 `json:"price_per_worker_hour,omitempty"`
	// PricePerGBSecond prices serverless execution time by memory.
	PricePerGBSecond float64 `json:"price_per_gb_second,omitempty"`
	// Speed divides service times: a type twice as fast halves them (1 = reference).
	Speed float64 `json:"speed,omitempty"`
	// CapacityRPS is the throughput of one unit of a fixed-capacity kind (balancer, gateway,
	// cache, CDN, queue broker). Its waiting room is BufferPerUnit.
	CapacityRPS   float64 `json:"capacity_rps,omitempty"`
	BufferPerUnit int     `json:"buffer_per_unit,omitempty"`
	// MemoryGB is the memory of a cache node unless the design sets memory_gb.
	MemoryGB float64 `json:"memory_gb,omitempty"`
	// BaseErrorRate and LoadErrorFactor give the component's own error rate:
	// base + utilisation³ × factor (seed simulation-design).
	BaseErrorRate   float64 `json:"base_error_rate,omitempty"`
	LoadErrorFactor float64 `json:"load_error_factor,omitempty"`
	Default         bool    `json:"default,omitempty"` // the type used when a component names none
}

// Catalog maps instance type names to their terms.
type Catalog map[string]InstanceType

const hoursPerMonth = 730

// DefaultCatalog is the documented price list used when a level brings none. Monthly prices
// follow seed simple-model (app server $40, database node $120, cache $30, balancer $20,
// queue $25, CDN $15). Per-request prices are set against the app server, which serves
// about a billion requests a month for $40 (4¢ a million): a CDN edge hit costs half a cent
// a million and a queue or gateway message 2¢, so that each pays off where it should.
// Serverless keeps the public platforms' prices ($0.20 a million and $0.0000166667 a
// GB-second), which make it dear at steady load and cheap when idle. A balancer's health
// check costs 25¢ a million probes, one probe per backend per interval: checking two
// backends every 5 s (the default) costs $0.00036 an hour, every 0.1 s (the shortest)
// $0.018, a third of an app server, so that checking faster is a choice with a price: on
// Lose a node and Black Friday the best interval lies between 0.1 s and 0.5 s.
func DefaultCatalog() Catalog {
	return Catalog{
		"lb.standard": {Kind: KindLoadBalancer, PricePerHour: 20.0 / hoursPerMonth, PricePerMillionProbes: 0.25,
			CapacityRPS: 2000, BufferPerUnit: 500, Speed: 1, Default: true},
		"gateway.standard": {Kind: KindAPIGateway, PricePerHour: 25.0 / hoursPerMonth, PricePerMillion: 0.02, CapacityRPS: 5000,
			BufferPerUnit: 1000, Speed: 1, LoadErrorFactor: 0.001, Default: true},
		"app.small": {Kind: KindAppService, PricePerHour: 40.0 / hoursPerMonth, Speed: 1, LoadErrorFactor: 0.001, Default: true},
		"app.large": {Kind: KindAppService, PricePerHour: 80.0 / hoursPerMonth, Speed: 2, LoadErrorFactor: 0.001},
		"pool.small": {Kind: KindContainerPool, PricePerHour: 40.0 / hoursPerMonth, Speed: 1, LoadErrorFactor: 0.001,
			Default: true},
		"function.standard": {Kind: KindServerless, PricePerMillion: 0.20, PricePerGBSecond: 0.0000166667, Speed: 1,
			Default: true},
		"cache.small": {Kind: KindCache, PricePerHour: 30.0 / hoursPerMonth, CapacityRPS: 20000, BufferPerUnit: 5000,
			MemoryGB: 1, Speed: 1, Default: true},
		"cache.large": {Kind: KindCache, PricePerHour: 90.0 / hoursPerMonth, CapacityRPS: 50000, BufferPerUnit: 5000,
			MemoryGB: 8, Speed: 1},
		"cdn.standard": {Kind: KindCDN, PricePerHour: 15.0 / hoursPerMonth, PricePerMillion: 0.005, CapacityRPS: 1e6,
			BufferPerUnit: 0, Speed: 1, Default: true},
		"db.standard": {Kind: KindDatabase, PricePerHour: 120.0 / hoursPerMonth, Speed: 1, LoadErrorFactor: 0.001,
			Default: true},
		"db.large": {Kind: KindDatabase, PricePerHour: 240.0 / hoursPerMonth, Speed: 2, LoadErrorFactor: 0.001},
		"queue.standard": {Kind: KindQueue, PricePerHour: 25.0 / hoursPerMonth, PricePerMillion: 0.02,
			PricePerWorkerHour: 10.0 / hoursPerMonth, CapacityRPS: 30000, Speed: 1, Default: true},
	}
}

// fixedCapacity kinds take their throughput from the catalog (CapacityRPS) rather than
// from workers and service times.
func fixedCapacity(k Kind) bool {
	return k == KindLoadBalancer || k == KindAPIGateway || k == KindCache || k == KindCDN || k == KindQueue
}
