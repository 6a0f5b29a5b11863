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
// Every component is one or more pools of workers (a database has one pool per node, a queue a
// broker and a pool of consumers). Capacity is workers ÷ service time (seed simple-model: an
// app server with 6 workers at 15 ms serves 400 req/s; TestSimpleModelCapacities). An app's
// (or a container pool's) replicas each have their own workers (concurrency) and their own
// waiting room (queue_per_replica places, 64 by default as in seed architecture-simulator),
// and are dealt requests in turn, as the per-request reference deals them: below saturation
// each replica is its own queue of its workers and places, fed every replicas-th arrival. A
// replica's waiting cannot be lent to another's idle workers, so four replicas of 2 workers at
// 10 ms offered 95% wait a mean of 64 ms, twice what one pooled room of their 8 workers would,
// and refuse where it would not (TestReplicaRoomsMatchTheReference). Above saturation the
// fluid backlog (below) is kept for the tier as a whole, as the rooms of replicas fed in turn
// fill alike; its spread is each room's (below).
//
//   - Below saturation a pool (each of its rooms) is an M/M/c/K queue with K = workers +
//     waiting places, computed exactly up to 98% utilisation (roomQueue in erlang.go, from the
//     Erlang-B recursion), so latency stays flat to about 80% and then climbs steeply. Its
//     chance to wait, its mean wait and its loss are M/M/c/K's; the wait is taken as an
//     exponential with that chance and that mean. With no waiting room that is Erlang B
//     (M/M/c/c): 6 workers at 15 ms offered 125% lose about a third of their requests, not the
//     fluid fifth; with an unbounded one, M/M/c (Erlang C). Rooms with no place fed a regular
//     stream (dealt in turn, below) lose what GI/M/c/c loses, at any load (regularLoss in
//     erlang.go, Takács's formula for gamma-distributed interarrival times): three rooms of 6
//     workers dealt in turn 90% of their capacity lose 17.4%, as the reference's do, where
//     Poisson-fed rooms would lose 22.2% and one pooled room of 18 workers 11.7%. The wait is
//     the finite room's, not an unbounded one's: two replicas of 4 workers with 16 places at
//     97% wait 52 ms, as the reference's do. Exact formulas: TestRoomQueueIsMMcKStateByState,
//     TestRegularLossIsGIMccStateByState, TestNoWaitingRoomLosesAsErlangB.
//   - That queue is carried from tick to tick, not taken at once: the mean wait a room's queue
//     has built (stochasticQueue in engine.go) is at most the stationary one, and from where
//     it stood at the last tick it grows as a reflected random walk's mean grows from empty,
//     s√(2t/π) requests (s² = λ·ca² + c·μ·cs² a second, cs² of the workers' busy time, below)
//     drained at c·μ, or falls towards it: not at the whole spare capacity, for in the runs
//     whose queue has emptied workers idle as they would at the stationary state, but at the
//     spare capacity's share u ÷ (u + B) for an excess wait u (drainTowards in engine.go).
//     That drains a large excess as a fluid and a small one at the rate a reflected random
//     walk of the room's queue settles at, its spectral gap δ² ÷ 2s² + π²s² ÷ 2K² for a
//     drift δ (the spare capacity) and K places (room.settling): an unbounded queue settles
//     slowly as its load nears capacity, a room of a few places within a moment. Four
//     replicas of 8 workers at 50 ms with 64 places each, held at their capacity for 2 s,
//     then offered 92% or 85%, wait 1.13 and 1.06 times as long above their settled mean
//     over the next 4 s as the reference's, where draining at the whole spare capacity they
//     waited 0.25 and 0.31 times as long (TestStochasticQueueDrainsAsTheReference). The chance
//     to wait stays the stationary one, and the room refuses in proportion to how near its
//     queue stands to the stationary one. Workers held mostly by a fixed delay depart nearly
//     in step, so a tier a slow network call pushes just past saturation builds the fluid
//     backlog's wait with little spread beside it: 3 s into Slow neighbour's 42 ms delay its
//     solution's p99 reads 450 ms against the reference's 435 ms (10 seeds); with exponential
//     departures the stochastic wait grew twice as fast and its tail read 807 ms. A run starts
//     in the middle of a day whose traffic has been flowing, so a pool below saturation in its
//     first tick stands at its stationary state there (a constant load's first tick is its
//     last, exactly M/M/c/K); a pool its first tick overloads has no such state and starts
//     empty, as the per-request reference's do. A real queue reaches its stationary state over
//     seconds after a step: four replicas of 8 workers at 50 ms stepped from 50% to 97% wait
//     100 ms in the step's first second and their stationary 146 ms within about three
//     (TestStochasticQueueStartsAsTheReference).
//   - At and above saturation, or while a queue remains, a fluid queue takes over (seed
//     architecture-simulator): it grows by (arrivals − capacity) × tick, drains with spare
//     capacity, first in first out, and past the pool's buffer the excess is rejected (503). A
//     pool at 200% with a full buffer rejects half of what reaches it. The queue is kept by
//     age: one cohort per tick of arrival (backlog.go), so the engine knows how long every
//     waiting request has waited, and the wait of what a pool serves is measured on the
//     cohorts it serves. A cohort's age is its place in the ring (j ticks since it joined),
//     and the times it carries are offsets from it (how old its attempts already were when
//     they joined), never times on the clock, so a queue standing steady is the same state
//     from one tick to the next. Absolute times would round differently in the last bits each
//     tick, and tick reuse (below) could never repeat a standing queue (TestSameStateByAge,
//     TestQueuedReuseIsExact).
//   - One wait, not two. A pool with a queue waits the larger of its queue's wait w and its
//     stochastic wait S (which stops growing at its 98% value, also below saturation):
//     max(w, S), which for an exponential S is w plus, with probability C·e^(−θw), the same
//     exponential. The whole wait is at most what the waiting room holds ÷ capacity. Below 98%
//     with no queue the wait is the exact M/M/c one; the wait grows continuously and
//     monotonically through saturation. Adding the two would count the same queue twice and
//     time attempts out before anyone could have waited the timeout
//     (TestOneWaitBoundedByTheWaitingRoomAndMonotoneThroughSaturation).
//   - The queue's wait is spread. The work a pool serves waited w behind its backlog on
//     average, not each request alike: behind n requests drained at rate R by exponential
//     workers a wait is the time of n departures, Erlang(n, R), of variance w ÷ R. A worker
//     held through calls is busy for its service S plus its hold H, and over a long wait the
//     departures of many such workers vary by the busy time's squared coefficient of
//     variation, cs² = (S² + Var H) ÷ (S + H)², of that. The hold varies as its calls do:
//     each hop below adds its exponential service's and wait's variance and its backlog's
//     spread, a fixed delay (an injected latency) nothing, and a split mixes its routes
//     (holdVar, taken with the hold and moved only past the hold's tolerance, so that a
//     standing queue stands still bit for bit). So a worker held 65 ms by 15 ms of its own work, an
//     8 ms read and a 42 ms slower network varies by 0.068, not the 0.645 of a hold taken as
//     exponential (TestHeldBusyTimeVariesAsItsCall), and an app of 5 × 6 such workers with
//     32 places each, offered 480 or 500 rps while the delay lasts, has a p99 of 463 and 458
//     ms against the reference's 422 and 434, where with the hold taken as exponential it
//     read 689 and 553 (the slow network call rows of TestOverloadScenarios). Replicas with a room
//     each (an app's or a container pool's, dealt requests in turn) drain theirs at R ÷
//     replicas, so their waits vary that many times more than one pooled room's would. A hop
//     carries the variance as a shifted Erlang of 8 phases with the wait's mean, which the
//     phase-type sums of latency.go take exactly; under one request's worth of backlog there
//     is none. Where the spread meets the client timeout, part of what is answered times out,
//     so a standing queue's timeouts rise over the spread rather than all at once as its mean
//     wait crosses the timeout: a flushed cache's herd, queued about 0.9 s in the app against
//     a 1 s timeout, fails 0.29 of its attempts, as the reference's does
//     (TestOverloadScenarios, TestTimeoutsRiseSmoothly). Behind a full replica room the
//     reference's wait varies by 0.40 of w ÷ R per room for the seed's default, 0.56 for the
//     held chain of the overload table and about 0.65 after the flush, where the rule says
//     0.38, 0.43, 0.43 (TestReferenceReplicaRoomSpreadsAsItsStreams).
//   - Synchronous calls hold the caller's worker: an app worker is busy for its own service
//     time plus the mean response time of its synchronous calls (Little's law). A slow
//     database therefore fills the app tier above it. A hand-off to a queue does not hold
//     (TestSynchronousCallsHoldTheCallersWorkers, TestAsyncHandOffDoesNotHoldTheCaller). A
//     held call waits what a call made now waits: the callee's queue as it is this tick (its
//     content ÷ capacity, Little's law), not what the work it serves now waited when it joined
//     ticks ago; that delay would feed back late and make the queue swing. Within a tick this
//     coupling is solved: the response r(h) of a pool's calls falls as its hold h grows, so
//     r(h) = h has one solution, which each tick brackets and closes in on to 0.1%
//     (holdtime.go, at most 24 passes). Near a callee's saturation anything short of the
//     solution makes a tier under constant load swing from tick to tick
//     (TestSaturatedDesignsSettleAtConstantLoad).
//   - When a delay injected on a link ends, the calls already under way through it still
//     take it (inflight.go). The last tick the delay acts in notes the workers a pool's calls
//     through delayed links hold (the calls a second times how long one takes) and that
//     length L, and is never reused, so the note is taken; from the tick the delay ends, the share of them still held s seconds later is
//     1 − s ÷ L, their calls returning evenly, and the pool serves new work at the new speed
//     with the workers that are back. Over the 200 ms after a 200 ms delay ends, an app of
//     32 workers behind it finishes 248 requests where the reference's finishes 203; taking
//     every worker back at once, 396 (TestHeldWorkersComeBackAsTheirCallsReturn).
//   - Held calls are a closed loop (closedloop.go). A worker waiting on its call cannot send
//     another, so a pool reached only by held calls never holds more of them than its callers
//     have workers (N, the workers of the nearest holding pool above each of its routes). It
//     is a finite-source queue of N sources instead of an open M/M/c: each source not in the
//     pool sends at rate γ = λ ÷ (N − L), L being the callers' workers in the pool as their
//     holds say (a balancer or cache on the way holds a call only for its own time), and its
//     occupancy, wait and loss are the product form's. A saturated caller sends W ÷ (own
//     service + hold), and γ is then 1 ÷ own service whatever the hold: the exact closed
//     system of W workers alternating between their own work and the call, solved by the
//     hold-time regula falsi itself rather than by a second iteration beside it (read from the
//     arrival rate alone, the closed state would be ill-conditioned near saturation, its waits
//     from a third full to all but full within the last thousandth of capacity). Its wait is
//     at most (N − c) ÷ capacity, and a callee whose waiting room holds every held worker
//     refuses nothing. An open stream would keep arriving while the callers that wait cannot
//     send: 10 queue consumers of 5 ms on a database of 4 × 5 ms store 775 writes/s
//     (TestHeldConsumersAreAClosedLoop, TestFiniteSourceMatchesProductForm,
//     TestClosedLoopRoomForEveryHeldWorker). A pool that also takes work no held worker waits
//     for (from an ingress, a gateway, a queue's buffer, replication) stays an open M/M/c
//     queue, and so does one the open queue would almost never fill to N (below a 10⁻⁷
//     chance), where the two agree; a closed pool sent clearly more than its capacity (a cache
//     flush's misses, a spike) is the fluid queue that fills, its wait within that bound.
//   - The components are resolved in topological order of the request routes; an edge that
//     closes a cycle is deferred: what crosses it arrives one tick later
//     (TestCycleIsBrokenAtADeferredEdgeAndConserves).
//
// Requests come in four classes with their own paths (seed simple-model): static files
// (answered by a CDN on a hit, else by the app), reads (cache-aside: app → cache on a hit, app
// → cache → app → database on a miss), synchronous writes (database primary) and asynchronous
// writes (queue, whose workers write to the database later; without a queue the app writes
// synchronously). A service with no database of its own passes its reads and writes on to the
// services it calls, holding its worker through the call (the app-calling-an-app rows of
// TestOverloadScenarios; the CDN rows hold a CDN's purge). Balancers split by their algorithm: round-robin evenly, least-connections so
// that the backends' outstanding requests are level (below), consistent hashing by each backend's share of a hash ring with 64
// virtual nodes per backend (a documented skew). With health checks a balancer routes around
// failed or unreachable backends once it notices (below). A database spreads reads over its
// primary and replicas in proportion to their spare capacity (or over its replicas only,
// below); every replica replays every write at 40% of its cost and lags when it cannot keep
// up. Only requests whose path crosses a failing component fail
// (TestRequestClassesFollowTheirPaths, TestOnlyPathsThroughAFailedComponentFail).
//
// Balancers, in more detail:
//
//   - Round-robin deals every n-th request to each of n backends, so each backend's stream is
//     more regular than a random split's: Erlang-n interarrivals, ca² = 1/n for a Poisson
//     stream (with several feeds, ca² is their mean weighted by rate, ghost work included),
//     and a replica's room, dealt every replicas-th of that, has ca² ÷ replicas. A queue fed a
//     regular stream is a GI/M/c queue: the chance that each further place is taken falls by σ
//     rather than by ρ = λ ÷ cμ, and in heavy traffic 1 − σ = 2(1 − ρ) ÷ (ca² + 1) (0 where
//     that would be negative, far from saturation). The engine takes the M/M/c/K queue with σ
//     for ρ over the places: its chance to wait, its mean wait (whose conditional part decays
//     at c·μ·(1 − σ), GI/M/c's rate) and its refusals. Round-robin over 2, 3 and 4 backends of
//     6 workers at 15 ms offered 80% gives means of 19.917, 19.438 and 19.526 ms against the
//     reference's 19.920, 19.440 and 19.586 (TestRoundRobinWaitsAsTheReference). The σ carries
//     the regularity into the tail and the refusals as well, which a factor on the chance to
//     wait alone would not: four replicas of 2 workers at 10 ms offered 95% have a p99 of 284
//     ms against the reference's 265 ms, and each room refuses 0.034% against its 0.018%
//     (TestReplicaRoomsMatchTheReference). The queue's own wait w, measured on its cohorts, is
//     what it is; σ shapes the stochastic wait S before the one wait (above) takes max(w, S).
//     One backend, least-connections and consistent hashing stay exact (ca² = 1). The dealing
//     counts the backends with a share, a dead one included while it still gets requests.
//   - Least-connections sends each request to the backend with the fewest requests
//     outstanding, so it keeps their outstanding counts level, not their utilisation
//     (outstanding.go). By Little's law a backend with L outstanding whose requests stay T
//     in it (own service, the calls its worker is held through, a fixed latency and the
//     link's injected delay, as the tick has them) answers L ÷ T a second up to its
//     capacity; the engine finds the common level L at which these sum to what the balancer
//     passes on. Below saturation the shares go as 1 ÷ T whatever a backend's size: over a
//     fast backend of 12 workers at 10 ms and a slow one of 6 at 20 ms, the slow one draws a
//     third at 600 rps, not the fifth its capacity is, and at 1,200 rps it runs full with 3
//     requests waiting while the fast one takes the other 900 (TestBalancerSplits,
//     TestLeastConnectionsLevelsOutstanding; the reference's slow backend draws 0.33 and
//     0.25 in the least-connections rows of TestOverloadScenarios). A backend the level
//     saturates waits in a room of L − capacity × T places, the balancer sending it nothing
//     more while it holds more than the others. When the balancer passes on more than every
//     capacity, the shares are by capacity. A backend that answers at once, dead or behind a
//     cut link, never has a request outstanding: it draws every request (shared with any
//     other such) until the health checks take it out, and for good without them.
//   - Health checks probe every backend every health_check_interval_sec at a phase of their
//     own, which nothing in a design fixes, and take it out after unhealthy_threshold failed
//     probes in a row; one passing probe lets it back in. The engine takes the expectation
//     over a uniformly random phase (health.go): a dead or cut-off backend is noticed
//     (threshold − 1) × interval to threshold × interval after it went down (5 to 10 s by
//     default), so its share is still sent to it in full until the first and then falls
//     linearly to none over the last interval; the split in between is the expected split over
//     the phases (each backend's checks independent), a share that reaches no backend failing
//     at the balancer. A repaired backend returns at its next passing probe: the phases that
//     had taken it out let it back in over its next interval. Any one fixed phase would lose
//     more or fewer requests than a real probe schedule does on average
//     (TestHealthChecksNoticeOverTheLastInterval, TestHealthChecksShortFailures,
//     TestReferenceHealthCheckedFailoverAsWorkedByHand). Without health checks a failed
//     backend keeps its share for good. Ghost work (below) is dealt by the same rule as live
//     work: to a dead backend until the checks notice, where it vanishes unseen, around it
//     after, and in turn with live work behind round-robin
//     (TestGhostWorkFollowsHealthChecksAndRoundRobin).
//
// Read replicas: with read_from "replicas" a database sends its reads to the replicas alone,
// leaving the primary to the writes (as an application that reads from a reader endpoint); by
// default ("spread") the primary takes its share of reads too. A replica may have its own
// instance type (replica_instance_type): its speed sets the replicas' query time and its price
// theirs, so a read-heavy database can have a small primary and large replicas: the common
// production layout, the primary kept for writes (TestReadsFromReplicasOnly,
// TestReplicaWithItsOwnInstanceType; the read-replica rows of TestOverloadScenarios hold
// the served share, and list the p99 as a known gap with its reason).
//
// Latency is a distribution: each hop contributes a fixed part (network, authentication,
// injected latency, the queue's wait less its spread), the spread's phases, its exponential
// service time and, with what is left of the Erlang-C probability after the one wait (above),
// an exponential wait; a path is the sum of its hops and the tick's request mix is the mixture
// of its paths weighted by the requests that finished on each. p50, p95 and p99 are quantiles
// of that mixture (see latency.go for the method and its accuracy). Means are exact every
// tick; quantiles are recomputed whenever an input moves by 1% of the latency it affects (a
// hop whose backlog's wait is spread, by a tenth of the spread's standard deviation, its
// spread held by the part it adds to the 99th percentile, about twice what it adds to the
// mean) and follow the exact mean in between (latcache.go, complat.go;
// TestLatencyMultiStageVsMonteCarlo, TestComponentLatencyTracksExact).
//
// The reported p50, p95 and p99 (per tick, per run, of the system and of each component) are
// over the attempts answered within the client's timeout: the mixture's quantiles at p ×
// (share within the timeout). A timed-out attempt is an error, not a latency, so no
// successful-latency quantile exceeds the timeout; a tick in which nobody was answered in time
// reports the timeout itself (everyone waited that long for nothing). The mean is over all
// answers. The SLA rules read these numbers unchanged (TestNoSuccessfulLatencyAboveTheTimeout,
// TestSuccessfulLatencyNeverExceedsTheClientTimeout).
//
// Errors compose along a path: each pool fails its share base + utilisation³ × factor of what
// it processes (seed simulation-design), failed nodes fail everything that reaches them,
// rejects fail at once. Client deadlines: an attempt still waiting in a queue when its
// client's timeout passes (its age, the time since the client sent it, read from its cohort)
// times out in that tick, and its retry is sent from that tick plus the backoff. The server
// does not know: the work stays queued as a ghost, is served in its turn and makes its calls
// below, using capacity for nobody (late completions: LateRPS per component, Late per
// component over the run, LateCompletions in the summary). An attempt answered but slower than
// the timeout (the stochastic tail of its path, read from the path's distribution) times out
// when it is answered, so timeouts rise smoothly. Failed attempts are retried up to the
// client's limit, in the next tick or after an exponential backoff (a whole number of ticks,
// at least one), optionally capped by a retry budget. A client with no backoff sends its
// retry the instant its attempt fails. Where a pool refused it that the request cannot route
// around, reached through nothing that takes time (through balancers and gateways that
// forward to one backend), and the pool has one room (a throttled function, a gateway's
// empty bucket or open breaker, a single waiting room, a balancer at capacity), the retry
// finds it as full and is refused too, and so is every retry after it: the request makes all
// its attempts and fails for good within the tick (atonce.go). A gateway those retries pass
// sees them as the per-request one does: its breaker's window counts them among its failed
// requests, and its price per million requests is charged for them. An attempt that fails the
// instant it arrives whatever the load (at a crashed component, across a cut link) is
// retried within its tick too, dealt like any attempt of its type, so behind a balancer
// still dealing to a crashed backend the retry may be served by another in that same tick:
// with a share f of its type meeting the failure, an attempt with r retries left makes
// 1 + f + … + f^r attempts in the tick, and the tick is solved with them (failedatonce.go).
// Other failures' retries with no backoff come in the next tick, though a client sends them
// at once (BENCHMARKS.md, "A full room's refusals retried at once"): whether a refusal or a
// timeout meets the retry too depends on how long the failure's spell lasts, which the
// tick's state does not say. A half-open breaker's refusals are among them, since it lets a
// share of the retries through as probes. Retries are load, so a slow tier can become a
// retry storm, and since a queue's cohorts time out together, a storm comes in bursts of
// more than 1 + max_retries attempts per fresh request. A client retries the request it
// sent: a tick's losses are counted by request type, and each type's come back as that
// type, by generation in the shares its attempts arrived in, so a full queue's refused
// enqueues come back as enqueues, refused again, and not as reads that would succeed.
// (Which retry an expiring attempt was is read from the generation mix of its type in the
// tick it expires in, not tracked per cohort; a ring keeps at most 256 ticks of cohorts,
// beyond which a longer timeout expires the older work all at once. Retries are counted in
// 2⁻²⁰ths of a request, so that a retry loop standing still comes back bit for bit and its
// ticks are repeated.) Held by TestAttemptsTimeOutAtTheirDeadlineWhileTheWorkStaysQueued,
// TestRetriesLeaveAtTheDeadlinePlusBackoff, TestRetryStormBurstsAboveOnePlusMaxRetries,
// TestRetriesKeepTheirRequestType, TestRetriesSentAtOnceAreRefusedAtOnce,
// TestRefusedAgainOnlyWhereTheRouteLeadsBack, TestRetriesOfAttemptsFailedAtOnceComeInTheirTick.
//
// Conservation holds per tick and over the run (TestConservation): attempts offered = served +
// rejected + failed + timed out + change in attempts queued (live work in queues and on
// deferred edges; ghost work has already timed out).
//
// Elastic and protective components (seed simulation-design):
//
//   - An API gateway's rate limit is a token bucket, as a real gateway's is (a rate and a
//     burst): refilled at the rate, holding at most one second's tokens, full at the start.
//     A tick lets in at most what the bucket holds plus what it refills over the tick, and
//     the excess gets 429 at once; so a spike after a quiet spell passes up to a second's
//     worth above the rate before the limit bites, and what lies behind the gateway must
//     take that burst, as it must in front of the per-request reference's bucket
//     (TestGatewayRateLimitIsATokenBucket, worked by hand; the rate-limit rows of
//     TestOverloadScenarios). A bucket standing full or empty is the same from tick to tick,
//     and a repeated tick spends what the tick it repeats let in. The gateway adds its
//     authentication latency to every request, and has a circuit breaker: when the error rate
//     of what it sent downstream, averaged over its window, exceeds the threshold, it opens
//     and answers 503 at once for breaker_open_sec, sending nothing downstream; then it lets
//     one request in every 1 ÷ breaker_probe_ratio through as a probe (half-open), and the
//     first probe to be judged decides: answered, the breaker closes with an empty window;
//     failed, it opens again. A breaker changes state at times within a tick (elastic.go),
//     and a tick lets in of its requests the share its states allow, each for the part of
//     the tick it holds: open none, half-open the probe share, closed all.
//   - A probe is judged when its answer comes. The first goes when the door's requests have
//     made up a whole probe; as the queues below stand when it goes, it fails at once if
//     more than the threshold of what is sent then is refused or fails at once, times out at
//     the client's deadline if a request sent then would take longer (each hop's wait for a
//     call arriving now, as a held call's), and is otherwise answered after that time. A
//     probe still waiting is ahead of anything sent later, so it is answered by the time a
//     request sent at a later tick's start would be (a slow call that is fast again answers
//     it sooner), and a later probe refused at once is judged before it. So a breaker open
//     for 1 s over a dead app cycles every 1 s and a few milliseconds, as the per-request one
//     does, not every whole tick after it.
//   - A closed breaker's window counts only the answers to requests sent since its last
//     change of state: what fails at once from then, timeouts from a client timeout after,
//     answers from their mean response time after. It opens on at least one failed request,
//     so the first failures after it closes, before any answer has come back to weigh them,
//     do not open it again; and it opens where, within the tick, the tick's answers coming
//     in evenly as the oldest pair of its window goes out take the failed share over the
//     threshold (the tick's own requests have been let in by the state at its start)
//     (TestGatewayRateLimitRejectsTheExcess,
//     TestCircuitBreakerOpensOnFailingDownstreamAndClosesAfterRecovery,
//     TestBreakerProbesAreJudgedWhenTheyAnswer, and the breaker rows of TestOverloadScenarios).
//   - A serverless function runs up to max_concurrency executions and throttles beyond it
//     (Erlang B: no queue). Instances used within the idle timeout stay warm and are reused;
//     an invocation beyond what the ready instances serve starts a new instance and pays
//     cold_start_ms (exponentially distributed). As on the public platforms, a cold start
//     counts against the concurrency: the new instance holds its slot for the cold start and
//     its first execution, and while it starts every further invocation the ready instances
//     cannot take starts another, until the slots run out. So a spike fills the slots with
//     cold starts and throttles until they are ready: the tick is taken piece by piece
//     between the times the starting instances come free, each piece a loss system on the
//     slots they do not hold (loss is convex in the slots: their mean would refuse too
//     little). Executions longer than max_execution_ms are killed (errors). It is priced per
//     invocation and per GB-second (TestServerlessColdStartsExecutionLimitAndPrice,
//     TestServerlessColdStartsHoldTheirSlots worked by hand; the function rows of
//     TestOverloadScenarios hold its throttling, stepped and started cold, against the
//     reference's).
//   - A container pool's autoscaler wants ceil(replicas × utilisation ÷ target) replicas,
//     within its bounds, reading the busy share of its workers over the last second as a
//     real autoscaler reads its replicas' CPU over a window: a saturated pool reads 100%,
//     not the demand it refuses, so it grows by at most 1 ÷ target a scale-out delay (two
//     replicas offered four times their capacity at a 60% target grow to 4 in one delay,
//     then to 7), as the per-request reference's does
//     (TestAutoscalerSaturatesDuringScaleOutThenRecovers, the autoscaled rows of
//     TestOverloadScenarios). Its reading takes in a step over that second, so the wish
//     right after a step still holds some of the second before it. Ordered replicas serve
//     only after the scale-out delay, each order its own: replicas ordered while others
//     start do not join them sooner
//     (TestAutoscalerReadsTheLastSecondAndServesEachOrderInTurn). Replicas go only after
//     utilisation has stayed low for the scale-in delay. Cost follows the replicas. A run
//     starts in the middle of a day whose traffic has been flowing, so until the autoscaler
//     has settled on the run's first traffic its decisions take effect at once (within the
//     first ticks, inside the warm-up the conditions skip). A pool started at min_replicas
//     would spend its first scale-out delay overloaded and end with more replicas than one
//     started at the need (TestAutoscalerStartsScaledForTheFirstTraffic).
//   - A database → database edge is a replication link between two primaries: each replays the
//     other's writes at 40% of their cost. Writes taken on both sides of a cut link diverge:
//     the run reports split-brain (TestNetworkPartitionDropsTheEdgeAndReportsSplitBrain).
//
// Chaos events strike on schedule: a node failure stops a component (a queue keeps its
// contents and resumes from the same depth), a traffic spike multiplies ingress, a cache
// flush empties a cache or CDN, which rebuilds its hit ratio over its warm-up, a network
// partition drops everything on one edge (and holds back replication across it), a latency
// injection slows one edge. Every tick lists the events active during it.
//
// Costs come from the catalog: an hourly price per unit plus per-use prices, summed per tick
// (TestCostsFollowTheCatalog). A balancer's health checks are a per-use price: one probe of
// each backend it calls every health_check_interval_sec while health_checks is on
// (ProbeCostPerHour), so that checking more often costs more (TestHealthChecksCost).
//
// The summary reports the first failing tick, writes acknowledged but never stored (a queue
// whose consumers took in more than they could process over the last 80% of the run, or whose
// backlog has not shrunk over the last fifth), replicas whose lag never recovers, and the
// resilience of the system around each chaos event (events.go;
// TestQueueThatOutrunsTheDatabaseLosesAcknowledgedWrites).
//
// # Why it happened
//
// A failing tick is one in which the attempts that failed — refused (full buffers, rate
// limits, open breakers, throttling, a full queue), failed inside a component (failed nodes,
// cut links, error rates) or timed out at the client — are more than 5% of the attempts
// offered in it, fresh and retries (seed architecture-simulator's failure rule; timeouts are
// how latency fails a client). The summary's "why" timeline explains them (why.go). A single
// bottleneck, the first tier to touch saturation, would name a healthy database on a run that
// failed because an app server was dead, and one on runs that pass; so each failing tick is
// diagnosed from where its attempts were lost (TestWhyNamesTheCause,
// TestWhyStretchFollowsTheFailure, TestWhyIsEmptyOnAPassingRun):
//
//   - lost at a failed node: node_failed at that node (with the balancer in front, whether
//     it checks health and whether the checks have noticed yet; once they have, the loss is
//     that of a balancer with no healthy backend left);
//   - sent across a cut link: partition, named by the component cut off; a queue whose
//     workers' link to the database is cut, and which fills up and refuses writes, is a
//     partition too, named by the queue;
//   - refused by a gateway's open or probing breaker: breaker_open; by its rate limit:
//     rate_limited; by a function out of concurrency: throttled;
//   - a request class with nowhere to go from a component (an app with no database for its
//     writes, a CDN with no origin for its misses, a balancer with nothing behind it):
//     no_route at that component, with the classes it could not pass on;
//   - refused by full buffers, pushed back by a full queue, or timed out: the limiting tier.
//     That is the pool whose demand on its own work is the largest share of its capacity,
//     once that share reaches 98%: demand is what would reach it if no tier above refused
//     anything, and a pool that holds its workers during calls is charged their bare time
//     (service and fixed latency, no queueing below), so an app whose workers wait on a slow
//     database does not hide the database. Below that share, the pool with the longest
//     backlog still to work off is saturated (draining); failing that, refusals (and
//     timeouts in a queue) name the pool that lost most, and late answers with no
//     saturated tier are "timeouts" at the slowest hop (an injected latency first, else
//     the pool with the longest mean time). A saturated tier whose workers wait on a call
//     slowed by injected latency says so.
//     An attempt whose deadline passed while it waited in a queue was lost at that queue's
//     pool and counts there, as a refusal does; an attempt answered after its deadline
//     counts for the run as a whole, since no one pool kept it.
//
// The group with the most lost attempts is the tick's cause (a saturated tier still draining,
// and a failure the checks have noticed, count apart), if it lost at least 1% of the tick's
// attempts: losses that are all load-dependent error rates are no cause of this list, and such
// a tick is left out rather than put down to a tier that is not to blame. Ticks with the same
// cause at the same component, less than a second apart, form one stretch; a stretch shorter
// than a second right after another is folded into it (never into a later one: no cause starts
// before its first tick), and the stretch takes the cause of most of its ticks, so a
// flickering cause does not shred the timeline. Each stretch has its start and end, the cause,
// the component, what was measured (demand and capacity in req/s for saturation, the share of
// attempts lost for a failed node or cut link...), an advice, and the retry amplification:
// attempts offered ÷ fresh requests over its failing ticks (≥ 1). Structural failures are
// listed with them, in order of time: a queue that lost acknowledged writes (lost_writes, from
// when its backlog last stood empty) and replicas that never catch up (replication_lag, from
// when their lag last stood at zero), both until the end. At most 32 entries are listed. A run
// with no failing tick and no structural failure has an empty timeline, and an evaluated run
// that passes shows none; Busiest names the component with the highest peak utilisation either
// way.
//
// # Tick reuse: the carried state
//
// A tick is a transition from the carried state (what earlier ticks left: queues by age, hold
// times, latency caches, breakers, autoscalers, warm functions, retries due, chaos state) and
// its inputs (the curve's fresh requests, the chaos events acting) to its record and the next
// state. A tick that leaves the carried state exactly as it found it, byte for byte, is a
// fixed point: while the inputs stay the same, every following tick is the same computation on
// the same numbers, so the engine copies its record (state.go) and folds it into the run's
// totals as it would a computed one. Constant traffic without active chaos settles so within a
// few ticks, a standing queue included (queues are kept by age). Some states do not stand
// still but come back, bit for bit, to where they stood a few ticks before: a full waiting
// room refuses what its content, a rounded sum, leaves no room for, the next cohort differs by
// a bit, and the bit comes back to the door when that cohort is served. Such a cycle (up to 16
// ticks) is repeated period by period, whole periods only and while the inputs stay the same
// to the period's end, each tick copying the record and totals of the tick one period before
// it; in a design with a breaker, an autoscaler or functions, or with display figures for some
// ticks only, whose state a repeated tick would have to move through the cycle, only fixed
// points are repeated. TestReuseIsExact and TestCampaignReuseIsExact (internal/challenges) run
// designs and the whole campaign both ways (RunOptions DisableReuse) and compare the bytes.
//
// The rule for the model: every piece of state a tick reads from an earlier tick must live
// where the comparison sees it, because a piece it cannot see could change while the rest
// stands still, and a copied tick would then be wrong. That is a value field of node, pool
// or component (or of a gateway's, autoscaler's or function's state), compared as it is;
// a slice, map or pointer is compared only by its address unless carriedState reads its
// contents; runState and the latency caches are compared field by field in carriedState.
// TestCarriedStateClassified fails for a new field until it is classified. A tick must also
// not depend on its own number or time except through state that says so (a warm-up, a
// failure not yet noticed by the health checks, a breaker open, probing or just closed (its
// window still leaving out answers to requests sent before), an autoscaler in the tick
// its delay runs out: the ticks it waits through before are the same computation, a
// function starting instances: the pieces of the tick between the ends of the starting
// instances' first invocations are times, and its refusals weigh them);
// timeInvariant lists those, and such ticks are always computed. A function with every
// instance warm carries no time, refusing or not (it refuses over the tick in one piece,
// which weighs exactly 1; its starting instances' end is kept
// only while some start, and the instances kept from a busier tick by the tick they expire
// after, which stands still until the tick that reclaims them, always computed), so its
// ticks are repeated (TestQuietFunctionIsReused). A queue names no
// time: where its ring starts moves on with each computed tick (the same slot for every
// node's), so a carried state holds the rings as they lie with where they start, and
// sameState compares each ring by age from there.
//
// A check costs a copy of the carried state, made where the copy may be read again: the
// state before a search's first check, and after every check but the last of a search
// (which copies only when its route nodes, compared where they lie, match a state before).
// A design that may not cycle keeps one state to compare, not one a cycle slot. The copies
// of a run are made once, at the longest state it can have (carriedLen); a caller running
// design after design (the fix-hint search) lends them, and the tick records of a run whose
// result it no longer needs, from one run to the next (RunOptions.Scratch). A run writes a
// lent buffer before reading it and zeroes lent records, so the memory is all it carries.
//
// Each component's mean and p99 latency are display figures: no summary, verdict or
// diagnosis reads them, so a caller that returns only some ticks (a timeline cut down to
// max points, or none for a scored submission or a hint candidate) has them computed for
// those ticks alone (RunOptions.Points); every other figure is the same.
package sim
