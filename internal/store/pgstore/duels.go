package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

// Duels. Every step of a duel locks its row (FOR UPDATE) and checks the
// step's rule (game.CheckAccept, CheckSubmit, CheckEnd...) against the row
// as locked, so two replicas racing to accept, submit or end one duel are
// serialised and the second finds the first's work: a duel ends once, and
// its ratings move once, in the transaction that ends it. Starting a duel
// takes a transaction-scoped advisory lock on the starting player (the
// daily limit) and, to be matched, on the level version (the queue), which
// a transaction-mode pooler allows: nothing outlives the transaction.

const duelColumns = `d.id, d.slug, d.version, d.state, d.seed, d.player_a, coalesce(d.player_b, '00000000-0000-0000-0000-000000000000'),
	d.design_a, d.design_b, d.submitted_a_at, d.submitted_b_at, d.match_rating, d.created_at, d.accept_by, d.submit_by,
	d.ended_at, d.result, d.seq, pa.name, coalesce(pb.name, '')`

const duelFrom = ` FROM duels d JOIN players pa ON pa.id = d.player_a LEFT JOIN players pb ON pb.id = d.player_b `

func scanDuel(row pgx.Row) (game.Duel, error) {
	var d game.Duel
	var seed int64
	var designA, designB, result []byte
	err := row.Scan(&d.ID, &d.Slug, &d.Version, &d.State, &seed, &d.Sides[0].PlayerID, &d.Sides[1].PlayerID,
		&designA, &designB, &d.Sides[0].SubmittedAt, &d.Sides[1].SubmittedAt, &d.MatchRating, &d.CreatedAt, &d.AcceptBy,
		&d.SubmitBy, &d.EndedAt, &result, &d.Seq, &d.Sides[0].PlayerName, &d.Sides[1].PlayerName)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Duel{}, game.Errorf(game.ENOTFOUND, "duel not found")
	}
	if err != nil {
		return game.Duel{}, err
	}
	d.Seed = uint64(seed)
	d.Sides[0].Design, d.Sides[1].Design = designA, designB
	d.CreatedAt, d.AcceptBy = d.CreatedAt.UTC(), d.AcceptBy.UTC()
	for _, t := range []**time.Time{&d.Sides[0].SubmittedAt, &d.Sides[1].SubmittedAt, &d.SubmitBy, &d.EndedAt} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	if result != nil {
		var r game.DuelResult
		if err := json.Unmarshal(result, &r); err != nil {
			return game.Duel{}, err
		}
		d.Result = &r
	}
	return d, nil
}

func lockDuel(ctx context.Context, tx pgx.Tx, id uuid.UUID) (game.Duel, error) {
	return scanDuel(tx.QueryRow(ctx, `SELECT `+duelColumns+duelFrom+`WHERE d.id = $1 FOR UPDATE OF d`, id))
}

// announceDuel numbers a change of the locked duel id and sends it with
// NOTIFY in the same transaction; it returns the new seq.
func announceDuel(ctx context.Context, tx pgx.Tx, id uuid.UUID) (int64, error) {
	var seq int64
	if err := tx.QueryRow(ctx, `UPDATE duels SET seq = seq + 1 WHERE id = $1 RETURNING seq`, id).Scan(&seq); err != nil {
		return 0, err
	}
	payload, err := json.Marshal(game.DuelNotice(id, seq))
	if err != nil {
		return 0, err
	}
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NoticeChannel, string(payload))
	return seq, err
}

// startChecks applies the rules every new duel obeys, under the starting
// player's advisory lock: the level exists, nobody duels themselves, and
// the player has not used their duels of the (UTC) day.
func startChecks(ctx context.Context, tx pgx.Tx, d game.Duel, rules game.DuelRules) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('duel-start:' || $1::text, 0))`, d.Sides[0].PlayerID); err != nil {
		return err
	}
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM levels WHERE slug = $1 AND version = $2`, d.Slug, d.Version).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Errorf(game.ENOTFOUND, "level not found")
	}
	if err != nil {
		return err
	}
	for _, side := range d.Sides {
		if side.PlayerID == uuid.Nil {
			continue
		}
		err := tx.QueryRow(ctx, `SELECT 1 FROM players WHERE id = $1`, side.PlayerID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return game.Errorf(game.ENOTFOUND, "player not found")
		}
		if err != nil {
			return err
		}
	}
	if d.Sides[0].PlayerID == d.Sides[1].PlayerID {
		return game.Errorf(game.EDUELSELF, "a player cannot duel themselves")
	}
	return dailyCheck(ctx, tx, d.Sides[0].PlayerID, d.CreatedAt, rules)
}

// dailyCheck applies rules.PerDay to player entering a duel at at
// (game.Duel.EnteredSince, in SQL).
func dailyCheck(ctx context.Context, tx pgx.Tx, player uuid.UUID, at time.Time, rules game.DuelRules) error {
	day := game.DayStart(at)
	var entered int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM duels
		WHERE (player_a = $1 AND created_at >= $2) OR (player_b = $1 AND submit_by >= $3)`,
		player, day, day.Add(rules.SubmitWindow)).Scan(&entered); err != nil {
		return err
	}
	return rules.CheckDaily(entered)
}

func insertDuel(ctx context.Context, tx pgx.Tx, d game.Duel) error {
	var b any
	if d.Sides[1].PlayerID != uuid.Nil {
		b = d.Sides[1].PlayerID
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO duels (id, slug, version, state, seed, player_a, player_b, match_rating, created_at, accept_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		d.ID, d.Slug, d.Version, d.State, int64(d.Seed), d.Sides[0].PlayerID, b, d.MatchRating, d.CreatedAt, d.AcceptBy)
	return err
}

func normalDuel(d game.Duel) game.Duel {
	d.CreatedAt, d.AcceptBy = game.Timestamp(d.CreatedAt), game.Timestamp(d.AcceptBy)
	return d
}

// CreateDuel stores a challenge (state challenged) of Sides[0] to
// Sides[1] on an existing level version: ENOTFOUND for a missing level or
// player, EDUELSELF for a challenge to oneself, EDUELDAILYLIMIT past
// rules.PerDay duels entered by the challenger this UTC day
// (game.Duel.EnteredSince), EDUELPAIRACTIVE if the pair already has a challenged or
// active duel on the level (any version; a unique index decides races).
func (s *Store) CreateDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error) {
	if err := d.Validate(); err != nil {
		return game.Duel{}, err
	}
	if d.State != game.DuelChallenged {
		return game.Duel{}, game.Errorf(game.EINVALID, "a challenge starts challenged")
	}
	d = normalDuel(d)
	var out game.Duel
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := startChecks(ctx, tx, d, rules); err != nil {
			return err
		}
		if err := insertDuel(ctx, tx, d); err != nil {
			return err
		}
		if _, err := announceDuel(ctx, tx, d.ID); err != nil {
			return err
		}
		var err error
		out, err = scanDuel(tx.QueryRow(ctx, `SELECT `+duelColumns+duelFrom+`WHERE d.id = $1`, d.ID))
		return err
	})
	return out, duelError("create duel", err)
}

// duelError translates the pair index's conflict into its rule.
func duelError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == "duels_pair_open" {
		return game.Errorf(game.EDUELPAIRACTIVE, "you already have an open duel with this player on this level")
	}
	return translate(op, err)
}

// MatchDuel pairs d (a new match request of Sides[0], state matching,
// with the player's MatchRating) with the waiting request on the same
// level version whose rating is closest, within the allowance of the
// waiting one (rules.MatchAllowance of its wait; earliest first among
// equals), whose accept_by has not passed, and whose player has no open
// duel with this one on the level: that duel becomes active with this
// player as Sides[1] and submit_by = d.CreatedAt + rules.SubmitWindow,
// and is returned. Without one, d is queued (stored, matching) and
// returned. The level's queue is serialised by a transaction-scoped
// advisory lock, so two requests never both queue where they could have
// paired. EDUELMATCHING if the player is already waiting on the level;
// the start rules as CreateDuel.
func (s *Store) MatchDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error) {
	if err := d.Validate(); err != nil {
		return game.Duel{}, err
	}
	if d.State != game.DuelMatching {
		return game.Duel{}, game.Errorf(game.EINVALID, "a match request starts matching")
	}
	d = normalDuel(d)
	me := d.Sides[0].PlayerID
	var out game.Duel
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if err := startChecks(ctx, tx, d, rules); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('duel-match:' || $1::text || ':' || $2::int::text, 0))`,
			d.Slug, d.Version); err != nil {
			return err
		}
		var waiting uuid.UUID
		err := tx.QueryRow(ctx, `SELECT id FROM duels WHERE state = 'matching' AND slug = $1 AND version = $2
			AND player_a = $3 AND accept_by > $4`, d.Slug, d.Version, me, d.CreatedAt).Scan(&waiting)
		if err == nil {
			return game.Errorf(game.EDUELMATCHING, "you are already waiting to be matched on %q (duel %s)", d.Slug, waiting)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var partner uuid.UUID
		err = tx.QueryRow(ctx, `
			SELECT w.id FROM duels w
			WHERE w.state = 'matching' AND w.slug = $1 AND w.version = $2 AND w.player_a <> $3 AND w.accept_by > $4
				AND abs(w.match_rating - $5) <= least($8::float8, $6::float8 + $7::float8 * greatest(0, extract(epoch FROM $4 - w.created_at)::float8 / 60))
				AND NOT EXISTS (SELECT 1 FROM duels o WHERE o.slug = $1 AND o.state IN ('challenged', 'active')
					AND ((o.player_a = $3 AND o.player_b = w.player_a) OR (o.player_b = $3 AND o.player_a = w.player_a)))
			ORDER BY abs(w.match_rating - $5), w.created_at, w.id
			LIMIT 1
			FOR UPDATE`, d.Slug, d.Version, me, d.CreatedAt, d.MatchRating, rules.MatchBase, rules.MatchPerMinute, rules.MatchMax).Scan(&partner)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			if err := insertDuel(ctx, tx, d); err != nil {
				return err
			}
			partner = d.ID
		case err != nil:
			return err
		default:
			if _, err := tx.Exec(ctx, `UPDATE duels SET player_b = $2, state = 'active', submit_by = $3 WHERE id = $1`,
				partner, me, game.Timestamp(d.CreatedAt.Add(rules.SubmitWindow))); err != nil {
				return err
			}
		}
		if _, err := announceDuel(ctx, tx, partner); err != nil {
			return err
		}
		out, err = scanDuel(tx.QueryRow(ctx, `SELECT `+duelColumns+duelFrom+`WHERE d.id = $1`, partner))
		return err
	})
	return out, duelError("match duel", err)
}

// Duel returns a duel.
func (s *Store) Duel(ctx context.Context, id uuid.UUID) (game.Duel, error) {
	d, err := scanDuel(s.pool.QueryRow(ctx, `SELECT `+duelColumns+duelFrom+`WHERE d.id = $1`, id))
	return d, translate("duel", err)
}

func (s *Store) duels(ctx context.Context, op, where string, args ...any) ([]game.Duel, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+duelColumns+duelFrom+where, args...)
	if err != nil {
		return nil, translate(op, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Duel, error) { return scanDuel(row) })
	if err != nil {
		return nil, translate(op, err)
	}
	if out == nil {
		out = []game.Duel{}
	}
	return out, nil
}

// PlayerDuels returns one page of a player's duels, newest first (by
// creation, then id): a range scan of each side's index (duels_by_a,
// duels_by_b) that stops after the page.
func (s *Store) PlayerDuels(ctx context.Context, playerID uuid.UUID, q game.ListQuery) (game.DuelList, error) {
	q, cur, err := game.ParseDuelListQuery(q)
	if err != nil {
		return game.DuelList{}, err
	}
	before := game.DuelListCursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: uuid.Max}
	if cur != nil {
		before = *cur
	}
	duels, err := s.duels(ctx, "player duels", `WHERE d.id IN (
		(SELECT id FROM duels WHERE player_a = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4)
		UNION ALL
		(SELECT id FROM duels WHERE player_b = $1 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT $4))
		ORDER BY d.created_at DESC, d.id DESC LIMIT $4`, playerID, before.CreatedAt, before.ID, q.Limit+1)
	if err != nil {
		return game.DuelList{}, err
	}
	out := game.DuelList{}
	out.Duels, out.Next = game.DuelListNext(duels, q.Limit)
	return out, nil
}

// OpenDuels returns every duel that has not ended, by deadline then id.
func (s *Store) OpenDuels(ctx context.Context) ([]game.Duel, error) {
	return s.duels(ctx, "open duels", `WHERE d.ended_at IS NULL AND d.state IN ('challenged', 'matching', 'active')
		ORDER BY CASE WHEN d.state = 'active' THEN d.submit_by ELSE d.accept_by END, d.id`)
}

// AcceptDuel makes a challenge active (game.CheckAccept at at, the
// caller's clock), with submit_by = at + rules.SubmitWindow;
// EDUELDAILYLIMIT past rules.PerDay duels entered by the accepting player
// this UTC day.
func (s *Store) AcceptDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time, rules game.DuelRules) (game.Duel, error) {
	at = game.Timestamp(at)
	var out game.Duel
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		d, err := lockDuel(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := game.CheckAccept(d, playerID, at); err != nil {
			return err
		}
		if err := dailyCheck(ctx, tx, playerID, at, rules); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE duels SET state = 'active', submit_by = $2 WHERE id = $1`,
			id, game.Timestamp(at.Add(rules.SubmitWindow))); err != nil {
			return err
		}
		return s.reread(ctx, tx, id, &out)
	})
	return out, translate("accept duel", err)
}

// reread announces the change of the locked duel id and reads it back.
func (s *Store) reread(ctx context.Context, tx pgx.Tx, id uuid.UUID, out *game.Duel) error {
	if _, err := announceDuel(ctx, tx, id); err != nil {
		return err
	}
	d, err := scanDuel(tx.QueryRow(ctx, `SELECT `+duelColumns+duelFrom+`WHERE d.id = $1`, id))
	*out = d
	return err
}

// DeclineDuel ends a challenge as declined (game.CheckDecline): by the
// challenged player, or withdrawn by the challenger.
func (s *Store) DeclineDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time) (game.Duel, error) {
	at = game.Timestamp(at)
	var out game.Duel
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		d, err := lockDuel(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := game.CheckDecline(d, playerID); err != nil {
			return err
		}
		res, err := json.Marshal(game.DuelResult{Reason: game.ReasonDeclined, Sides: []game.DuelResultSide{}, Ratings: []game.RatingChange{}})
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE duels SET state = 'declined', ended_at = $2, result = $3 WHERE id = $1`, id, at, res); err != nil {
			return err
		}
		return s.reread(ctx, tx, id, &out)
	})
	return out, translate("decline duel", err)
}

// SubmitDuelDesign stores a side's design (game.CheckSubmit at at).
func (s *Store) SubmitDuelDesign(ctx context.Context, id, playerID uuid.UUID, design json.RawMessage, at time.Time) (game.Duel, error) {
	at = game.Timestamp(at)
	var out game.Duel
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		d, err := lockDuel(ctx, tx, id)
		if err != nil {
			return err
		}
		side, err := game.CheckSubmit(d, playerID, design, at)
		if err != nil {
			return err
		}
		q := `UPDATE duels SET design_a = $2, submitted_a_at = $3 WHERE id = $1`
		if side == 1 {
			q = `UPDATE duels SET design_b = $2, submitted_b_at = $3 WHERE id = $1`
		}
		if _, err := tx.Exec(ctx, q, id, []byte(design), at); err != nil {
			return err
		}
		return s.reread(ctx, tx, id, &out)
	})
	return out, translate("submit duel design", err)
}

// EndDuel moves a duel to its final state once (game.CheckEnd): it
// reports false, writing nothing, if the duel has already ended (whoever
// ended it). A finished or forfeited duel rates both players (Glicko-2
// under the rules of game.RateDuel) in the same transaction, and the
// result records the change.
func (s *Store) EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error) {
	end.At = game.Timestamp(end.At)
	var out game.Duel
	var done bool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		done = false
		d, err := lockDuel(ctx, tx, id)
		if err != nil {
			return err
		}
		if game.DuelEnded(d.State) {
			out = d
			return nil
		}
		if err := game.CheckEnd(d, end); err != nil {
			return err
		}
		res := end.Result
		res.Ratings = []game.RatingChange{}
		if end.Rated() {
			if res.Ratings, err = rateDuel(ctx, tx, d, game.WinnerIndex(d, res), end.At); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE duels SET state = $2, ended_at = $3, result = $4 WHERE id = $1`, id, end.State, end.At, raw); err != nil {
			return err
		}
		done = true
		return s.reread(ctx, tx, id, &out)
	})
	if err != nil {
		return game.Duel{}, false, translate("end duel", err)
	}
	return out, done, nil
}

// rateDuel rates the ended duel d (game.RateDuel) and records both
// ratings and both sides' history against the other.
func rateDuel(ctx context.Context, tx pgx.Tx, d game.Duel, winner int, at time.Time) ([]game.RatingChange, error) {
	a, b, err := lockRatings(ctx, tx, d.Sides[0].PlayerID, d.Sides[1].PlayerID)
	if err != nil {
		return nil, err
	}
	var ha, hb game.PairHistory
	rows, err := tx.Query(ctx, `SELECT player_id, rated_at FROM rating_pairs
		WHERE (player_id, opponent_id) IN (($1, $2), ($2, $1))`, a.PlayerID, b.PlayerID)
	if err != nil {
		return nil, err
	}
	if _, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
		var player uuid.UUID
		var ratedAt *time.Time
		if err := row.Scan(&player, &ratedAt); err != nil {
			return struct{}{}, err
		}
		if player == a.PlayerID {
			ha = game.NewPairHistory(true, ratedAt)
		} else {
			hb = game.NewPairHistory(true, ratedAt)
		}
		return struct{}{}, nil
	}); err != nil {
		return nil, err
	}
	na, nb, changes := game.RateDuel(a, b, winner, ha, hb, at)
	var batch pgx.Batch
	for i, r := range []game.Rating{na, nb} {
		batch.Queue(`UPDATE ratings SET rating = $2, deviation = $3, volatility = $4, duels = $5, wins = $6, losses = $7, draws = $8,
			opponents = $9, rated_opponents = $10 WHERE player_id = $1`,
			r.PlayerID, r.Rating, r.Deviation, r.Volatility, r.Duels, r.Wins, r.Losses, r.Draws, r.Opponents, r.RatedOpponents)
		opponent := d.Sides[1-i].PlayerID
		batch.Queue(`INSERT INTO rating_pairs (player_id, opponent_id, rated_at) VALUES ($1, $2, $3)
			ON CONFLICT (player_id, opponent_id) DO UPDATE SET rated_at = coalesce(EXCLUDED.rated_at, rating_pairs.rated_at)`,
			r.PlayerID, opponent, changes[i].RatedAt(at))
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return nil, err
	}
	return changes, nil
}

// lockRatings creates (at the defaults) and locks both players' ratings,
// in player id order so that two duels of one player never deadlock.
func lockRatings(ctx context.Context, tx pgx.Tx, a, b uuid.UUID) (game.Rating, game.Rating, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO ratings (player_id, rating, deviation, volatility)
		SELECT p, $3::float8, $4::float8, $5::float8 FROM unnest(ARRAY[$1::uuid, $2::uuid]) AS p ORDER BY p
		ON CONFLICT (player_id) DO NOTHING`, a, b, float64(game.DefaultRating), float64(game.DefaultDeviation), game.DefaultVolatility); err != nil {
		return game.Rating{}, game.Rating{}, err
	}
	rows, err := tx.Query(ctx, `SELECT player_id, rating, deviation, volatility, duels, wins, losses, draws, opponents, rated_opponents
		FROM ratings WHERE player_id IN ($1, $2) ORDER BY player_id FOR UPDATE`, a, b)
	if err != nil {
		return game.Rating{}, game.Rating{}, err
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Rating, error) {
		var r game.Rating
		err := row.Scan(&r.PlayerID, &r.Rating, &r.Deviation, &r.Volatility, &r.Duels, &r.Wins, &r.Losses, &r.Draws, &r.Opponents, &r.RatedOpponents)
		r.Provisional = !r.Established()
		return r, err
	})
	if err != nil {
		return game.Rating{}, game.Rating{}, err
	}
	var ra, rb game.Rating
	for _, r := range got {
		if r.PlayerID == a {
			ra = r
		} else {
			rb = r
		}
	}
	return ra, rb, nil
}

// Rating returns a player's rating (the default before their first
// duel); ENOTFOUND for a missing player.
func (s *Store) Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error) {
	r := game.NewRating(playerID)
	var rating, deviation, volatility *float64
	var duels, wins, losses, draws, opponents, ratedOpponents *int
	err := s.pool.QueryRow(ctx, `SELECT p.name, r.rating, r.deviation, r.volatility, r.duels, r.wins, r.losses, r.draws, r.opponents, r.rated_opponents
		FROM players p LEFT JOIN ratings r ON r.player_id = p.id WHERE p.id = $1`, playerID).Scan(
		&r.PlayerName, &rating, &deviation, &volatility, &duels, &wins, &losses, &draws, &opponents, &ratedOpponents)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Rating{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	if err != nil {
		return game.Rating{}, translate("rating", err)
	}
	if rating != nil {
		r.Rating, r.Deviation, r.Volatility = *rating, *deviation, *volatility
		r.Duels, r.Wins, r.Losses, r.Draws = *duels, *wins, *losses, *draws
		r.Opponents, r.RatedOpponents = *opponents, *ratedOpponents
		r.Provisional = !r.Established()
	}
	return r, nil
}

// onBoard is the ratings board's predicate (game.Rating.OnBoard), written
// as a literal so that the planner matches it to the ratings_board index.
var onBoard = fmt.Sprintf("rated_opponents >= %d", game.BoardOpponents)

// Ratings returns a page of the ratings board: players whose ratings moved
// against game.BoardOpponents distinct opponents, by rating (highest
// first), then player id, after q's cursor; the page is a keyset scan of
// the ratings_board index, and ranks continue from the cursor's (exact
// within one page's snapshot).
func (s *Store) Ratings(ctx context.Context, q game.ListQuery) (game.RatingsPage, error) {
	q, cur, err := game.ParseRatingsQuery(q)
	if err != nil {
		return game.RatingsPage{}, err
	}
	// The first page starts after a position above every rating.
	after := game.RatingsCursor{Rating: math.Inf(1)}
	if cur != nil {
		after = *cur
	}
	var page game.RatingsPage
	err = s.tx(ctx, readOnly, func(tx pgx.Tx) error {
		var total int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM ratings WHERE `+onBoard).Scan(&total); err != nil {
			return err
		}
		// rating <= $1 bounds the index scan; the rest skips the cursor's
		// entry and those before it among equal ratings.
		rows, err := tx.Query(ctx, `SELECT r.player_id, r.rating, r.deviation, r.volatility, r.duels, r.wins, r.losses, r.draws,
			r.opponents, r.rated_opponents, p.name
			FROM ratings r JOIN players p ON p.id = r.player_id
			WHERE r.`+onBoard+` AND r.rating <= $1 AND (r.rating < $1 OR r.player_id > $2)
			ORDER BY r.rating DESC, r.player_id LIMIT $3`, after.Rating, after.PlayerID, q.Limit+1)
		if err != nil {
			return err
		}
		ratings, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.Rating, error) {
			var r game.Rating
			err := row.Scan(&r.PlayerID, &r.Rating, &r.Deviation, &r.Volatility, &r.Duels, &r.Wins, &r.Losses, &r.Draws,
				&r.Opponents, &r.RatedOpponents, &r.PlayerName)
			r.Provisional = !r.Established()
			return r, err
		})
		if err != nil {
			return err
		}
		page = game.RatingsPageOf(ratings, q.Limit, cur, total)
		return nil
	})
	if err != nil {
		return game.RatingsPage{}, translate("ratings", err)
	}
	return page, nil
}
