package pgstore

import (
	"context"
	"errors"

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
