package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// NoticeChannel is the PostgreSQL NOTIFY channel of the store's
// announcements: each payload is the JSON of one game.Notice, sent in the
// transaction of the write it announces (so delivered at its commit, in
// commit order, and never for a rollback).
const NoticeChannel = "backpressure_notices"

// maxNoticePayload keeps a payload under PostgreSQL's NOTIFY limit (8000
// bytes by default); a larger notice is sent without its data, which the
// reader then reads with BoardChanges.
const maxNoticePayload = 7000

// pruneEvery: one change in this many deletes the board's changes older
// than the last game.ChangeRetention.
const pruneEvery = 64

// recordChange numbers the move of sub's player on board (from prev, nil
// for a newcomer, to sub's key, already written), logs it with its exact
// rank and announces it. It takes the board row's lock, held until commit,
// so it must be the transaction's last write to boards: every transaction
// that changes the board numbers its change here, one at a time, so the
// numbers follow commit order, and the ranks read after the lock see
// exactly the changes numbered before.
func recordChange(ctx context.Context, tx pgx.Tx, board int64, sub game.Submission, prev *game.BoardKey) (game.BoardChange, error) {
	c := game.BoardChange{
		PlayerID: sub.PlayerID, Score: sub.Score, AchievedAt: sub.CreatedAt, SubmissionID: sub.ID,
	}
	if err := tx.QueryRow(ctx, `UPDATE boards SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq, slug, version`,
		board).Scan(&c.Seq, &c.Slug, &c.Version); err != nil {
		return c, fmt.Errorf("number the board change: %w", err)
	}
	if err := tx.QueryRow(ctx, `
		SELECT (SELECT name FROM players WHERE id = $2), coalesce((SELECT sum(n) FROM board_buckets WHERE board_id = $1), 0)`,
		board, sub.PlayerID).Scan(&c.PlayerName, &c.Total); err != nil {
		return c, fmt.Errorf("board change: %w", err)
	}
	var err error
	if c.Rank, err = rankOfKey(ctx, tx, board, game.BoardKey{Score: sub.Score, AchievedAt: sub.CreatedAt, PlayerID: sub.PlayerID}); err != nil {
		return c, err
	}
	if prev != nil {
		// The new key is before the old one: subtract it.
		r, err := rankOfKey(ctx, tx, board, *prev)
		if err != nil {
			return c, err
		}
		c.PreviousRank = r - 1
	}
	n, err := c.Notice()
	if err != nil {
		return c, err
	}
	payload, err := json.Marshal(n)
	if err != nil {
		return c, err
	}
	if len(payload) > maxNoticePayload {
		n.Data = nil
		if payload, err = json.Marshal(n); err != nil {
			return c, err
		}
	}
	b := &pgx.Batch{}
	b.Queue(`
		INSERT INTO board_changes (board_id, seq, player_id, score, rank, previous_rank, total, achieved_at, submission_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		board, c.Seq, c.PlayerID, c.Score, c.Rank, c.PreviousRank, c.Total, c.AchievedAt, c.SubmissionID)
	b.Queue(`SELECT pg_notify($1, $2)`, NoticeChannel, string(payload))
	if c.Seq%pruneEvery == 0 {
		b.Queue(`DELETE FROM board_changes WHERE board_id = $1 AND seq <= $2`, board, c.Seq-game.ChangeRetention)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return c, fmt.Errorf("log the board change: %w", err)
	}
	return c, nil
}

// BoardChanges returns the changes of a level version's board after seq
// after, in order, at most limit of them (limit 1..game.ChangeRetention;
// other values mean game.ChangeRetention). ok is false when they cannot all
// be returned: after is older than the changes kept, or newer than the
// board's latest change; the reader then starts again from the board's
// page (whose Seq says where to go on from). ENOTFOUND if there is no such
// level version.
func (s *Store) BoardChanges(ctx context.Context, slug string, version int, after int64, limit int) (changes []game.BoardChange, ok bool, err error) {
	if limit <= 0 || limit > game.ChangeRetention {
		limit = game.ChangeRetention
	}
	err = s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		var board, last int64
		var resolved int
		err := tx.QueryRow(ctx, `
			SELECT l.board_id, l.version, b.last_seq FROM levels l JOIN boards b ON b.id = l.board_id
			WHERE l.slug = $1 AND l.version = $2`, slug, version).Scan(&board, &resolved, &last)
		if errors.Is(err, pgx.ErrNoRows) {
			return game.Errorf(game.ENOTFOUND, "level not found")
		}
		if err != nil {
			return err
		}
		if after < 0 || after > last {
			ok = false
			return nil
		}
		rows, err := tx.Query(ctx, `
			SELECT c.seq, c.player_id, p.name, c.score, c.rank, c.previous_rank, c.total, c.achieved_at, c.submission_id
			FROM board_changes c JOIN players p ON p.id = c.player_id
			WHERE c.board_id = $1 AND c.seq > $2 ORDER BY c.seq LIMIT $3`, board, after, limit)
		if err != nil {
			return err
		}
		changes, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.BoardChange, error) {
			c := game.BoardChange{Slug: slug, Version: resolved}
			err := row.Scan(&c.Seq, &c.PlayerID, &c.PlayerName, &c.Score, &c.Rank, &c.PreviousRank, &c.Total,
				&c.AchievedAt, &c.SubmissionID)
			c.AchievedAt = c.AchievedAt.UTC()
			return c, err
		})
		if err != nil {
			return err
		}
		ok = after == last || (len(changes) > 0 && changes[0].Seq == after+1)
		return nil
	})
	if err != nil {
		return nil, false, translate("board changes", err)
	}
	if !ok {
		changes = nil
	}
	if changes == nil {
		changes = []game.BoardChange{}
	}
	return changes, ok, nil
}
