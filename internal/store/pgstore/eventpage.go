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

// EventStandingsPage returns one page of an event's standings with exact
// ranks, read in one snapshot: while it runs, the entrants with at least
// one attempt in live order (game.StandingKey), ranked from the event's
// buckets; once finished, the frozen final results by rank. Each costs
// O(page + bucket size), whatever the field. ENOTFOUND for no such event,
// or an AroundPlayer who is not in the standings.
func (s *Store) EventStandingsPage(ctx context.Context, id uuid.UUID, q game.EventStandingsQuery) (game.EventBoard, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.EventBoard{}, err
	}
	board := game.EventBoard{EventID: id, Entries: []game.EventStanding{}}
	err = s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		board.Entries, board.Next, board.Prev = []game.EventStanding{}, "", ""
		if err := tx.QueryRow(ctx, `SELECT seq, finished_at IS NOT NULL, (SELECT o_ranked FROM bp_event_counts(id)) FROM events WHERE id = $1`, id).
			Scan(&board.Seq, &board.Final, &board.Total); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return game.Errorf(game.ENOTFOUND, "event not found")
			}
			return err
		}
		if cur != nil && cur.Final != board.Final {
			return game.ErrStaleCursor()
		}
		var entries []game.EventStanding
		var err error
		if board.Final {
			entries, err = finalStandingsPage(ctx, tx, id, q, cur, board.Total)
		} else {
			entries, err = liveStandingsPage(ctx, tx, id, q, cur)
		}
		if err != nil || len(entries) == 0 {
			return err
		}
		board.Entries = entries
		board.Prev, board.Next = game.StandingsCursors(entries, board.Total, board.Final)
		return nil
	})
	if err != nil {
		return game.EventBoard{}, translate("event standings", err)
	}
	return board, nil
}

// Live standings scans in standings order. Each takes the event, a key
// ($2..$4) and a limit ($5).
const (
	liveStandingSelect = `
		SELECT n.player_id, p.name, coalesce(n.best_score, 0), n.best_score IS NOT NULL, n.attempts,
			n.best_submission_id, n.best_at
		FROM event_entrants n JOIN players p ON p.id = n.player_id
		WHERE n.event_id = $1 AND n.rank_ns IS NOT NULL AND `
	liveStandingsAfter = liveStandingSelect + `(n.rank_ns, n.rank_at, n.player_id) > ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY n.rank_ns, n.rank_at, n.player_id LIMIT $5`
	liveStandingsFrom = liveStandingSelect + `(n.rank_ns, n.rank_at, n.player_id) >= ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY n.rank_ns, n.rank_at, n.player_id LIMIT $5`
	// liveStandingsBefore returns the entrants nearest before the key first.
	liveStandingsBefore = liveStandingSelect + `(n.rank_ns, n.rank_at, n.player_id) < ($2::bigint, $3::timestamptz, $4::uuid)
		ORDER BY n.rank_ns DESC, n.rank_at DESC, n.player_id DESC LIMIT $5`
)

func liveStandingsPage(ctx context.Context, tx pgx.Tx, id uuid.UUID, q game.EventStandingsQuery, cur *game.EventCursor) ([]game.EventStanding, error) {
	var entries []game.EventStanding
	var first int64 // rank of entries[0]; 0: to be read
	var err error
	switch {
	case q.AroundPlayer != nil:
		var me game.EventStanding
		var ranked bool
		err := tx.QueryRow(ctx, `
			SELECT n.rank_ns IS NOT NULL, coalesce(n.best_score, 0), n.best_score IS NOT NULL, n.best_at
			FROM event_entrants n WHERE n.event_id = $1 AND n.player_id = $2`, id, *q.AroundPlayer).
			Scan(&ranked, &me.Score, &me.Passed, &me.AchievedAt)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && !ranked) {
			return nil, game.Errorf(game.ENOTFOUND, "the player is not in this event's standings")
		}
		if err != nil {
			return nil, err
		}
		me.PlayerID = *q.AroundPlayer
		key := me.Key()
		rank, err := eventRank(ctx, tx, id, key)
		if err != nil {
			return nil, err
		}
		after, err := scanStandings(ctx, tx, liveStandingsFrom, id, &key, q.Limit)
		if err != nil {
			return nil, err
		}
		before, err := scanStandings(ctx, tx, liveStandingsBefore, id, &key,
			min(q.Limit-1, max((q.Limit-1)/2, q.Limit-len(after))))
		if err != nil {
			return nil, err
		}
		nb, na := game.AroundWindow(len(before), len(after), q.Limit)
		before = before[:nb]
		slices.Reverse(before)
		entries = append(before, after[:na]...)
		first = rank - int64(nb)
	case cur == nil:
		entries, err = scanStandings(ctx, tx, liveStandingsAfter, id, nil, q.Limit)
		first = 1
	case cur.Before:
		entries, err = scanStandings(ctx, tx, liveStandingsBefore, id, &cur.Key, q.Limit)
		slices.Reverse(entries)
	default:
		entries, err = scanStandings(ctx, tx, liveStandingsAfter, id, &cur.Key, q.Limit)
	}
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	if first == 0 {
		if first, err = eventRank(ctx, tx, id, entries[0].Key()); err != nil {
			return nil, err
		}
	}
	for i := range entries {
		entries[i].Rank = first + int64(i)
	}
	return entries, nil
}

// eventRank is 1 + the number of entrants before k in an event's live
// standings, from its buckets.
func eventRank(ctx context.Context, q querier, id uuid.UUID, k game.BoardKey) (int64, error) {
	ns, at, pid := keyArgs(k)
	var rank int64
	err := q.QueryRow(ctx, `SELECT bp_event_rank($1::uuid, $2::bigint, $3::timestamptz, $4::uuid)`, id, ns, at, pid).Scan(&rank)
	return rank, err
}

// scanStandings runs a live standings scan from key k; k nil means from
// the start (the sentinel key, before every entrant).
func scanStandings(ctx context.Context, q querier, query string, id uuid.UUID, k *game.BoardKey, limit int) ([]game.EventStanding, error) {
	if limit <= 0 {
		return nil, nil
	}
	ns, at, pid := int64(math.MinInt64), time.Unix(0, 0), uuid.Nil
	if k != nil {
		ns, at, pid = keyArgs(*k)
	}
	rows, err := q.Query(ctx, query, id, ns, at, pid, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.EventStanding, error) {
		var st game.EventStanding
		err := row.Scan(&st.PlayerID, &st.PlayerName, &st.Score, &st.Passed, &st.Attempts, &st.SubmissionID, &st.AchievedAt)
		if st.AchievedAt != nil {
			at := st.AchievedAt.UTC()
			st.AchievedAt = &at
		}
		return st, err
	})
}

// finalStandingsPage reads a page of the frozen final standings, by rank
// (ranks run 1..total without gaps).
func finalStandingsPage(ctx context.Context, tx pgx.Tx, id uuid.UUID, q game.EventStandingsQuery, cur *game.EventCursor, total int) ([]game.EventStanding, error) {
	from, to := int64(1), int64(q.Limit) // ranks, inclusive
	switch {
	case q.AroundPlayer != nil:
		var rank int64
		err := tx.QueryRow(ctx, `SELECT rank FROM event_results WHERE event_id = $1 AND player_id = $2`,
			id, *q.AroundPlayer).Scan(&rank)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, game.Errorf(game.ENOTFOUND, "the player is not in this event's standings")
		}
		if err != nil {
			return nil, err
		}
		nb, na := game.AroundWindow(int(min(rank-1, int64(q.Limit-1))), int(min(int64(total)-rank+1, int64(q.Limit))), q.Limit)
		from, to = rank-int64(nb), rank+int64(na)-1
	case cur == nil:
	case cur.Before:
		from, to = max(1, cur.Rank-int64(q.Limit)), cur.Rank-1
	default:
		from, to = cur.Rank+1, cur.Rank+int64(q.Limit)
	}
	rows, err := tx.Query(ctx, `
		SELECT r.rank, r.player_id, p.name, r.score, r.passed, n.attempts, r.submission_id, s.created_at
		FROM event_results r JOIN players p ON p.id = r.player_id
		JOIN event_entrants n ON n.event_id = r.event_id AND n.player_id = r.player_id
		JOIN event_submissions s ON s.id = r.submission_id
		WHERE r.event_id = $1 AND r.rank BETWEEN $2 AND $3 ORDER BY r.rank`, id, from, to)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.EventStanding, error) { return scanStanding(row) })
}

// eventListColumns are an event's columns but its hidden chaos and
// resilience, which lists never load.
const eventListColumns = `id, slug, version, title, briefing, starts_at, ends_at, attempt_limit, join_required,
	max_entrants, final, created_by, created_at, finished_at, ` + entrantsColumn

// phaseFilters select the events in each phase at $1 (see game.Event.Phase);
// each is served by an index on (starts_at, id).
var phaseFilters = map[string]string{
	"":                  `$1::timestamptz IS NOT NULL`,
	game.PhaseUpcoming:  `finished_at IS NULL AND starts_at > $1::timestamptz`,
	game.PhaseLive:      `finished_at IS NULL AND starts_at <= $1::timestamptz AND ends_at > $1::timestamptz`,
	game.PhaseFinishing: `finished_at IS NULL AND starts_at <= $1::timestamptz AND ends_at <= $1::timestamptz`,
	game.PhaseFinished:  `finished_at IS NOT NULL AND $1::timestamptz IS NOT NULL`,
}

// EventList returns one page of the events, by start time then id,
// optionally of one phase at q.Now: O(page) whatever was scheduled, and
// never loading what lists leave out (see game.EventList).
func (s *Store) EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.EventList{}, err
	}
	after := game.EventListCursor{StartsAt: time.Unix(-62135596800, 0).UTC()} // year 1: before every event
	if cur != nil {
		after = *cur
	}
	rows, err := s.pool.Query(ctx, `SELECT `+eventListColumns+` FROM events
		WHERE `+phaseFilters[q.Phase]+` AND (starts_at, id) > ($2::timestamptz, $3::uuid)
		ORDER BY starts_at, id LIMIT $4`, q.Now, after.StartsAt, after.ID, q.Limit+1)
	if err != nil {
		return game.EventList{}, translate("event list", err)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Event, error) {
		var e game.Event
		var by *uuid.UUID
		err := row.Scan(&e.ID, &e.Slug, &e.Version, &e.Title, &e.Briefing, &e.StartsAt, &e.EndsAt, &e.AttemptLimit, &e.JoinRequired,
			&e.MaxEntrants, &e.Final, &by, &e.CreatedAt, &e.FinishedAt, &e.Entrants)
		if by != nil {
			e.CreatedBy = *by
		}
		e.StartsAt, e.EndsAt, e.CreatedAt = e.StartsAt.UTC(), e.EndsAt.UTC(), e.CreatedAt.UTC()
		if e.FinishedAt != nil {
			at := e.FinishedAt.UTC()
			e.FinishedAt = &at
		}
		return e, err
	})
	if err != nil {
		return game.EventList{}, translate("event list", err)
	}
	out := game.EventList{Events: events}
	if len(events) > q.Limit {
		out.Events = events[:q.Limit]
		last := out.Events[q.Limit-1]
		out.Next = game.EventListCursor{StartsAt: last.StartsAt, ID: last.ID}.String()
	}
	if out.Events == nil {
		out.Events = []game.Event{}
	}
	return out, nil
}

// RebuildEventRanks recomputes an event's live standings bookkeeping from
// its entrants' bests: each entrant's key (none for those without an
// attempt), the count of ranked entrants and the rank buckets, half full,
// under the event row's lock (attempts wait). It is for maintenance and for
// use after bulk-loading event_entrants with plain SQL; attempts keep all
// of it exact on their own.
func (s *Store) RebuildEventRanks(ctx context.Context, id uuid.UUID) error {
	half := max(int64(s.bucketSize/2), 1)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := lockEvent(ctx, tx, id); err != nil {
			return err
		}
		var b pgx.Batch
		b.Queue(`
			UPDATE event_entrants SET
				rank_ns = CASE WHEN attempts = 0 THEN NULL WHEN best_score IS NULL THEN 1 ELSE -best_score END,
				rank_at = CASE WHEN attempts = 0 THEN NULL ELSE coalesce(best_at, '1970-01-01T00:00:00Z') END
			WHERE event_id = $1`, id)
		b.Queue(`UPDATE events SET ranked = (SELECT count(*) FROM event_entrants WHERE event_id = $1 AND attempts > 0)
			WHERE id = $1`, id)
		b.Queue(`UPDATE event_counts SET ranked = 0 WHERE event_id = $1`, id)
		b.Queue(`DELETE FROM event_buckets WHERE event_id = $1`, id)
		b.Queue(`
			WITH o AS (
				SELECT rank_ns, rank_at, player_id,
					row_number() OVER (ORDER BY rank_ns, rank_at, player_id) - 1 AS rn,
					count(*) OVER () AS total
				FROM event_entrants WHERE event_id = $1 AND rank_ns IS NOT NULL)
			INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
			SELECT $1,
				CASE WHEN rn = 0 THEN -9223372036854775808 ELSE rank_ns END,
				CASE WHEN rn = 0 THEN '1970-01-01T00:00:00Z'::timestamptz ELSE rank_at END,
				CASE WHEN rn = 0 THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE player_id END,
				least($2, total - rn)
			FROM o WHERE rn % $2 = 0`, id, half)
		b.Queue(insertEventSentinel, id)
		return tx.SendBatch(ctx, &b).Close()
	})
	return translate("rebuild event ranks", err)
}
