// Package rules is the game's rules over time: scoring and storing a
// submission, an event's attempts, standings and finish, a duel's creation,
// acceptance, settlement and referee, the seasons kept ahead, and the cache
// of decoded levels they all run on. One Service is built per process and
// shared by the HTTP handlers (internal/api) and the background jobs
// (cmd/server), so that both run simulations on one scheduler
// (internal/scheduler).
//
// It depends on internal/challenges (levels, evaluation, scoring),
// internal/sim, internal/game and internal/scheduler, and on persistence
// only through the small interfaces declared next to the rules that use
// them (Submissions in submit.go, Events in events.go, Duels in duels.go,
// FinalRuns in finalruns.go...). It never imports net/http or internal/api
// (internal/layering holds that), never decides an HTTP status (its errors
// are *game.Error codes, which the transport maps) and keeps no state
// replicas could disagree on: the level cache is keyed by content hash,
// and every rank and standing is read from the store.
//
// # How a submission travels
//
//  1. internal/api/routes.go routes POST /v1/challenges/{slug}/submissions
//     through the admission middleware (admission.go: per-client limit,
//     body read, in-flight limit) and authentication (middleware.go).
//  2. internal/api/submissions.go (handleSubmit) marks a submission in
//     progress (hints yield to it: scheduler.Scheduler.Submitting),
//     decodes the body (decode.go), parses the design (ParseDesign in
//     design.go) and calls Service.Submit with the player, the slug, the
//     Idempotency-Key and the request's hash.
//  3. submit.go (Submit) answers a retry from the store
//     (Submissions.SubmissionByIdempotencyKey) without simulating; else it
//     finds the level's current version (levels.go: Level, through the
//     cache), refuses a stale version, and scores the design (design.go:
//     score and Evaluate), which internal/scheduler runs on the
//     submissions' workers, paid from the player's budget.
//  4. submit.go stores the submission, its verdict and score with
//     Submissions.CreateSubmission, under StoreTimeout even if the client
//     has gone: the store (internal/store/pgstore or memstore) updates the
//     board in the same transaction and records the board's change.
//  5. The store announces the change (memstore's Notify hook; with
//     PostgreSQL a NOTIFY that cmd/server/live.go LISTENs for) to
//     internal/live's broker, and internal/api/streams.go sends it to every
//     open stream of the board, while the handler answers with the receipt
//     (writeReceipt).
//
// An event attempt (eventattempt.go) travels the same road with the
// event's rules checked first; its final runs wait for the finisher
// (eventfinish.go), which adds the hidden chaos with
// challenges.WithHidden.
package rules
