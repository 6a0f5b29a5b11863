package pgstore

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

// CreateSubmission stores sub and, when it passed with a better score than
// the player's best on its level version (or their first pass), makes it
// their best there and updates the global board, all in one statement
// (bp_submit, migration 000004), so in one transaction and one round trip.
//
// idempotencyKey, unless "", makes the call safe to retry: a later call by
// the same player with the same key writes nothing and returns the first
// receipt with Replayed set, or ECONFLICT if requestHash (the caller's hash
// of the request body) differs from the first call's.
//
// sub.ID and sub.CreatedAt come from the caller; CreatedAt is the time the
// score was achieved, normalised with game.Timestamp. If this store served
// the level version as current from its cache, the write also requires it
// to still hold that content and be current (ECONFLICT otherwise, nothing
// stored): see the package documentation, "Caches".
func (s *Store) CreateSubmission(ctx context.Context, sub game.Submission, idempotencyKey, requestHash string) (game.SubmissionReceipt, error) {
	if err := sub.Validate(); err != nil {
		return game.SubmissionReceipt{}, err
	}
	sub.CreatedAt = game.Timestamp(sub.CreatedAt)
	sub.Design = append([]byte(nil), sub.Design...)
	if sub.Result != nil {
		sub.Result = append([]byte(nil), sub.Result...)
	}
	// A level this store served from its cache is checked in the write:
	// if it changed (or stopped being current) since, nothing is stored.
	expectHash, expectCurrent := s.levels.expectation(sub.Slug, sub.Version)
	var replayed *uuid.UUID
	rec := game.SubmissionReceipt{Submission: sub}
	err := s.retry(ctx, func() error {
		return s.pool.QueryRow(ctx, `SELECT o_replayed, o_improved, o_rank FROM bp_submit(
				$1::uuid, $2::uuid, $3::text, $4::int4, $5::text, $6::bool, $7::json, $8::json,
				$9::bool, $10::int8, $11::timestamptz, $12::text, $13::text, $14::int8)`,
			sub.ID, sub.PlayerID, sub.Slug, sub.Version, expectHash, expectCurrent,
			string(sub.Design), nullJSON(sub.Result), sub.Passed, sub.Score, sub.CreatedAt,
			idempotencyKey, requestHash, int64(s.bucketSize)).Scan(&replayed, &rec.Improved, &rec.Rank)
	})
	if err != nil {
		if code := submitErrorCode(err); code != "" {
			if code == "BP412" {
				s.levels.forget(sub.Slug)
			}
			return game.SubmissionReceipt{}, submitError(code)
		}
		return game.SubmissionReceipt{}, translate("create submission", err)
	}
	if replayed != nil {
		// The key's first request committed before this one claimed it:
		// its submission is stored and answered as it was then.
		stored, err := s.Submission(ctx, *replayed)
		if err != nil {
			return game.SubmissionReceipt{}, err
		}
		rec.Submission, rec.Replayed = stored, true
	}
	return rec, nil
}

// submitErrorCode returns the SQLSTATE of one of bp_submit's own refusals
// (see migration 000004), or "".
func submitErrorCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "BP") {
		return pgErr.Code
	}
	return ""
}

func submitError(code string) error {
	switch code {
	case "BP404":
		return game.Errorf(game.ENOTFOUND, "level not found")
	case "BP409":
		return game.Errorf(game.ECONFLICT, "idempotency key was already used for a different request")
	}
	return game.Errorf(game.ECONFLICT, "the level changed while the design was being scored; submit again")
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
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
