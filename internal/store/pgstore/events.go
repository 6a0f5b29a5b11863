package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

const eventColumns = eventRowColumns + entrantsColumn

// eventRowColumns are an event's columns but its entrants.
const eventRowColumns = `id, slug, version, title, briefing, starts_at, ends_at, attempt_limit, join_required,
	max_entrants, final, hidden_chaos, hidden_resilience, created_by, created_at, finished_at, `

// entrantsColumn is an event's entrants: the row's base and its counter
// shards (migration 000014).
const entrantsColumn = `(SELECT o_entrants FROM bp_event_counts(id)) AS entrants`

func scanEvent(row pgx.Row) (game.Event, error) {
	var e game.Event
	var chaos, resilience []byte
	var by *uuid.UUID
	err := row.Scan(&e.ID, &e.Slug, &e.Version, &e.Title, &e.Briefing, &e.StartsAt, &e.EndsAt, &e.AttemptLimit,
		&e.JoinRequired, &e.MaxEntrants, &e.Final, &chaos, &resilience, &by, &e.CreatedAt, &e.FinishedAt, &e.Entrants)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Event{}, game.Errorf(game.ENOTFOUND, "event not found")
	}
	if err != nil {
		return game.Event{}, err
	}
	e.HiddenChaos = chaos
	if resilience != nil {
		e.HiddenResilience = resilience
	}
	if by != nil {
		e.CreatedBy = *by
	}
	e.StartsAt, e.EndsAt, e.CreatedAt = e.StartsAt.UTC(), e.EndsAt.UTC(), e.CreatedAt.UTC()
	if e.FinishedAt != nil {
		at := e.FinishedAt.UTC()
		e.FinishedAt = &at
	}
	return e, nil
}

// CreateEvent stores a new event on an existing level version (ENOTFOUND
// otherwise), with its defaults (game.Event.WithDefaults). Times are
// normalised with game.Timestamp; FinishedAt and Entrants start empty.
func (s *Store) CreateEvent(ctx context.Context, e game.Event) (game.Event, error) {
	if err := e.Validate(); err != nil {
		return game.Event{}, err
	}
	e = e.WithDefaults()
	e.StartsAt, e.EndsAt, e.CreatedAt = game.Timestamp(e.StartsAt), game.Timestamp(e.EndsAt), game.Timestamp(e.CreatedAt)
	var out game.Event
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		out, err = scanEvent(tx.QueryRow(ctx, `
			INSERT INTO events (id, slug, version, title, briefing, starts_at, ends_at, attempt_limit, join_required,
				max_entrants, final, hidden_chaos, hidden_resilience, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			RETURNING `+eventRowColumns+`entrants`,
			e.ID, e.Slug, e.Version, e.Title, e.Briefing, e.StartsAt, e.EndsAt, e.AttemptLimit, e.JoinRequired,
			e.MaxEntrants, e.Final, []byte(e.HiddenChaos), nullJSON(e.HiddenResilience), ownerArg(e.CreatedBy), e.CreatedAt))
		if err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, insertEventSentinel, e.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, insertEventCounts, e.ID)
		return err
	})
	if err != nil {
		var gerr *game.Error
		if errors.As(translate("create event", err), &gerr) && gerr.Code == game.ECONFLICT {
			return game.Event{}, game.Errorf(game.ECONFLICT, "event already exists")
		}
		return game.Event{}, translate("create event", err)
	}
	return out, nil
}

// Event returns an event.
func (s *Store) Event(ctx context.Context, id uuid.UUID) (game.Event, error) {
	e, err := scanEvent(s.pool.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
	return e, translate("event", err)
}

// IsEntrant says whether a player has entered an event (joined it, or
// submitted to it): one indexed read of the entrants' primary key.
func (s *Store) IsEntrant(ctx context.Context, eventID, playerID uuid.UUID) (bool, error) {
	var exists, in bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE id = $1),
		EXISTS (SELECT 1 FROM event_entrants WHERE event_id = $1 AND player_id = $2)`, eventID, playerID).Scan(&exists, &in)
	if err == nil && !exists {
		return false, game.Errorf(game.ENOTFOUND, "event not found")
	}
	return in, translate("event", err)
}

// insertEventSentinel creates an event's first rank bucket, whose lo sorts
// before every key (see migration 000011).
const insertEventSentinel = `
	INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
	VALUES ($1, -9223372036854775808, '1970-01-01T00:00:00Z', '00000000-0000-0000-0000-000000000000', 0)
	ON CONFLICT DO NOTHING`

// insertEventCounts creates an event's 16 counter shards (migration 000014).
const insertEventCounts = `
	INSERT INTO event_counts (event_id, shard) SELECT $1, s FROM generate_series(0, 15) s`

// lockEvent locks an event's row for the rest of the transaction: joins,
// submissions and the finish of one event are serialised on it.
func lockEvent(ctx context.Context, tx pgx.Tx, id uuid.UUID) (game.Event, error) {
	return scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1 FOR UPDATE`, id))
}

// JoinEvent enters a player in an event before it ends: EEVENTENDED after
// the end (at, from the caller's clock) or once finished, EEVENTFULL at the
// cap on entrants. Joining again is a no-op. A joined entrant is in no
// standings until their first attempt.
func (s *Store) JoinEvent(ctx context.Context, eventID, playerID uuid.UUID, at time.Time) error {
	at = game.Timestamp(at)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// FOR KEY SHARE, as an attempt: the finish waits for the join;
		// the count below shares a shard with a 16th of the joiners.
		var ends time.Time
		var finished *time.Time
		var limit int
		err := tx.QueryRow(ctx, `SELECT ends_at, finished_at, max_entrants FROM events WHERE id = $1 FOR KEY SHARE`,
			eventID).Scan(&ends, &finished, &limit)
		if errors.Is(err, pgx.ErrNoRows) {
			return game.Errorf(game.ENOTFOUND, "event not found")
		}
		if err != nil {
			return err
		}
		if finished != nil || !at.Before(ends) {
			return game.Errorf(game.EEVENTENDED, "the event has ended")
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO event_entrants (event_id, player_id, joined_at) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, eventID, playerID, at)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `SELECT bp_event_count($1, $2, 1, 0, $3)`, eventID, playerID, limit)
		return err
	})
	return eventSubmitError(err, "join event")
}

// CreateEventSubmission stores an entrant's design with its public verdict
// and counts the attempt, enforcing the event's rules in one transaction
// by sub.CreatedAt (the caller's clock): EEVENTNOTSTARTED before the start,
// EEVENTENDED from the end on or once finished, ENOTJOINED without joining
// when the event requires it (otherwise the first submission joins, and
// may find it EEVENTFULL), EATTEMPTLIMIT once the limit is used. It
// returns the attempts used, this one included.
//
// The whole write is bp_event_attempt (migration 000014), one statement
// that serialises nothing event-wide: attempts of one event commit side by
// side. Its change is numbered and announced after commit, by the
// announcer (announcer.go); EUNAVAILABLE if the event is filling up too
// fast to count its cap exactly (try again).
func (s *Store) CreateEventSubmission(ctx context.Context, sub game.EventSubmission) (int, error) {
	if err := (game.Submission{ID: sub.ID, PlayerID: sub.PlayerID, Slug: "event", Version: 1, Design: sub.Design,
		Result: sub.Result, Passed: sub.Passed, Score: sub.Score, CreatedAt: sub.CreatedAt}).Validate(); err != nil {
		return 0, err
	}
	sub.CreatedAt = game.Timestamp(sub.CreatedAt)
	var attempts int
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `
			SELECT bp_event_attempt($1::uuid, $2::uuid, $3::uuid, $4::json, $5::json, $6::bool, $7::int8,
				$8::timestamptz, $9::int8)`,
			sub.ID, sub.EventID, sub.PlayerID, []byte(sub.Design), nullJSON(sub.Result), sub.Passed, sub.Score,
			sub.CreatedAt, int64(s.bucketSize)).Scan(&attempts)
	})
	if err != nil {
		return 0, eventSubmitError(err, "create event submission")
	}
	s.announcer.committed(sub.EventID)
	return attempts, nil
}

// eventSubmitError translates the refusals of bp_event_attempt and
// bp_event_count (SQLSTATE BPnnn, see migration 000014) and every other
// error.
func eventSubmitError(err error, what string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		code, ok := map[string]string{
			"BP404": game.ENOTFOUND, "BPNST": game.EEVENTNOTSTARTED, "BPEND": game.EEVENTENDED,
			"BPNJN": game.ENOTJOINED, "BPLIM": game.EATTEMPTLIMIT, "BPFUL": game.EEVENTFULL,
			"BPBSY": game.EUNAVAILABLE,
		}[pgErr.Code]
		if ok {
			return game.Errorf(code, "%s", pgErr.Message)
		}
	}
	return translate(what, err)
}

func scanStanding(row pgx.Row, extra ...any) (game.EventStanding, error) {
	var st game.EventStanding
	err := row.Scan(append([]any{&st.Rank, &st.PlayerID, &st.PlayerName, &st.Score, &st.Passed, &st.Attempts, &st.SubmissionID, &st.AchievedAt}, extra...)...)
	if st.AchievedAt != nil {
		at := st.AchievedAt.UTC()
		st.AchievedAt = &at
	}
	return st, err
}

// announceEvent numbers change (under the event row's lock, held until
// commit) and sends it with NOTIFY in the same transaction.
func announceEvent(ctx context.Context, tx pgx.Tx, change game.EventChange) error {
	if err := tx.QueryRow(ctx, `UPDATE events SET seq = seq + 1 WHERE id = $1 RETURNING seq`, change.EventID).Scan(&change.Seq); err != nil {
		return err
	}
	n, err := change.Notice()
	if err != nil {
		return err
	}
	payload, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if len(payload) > maxNoticePayload {
		n.Data = nil
		if payload, err = json.Marshal(n); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NoticeChannel, string(payload))
	return err
}

// EventFinals returns each entrant's final design, by player id: their
// best passing one (Final "best"; their last if none passed) or their last
// (Final "last"). Entrants who submitted nothing have none.
func (s *Store) EventFinals(ctx context.Context, id uuid.UUID) ([]game.EventSubmission, error) {
	var out []game.EventSubmission
	err := s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		e, err := scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM events WHERE id = $1`, id))
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT s.id, s.event_id, s.player_id, s.design, s.result, s.passed, s.score, s.created_at
			FROM event_entrants n JOIN event_submissions s ON s.id = CASE WHEN $2 = 'best'
				THEN coalesce(n.best_submission_id, n.last_submission_id) ELSE n.last_submission_id END
			WHERE n.event_id = $1 ORDER BY n.player_id`, id, e.Final)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.EventSubmission, error) {
			var f game.EventSubmission
			var design, result []byte
			err := row.Scan(&f.ID, &f.EventID, &f.PlayerID, &design, &result, &f.Passed, &f.Score, &f.CreatedAt)
			f.Design, f.Result, f.CreatedAt = design, result, f.CreatedAt.UTC()
			return f, err
		})
		return err
	})
	if err != nil {
		return nil, translate("event finals", err)
	}
	if out == nil {
		out = []game.EventSubmission{}
	}
	return out, nil
}

// errFinalsChanged is FinishEvent's answer when results are not one per
// entrant's current final design (ECONFLICT): run the missing ones and
// finish again.
const errFinalsChanged = "the final designs changed while the final runs ran; finish again"

// checkFinals reports ECONFLICT unless results hold exactly one run of each
// entrant's current final design.
func checkFinals(ctx context.Context, tx pgx.Tx, e game.Event, results []game.EventResult) error {
	rows, err := tx.Query(ctx, `
		SELECT n.player_id, CASE WHEN $2 = 'best' THEN coalesce(n.best_submission_id, n.last_submission_id)
			ELSE n.last_submission_id END
		FROM event_entrants n WHERE n.event_id = $1 AND n.last_submission_id IS NOT NULL`, e.ID, e.Final)
	if err != nil {
		return err
	}
	finals := map[uuid.UUID]uuid.UUID{}
	var player, sub uuid.UUID
	if _, err := pgx.ForEachRow(rows, []any{&player, &sub}, func() error {
		finals[player] = sub
		return nil
	}); err != nil {
		return err
	}
	if len(finals) != len(results) {
		return game.Errorf(game.ECONFLICT, errFinalsChanged)
	}
	for _, r := range results {
		if finals[r.PlayerID] != r.SubmissionID {
			return game.Errorf(game.ECONFLICT, errFinalsChanged)
		}
	}
	return nil
}

// FinishEvent freezes an event's final standings: results (one per
// entrant with a final design, each naming one of their submissions to the
// event) are ranked by game.RankResults and stored, and finished_at set to
// at, in one transaction under the event's row lock. Exactly once: it
// reports false, writing nothing, if the event is already finished
// (whoever finished it), and ECONFLICT if at is before the end.
func (s *Store) FinishEvent(ctx context.Context, id uuid.UUID, results []game.EventResult, at time.Time) (bool, error) {
	at = game.Timestamp(at)
	var done bool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		done = false
		e, err := lockEvent(ctx, tx, id)
		if err != nil {
			return err
		}
		if e.FinishedAt != nil {
			return nil
		}
		if at.Before(e.EndsAt) {
			return game.Errorf(game.ECONFLICT, "the event has not ended")
		}
		rows, err := tx.Query(ctx, `SELECT id, player_id, created_at FROM event_submissions WHERE event_id = $1`, id)
		if err != nil {
			return err
		}
		type subInfo struct {
			player uuid.UUID
			at     time.Time
		}
		subs := map[uuid.UUID]subInfo{}
		var sid, pid uuid.UUID
		var created time.Time
		if _, err := pgx.ForEachRow(rows, []any{&sid, &pid, &created}, func() error {
			subs[sid] = subInfo{pid, created}
			return nil
		}); err != nil {
			return err
		}
		ordered, err := game.RankResults(results, func(r game.EventResult) (time.Time, bool) {
			si, ok := subs[r.SubmissionID]
			return si.at, ok && si.player == r.PlayerID
		})
		if err != nil {
			return err
		}
		// An attempt stamped before the end may commit after the
		// finisher read the final designs: the results must be those of
		// the final designs as they are now, under the lock (no attempt
		// commits after it: they find finished_at set).
		if err := checkFinals(ctx, tx, e, results); err != nil {
			return err
		}
		var b pgx.Batch
		for i, r := range ordered {
			b.Queue(`
				INSERT INTO event_results (event_id, player_id, rank, submission_id, passed, score, result)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, r.PlayerID, i+1, r.SubmissionID, r.Passed, r.Score, []byte(r.Result))
		}
		b.Queue(`UPDATE events SET finished_at = $2 WHERE id = $1`, id, at)
		// The final runs stored on the way (finalruns.go) are the results now.
		b.Queue(`DELETE FROM event_final_runs WHERE event_id = $1`, id)
		if err := tx.SendBatch(ctx, &b).Close(); err != nil {
			return err
		}
		done = true
		// The attempts committed before the lock and not yet announced
		// are numbered before the final change (no other can commit now).
		if _, err := tx.Exec(ctx, `SELECT bp_event_announce($1, $2, $3, $4)`,
			id, math.MaxInt32, NoticeChannel, maxNoticePayload); err != nil {
			return err
		}
		return announceEvent(ctx, tx, game.EventChange{EventID: id, Kind: game.EventFinal, Total: len(ordered)})
	})
	if err != nil {
		return false, translate("finish event", err)
	}
	return done, nil
}

// EventResult returns an entrant's frozen final run and the design it ran;
// ENOTFOUND before the event is finished or for a player without one.
func (s *Store) EventResult(ctx context.Context, id, playerID uuid.UUID) (game.EventResult, game.EventSubmission, error) {
	var r game.EventResult
	var f game.EventSubmission
	var result, design, public []byte
	err := s.pool.QueryRow(ctx, `
		SELECT r.player_id, r.submission_id, r.passed, r.score, r.result,
			s.id, s.event_id, s.player_id, s.design, s.result, s.passed, s.score, s.created_at
		FROM event_results r JOIN event_submissions s ON s.id = r.submission_id
		WHERE r.event_id = $1 AND r.player_id = $2`, id, playerID).Scan(
		&r.PlayerID, &r.SubmissionID, &r.Passed, &r.Score, &result,
		&f.ID, &f.EventID, &f.PlayerID, &design, &public, &f.Passed, &f.Score, &f.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, f, game.Errorf(game.ENOTFOUND, "no final result for this player in this event")
	}
	if err != nil {
		return r, f, translate("event result", err)
	}
	r.Result, f.Design, f.Result, f.CreatedAt = result, design, public, f.CreatedAt.UTC()
	return r, f, nil
}
