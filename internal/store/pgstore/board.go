package pgstore

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// Board returns one page of a board with exact ranks, all read from one
// snapshot. See game.BoardQuery for the query and game.BoardPage for the
// cursors.
func (s *Store) Board(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.BoardPage{}, err
	}
	if q.Slug == "" {
		q.Version = 0
	}
	switch {
	case q.AroundPlayer != nil:
		page, err := s.pageAround(ctx, q)
		return page, translate("board", err)
	case cur == nil:
		page, err := s.firstPage(ctx, q)
		return page, translate("board", err)
	}
	var page game.BoardPage
	err = s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		board, version, err := resolveBoard(ctx, tx, q.Slug, q.Version)
		if err != nil {
			return err
		}
		page = game.BoardPage{Slug: q.Slug, Version: version, Entries: []game.Entry{}}
		return pageAt(ctx, tx, board, q, cur, &page)
	})
	if err != nil {
		return game.BoardPage{}, translate("board", err)
	}
	return page, nil
}

// pageAt reads the page of board that q (normalised, with its cursor cur)
// asks for into page, in tx's snapshot.
func pageAt(ctx context.Context, tx pgx.Tx, board int64, q game.BoardQuery, cur *game.Cursor, page *game.BoardPage) error {
	var err error
	if err := tx.QueryRow(ctx, `
		SELECT coalesce((SELECT sum(n) FROM board_buckets WHERE board_id = $1), 0),
			(SELECT last_seq FROM boards WHERE id = $1)`,
		board).Scan(&page.Total, &page.Seq); err != nil {
		return err
	}
	var entries []game.Entry
	var first int64 // rank of entries[0]
	switch {
	case q.AroundPlayer != nil:
		me, err := playerEntry(ctx, tx, board, *q.AroundPlayer)
		if err != nil {
			return err
		}
		after, err := scanPage(ctx, tx, pageFrom, board, ptr(me.Key()), q.Limit)
		if err != nil {
			return err
		}
		// Half a page before the player will do, unless the board
		// ends soon after them.
		before, err := scanPage(ctx, tx, pageBefore, board, ptr(me.Key()),
			min(q.Limit-1, max((q.Limit-1)/2, q.Limit-len(after))))
		if err != nil {
			return err
		}
		nb, na := game.AroundWindow(len(before), len(after), q.Limit)
		before = before[:nb]
		slices.Reverse(before)
		entries = append(before, after[:na]...)
		first = me.Rank - int64(nb)
	case cur == nil:
		if entries, err = scanPage(ctx, tx, pageAfter, board, nil, q.Limit); err != nil {
			return err
		}
		first = 1
	case cur.Before:
		if entries, err = scanPage(ctx, tx, pageBefore, board, &cur.Key, q.Limit); err != nil {
			return err
		}
		slices.Reverse(entries)
	default:
		if entries, err = scanPage(ctx, tx, pageAfter, board, &cur.Key, q.Limit); err != nil {
			return err
		}
	}
	if len(entries) == 0 {
		return nil
	}
	if first == 0 {
		if first, err = rankOfKey(ctx, tx, board, entries[0].Key()); err != nil {
			return err
		}
	}
	for i := range entries {
		entries[i].Rank = first + int64(i)
	}
	page.Entries = entries
	page.Prev, page.Next = game.PageCursors(entries, page.Total)
	return nil
}

// PlayerRank returns a player's entry, with its rank, on a board: slug ""
// is the global board, version 0 the level's current version. ENOTFOUND if
// the board does not exist or the player is not on it.
func (s *Store) PlayerRank(ctx context.Context, slug string, version int, playerID uuid.UUID) (game.Entry, error) {
	if slug == "" {
		version = 0
	}
	var e game.Entry
	err := s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		board, _, err := resolveBoard(ctx, tx, slug, version)
		if err != nil {
			return err
		}
		e, err = playerEntry(ctx, tx, board, playerID)
		return err
	})
	return e, translate("player rank", err)
}

// resolveBoard returns the board of a level version (version 0: the current
// one) or, for slug "", the global board.
func resolveBoard(ctx context.Context, q querier, slug string, version int) (board int64, resolved int, err error) {
	if slug == "" {
		return globalBoard, 0, nil
	}
	err = q.QueryRow(ctx, `
		SELECT board_id, version FROM levels
		WHERE slug = $1 AND (version = $2 OR ($2 = 0 AND is_current))`, slug, version).Scan(&board, &resolved)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, game.Errorf(game.ENOTFOUND, "level not found")
	}
	return board, resolved, err
}

// Page scans in board order. Each takes board, key ($2..$4) and limit ($5).
const (
	pageSelect = `
		SELECT e.player_id, p.name, e.score, e.achieved_at, e.submission_id
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = $1 AND `
	pageAfter = pageSelect + `(e.neg_score, e.achieved_at, e.player_id) > ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY e.neg_score, e.achieved_at, e.player_id LIMIT $5`
	pageFrom = pageSelect + `(e.neg_score, e.achieved_at, e.player_id) >= ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY e.neg_score, e.achieved_at, e.player_id LIMIT $5`
	// pageBefore returns the entries nearest before the key first.
	pageBefore = pageSelect + `(e.neg_score, e.achieved_at, e.player_id) < ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY e.neg_score DESC, e.achieved_at DESC, e.player_id DESC LIMIT $5`
)

func ptr[T any](v T) *T { return &v }

// scanPage runs a page query from key k; k nil means from the start (the
// sentinel key, before every entry).
func scanPage(ctx context.Context, q querier, query string, board int64, k *game.BoardKey, limit int) ([]game.Entry, error) {
	if limit <= 0 {
		return nil, nil
	}
	ns, at, pid := int64(math.MinInt64), time.Unix(0, 0), uuid.Nil
	if k != nil {
		ns, at, pid = keyArgs(*k)
	}
	rows, err := q.Query(ctx, query, board, ns, at, pid, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Entry, error) {
		var e game.Entry
		err := row.Scan(&e.PlayerID, &e.PlayerName, &e.Score, &e.AchievedAt, &e.SubmissionID)
		e.AchievedAt = e.AchievedAt.UTC()
		return e, err
	})
}

// PlayerBests returns the player's best passing score on every level version
// they have passed, by slug and version: their entries on the level boards.
func (s *Store) PlayerBests(ctx context.Context, playerID uuid.UUID) ([]game.LevelBest, error) {
	var out []game.LevelBest
	err := s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT l.slug, l.version, e.score
			FROM board_entries e JOIN levels l ON l.board_id = e.board_id
			WHERE e.player_id = $1
			ORDER BY l.slug, l.version`, playerID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (game.LevelBest, error) {
			var b game.LevelBest
			err := r.Scan(&b.Slug, &b.Version, &b.Score)
			return b, err
		})
		return err
	})
	if err != nil {
		return nil, translate("player bests", err)
	}
	if out == nil {
		out = []game.LevelBest{}
	}
	return out, nil
}
