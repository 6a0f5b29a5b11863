package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// The first page of a board and the page around a player are each one
// statement, a call of a plpgsql function (migration 000004): one round
// trip, one snapshot, no BEGIN/COMMIT, and a plan cached by the PostgreSQL
// backend even through PgBouncer, where named prepared statements cannot
// be used. Slug "" and version 0 are the global board.
const (
	topPage    = `SELECT * FROM bp_top_page($1::text, $2::int4, $3::int8)`
	aroundPage = `SELECT * FROM bp_around_page($1::text, $2::int4, $3::uuid, $4::int8, $5::int8)`
)

// firstPage reads the top of a board (q normalised, no cursor).
func (s *Store) firstPage(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	return s.readTopPage(ctx, q, "level not found", topPage, q.Slug, q.Version, q.Limit)
}

// readTopPage runs a top-page function (bp_top_page or one with its
// columns) and reads the page; missing is the error of no row.
func (s *Store) readTopPage(ctx context.Context, q game.BoardQuery, missing, query string, args ...any) (game.BoardPage, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return game.BoardPage{}, err
	}
	page := game.BoardPage{Slug: q.Slug, Entries: []game.Entry{}}
	found := false
	for rows.Next() {
		var e nullableEntry
		if err := rows.Scan(&page.Version, &page.Total, &e.player, &e.name, &e.score, &e.at, &e.sub, &page.Seq); err != nil {
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
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "%s", missing)
	}
	// A function's rows come back in the order it returned them; sorted
	// here anyway, as the ranks depend on it.
	slices.SortFunc(page.Entries, func(a, b game.Entry) int { return a.Key().Compare(b.Key()) })
	for i := range page.Entries {
		page.Entries[i].Rank = int64(i) + 1
	}
	if len(page.Entries) > 0 {
		page.Prev, page.Next = game.PageCursors(page.Entries, page.Total)
	}
	return page, nil
}

// pageAround reads up to q.Limit entries around *q.AroundPlayer, the
// player as near the middle as the board allows.
func (s *Store) pageAround(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	return s.readAroundPage(ctx, q, "level not found", aroundPage, q.Slug, q.Version, *q.AroundPlayer, q.Limit, q.Limit-1)
}

// readAroundPage runs an around-page function (bp_around_page or one with
// its columns) and reads the page; missing is the error of no row.
func (s *Store) readAroundPage(ctx context.Context, q game.BoardQuery, missing, query string, args ...any) (game.BoardPage, error) {
	rows, err := s.pool.Query(ctx, query, args...)
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
		var seq int64
		var e nullableEntry
		if err := rows.Scan(&part, &version, &total, &myRank, &e.player, &e.name, &e.score, &e.at, &e.sub, &seq); err != nil {
			rows.Close()
			return game.BoardPage{}, err
		}
		switch part {
		case 0:
			found, page.Version, page.Total, rank, page.Seq = true, version, total, myRank, seq
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
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "%s", missing)
	}
	if rank == nil {
		return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "player is not on this board")
	}
	// Sorted here, as the ranks depend on the order.
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
