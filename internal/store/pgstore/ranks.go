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

// globalBoard is the id of the global board (see the migration).
const globalBoard int64 = 0

// insertSentinel creates a board's first bucket, whose lo sorts before every
// key (see the migration).
const insertSentinel = `
	INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
	VALUES ($1, -9223372036854775808, '1970-01-01T00:00:00Z', '00000000-0000-0000-0000-000000000000', 0)
	ON CONFLICT DO NOTHING`

// keyArgs returns k as the stored sort key (neg_score, achieved_at,
// player_id), for the $n::bigint, $n+1::timestamptz, $n+2::uuid parameters of
// the queries below.
func keyArgs(k game.BoardKey) (int64, time.Time, uuid.UUID) {
	return -k.Score, k.AchievedAt, k.PlayerID
}

// splitBucket splits a locked bucket holding n entries at its median. The
// bucket's entries are exactly the first n entries from its lo on, since n
// counts every committed entry in its range (plus this transaction's own).
func splitBucket(ctx context.Context, tx pgx.Tx, board, id, n int64) error {
	half := n / 2
	var ns int64
	var at time.Time
	var pid uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT e.neg_score, e.achieved_at, e.player_id
		FROM board_entries e, board_buckets b
		WHERE b.id = $2 AND e.board_id = $1
		  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		OFFSET $3 LIMIT 1`, board, id, half).Scan(&ns, &at, &pid)
	if err != nil {
		return fmt.Errorf("find bucket median: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
		VALUES ($1, $2, $3, $4, $5)`, board, ns, at, pid, n-half); err != nil {
		return fmt.Errorf("insert split bucket: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE board_buckets SET n = $2 WHERE id = $1`, id, half); err != nil {
		return fmt.Errorf("shrink split bucket: %w", err)
	}
	return nil
}

// rankBelow is the SQL for 1 + the number of entries before the key held in
// the relation "me" (neg_score, achieved_at, player_id) on board $1.
const rankBelow = `
	1 + (SELECT coalesce(sum(b.n), 0) FROM board_buckets b, bk
	     WHERE b.board_id = $1
	       AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) < (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id))
	  + (SELECT count(*) FROM board_entries e, bk, me
	     WHERE e.board_id = $1
	       AND (e.neg_score, e.achieved_at, e.player_id) >= (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id)
	       AND (e.neg_score, e.achieved_at, e.player_id) < (me.neg_score, me.achieved_at, me.player_id))`

const bucketOfMe = `
	bk AS (
		SELECT b.lo_neg_score, b.lo_achieved_at, b.lo_player_id FROM board_buckets b, me
		WHERE b.board_id = $1
		  AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (me.neg_score, me.achieved_at, me.player_id)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1)`

// rankOfKey returns 1 + the number of entries on board before k, in one
// statement (one snapshot).
func rankOfKey(ctx context.Context, q querier, board int64, k game.BoardKey) (int64, error) {
	ns, at, pid := keyArgs(k)
	var rank int64
	err := q.QueryRow(ctx, `
		WITH me AS (SELECT $2::bigint AS neg_score, $3::timestamptz AS achieved_at, $4::uuid AS player_id),
		`+bucketOfMe+`
		SELECT `+rankBelow, board, ns, at, pid).Scan(&rank)
	if err != nil {
		return 0, fmt.Errorf("rank of key: %w", err)
	}
	return rank, nil
}

// playerEntry returns a player's entry on board with its rank, ENOTFOUND if
// the player is not on it.
func playerEntry(ctx context.Context, q querier, board int64, player uuid.UUID) (game.Entry, error) {
	var e game.Entry
	err := q.QueryRow(ctx, `
		WITH me AS (
			SELECT e.neg_score, e.achieved_at, e.player_id, e.score, e.submission_id, p.name
			FROM board_entries e JOIN players p ON p.id = e.player_id
			WHERE e.board_id = $1 AND e.player_id = $2),
		`+bucketOfMe+`
		SELECT me.player_id, me.name, me.score, me.achieved_at, me.submission_id, `+rankBelow+`
		FROM me`, board, player).Scan(&e.PlayerID, &e.PlayerName, &e.Score, &e.AchievedAt, &e.SubmissionID, &e.Rank)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Entry{}, game.Errorf(game.ENOTFOUND, "player is not on this board")
	}
	if err != nil {
		return game.Entry{}, fmt.Errorf("player entry: %w", err)
	}
	e.AchievedAt = e.AchievedAt.UTC()
	return e, nil
}

// rebuildBuckets recomputes board's buckets from its entries: half-full
// buckets of bucketSize/2 entries, the first one the sentinel. The caller
// must hold the board exclusively.
func (s *Store) rebuildBuckets(ctx context.Context, tx pgx.Tx, board int64) error {
	if _, err := tx.Exec(ctx, `DELETE FROM board_buckets WHERE board_id = $1`, board); err != nil {
		return fmt.Errorf("delete buckets: %w", err)
	}
	half := max(int64(s.bucketSize/2), 1)
	if _, err := tx.Exec(ctx, `
		WITH o AS (
			SELECT neg_score, achieved_at, player_id,
				row_number() OVER (ORDER BY neg_score, achieved_at, player_id) - 1 AS rn,
				count(*) OVER () AS total
			FROM board_entries WHERE board_id = $1)
		INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
		SELECT $1,
			CASE WHEN rn = 0 THEN -9223372036854775808 ELSE neg_score END,
			CASE WHEN rn = 0 THEN '1970-01-01T00:00:00Z'::timestamptz ELSE achieved_at END,
			CASE WHEN rn = 0 THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE player_id END,
			least($2, total - rn)
		FROM o WHERE rn % $2 = 0`, board, half); err != nil {
		return fmt.Errorf("insert buckets: %w", err)
	}
	if _, err := tx.Exec(ctx, insertSentinel, board); err != nil {
		return fmt.Errorf("insert sentinel bucket: %w", err)
	}
	return nil
}

// RebuildRanks recomputes the rank buckets of every board from
// board_entries, one board per transaction, each holding its board
// exclusively (writers to it wait). It is for maintenance and for use after
// bulk-loading board_entries with plain SQL; normal writes keep the buckets
// exact on their own.
func (s *Store) RebuildRanks(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT id FROM boards ORDER BY id`)
	if err != nil {
		return translate("rebuild ranks", err)
	}
	boards, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return translate("rebuild ranks", err)
	}
	for _, board := range boards {
		err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if board == globalBoard {
				if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, 0)`, lockGlobal); err != nil {
					return err
				}
			} else if _, err := tx.Exec(ctx, `SELECT 1 FROM levels WHERE board_id = $1 FOR UPDATE`, board); err != nil {
				return err
			} else if _, err := tx.Exec(ctx, `
				SELECT pg_advisory_xact_lock($1::int4, $2::int4) FROM seasons WHERE board_id = $2`, lockSeasons, board); err != nil {
				return err // a season's board: its trigger's lock, exclusively
			}
			return s.rebuildBuckets(ctx, tx, board)
		})
		if err != nil {
			return translate("rebuild ranks", err)
		}
	}
	return nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}
