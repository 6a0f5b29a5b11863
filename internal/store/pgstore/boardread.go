package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// The first page of a board and the page around a player are each read in
// one statement: one round trip, one snapshot, no BEGIN/COMMIT around
// them. Their parameters start with $1 slug, $2 version ("" and 0: the
// global board); boardRef resolves them to the board like resolveBoard.
const boardRef = `
	b AS (
		SELECT board_id, version FROM levels
		WHERE $1::text <> '' AND slug = $1::text AND (version = $2::int4 OR ($2::int4 = 0 AND is_current))
		UNION ALL
		SELECT 0::bigint, 0 WHERE $1::text = '')`

// topPage: $3 limit. One row per entry (or one row of NULL entry columns
// for an empty board), each with the board's version and total; no row if
// the board does not exist.
const topPage = `
	WITH ` + boardRef + `,
	t AS (SELECT coalesce(sum(k.n), 0) AS total FROM board_buckets k, b WHERE k.board_id = b.board_id)
	SELECT b.version, t.total, e.player_id, e.name, e.score, e.achieved_at, e.submission_id
	FROM b CROSS JOIN t LEFT JOIN LATERAL (
		SELECT e.player_id, p.name, e.score, e.achieved_at, e.submission_id, e.neg_score
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = b.board_id
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT $3::int8) e ON true
	ORDER BY e.neg_score, e.achieved_at, e.player_id`

// aroundPage: $3 player, $4 entries from the player on, $5 entries before
// them. Part 0 is one row (version, total, the player's rank, NULL if they
// are not on the board); part 1 the entries from the player on, part 2
// those before them.
const aroundPage = `
	WITH ` + boardRef + `,
	me AS (
		SELECT e.neg_score, e.achieved_at, e.player_id FROM board_entries e, b
		WHERE e.board_id = b.board_id AND e.player_id = $3::uuid),
	bk AS (
		SELECT k.lo_neg_score, k.lo_achieved_at, k.lo_player_id FROM board_buckets k, b, me
		WHERE k.board_id = b.board_id
		  AND (k.lo_neg_score, k.lo_achieved_at, k.lo_player_id) <= (me.neg_score, me.achieved_at, me.player_id)
		ORDER BY k.lo_neg_score DESC, k.lo_achieved_at DESC, k.lo_player_id DESC
		LIMIT 1)
	SELECT 0 AS part, b.version,
		(SELECT coalesce(sum(k.n), 0) FROM board_buckets k WHERE k.board_id = b.board_id),
		(SELECT 1 + (SELECT coalesce(sum(k.n), 0) FROM board_buckets k, bk
		             WHERE k.board_id = b.board_id
		               AND (k.lo_neg_score, k.lo_achieved_at, k.lo_player_id) < (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id))
		          + (SELECT count(*) FROM board_entries e, bk
		             WHERE e.board_id = b.board_id
		               AND (e.neg_score, e.achieved_at, e.player_id) >= (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id)
		               AND (e.neg_score, e.achieved_at, e.player_id) < (me.neg_score, me.achieved_at, me.player_id))
		 FROM me),
		NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid
	FROM b
	UNION ALL
	(SELECT 1, 0, 0, 0, e.player_id, p.name, e.score, e.achieved_at, e.submission_id
	 FROM board_entries e JOIN players p ON p.id = e.player_id, b, me
	 WHERE e.board_id = b.board_id AND (e.neg_score, e.achieved_at, e.player_id) >= (me.neg_score, me.achieved_at, me.player_id)
	 ORDER BY e.neg_score, e.achieved_at, e.player_id LIMIT $4::int8)
	UNION ALL
	(SELECT 2, 0, 0, 0, e.player_id, p.name, e.score, e.achieved_at, e.submission_id
	 FROM board_entries e JOIN players p ON p.id = e.player_id, b, me
	 WHERE e.board_id = b.board_id AND (e.neg_score, e.achieved_at, e.player_id) < (me.neg_score, me.achieved_at, me.player_id)
	 ORDER BY e.neg_score DESC, e.achieved_at DESC, e.player_id DESC LIMIT $5::int8)`

// firstPage reads the top of a board (q normalised, no cursor).
func (s *Store) firstPage(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	rows, err := s.pool.Query(ctx, topPage, q.Slug, q.Version, q.Limit)
	if err != nil {
		return game.BoardPage{}, err
	}
	page := game.BoardPage{Slug: q.Slug, Entries: []game.Entry{}}
	found := false
	for rows.Next() {
		var e nullableEntry
		if err := rows.Scan(&page.Version, &page.Total, &e.player, &e.name, &e.score, &e.at, &e.sub); err != nil {
			rows.Close()
			return game.BoardPage{}, err
		}
		found = true
		if entry, ok := e.entry(); ok {
			entry.Rank = int64(len(page.Entries)) + 1
			page.Entries = append(page.Entries, entry)
		}
	}
	if err := rows.Err(); err != nil {
		return game.BoardPage{}, err
	}
	if !found {
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "level not found")
	}
	if len(page.Entries) > 0 {
		page.Prev, page.Next = game.PageCursors(page.Entries, page.Total)
	}
	return page, nil
}

// pageAround reads up to q.Limit entries around *q.AroundPlayer, the
// player as near the middle as the board allows.
func (s *Store) pageAround(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	rows, err := s.pool.Query(ctx, aroundPage, q.Slug, q.Version, *q.AroundPlayer, q.Limit, q.Limit-1)
	if err != nil {
		return game.BoardPage{}, err
	}
	page := game.BoardPage{Slug: q.Slug, Entries: []game.Entry{}}
	var rank *int64
	found := false
	var after, before []game.Entry
	for rows.Next() {
		var part int
		var version int
		var total int64
		var myRank *int64
		var e nullableEntry
		if err := rows.Scan(&part, &version, &total, &myRank, &e.player, &e.name, &e.score, &e.at, &e.sub); err != nil {
			rows.Close()
			return game.BoardPage{}, err
		}
		switch part {
		case 0:
			found, page.Version, page.Total, rank = true, version, total, myRank
		case 1, 2:
			entry, ok := e.entry()
			if !ok {
				continue
			}
			if part == 1 {
				after = append(after, entry)
			} else {
				before = append(before, entry)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return game.BoardPage{}, err
	}
	if !found {
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "level not found")
	}
	if rank == nil {
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "player is not on this board")
	}
	// UNION ALL promises no order between or within its parts.
	slices.SortFunc(after, func(a, b game.Entry) int { return a.Key().Compare(b.Key()) })
	slices.SortFunc(before, func(a, b game.Entry) int { return b.Key().Compare(a.Key()) })
	nb, na := game.AroundWindow(len(before), len(after), q.Limit)
	before = before[:nb]
	slices.Reverse(before)
	entries := append(before, after[:na]...)
	first := *rank - int64(nb)
	for i := range entries {
		entries[i].Rank = first + int64(i)
	}
	if len(entries) > 0 {
		page.Entries = entries
		page.Prev, page.Next = game.PageCursors(entries, page.Total)
	}
	return page, nil
}

// nullableEntry scans an entry from a LEFT JOIN.
type nullableEntry struct {
	player *uuid.UUID
	name   *string
	score  *int64
	at     *time.Time
	sub    *uuid.UUID
}

func (n nullableEntry) entry() (game.Entry, bool) {
	if n.player == nil || n.name == nil || n.score == nil || n.at == nil || n.sub == nil {
		return game.Entry{}, false
	}
	return game.Entry{PlayerID: *n.player, PlayerName: *n.name, Score: *n.score, AchievedAt: n.at.UTC(), SubmissionID: *n.sub}, true
}
