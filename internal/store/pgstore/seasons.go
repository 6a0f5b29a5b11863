package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// Seasons (migration 000008). The database keeps every season's board
// itself, in a deferred trigger on submissions that runs as the submitting
// transaction commits, so nothing here touches the submission write: this
// file stores the seasons the schedule plans, marks ended ones final and
// reads their boards with the rank machinery of every other board.

// lockSeasons guards seasons: the trigger holds (lockSeasons, season board)
// shared until its transaction commits; marking a season final takes it
// exclusively; (lockSeasons, 0) serialises EnsureSeasons across replicas.
const lockSeasons int32 = 0x42500008

// DeadlineClock is the database's clock (bp_season_now), which decides
// seasons and every deadline players race against (an event's end, a
// duel's accept and submit deadlines), so that no replica's own clock does.
func (s *Store) DeadlineClock(ctx context.Context) (time.Time, error) {
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT bp_season_now()`).Scan(&now); err != nil {
		return time.Time{}, translate("deadline clock", err)
	}
	return game.Timestamp(now), nil
}

// EnsureSeasons stores the seasons sc plans from the latest stored season
// and the database's clock (game.SeasonSchedule.Plan), each with its
// board, and returns them. Replicas may call it at once: they take turns.
// It also marks ended seasons final.
func (s *Store) EnsureSeasons(ctx context.Context, sc game.SeasonSchedule) ([]game.Season, error) {
	var plan []game.Season
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, 0)`, lockSeasons); err != nil {
			return err
		}
		var now time.Time
		if err := tx.QueryRow(ctx, `SELECT bp_season_now()`).Scan(&now); err != nil {
			return err
		}
		var last *game.Season
		l, err := scanSeason(tx.QueryRow(ctx, `SELECT `+seasonColumns+` FROM seasons ORDER BY starts_at DESC LIMIT 1`, now))
		switch {
		case err == nil:
			last = &l
		case game.ErrorCode(err) != game.ENOTFOUND:
			return err
		}
		plan = sc.Plan(last, now)
		for _, ns := range plan {
			var board int64
			if err := tx.QueryRow(ctx, `INSERT INTO boards DEFAULT VALUES RETURNING id`).Scan(&board); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, insertSentinel, board); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `
				INSERT INTO seasons (id, name, starts_at, ends_at, board_id) VALUES ($1, $2, $3, $4, $5)`,
				ns.ID, ns.Name, ns.StartsAt, ns.EndsAt, board); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate("ensure seasons", err)
	}
	return plan, s.finishSeasons(ctx)
}

// finishSeasons marks every ended season final, each under its lock held
// exclusively: that waits for the transactions that chose the season
// before it ended, and none can choose it after. Cheap when there is
// nothing to do (one small query); readers of seasons call it first.
func (s *Store) finishSeasons(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT board_id FROM seasons WHERE NOT final AND ends_at <= bp_season_now()`)
	if err != nil {
		return translate("finish seasons", err)
	}
	boards, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return translate("finish seasons", err)
	}
	for _, board := range boards {
		err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, $2::int4)`, lockSeasons, board); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE seasons SET final = true WHERE board_id = $1 AND ends_at <= bp_season_now()`, board)
			return err
		})
		if err != nil {
			return translate("finish season", err)
		}
	}
	return nil
}

// seasonColumns takes the clock as $1 (for Current).
const seasonColumns = `id, name, starts_at, ends_at, starts_at <= $1::timestamptz AND $1::timestamptz < ends_at`

func scanSeason(row pgx.Row) (game.Season, error) {
	var se game.Season
	err := row.Scan(&se.ID, &se.Name, &se.StartsAt, &se.EndsAt, &se.Current)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Season{}, game.Errorf(game.ENOTFOUND, "season not found")
	}
	se.StartsAt, se.EndsAt = se.StartsAt.UTC(), se.EndsAt.UTC()
	return se, err
}

// Seasons returns one page of the stored seasons, the latest first: a
// range scan of seasons_starts that stops after the page.
func (s *Store) Seasons(ctx context.Context, q game.ListQuery) (game.SeasonList, error) {
	q, cur, err := game.ParseSeasonListQuery(q)
	if err != nil {
		return game.SeasonList{}, err
	}
	if err := s.finishSeasons(ctx); err != nil {
		return game.SeasonList{}, err
	}
	var before *time.Time
	if cur != nil {
		before = &cur.StartsAt
	}
	rows, err := s.pool.Query(ctx, `
		WITH c AS (SELECT bp_season_now() AS now)
		SELECT id, name, starts_at, ends_at, starts_at <= c.now AND c.now < ends_at
		FROM seasons, c WHERE $1::timestamptz IS NULL OR starts_at < $1::timestamptz
		ORDER BY starts_at DESC LIMIT $2`, before, q.Limit+1)
	if err != nil {
		return game.SeasonList{}, translate("seasons", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Season, error) { return scanSeason(row) })
	if err != nil {
		return game.SeasonList{}, translate("seasons", err)
	}
	return game.SeasonListPage(out, q.Limit), nil
}

// Season returns one season, ENOTFOUND if there is none with id.
func (s *Store) Season(ctx context.Context, id string) (game.Season, error) {
	se, err := scanSeason(s.pool.QueryRow(ctx, `
		WITH c AS (SELECT bp_season_now() AS now)
		SELECT id, name, starts_at, ends_at, starts_at <= c.now AND c.now < ends_at
		FROM seasons, c WHERE id = $1`, id))
	return se, translate("season", err)
}

// Season board reads: the plpgsql functions of migration 000008, with the
// columns of bp_top_page and bp_around_page.
const (
	seasonTopPage    = `SELECT * FROM bp_season_top_page($1::text, $2::int8)`
	seasonAroundPage = `SELECT * FROM bp_season_around_page($1::text, $2::uuid, $3::int8, $4::int8)`
)

// SeasonBoard returns one page of a season's board (q's Slug and Version
// are ignored) with exact ranks from one snapshot, like Board. An ended
// season is marked final first, so the page of an ended season is its
// final one.
func (s *Store) SeasonBoard(ctx context.Context, id string, q game.BoardQuery) (game.BoardPage, error) {
	q.Slug, q.Version = "", 0
	q, cur, err := q.Normalize()
	if err != nil {
		return game.BoardPage{}, err
	}
	if err := s.finishSeasons(ctx); err != nil {
		return game.BoardPage{}, err
	}
	var page game.BoardPage
	switch {
	case q.AroundPlayer != nil:
		page, err = s.readAroundPage(ctx, q, "season not found", seasonAroundPage, id, *q.AroundPlayer, q.Limit, q.Limit-1)
	case cur == nil:
		page, err = s.readTopPage(ctx, q, "season not found", seasonTopPage, id, q.Limit)
	default:
		err = s.tx(ctx, readOnly, func(tx pgx.Tx) error {
			var board int64
			err := tx.QueryRow(ctx, `SELECT board_id FROM seasons WHERE id = $1`, id).Scan(&board)
			if errors.Is(err, pgx.ErrNoRows) {
				return game.Errorf(game.ENOTFOUND, "season not found")
			}
			if err != nil {
				return err
			}
			page = game.BoardPage{Entries: []game.Entry{}}
			return pageAt(ctx, tx, board, q, cur, &page)
		})
	}
	if err != nil {
		return game.BoardPage{}, translate("season board", err)
	}
	page.Season = id
	return page, nil
}

// PlayerHistory returns the seasons a player is on the board of (the
// latest first) and their results in finished events (the latest finish
// first), at most game.MaxPlayerHistory of each, from one snapshot.
func (s *Store) PlayerHistory(ctx context.Context, playerID uuid.UUID) (game.PlayerHistory, error) {
	if err := s.finishSeasons(ctx); err != nil {
		return game.PlayerHistory{}, err
	}
	h := game.PlayerHistory{Seasons: []game.PlayerSeason{}, Events: []game.PlayerEvent{}}
	err := s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		h = game.PlayerHistory{Seasons: []game.PlayerSeason{}, Events: []game.PlayerEvent{}}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM players WHERE id = $1)`, playerID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return game.Errorf(game.ENOTFOUND, "player not found")
		}
		rows, err := tx.Query(ctx, `
			WITH c AS (SELECT bp_season_now() AS now)
			SELECT s.id, s.name, s.starts_at, s.ends_at, s.starts_at <= c.now AND c.now < s.ends_at,
				bp_rank(s.board_id, e.neg_score, e.achieved_at, e.player_id), e.score,
				(SELECT coalesce(sum(k.n), 0)::bigint FROM board_buckets k WHERE k.board_id = s.board_id)
			FROM seasons s JOIN board_entries e ON e.board_id = s.board_id AND e.player_id = $1, c
			ORDER BY s.starts_at DESC LIMIT $2`, playerID, game.MaxPlayerHistory)
		if err != nil {
			return err
		}
		if h.Seasons, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.PlayerSeason, error) {
			var ps game.PlayerSeason
			err := row.Scan(&ps.SeasonID, &ps.Name, &ps.StartsAt, &ps.EndsAt, &ps.Current, &ps.Rank, &ps.Score, &ps.Total)
			ps.StartsAt, ps.EndsAt = ps.StartsAt.UTC(), ps.EndsAt.UTC()
			return ps, err
		}); err != nil {
			return err
		}
		// Ranks of a finished event run 1..N, so the last rank is the
		// number of results (one index probe).
		rows, err = tx.Query(ctx, `
			SELECT r.event_id, ev.title, r.rank, r.score, r.passed,
				(SELECT max(x.rank) FROM event_results x WHERE x.event_id = r.event_id), ev.finished_at
			FROM event_results r JOIN events ev ON ev.id = r.event_id
			WHERE r.player_id = $1
			ORDER BY ev.finished_at DESC, r.event_id DESC LIMIT $2`, playerID, game.MaxPlayerHistory)
		if err != nil {
			return err
		}
		h.Events, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.PlayerEvent, error) {
			var pe game.PlayerEvent
			err := row.Scan(&pe.EventID, &pe.Title, &pe.Rank, &pe.Score, &pe.Passed, &pe.Total, &pe.FinishedAt)
			pe.FinishedAt = pe.FinishedAt.UTC()
			return pe, err
		})
		return err
	})
	if err != nil {
		return game.PlayerHistory{}, translate("player history", err)
	}
	return h, nil
}
