package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
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
//     remaining current bests (or leaves the board), through the same bucket bookkeeping
//     as a submission, so ranks stay exact at every read;
//   - their old entries are marked left_global.
//
// A player's total moves in one transaction, and a player who submits to the new version
// (or improves on the old one) during the drain is moved first, in the submission's own
// transaction (leaveGlobal), so no total ever counts both versions. Until the drain
// reaches them, the others' totals still count their old best: the switch reaches each
// player within the drain's duration.
const defaultDrainBatch = 200

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
		for {
			var moved int
			err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
				var err error
				moved, err = s.drainOnce(ctx, tx, board)
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

// drainOnce moves one batch of board's players off the global board; when none is left
// it removes board from global_drains. It returns how many players it moved.
func (s *Store) drainOnce(ctx context.Context, tx pgx.Tx, board int64) (int, error) {
	rows, err := tx.Query(ctx, `
		SELECT player_id FROM board_entries
		WHERE board_id = $1 AND NOT left_global
		ORDER BY player_id LIMIT $2 FOR UPDATE`, board, max(s.drainBatch, 1))
	if err != nil {
		return 0, err
	}
	players, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return 0, err
	}
	if len(players) == 0 {
		_, err := tx.Exec(ctx, `DELETE FROM global_drains WHERE board_id = $1`, board)
		return 0, err
	}
	// Shared, as every writer of the global board takes it (RebuildRanks
	// takes it exclusively), before any global row.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1::int4, 0)`, lockGlobal); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM board_entries WHERE board_id = 0 AND player_id = ANY($1)
		ORDER BY player_id FOR UPDATE`, players); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM board_buckets WHERE board_id = 0
		ORDER BY lo_neg_score, lo_achieved_at, lo_player_id FOR UPDATE`); err != nil {
		return 0, err
	}
	for _, p := range players {
		if err := s.leaveGlobal(ctx, tx, board, p); err != nil {
			return 0, err
		}
	}
	return len(players), nil
}

// leaveGlobal takes player's best on oldBoard (a version no longer current, listed in
// global_drains) off their global total, unless it already left. The caller holds, or
// may take, the player's entry on oldBoard before their global entry.
func (s *Store) leaveGlobal(ctx context.Context, tx pgx.Tx, oldBoard int64, player uuid.UUID) error {
	var oldScore int64
	var left bool
	err := tx.QueryRow(ctx, `
		SELECT score, left_global FROM board_entries WHERE board_id = $1 AND player_id = $2 FOR UPDATE`,
		oldBoard, player).Scan(&oldScore, &left)
	if errors.Is(err, pgx.ErrNoRows) || left {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock old best: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1::int4, 0)`, lockGlobal); err != nil {
		return err
	}
	old := game.BoardKey{PlayerID: player}
	err = tx.QueryRow(ctx, `SELECT score, achieved_at FROM board_entries WHERE board_id = 0 AND player_id = $1 FOR UPDATE`,
		player).Scan(&old.Score, &old.AchievedAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// Not on the global board (it cannot happen while the bookkeeping holds).
	case err != nil:
		return fmt.Errorf("lock global entry: %w", err)
	default:
		// A player reached their new total when they set the latest of their
		// remaining current-version bests.
		var at time.Time
		var subID uuid.UUID
		err := tx.QueryRow(ctx, `
			SELECT c.achieved_at, c.submission_id
			FROM board_entries c JOIN levels l ON l.board_id = c.board_id AND l.is_current
			WHERE c.player_id = $1
			ORDER BY c.achieved_at DESC, c.submission_id DESC LIMIT 1`, player).Scan(&at, &subID)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `DELETE FROM board_entries WHERE board_id = 0 AND player_id = $1`, player); err != nil {
				return fmt.Errorf("drop global entry: %w", err)
			}
			if err := uncountKey(ctx, tx, globalBoard, old); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("latest current best: %w", err)
		default:
			nw := game.BoardKey{Score: old.Score - oldScore, AchievedAt: at, PlayerID: player}
			if _, err := tx.Exec(ctx, `
				UPDATE board_entries SET score = $2, achieved_at = $3, submission_id = $4
				WHERE board_id = 0 AND player_id = $1`, player, nw.Score, at, subID); err != nil {
				return fmt.Errorf("lower global entry: %w", err)
			}
			if err := s.moveKey(ctx, tx, globalBoard, &old, nw); err != nil {
				return err
			}
		}
	}
	_, err = tx.Exec(ctx, `UPDATE board_entries SET left_global = true WHERE board_id = $1 AND player_id = $2`, oldBoard, player)
	return err
}

// leaveDrainingVersions takes the player's bests on every draining old version of slug off
// the global board, so that a submission to the current version never counts both.
func (s *Store) leaveDrainingVersions(ctx context.Context, tx pgx.Tx, slug string, player uuid.UUID) error {
	rows, err := tx.Query(ctx, `
		SELECT d.board_id FROM global_drains d
		JOIN levels l ON l.board_id = d.board_id AND l.slug = $1
		JOIN board_entries e ON e.board_id = d.board_id AND e.player_id = $2 AND NOT e.left_global
		ORDER BY d.board_id`, slug, player)
	if err != nil {
		return err
	}
	boards, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, b := range boards {
		if err := s.leaveGlobal(ctx, tx, b, player); err != nil {
			return err
		}
	}
	return nil
}

// uncountKey records in board's buckets that the entry with key k was deleted. The
// caller has already deleted the entry row.
func uncountKey(ctx context.Context, tx pgx.Tx, board int64, k game.BoardKey) error {
	b, err := lockBucketOf(ctx, tx, board, k)
	if err != nil {
		return err
	}
	var m int64
	if err := tx.QueryRow(ctx, `UPDATE board_buckets SET n = n - 1 WHERE id = $1 RETURNING n`, b.id).Scan(&m); err != nil {
		return fmt.Errorf("uncount entry in bucket: %w", err)
	}
	if m == 0 && !b.sentinel {
		if _, err := tx.Exec(ctx, `DELETE FROM board_buckets WHERE id = $1`, b.id); err != nil {
			return fmt.Errorf("delete empty bucket: %w", err)
		}
	}
	return nil
}
