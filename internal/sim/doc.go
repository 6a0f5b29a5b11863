// Package sim is Backpressure's simulation engine: it pushes a level's traffic through a
// player's component graph tick by tick and reports what every tier did.
//
// It is pure computation. It must never do I/O, read a clock, keep globals that change, or
// need goroutines to run one simulation: the same Design and Config give byte-identical
// Results on every machine. There is no randomness at all; latency distributions are
// computed analytically.
//
// # The model (the written rules)
//
// Every component is one or more pools of workers (a database has one pool per node, a
// queue a broker and a pool of consumers). Capacity is workers ÷ service time (seed
// simple-model: an app server with 6 workers at 15 ms serves 400 req/s).
//
//   - Below saturation a pool is an M/M/c queue, computed exactly (Erlang C through the
//     Erlang-B recursion), so latency stays flat to about 80% utilisation and then climbs
//     steeply. Its loss is that of M/M/c/K with K = workers + waiting places, which is
//     Erlang B (M/M/c/c) for a pool with no waiting room: 6 workers at 15 ms offered 125%
//     lose about a third of their requests, not the fluid fifth.
//   - At and above saturation, or while a backlog remains, a fluid backlog takes over (seed
//     architecture-simulator): it grows by (arrivals − capacity) × tick, drains with spare
//     capacity, each request waits backlog ÷ capacity on top of the stochastic wait (frozen
//     at its value at 98% utilisation), and past the pool's buffer the excess is rejected
//     (503). A pool at 200% with a full buffer rejects half of what reaches it.
//   - Synchronous calls hold the caller's worker: an app worker is busy for its own service
//     time plus the mean response time of its synchronous calls (Little's law). A slow
//     database therefore fills the app tier above it. A hand-off to a queue does not hold.
//     Within a tick this coupling is iterated to a fixed point (at most 5 damped passes).
//   - The components are resolved in topological order of the request routes; an edge that
//     closes a cycle is deferred: what crosses it arrives one tick later.
//
// Requests come in four classes with their own paths (seed simple-model): static files
// (answered by a CDN on a hit, else by the app), reads (cache-aside: app → cache on a hit,
// app → cache → app → database on a miss), synchronous writes (database primary) and
// asynchronous writes (queue, whose workers write to the database later; without a queue
// the app writes synchronously). Balancers split by their algorithm: round-robin evenly,
// least-connections in proportion to capacity, consistent hashing by each backend's share of
// a hash ring with 64 virtual nodes per backend (a documented skew). With health checks a
// balancer routes around failed or unreachable backends once it notices (below). A database
// spreads reads over its primary and replicas in proportion to their spare capacity (or over
// its replicas only, below); every replica replays every write at 40% of its cost and lags
// when it cannot keep up. Only requests whose path crosses a failing component fail.
//
// Balancers, in more detail:
//
//   - Round-robin deals every n-th request to each of n backends, so each backend's stream
//     is more regular than a random split's: Erlang-n interarrivals, ca² = 1/n for a
//     Poisson stream. A pool fed that way waits (ca² + 1)/2 times its Erlang-C wait
//     (Allen–Cunneen; with several feeds, ca² is their mean weighted by rate), so each of
//     two backends waits three quarters of what a random split would give it (every split
//     used to wait as a random one, overstating the queue behind round-robin). One
//     backend, least-connections and consistent hashing stay exact M/M/c (ca² = 1). The
//     dealing counts the backends with a share, a dead one included while it still gets
//     requests.
//   - Health checks notice a dead or cut-off backend after unhealthy_threshold failed
//     checks in a row, health_check_interval_sec apart: interval × threshold after it went
//     down (the worst case of where the first check falls; 10 s by default). Until then
//     its share is still sent to it and fails; in the tick in which the checks notice, in
//     proportion to the part of the tick before. (A balancer used to notice at once, which
//     no balancer does: the requests lost before the checks notice are what their interval
//     and threshold cost.) A backend that comes back gets its share at once. Without
//     health checks a failed backend keeps its share for good.
//
// Read replicas: with read_from "replicas" a database sends its reads to the replicas alone,
// leaving the primary to the writes (as an application that reads from a reader endpoint);
// by default ("spread") the primary takes its share of reads too. A replica may have its own
// instance type (replica_instance_type): its speed sets the replicas' query time and its
// price theirs, so a read-heavy database can have a small primary and large replicas. (Every
// read used to spread over every node of one type, so the common production layout, the
// primary kept for writes, could not be built.)
//
// Latency is a distribution: each hop contributes a fixed part (network, authentication,
// injected latency, backlog wait), its exponential service time and, with the Erlang-C
// probability, an exponential wait; a path is the sum of its hops and the tick's request mix
// is the mixture of its paths weighted by the requests that finished on each. p50, p95 and
// p99 are quantiles of that mixture (see latency.go for the method and its accuracy). Means
// are exact every tick; quantiles are recomputed whenever an input moves by 1% of the
// latency it affects and follow the exact mean in between (latcache.go, complat.go).
//
// Errors compose along a path: each pool fails its share base + utilisation³ × factor of
// what it processes (seed simulation-design), failed nodes fail everything that reaches
// them, rejects fail at once. The client fails requests slower than its timeout, reading the
// share from the path's latency tail, so timeouts rise smoothly. Failed attempts are retried
// up to the client's limit, in the next tick or after an exponential backoff, optionally
// capped by a retry budget; retries are load, so a slow tier can become a retry storm.
//
// Conservation holds per tick and over the run: attempts offered = served + rejected +
// failed + timed out + change in requests queued (backlogs and deferred edges).
//
// Elastic and protective components (seed simulation-design):
//
//   - An API gateway admits at most its rate limit per second (the excess gets 429), adds its
//     authentication latency to every request, and has a circuit breaker: when the error
//     rate of what it sent downstream, averaged over its window, exceeds the threshold, it
//     opens and answers 503 at once for breaker_open_sec, sending nothing downstream; then
//     it lets a probe share through (half-open) and closes if the probes' error rate is
//     back under the threshold, or opens again.
//   - A serverless function runs up to max_concurrency executions and throttles beyond it
//     (Erlang B: no queue). Instances used within the idle timeout stay warm; invocations
//     beyond the warm instances start cold and pay cold_start_ms (exponentially
//     distributed). Executions longer than max_execution_ms are killed (errors). It is
//     priced per invocation and per GB-second.
//   - A container pool's autoscaler wants ceil(replicas × utilisation ÷ target) replicas,
//     within its bounds. New replicas serve only after the scale-out delay; replicas go only
//     after utilisation has stayed low for the scale-in delay. Cost follows the replicas.
//   - A database → database edge is a replication link between two primaries: each replays
//     the other's writes at 40% of their cost. Writes taken on both sides of a cut link
//     diverge: the run reports split-brain.
//
// Chaos events strike on schedule: a node failure stops a component (a queue keeps its
// contents and resumes from the same depth), a traffic spike multiplies ingress, a cache
// flush empties a cache or CDN, which rebuilds its hit ratio over its warm-up, a network
// partition drops everything on one edge (and holds back replication across it), a latency
// injection slows one edge. Every tick lists the events active during it.
//
// Costs come from the catalog: an hourly price per unit plus per-use prices, summed per tick.
//
// The summary reports the first failing tick, writes acknowledged but never stored (a queue
// whose consumers took in more than they could process over the last 80% of the run, or
// whose backlog has not shrunk over the last fifth), replicas whose lag never recovers, and
// the resilience of the system around each chaos event (events.go).
//
// # Why it happened
//
// A failing tick is one in which the attempts that failed — refused (full buffers, rate
// limits, open breakers, throttling, a full queue), failed inside a component (failed nodes,
// cut links, error rates) or timed out at the client — are more than 5% of the attempts
// offered in it, fresh and retries (seed architecture-simulator's failure rule; timeouts are
// how latency fails a client). The summary's "why" timeline explains them (why.go); it used
// to name one bottleneck, the first tier to touch saturation, which named a healthy
// database on a run that failed because an app server was dead, and named one on runs that
// passed. Each failing tick is diagnosed from where its attempts were lost:
//
//   - lost at a failed node: node_failed at that node (with the balancer in front, whether
//     it checks health and whether the checks have noticed yet; once they have, the loss is
//     that of a balancer with no healthy backend left);
//   - sent across a cut link: partition, named by the component cut off; a queue whose
//     workers' link to the database is cut, and which fills up and refuses writes, is a
//     partition too, named by the queue;
//   - refused by a gateway's open or probing breaker: breaker_open; by its rate limit:
//     rate_limited; by a function out of concurrency: throttled;
//   - refused by full buffers, pushed back by a full queue, or timed out: the limiting tier.
//     That is the pool whose demand on its own work is the largest share of its capacity,
//     once that share reaches 98%: demand is what would reach it if no tier above refused
//     anything, and a pool that holds its workers during calls is charged their bare time
//     (service and fixed latency, no queueing below), so an app whose workers wait on a slow
//     database does not hide the database. Below that share, the pool with the longest
//     backlog still to work off is saturated (draining); failing that, refusals name the
//     pool that refused most, and timeouts with no saturated tier are "timeouts" at the
//     slowest hop (an injected latency first, else the pool with the longest mean time). A
//     saturated tier whose workers wait on a call slowed by injected latency says so.
//
// The group with the most lost attempts is the tick's cause (a saturated tier still
// draining, and a failure the checks have noticed, count apart), if it lost at least 1% of
// the tick's attempts: requests of a class the design has no route for at all, and losses
// that are all load-dependent error rates, are no cause of this list, and such a tick is
// left out rather than put down to a tier that is not to blame. Ticks with the same cause
// at the same component, less than a second apart, form one stretch; a stretch shorter
// than a second right after another is folded into it (never into a later one: no cause
// starts before its first tick), and the stretch takes the cause of most of its ticks, so
// a flickering cause does not shred the timeline. Each stretch has its start and end, the cause, the component,
// what was measured (demand and capacity in req/s for saturation, the share of attempts
// lost for a failed node or cut link...), an advice, and the retry amplification: attempts
// offered ÷ fresh requests over its failing ticks (≥ 1). Structural failures are listed
// with them, in order of time: a queue that lost acknowledged writes (lost_writes, from
// when its backlog last stood empty) and replicas that never catch up (replication_lag,
// from when their lag last stood at zero), both until the end. At most 32 entries are
// listed. A run with no failing tick and no structural failure has an empty timeline, and
// an evaluated run that passes shows none; Busiest names the component with the highest
// peak utilisation either way.
package sim
