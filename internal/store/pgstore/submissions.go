package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

// CreateSubmission stores sub and, when it passed with a better score than
// the player's best on its level version (or their first pass), makes it
// their best there, updates the global board and numbers, logs and
// announces the board change, all in one transaction: one statement,
// bp_submit (migration 000010), so one round trip.
//
// idempotencyKey, unless "", makes the call safe to retry: a later call by
// the same player with the same key writes nothing and returns the first
// receipt with Replayed set, or ECONFLICT if requestHash (the caller's hash
// of the request body) differs from the first call's.
//
// sub.ID and sub.CreatedAt come from the caller; CreatedAt is the time the
// score was achieved, normalised with game.Timestamp.
func (s *Store) CreateSubmission(ctx context.Context, sub game.Submission, idempotencyKey, requestHash string) (game.SubmissionReceipt, error) {
	if err := sub.Validate(); err != nil {
		return game.SubmissionReceipt{}, err
	}
	sub.CreatedAt = game.Timestamp(sub.CreatedAt)
	sub.Design = append([]byte(nil), sub.Design...)
	if sub.Result != nil {
		sub.Result = append([]byte(nil), sub.Result...)
	}
	// A level this store served from its cache as current is checked in
	// the write: if it stopped being current since, nothing is stored and
	// the player is asked to submit again (versions never change, so the
	// content itself cannot differ).
	expectHash, expectCurrent := s.levels.expectation(sub.Slug, sub.Version)
	// The parts of the board change's notice known before the write, in
	// encoding/json's form; bp_record_change adds the rest.
	n, err := noticeParts(sub)
	if err != nil {
		return game.SubmissionReceipt{}, fmt.Errorf("pgstore: create submission: %w", err)
	}
	var rec game.SubmissionReceipt
	var stored storedSubmission
	err = s.retry(ctx, func() error {
		rec = game.SubmissionReceipt{Submission: sub}
		stored = storedSubmission{}
		return s.pool.QueryRow(ctx, `
			SELECT o_replayed, o_improved, o_rank, o_sub_id, o_sub_slug, o_sub_version, o_sub_design,
				o_sub_result, o_sub_passed, o_sub_score, o_sub_created_at
			FROM bp_submit($1::uuid, $2::uuid, $3::text, $4::int4, $5::text, $6::bool, $7::json, $8::json,
				$9::bool, $10::int8, $11::timestamptz, $12::text, $13::text, $14::int8,
				$15::text, $16::text, $17::text, $18::text, $19::int4, $20::int8, $21::int8)`,
			sub.ID, sub.PlayerID, sub.Slug, sub.Version, expectHash, expectCurrent,
			[]byte(sub.Design), nullJSON(sub.Result), sub.Passed, sub.Score, sub.CreatedAt,
			idempotencyKey, requestHash, int64(s.bucketSize),
			NoticeChannel, n.topic, n.slug, n.at, maxNoticePayload, int64(pruneEvery), int64(game.ChangeRetention),
		).Scan(&rec.Replayed, &rec.Improved, &rec.Rank, &stored.id, &stored.slug, &stored.version, &stored.design,
			&stored.result, &stored.passed, &stored.score, &stored.createdAt)
	})
	if err != nil {
		return game.SubmissionReceipt{}, s.submitError(sub.Slug, err)
	}
	if rec.Replayed {
		rec.Submission = stored.submission(sub.PlayerID)
	}
	return rec, nil
}

// storedSubmission is the submission bp_submit returns with a replay (its
// columns are NULL otherwise).
type storedSubmission struct {
	id             *uuid.UUID
	slug           *string
	version        *int32
	design, result []byte
	passed         *bool
	score          *int64
	createdAt      *time.Time
}

func (st storedSubmission) submission(player uuid.UUID) game.Submission {
	sub := game.Submission{PlayerID: player, Design: st.design, Result: st.result}
	if st.id != nil {
		sub.ID = *st.id
	}
	if st.slug != nil {
		sub.Slug = *st.slug
	}
	if st.version != nil {
		sub.Version = int(*st.version)
	}
	if st.passed != nil {
		sub.Passed = *st.passed
	}
	if st.score != nil {
		sub.Score = *st.score
	}
	if st.createdAt != nil {
		sub.CreatedAt = st.createdAt.UTC()
	}
	return sub
}

// notice holds the JSON-encoded parts of a board change's notice that the
// submission alone decides.
type notice struct{ topic, slug, at string }

func noticeParts(sub game.Submission) (notice, error) {
	var n notice
	for _, p := range []struct {
		dst *string
		v   any
	}{{&n.topic, game.BoardTopic(sub.Slug, sub.Version)}, {&n.slug, sub.Slug}, {&n.at, sub.CreatedAt}} {
		b, err := json.Marshal(p.v)
		if err != nil {
			return notice{}, err
		}
		*p.dst = string(b)
	}
	return n, nil
}

// submitError translates bp_submit's own refusals (SQLSTATE BPnnn, see
// migration 000010) and every other error.
func (s *Store) submitError(slug string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "BP404":
			return game.Errorf(game.ENOTFOUND, "level not found")
		case "BP409":
			return game.Errorf(game.ECONFLICT, "idempotency key was already used for a different request")
		case "BP412":
			s.levels.forget(slug)
			return game.Errorf(game.ECONFLICT, "level %s changed while this design was scored; submit again", slug)
		}
	}
	return translate("create submission", err)
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// SubmissionByIdempotencyKey returns the stored receipt of the player's
// earlier request with key, with Replayed set, so a retry can be answered
// without running the simulation again. It returns ENOTFOUND if the key is
// unused and ECONFLICT if it was used for a request whose hash differs from
// requestHash. CreateSubmission stays the authority: a retry that races the
// first request finds nothing here and is then replayed by it.
func (s *Store) SubmissionByIdempotencyKey(ctx context.Context, playerID uuid.UUID, key, requestHash string) (game.SubmissionReceipt, error) {
	if key == "" {
		return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "no request with this idempotency key")
	}
	var rec game.SubmissionReceipt
	var storedHash string
	var design, result []byte
	sub := &rec.Submission
	err := s.pool.QueryRow(ctx, `
		SELECT r.request_hash, r.improved, r.rank,
			s.id, s.player_id, s.slug, s.version, s.design, s.result, s.passed, s.score, s.created_at
		FROM submission_requests r JOIN submissions s ON s.id = r.submission_id
		WHERE r.player_id = $1 AND r.idempotency_key = $2`, playerID, key).Scan(
		&storedHash, &rec.Improved, &rec.Rank,
		&sub.ID, &sub.PlayerID, &sub.Slug, &sub.Version, &design, &result, &sub.Passed, &sub.Score, &sub.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "no request with this idempotency key")
	}
	if err != nil {
		return game.SubmissionReceipt{}, translate("submission by idempotency key", err)
	}
	if storedHash != requestHash {
		return game.SubmissionReceipt{}, game.Errorf(game.ECONFLICT, "idempotency key was already used for a different request")
	}
	sub.Design, sub.Result = design, result
	sub.CreatedAt = sub.CreatedAt.UTC()
	rec.Replayed = true
	return rec, nil
}

const submissionColumns = `id, player_id, slug, version, design, result, passed, score, created_at`

func scanSubmission(row pgx.Row) (game.Submission, error) {
	var sub game.Submission
	var design, result []byte
	err := row.Scan(&sub.ID, &sub.PlayerID, &sub.Slug, &sub.Version, &design, &result, &sub.Passed, &sub.Score, &sub.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Submission{}, game.Errorf(game.ENOTFOUND, "submission not found")
	}
	if err != nil {
		return game.Submission{}, err
	}
	sub.Design, sub.Result = design, result
	sub.CreatedAt = sub.CreatedAt.UTC()
	return sub, nil
}

// Submission returns the submission with the given ID.
func (s *Store) Submission(ctx context.Context, id uuid.UUID) (game.Submission, error) {
	sub, err := scanSubmission(s.pool.QueryRow(ctx, `SELECT `+submissionColumns+` FROM submissions WHERE id = $1`, id))
	return sub, translate("submission", err)
}
