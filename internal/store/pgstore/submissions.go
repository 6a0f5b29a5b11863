package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// CreateSubmission stores sub and, when it passed with a better score than
// the player's best on its level version (or their first pass), makes it
// their best there and updates the global board, all in one transaction.
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
	var rec game.SubmissionReceipt
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		rec = game.SubmissionReceipt{Submission: sub}
		if idempotencyKey != "" {
			// Claim the key first: a concurrent retry blocks here until
			// this transaction ends, then replays its receipt.
			tag, err := tx.Exec(ctx, `
				INSERT INTO submission_requests (player_id, idempotency_key, request_hash, submission_id, created_at)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
				sub.PlayerID, idempotencyKey, requestHash, sub.ID, sub.CreatedAt)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				rec, err = replay(ctx, tx, sub.PlayerID, idempotencyKey, requestHash)
				return err
			}
		}
		var board int64
		var current bool
		// FOR SHARE: PutLevel must not replace or supersede this version
		// while submissions to it are being written.
		var contentHash string
		err := tx.QueryRow(ctx, `SELECT board_id, is_current, content_hash FROM levels WHERE slug = $1 AND version = $2 FOR SHARE`,
			sub.Slug, sub.Version).Scan(&board, &current, &contentHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return game.Errorf(game.ENOTFOUND, "level not found")
		}
		if err != nil {
			return err
		}
		if expectCurrent && (!current || contentHash != expectHash) {
			s.levels.forget(sub.Slug)
			return game.Errorf(game.ECONFLICT, "level %s changed while this design was scored; submit again", sub.Slug)
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO submissions (id, player_id, slug, version, design, result, passed, score, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			sub.ID, sub.PlayerID, sub.Slug, sub.Version, []byte(sub.Design), nullJSON(sub.Result),
			sub.Passed, sub.Score, sub.CreatedAt); err != nil {
			return err
		}
		if sub.Passed {
			if !current {
				// An old version still being taken off the global board:
				// this player's best there leaves it first, so that the
				// improvement below never reaches the global board.
				var draining bool
				if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM global_drains WHERE board_id = $1)`,
					board).Scan(&draining); err != nil {
					return err
				}
				if draining {
					if err := s.leaveGlobal(ctx, tx, board, sub.PlayerID); err != nil {
						return err
					}
				}
			}
			key := game.BoardKey{Score: sub.Score, AchievedAt: sub.CreatedAt, PlayerID: sub.PlayerID}
			improved, old, hadBest, err := s.raiseBest(ctx, tx, board, key, sub.ID, current)
			if err != nil {
				return err
			}
			rec.Improved = improved
			if improved && current {
				// A total never counts two versions of one level: the
				// player's best on a version still being drained leaves
				// the global board before this one joins it.
				if err := s.leaveDrainingVersions(ctx, tx, sub.Slug, sub.PlayerID); err != nil {
					return err
				}
				delta := sub.Score
				if hadBest {
					delta -= old.Score
				}
				// An equal score reached earlier replaced the best:
				// the total is the same, but when it was reached may
				// have changed.
				retime := hadBest && delta == 0
				if err := s.addToGlobal(ctx, tx, sub.PlayerID, delta, retime, sub.CreatedAt, sub.ID); err != nil {
					return err
				}
			}
			if improved {
				var prev *game.BoardKey
				if hadBest {
					prev = &old
				}
				// Last: it holds the board's change counter until commit.
				change, err := recordChange(ctx, tx, board, sub, prev)
				if err != nil {
					return err
				}
				rec.Rank = change.Rank
			} else {
				e, err := playerEntry(ctx, tx, board, sub.PlayerID)
				if err != nil {
					return err
				}
				rec.Rank = e.Rank
			}
		}
		if idempotencyKey != "" {
			if _, err := tx.Exec(ctx, `
				UPDATE submission_requests SET improved = $3, rank = $4
				WHERE player_id = $1 AND idempotency_key = $2`,
				sub.PlayerID, idempotencyKey, rec.Improved, rec.Rank); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return game.SubmissionReceipt{}, translate("create submission", err)
	}
	return rec, nil
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}

// replay returns the stored receipt for (player, key).
func replay(ctx context.Context, tx pgx.Tx, player uuid.UUID, key, requestHash string) (game.SubmissionReceipt, error) {
	var rec game.SubmissionReceipt
	var storedHash string
	var id uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT request_hash, submission_id, improved, rank FROM submission_requests
		WHERE player_id = $1 AND idempotency_key = $2`, player, key).Scan(&storedHash, &id, &rec.Improved, &rec.Rank)
	if err != nil {
		return rec, err
	}
	if storedHash != requestHash {
		return rec, game.Errorf(game.ECONFLICT, "idempotency key was already used for a different request")
	}
	rec.Submission, err = scanSubmission(tx.QueryRow(ctx, `SELECT `+submissionColumns+` FROM submissions WHERE id = $1`, id))
	rec.Replayed = true
	return rec, err
}

// raiseBest makes k (with submission subID) the player's entry on board if
// it beats their current one. It reports whether it did and the previous
// best, if any.
//
// current says whether board is a current version's: a first entry on any
// other board is marked left_global (it never counts on the global board).
func (s *Store) raiseBest(ctx context.Context, tx pgx.Tx, board int64, k game.BoardKey, subID uuid.UUID, current bool) (improved bool, old game.BoardKey, hadBest bool, err error) {
	for {
		old = game.BoardKey{PlayerID: k.PlayerID}
		err := tx.QueryRow(ctx, `
			SELECT score, achieved_at FROM board_entries WHERE board_id = $1 AND player_id = $2 FOR UPDATE`,
			board, k.PlayerID).Scan(&old.Score, &old.AchievedAt)
		if err == nil {
			if !k.Beats(old) {
				return false, old, true, nil
			}
			if _, err := tx.Exec(ctx, `
				UPDATE board_entries SET score = $3, achieved_at = $4, submission_id = $5
				WHERE board_id = $1 AND player_id = $2`,
				board, k.PlayerID, k.Score, k.AchievedAt, subID); err != nil {
				return false, old, false, err
			}
			return true, old, true, s.moveKey(ctx, tx, board, &old, k)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return false, old, false, err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id, left_global)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (board_id, player_id) DO NOTHING`,
			board, k.PlayerID, k.Score, k.AchievedAt, subID, !current)
		if err != nil {
			return false, old, false, err
		}
		if tag.RowsAffected() == 1 {
			return true, game.BoardKey{}, false, s.moveKey(ctx, tx, board, nil, k)
		}
		// A concurrent transaction of the same player inserted the entry
		// first (and has committed, or the insert would still wait): read
		// it again, now locking it.
	}
}

// addToGlobal adds delta to the player's global total, which they reached at
// time at with submission subID. With retime (and delta 0) it instead
// recomputes when the unchanged total was reached, see retimeGlobal.
func (s *Store) addToGlobal(ctx context.Context, tx pgx.Tx, player uuid.UUID, delta int64, retime bool, at time.Time, subID uuid.UUID) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1::int4, 0)`, lockGlobal); err != nil {
		return err
	}
	for {
		old := game.BoardKey{PlayerID: player}
		err := tx.QueryRow(ctx, `
			SELECT score, achieved_at FROM board_entries WHERE board_id = 0 AND player_id = $1 FOR UPDATE`,
			player).Scan(&old.Score, &old.AchievedAt)
		if err == nil {
			if delta == 0 && retime {
				// An equal score reached earlier replaced a level best
				// (two submissions of one player committing out of
				// order): the time the total was reached is again the
				// latest of the player's current bests.
				return s.retimeGlobal(ctx, tx, old)
			}
			if delta == 0 {
				return nil // same total, reached earlier
			}
			nw := game.BoardKey{Score: old.Score + delta, AchievedAt: at, PlayerID: player}
			if _, err := tx.Exec(ctx, `
				UPDATE board_entries SET score = $2, achieved_at = $3, submission_id = $4
				WHERE board_id = 0 AND player_id = $1`, player, nw.Score, at, subID); err != nil {
				return err
			}
			return s.moveKey(ctx, tx, globalBoard, &old, nw)
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		nw := game.BoardKey{Score: delta, AchievedAt: at, PlayerID: player}
		tag, err := tx.Exec(ctx, `
			INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
			VALUES (0, $1, $2, $3, $4) ON CONFLICT (board_id, player_id) DO NOTHING`,
			player, nw.Score, at, subID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			return s.moveKey(ctx, tx, globalBoard, nil, nw)
		}
	}
}

// retimeGlobal sets the locked global entry old to the time, and
// submission, of the latest of the player's current-version bests (the rule
// dropFromGlobal uses too), moving its key in the buckets.
func (s *Store) retimeGlobal(ctx context.Context, tx pgx.Tx, old game.BoardKey) error {
	var at time.Time
	var subID uuid.UUID
	err := tx.QueryRow(ctx, `
		SELECT c.achieved_at, c.submission_id
		FROM board_entries c JOIN levels l ON l.board_id = c.board_id AND l.is_current
		WHERE c.player_id = $1
		ORDER BY c.achieved_at DESC, c.submission_id DESC LIMIT 1`, old.PlayerID).Scan(&at, &subID)
	if err != nil {
		return err
	}
	nw := game.BoardKey{Score: old.Score, AchievedAt: at, PlayerID: old.PlayerID}
	if nw.Compare(old) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `
		UPDATE board_entries SET achieved_at = $2, submission_id = $3
		WHERE board_id = 0 AND player_id = $1`, old.PlayerID, at, subID); err != nil {
		return err
	}
	return s.moveKey(ctx, tx, globalBoard, &old, nw)
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
