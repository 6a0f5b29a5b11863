// Package challenges turns the simulation engine into a game: it defines the level format,
// checks levels and designs, judges a run against a level's four win conditions, scores
// passing runs, finds the fix for a failing design, and carries the built-in campaign.
//
// It imports the engine (internal/sim) and the campaign's data (backpressure/challenges)
// and nothing else of the project. It must never do I/O beyond reading the embedded
// campaign, keep state between calls that a result could depend on (the campaign is parsed
// once and shared read-only; a level lends its runs memory, sim.Scratch, which no result
// depends on: TestEvaluateAfterOtherDesignsIsTheSame, TestVerdictIsEvaluatesVerdict),
// accept a score or a verdict from outside: a verdict is always computed here by running
// the design, so a client cannot claim one.
//
// # Levels
//
// A level is one JSON document (see challenges/README.md and challenges/level.schema.json):
// slug, title, Markdown briefing, difficulty, version; the engine run (tick, duration,
// traffic curve, request mix, client timeout and retries, chaos schedule); SLA targets
// (p99 latency, error rate), a budget per hour and resilience requirements (error
// ceiling during chaos, recovery deadline after it); the catalog (component types offered,
// their instance types and prices, count limits, fixed parameters and knob ranges); and a
// starting design, which must fail. Parse decodes strictly (unknown fields, duplicate keys
// and wrong types are problems) and reports every problem at once, each with its JSON path.
//
// Parameters are split into knobs, which a player chooses (replicas, instance types, queue
// sizes, autoscaler settings, rate limits...), and world parameters, which describe the
// level (service and query times, hit ratios, connections per node, cold starts...) and
// are fixed: at the level's value, or at the engine's default. Otherwise capacity would be
// free: a player could set service_time_ms to 0.01.
//
// # Evaluation
//
// Evaluate runs a design and checks, over the evaluation window (every tick after the first
// 20% of the run, which is warm-up; seed simulation-design):
//
//  1. latency: the 99th percentile, nearest rank, of the per-tick p99 latency ≤ the target;
//  2. errors: the mean of the per-tick error rate (failed ÷ finished attempts) ≤ the target;
//  3. cost: the mean of the per-tick cost per hour ≤ the budget;
//  4. resilience: for every chaos event, the mean error rate while the event acts (its
//     window; a cache flush acts for its warm-up) ≤ the error ceiling, and the engine's
//     recovery time exists and is ≤ the recovery deadline. The engine's recovery time runs
//     from the end of the event to the start of the first stretch of 5 s in which every
//     tick's error rate is within the pre-event baseline + max(0.1 percentage point, 10% of
//     it) and every tick's p99 within 110% of the baseline + 1 ms; the baseline is the mean
//     over the 30 s before the event. The condition's measured value is the worst event's
//     usage, max(error rate ÷ ceiling, recovery time ÷ deadline), counting a system that
//     never recovers as taking until the end of the run; it passes at ≤ 1.
//
// Chaos ticks count in conditions 1 to 3 as in any other tick: an SLA holds through
// incidents. The run also fails on any structural failure: the engine's lost_data,
// replication_lag and split_brain, and undrained:<queue>, a queue still holding more than one
// second of the level's asynchronous writes when the run ends (acknowledged writes the day
// did not store; the engine's lost_data misses a backlog that shrinks in a lull without
// ever draining).
//
// The result lists each condition with its measured value, target and margin, each chaos
// event's verdict, why it happened (for a failing run, the engine's timeline of failing
// stretches that reach into the window, each with its limiting component and cause, and an
// undrained queue as lost_writes from when it last stood empty), the
// busiest component, every component's peak utilisation and a healthy flag: every component's peak below 90% (seed simple-model). Peaks leave out the
// ticks under chaos (each event's window plus its recovery deadline), which are the
// resilience condition's business and are reported separately; a queue's "peak" is the
// mean utilisation of its consumers (each tick capped at 100%), since draining a burst flat
// out is what a queue is for.
//
// Evaluate's result also carries the engine's run, tick by tick, for charts. Verdict is
// Evaluate for a caller that keeps the verdict alone (a scored submission, an event's final
// run): the same verdict byte for byte, with the run's tick records given back to the level
// for its next run instead of returned. Release gives them back after the caller has
// written them out (a dry run's response, a duel's stored timeline).
//
// # Scoring
//
// Only a passing run has a score, an integer from 1000 to 10000:
//
//	headroom(c) = clamp(1 − measured(c) ÷ target(c), 0, 1)     for each condition c
//	score = 1000 + round(9000 × (0.40·headroom(cost) + 0.25·headroom(latency)
//	                            + 0.20·headroom(errors) + 0.15·headroom(resilience)))
//
// Resilience's measured value is the worst event's usage and its target 1; on a level
// without chaos it is not applicable, and its weight is shared among the other three in
// proportion. The score is deterministic (the engine is), monotone (each headroom only
// falls as its measurement rises, the weights are positive and rounding preserves order,
// so a cheaper, faster, more reliable or more resilient run never scores lower), and hard
// to game: it is a function of measurements the server makes by running the design, never
// of anything a client sends, and the knobs a player controls cannot buy capacity for free.
//
// # The fix hint
//
// Hint looks for the smallest single change to a failing design that passes with headroom:
// every condition holds and every component's peak utilisation (as above) is at most 85%
// (seed architecture-simulator). Candidates are one knob of one component set to another
// value, or one component added from the catalog and wired in by its role; they are ordered
// by kind (parameters before additions) and magnitude (|Δ| for counts, octaves for sizes,
// tenths for shares, 1 for a switch, enum value or instance type), simulated one magnitude
// at a time in parallel, and the first magnitude with a passing candidate yields the
// cheapest of them (ties broken by design order). The patch (a JSON Patch) is applied to
// the design and the result re-run, and both runs are returned. When nothing passes,
// Hint names the binding constraint: the largest violation of the candidate that came
// closest. The search is bounded by a number of runs (MaxHintRuns), not by time, so the
// answer is the same on every machine.
package challenges
