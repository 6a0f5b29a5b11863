package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Taking a level version that stopped being current off the global board.
//
// The global board holds each player's sum of bests on current versions. When a new
// version of a popular level becomes current, every player with a best on the old one
// has a new total. Doing that in the switch's transaction held the global board
// exclusively while it was rebuilt, and every improving submission on any level waited
// (15 s with 200k players). Instead the switch only records the old board in
// global_drains, and the drain moves defaultDrainBatch players per transaction:
//
//   - their old-version entries, then their global entries, are row-locked in player
//     order, then every global bucket in key order: the order every writer locks in
//     (level entry, global entry, buckets ascending), so the batch cannot deadlock with
//     submissions, and it holds the buckets only for its own few milliseconds;
//   - each player's total drops by their old best and is re-timed to the latest of their
//     remaining current bests (or leaves the board), and the buckets' counts move with
//     the keys in a few set-based statements, so ranks stay exact at every read;
//   - their old entries are marked left_global.
//
// A player's total moves in one transaction, and a player who submits to the new version
// (or improves on the old one) during the drain is moved first, in the submission's own
// transaction (bp_leave_global, migration 000010), so no total ever counts both versions. Until the drain
// reaches them, the others' totals still count their old best: the switch reaches each
// player within the drain's duration.
const defaultDrainBatch = 500

// DrainGlobal finishes taking every superseded level version off the global board, a
// batch per transaction. PutLevel calls it after a new version; it is safe to call at
// any time and from several replicas at once.
func (s *Store) DrainGlobal(ctx context.Context) error {
	for {
		var board int64
		err := s.pool.QueryRow(ctx, `SELECT board_id FROM global_drains ORDER BY board_id LIMIT 1`).Scan(&board)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return translate("drain global board", err)
		}
		// Players are taken in player order from a cursor, so each batch is
		// an index range scan, not a scan past every player already moved.
		after := uuid.Nil
		for {
			var moved int
			err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
				var err error
				moved, after, err = s.drainOnce(ctx, tx, board, after)
				return err
			})
			if err != nil {
				return translate("drain global board", err)
			}
			if s.afterDrainBatch != nil {
				s.afterDrainBatch(moved)
			}
			if moved == 0 {
				break
			}
		}
	}
}

// drainOnce moves the next batch of board's players after the player id after off the
// global board; when none is left it removes board from global_drains. It returns how
// many players it moved and the last one. (Entries that join an old board are marked
// left_global as they are written, so one pass in player order finds every entry.)
func (s *Store) drainOnce(ctx context.Context, tx pgx.Tx, board int64, after uuid.UUID) (int, uuid.UUID, error) {
	rows, err := tx.Query(ctx, `
		SELECT player_id FROM board_entries
		WHERE board_id = $1 AND player_id > $2 AND NOT left_global
		ORDER BY player_id LIMIT $3 FOR UPDATE`, board, after, max(s.drainBatch, 1))
	if err != nil {
		return 0, after, err
	}
	players, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, after, err
	}
	if len(players) == 0 {
		_, err := tx.Exec(ctx, `DELETE FROM global_drains WHERE board_id = $1`, board)
		return 0, after, err
	}
	last := players[len(players)-1]
	// Shared, as every writer of the global board takes it (RebuildRanks
	// takes it exclusively), before any global row.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1::int4, 0)`, lockGlobal); err != nil {
		return 0, after, err
	}
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM board_entries WHERE board_id = 0 AND player_id = ANY($1)
		ORDER BY player_id FOR UPDATE`, players); err != nil {
		return 0, after, err
	}
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM board_buckets WHERE board_id = 0
		ORDER BY lo_neg_score, lo_achieved_at, lo_player_id FOR UPDATE`); err != nil {
		return 0, after, err
	}
	if err := s.lowerGlobal(ctx, tx, board, players); err != nil {
		return 0, after, err
	}
	if _, err := tx.Exec(ctx, `UPDATE board_entries SET left_global = true WHERE board_id = $1 AND player_id = ANY($2)`,
		board, players); err != nil {
		return 0, after, err
	}
	return len(players), last, nil
}

// lowerGlobal takes the players' bests on oldBoard off their global totals, set-based: the
// caller holds their entries and every global bucket, so the buckets cannot move under the
// few statements that adjust their counts.
func (s *Store) lowerGlobal(ctx context.Context, tx pgx.Tx, oldBoard int64, players []uuid.UUID) error {
	rows, err := tx.Query(ctx, `
		SELECT g.player_id, g.neg_score, g.achieved_at, g.score - e.score, x.achieved_at, x.submission_id
		FROM board_entries e
		JOIN board_entries g ON g.board_id = 0 AND g.player_id = e.player_id
		LEFT JOIN LATERAL (
			SELECT c.achieved_at, c.submission_id
			FROM board_entries c JOIN levels l ON l.board_id = c.board_id AND l.is_current
			WHERE c.player_id = e.player_id
			ORDER BY c.achieved_at DESC, c.submission_id DESC LIMIT 1) x ON true
		WHERE e.board_id = $1 AND e.player_id = ANY($2) AND NOT e.left_global`, oldBoard, players)
	if err != nil {
		return fmt.Errorf("read global totals: %w", err)
	}
	var (
		upd, del        []uuid.UUID
		updScore        []int64
		updAt           []time.Time
		updSub          []uuid.UUID
		keyNs           []int64
		keyAt           []time.Time
		keyPid          []uuid.UUID
		keyD            []int32
		pid             uuid.UUID
		oldNs, newScore int64
		oldAt           time.Time
		latestAt        *time.Time
		latestSub       *uuid.UUID
	)
	_, err = pgx.ForEachRow(rows, []any{&pid, &oldNs, &oldAt, &newScore, &latestAt, &latestSub}, func() error {
		keyNs, keyAt, keyPid, keyD = append(keyNs, oldNs), append(keyAt, oldAt), append(keyPid, pid), append(keyD, -1)
		if latestAt == nil {
			del = append(del, pid)
			return nil
		}
		upd, updScore, updAt, updSub = append(upd, pid), append(updScore, newScore), append(updAt, *latestAt), append(updSub, *latestSub)
		keyNs, keyAt, keyPid, keyD = append(keyNs, -newScore), append(keyAt, *latestAt), append(keyPid, pid), append(keyD, 1)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read global totals: %w", err)
	}
	if len(keyPid) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `
		UPDATE board_entries g SET score = u.score, achieved_at = u.at, submission_id = u.sub
		FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[], $4::uuid[]) u(pid, score, at, sub)
		WHERE g.board_id = 0 AND g.player_id = u.pid`, upd, updScore, updAt, updSub); err != nil {
		return fmt.Errorf("lower global totals: %w", err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM board_entries WHERE board_id = 0 AND player_id = ANY($1)`, del); err != nil {
		return fmt.Errorf("drop global entries: %w", err)
	}
	// Each old key leaves its bucket and each new key joins its own.
	if _, err := tx.Exec(ctx, `
		WITH k AS (SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::uuid[], $4::int[]) k(ns, at, pid, d)),
		kb AS (
			SELECT (SELECT b.id FROM board_buckets b
			        WHERE b.board_id = 0 AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (k.ns, k.at, k.pid)
			        ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC LIMIT 1) AS id, k.d
			FROM k),
		s AS (SELECT id, sum(d) AS d FROM kb GROUP BY id)
		UPDATE board_buckets b SET n = b.n + s.d FROM s WHERE b.id = s.id AND s.d <> 0`,
		keyNs, keyAt, keyPid, keyD); err != nil {
		return fmt.Errorf("recount global buckets: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		DELETE FROM board_buckets
		WHERE board_id = 0 AND n = 0 AND lo_neg_score <> -9223372036854775808`); err != nil {
		return fmt.Errorf("delete empty buckets: %w", err)
	}
	for range 100_000 {
		var id, n int64
		err := tx.QueryRow(ctx, `
			SELECT id, n FROM board_buckets WHERE board_id = 0 AND n > $1
			ORDER BY lo_neg_score, lo_achieved_at, lo_player_id LIMIT 1`, s.bucketSize).Scan(&id, &n)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find full bucket: %w", err)
		}
		if err := splitBucket(ctx, tx, globalBoard, id, n); err != nil {
			return err
		}
	}
	return fmt.Errorf("global buckets keep overflowing")
}
