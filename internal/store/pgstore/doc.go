// Package pgstore is Backpressure's PostgreSQL store: players, levels,
// submissions and leaderboards behind the same contract as memstore
// (checked by the shared suite in internal/store/storetest).
//
// Every method owns its transaction and translates driver errors into
// *game.Error values (unique violation -> ECONFLICT, missing reference ->
// ENOTFOUND, server down -> EUNAVAILABLE); anything else is returned as a
// plain error, which game.ErrorCode reports as EINTERNAL. It must never hand a
// pgx or pgconn error type to its callers, never build SQL from input (only
// parameters), and never read the clock except for Player.CreatedAt (Now):
// submission and level timestamps come from the caller, normalised with
// game.Timestamp, so tests control time.
//
// # Leaderboards and exact ranks at scale
//
// The design target is 1,000,000 players on one board with the top-100 page
// in < 5 ms and the exact rank of any player (and the page around them) in
// < 10 ms. A plain count(*) of better scores takes ~85 ms at 1M rows, so
// ranks come from a counted one-level B-tree kept beside the board:
//
//   - board_entries holds each player's best per board (level version, or the
//     global board 0) with a stored neg_score = -score, so board order is the
//     all-ascending key (neg_score, achieved_at, player_id): score DESC,
//     earliest achiever first, then player id. Keyset pages in either
//     direction are one row comparison on the btree board_entries_order.
//   - board_buckets partitions each board's key space into ranges [lo, next
//     lo) with n = number of entries in the range. Each board has a sentinel
//     bucket below every key. rank(k) = 1 + sum(n of earlier buckets) +
//     count(entries from k's bucket's lo up to k): a sum over ~N/(B/2) rows
//     and an index-only range count of at most B rows (B = bucket size,
//     1024), both in one statement, i.e. one snapshot. TestScale
//     (BP_SCALE=1) measures it at 1M players with 1,000-way score ties on
//     the 2-core dev machine (~2,000 buckets per board), p99 over 300
//     calls: top-100 page 1.5-3 ms, exact rank of the last or a random
//     player 0.5-1.4 ms, 100 entries around a random player 4-6.5 ms,
//     an improving submission 4-6 ms.
//   - Buckets are key ranges, not score ranges, because score buckets fail
//     on ties (half a million players on the maximum score would be one
//     bucket, and counting inside it is the slow count again). A bucket that
//     grows past B is split at its median; one that drops to 0 is deleted.
//
// A best-score write moves the player's key from old to new on the level
// board (and, if the level version is current, on the global board) in the
// same transaction as the submission insert. Locks are always taken in one
// order, which makes the scheme deadlock-free: idempotency row, level row
// (FOR SHARE), level-board entry row (FOR UPDATE), level-board buckets in
// ascending key order, the global board's advisory lock (shared), global
// entry row, global buckets in ascending key order. A bucket is located,
// locked, and then located again in a fresh snapshot: if a concurrent split
// moved the key into a new bucket, that one (always further along in key
// order) is locked next. Splits and deletions happen only under the
// bucket's own lock, so each bucket's n equals the committed number of
// entries in its range at all times. Deadlock (40P01) and serialization
// (40001) failures are retried anyway.
//
// A submission's write is one transaction and one statement, bp_submit
// (plpgsql, migration 000010), called outside any explicit transaction: the
// steps above in that lock order, and also taking the player's best off an
// old level version still being drained from the global board and logging
// and announcing the board change (below). It is one round trip instead of
// BEGIN, about fifteen statements and COMMIT, and a broken connection
// leaves it committed whole or not at all (the caller retries with the same
// idempotency key, which replays a committed one). Every statement inside
// the function takes a fresh snapshot, as each statement of a READ
// COMMITTED transaction does, so the re-lookup of a locked bucket and the
// rank read after the board's change counter behave as they did in Go.
//
// The first page of a board and the page around a player are each one
// statement (one snapshot, so every rank on the page and Total agree); other
// pages run in one REPEATABLE READ read-only transaction.
//
// # Caches
//
// Two lookups on every request are cached per replica, neither in a way
// that can serve anything stale that matters:
//
//   - token hash -> player, for players whose role is "player" only, for up
//     to 10 s. A token's player, id, name and creation time never change; the
//     role can, but only the lowest role is cached, so a stale entry can
//     withhold a promotion made on another replica for up to 10 s (fail
//     closed) and can never grant a revoked role. SetRole clears this
//     replica's cache at once.
//   - slug -> current level version, for up to 1 s. A replica may, for that
//     second, score a design against a version another replica has just
//     replaced; the write then checks, under the level row's lock, that the
//     version it scored against still has that content and is still
//     current, and otherwise stores nothing and answers ECONFLICT ("submit
//     again"), dropping the entry. So no submission is ever stored against
//     content it was not scored on, or on a version that stopped being
//     current. Boards and ranks are never cached: every read is a fresh
//     snapshot of the database, on every replica.
//
// # Connection pool and poolers
//
// Options sets the pool size (DefaultMaxConns unless the URL or the caller
// says otherwise) and pgx's query mode. Behind PgBouncer in transaction
// mode use QueryModeCacheDescribe: no named prepared statement outlives a
// transaction. Everything here is transaction-scoped (row locks,
// pg_advisory_xact_lock), so it works through such a pooler; what needs a
// session (Migrate's advisory lock, LISTEN) must use a direct connection
// (the server's DATABASE_DIRECT_URL).
//
// Publishing a new version of a level (PutLevel when the current version has
// submissions) subtracts the old version's bests from the global board,
// recomputes the affected players' achieved_at and deletes players left with
// no current bests, then rebuilds the global board's buckets, all under the
// global board's advisory lock in exclusive mode. This is O(players on the
// old version) and meant for rare, deliberate level changes.
//
// RebuildRanks recomputes every board's buckets from board_entries; use it
// after bulk-loading entries with plain SQL (for example to seed a scale
// test).
//
// # Board changes and notices
//
// An improving submission numbers its move on the level board as the last
// write of its transaction (UPDATE boards SET last_seq = last_seq + 1,
// whose row lock is held to commit), so changes are numbered in commit
// order without gaps, and the rank it logs in board_changes is read after
// the lock: exact as of that change. The same transaction sends the change
// with NOTIFY on NoticeChannel, which PostgreSQL delivers at commit. Board
// pages carry last_seq from their snapshot. BoardChanges serves a stream
// that resumes; the latest game.ChangeRetention changes of a board are
// kept. Events number their changes after commit instead (below).
//
// # Events
//
// An event's live standings are counted like a board (migration 000011):
// each entrant with an attempt has a key (event_entrants.rank_ns, rank_at,
// game.StandingKey), event_buckets counts keys by range, and a rank is
// bp_event_rank, O(buckets + bucket size) whatever the field. Entrants who
// only joined have no key: no attempt or read counts them.
//
// An attempt is one statement, bp_event_attempt (migration 000014), and
// nothing in it is serialised event-wide, so a last-minute crowd's attempts
// commit side by side: it locks the event row FOR KEY SHARE (attempts run
// side by side; the finish, FOR UPDATE, waits for them and they for it),
// then the entrant's row (their attempt limit and best), then one of the
// event's 16 counter shards (event_counts: entrants against the cap, and
// entrants in the standings), then the buckets in ascending key order. Its
// rules (window, attempts, cap, join) are exact: the cap because at most
// 16 counts are uncommitted at once (bp_event_count says how). JoinEvent
// takes the same FOR KEY SHARE and counts the entrant the same way.
//
// An attempt's change is numbered and announced after commit by the
// announcer (announcer.go, bp_event_announce): per event, one batch at a
// time under the event row's FOR NO KEY UPDATE, in one REPEATABLE READ
// snapshot that numbers every committed attempt not yet numbered, so each
// rank it sends is exact as of its batch. FinishEvent locks the row FOR
// UPDATE, numbers what is left, and writes the final results, finished_at
// and the final change once: a second finisher finds finished_at set and
// writes nothing. Standings pages (events.seq and the counts, in one
// snapshot) and event lists each read O(page) rows.
//
// # Duels
//
// Every step of a duel (accept, decline, a design, the end) locks its row
// (FOR UPDATE) and checks the step's rule (game.CheckAccept and the
// others) against the row as locked; EndDuel moves a duel to its final
// state only from a pending one and rates both players in the same
// transaction, so a duel is decided and rated once however many referees
// race. Starting a duel takes transaction-scoped advisory locks (the
// starting player, for the daily limit; the level version, for the
// matching queue), which PgBouncer's transaction mode allows. A partial
// unique index keeps one open duel per pair and level. Each change bumps
// duels.seq and is announced with NOTIFY, without data: what a reader may
// see of a duel depends on who reads it.
//
// # Seasons
//
// A season's board (migration 000008, seasons.go) is a board like the
// others (board_entries, board_buckets, bp_rank), kept by the database
// itself: a deferred constraint trigger on submissions runs as the
// submitting transaction commits and counts a passing submission in the
// season containing the database's clock at that moment (per player and
// level the best in season_bests, per player the sum on the season's
// board, its buckets moved by the plpgsql port of moveKey). The Go write
// path never sees it; its locks come after every lock the write takes, in
// the same order for every writer. The trigger holds the season's advisory
// lock shared until commit; the first read after a season's end takes it
// exclusively and marks the season final, so an ended season's board never
// changes again. The bucket size and the season clock can be set per
// session (backpressure.bucket_size, backpressure.season_now) for tests.
//
// # Migrations
//
// Migrate applies the embedded migrations (package backpressure/migrations)
// with golang-migrate's iofs source and pgx/v5 driver. The driver holds a
// PostgreSQL advisory lock (pg_advisory_lock, keyed by database, schema and
// migrations table) for the whole run, so several replicas may call Migrate
// at start-up together: one migrates, the others wait (up to golang-migrate's
// 15 s lock timeout) and then find nothing to do (ErrNoChange is success).
// TestMigrateConcurrently checks this.
package pgstore
