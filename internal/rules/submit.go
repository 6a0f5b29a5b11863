package rules

import (
	"context"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/sim"
)

// Submissions stores submissions and, in the same transaction, boards.
type Submissions interface {
	CreateSubmission(ctx context.Context, sub game.Submission, idempotencyKey, requestHash string) (game.SubmissionReceipt, error)
	// SubmissionByIdempotencyKey finds the receipt of an earlier request
	// (ENOTFOUND if none, ECONFLICT if its hash differs), so a retry
	// skips the simulation.
	SubmissionByIdempotencyKey(ctx context.Context, playerID uuid.UUID, key, requestHash string) (game.SubmissionReceipt, error)
}

// StoreTimeout bounds the write of a finished submission. The write runs
// even if the client has gone away: the simulation's verdict is kept, and
// a retry with the same idempotency key gets it.
const StoreTimeout = 15 * time.Second

// Submission is a scored submission as the transport received it.
type Submission struct {
	Player game.Player
	// Who pays for the run from their simulation budget (the player, or
	// a client address).
	Who  string
	Slug string
	// Version, if not 0, must be the level's current version.
	Version int
	Design  sim.Design
	// Raw is the design as stored (compact JSON).
	Raw []byte
	// IdempotencyKey, if not empty, makes a retry with the same
	// RequestHash answer from the store without simulating again.
	IdempotencyKey string
	RequestHash    string
}

// Submit runs, evaluates and scores a design on the level's current version
// and stores the design, the verdict and the score in one transaction with
// the board update. A retry of an earlier request (same idempotency key) is
// answered with its receipt, Replayed.
func (s *Service) Submit(ctx context.Context, in Submission) (game.SubmissionReceipt, error) {
	if in.IdempotencyKey != "" {
		// A retry is answered from the store without simulating again.
		// (A retry racing its first request finds nothing here; then
		// CreateSubmission replays it.)
		rec, err := s.store.SubmissionByIdempotencyKey(ctx, in.Player.ID, in.IdempotencyKey, in.RequestHash)
		if game.ErrorCode(err) != game.ENOTFOUND {
			return rec, err
		}
	}
	stored, l, err := s.Level(ctx, in.Slug, 0)
	if err != nil {
		return game.SubmissionReceipt{}, err
	}
	if in.Version != 0 && in.Version != stored.Version {
		return game.SubmissionReceipt{}, game.Errorf(game.ECONFLICT,
			"version %d of %q is not current (version %d is); submissions go to the current version", in.Version, in.Slug, stored.Version)
	}
	ev, verdict, id, err := s.score(ctx, in.Who, l, in.Design)
	if err != nil {
		return game.SubmissionReceipt{}, err
	}
	sub := game.Submission{
		ID:        id,
		PlayerID:  in.Player.ID,
		Slug:      stored.Slug,
		Version:   stored.Version,
		Design:    in.Raw,
		Result:    verdict,
		Passed:    ev.Passed,
		Score:     challenges.Score(ev),
		CreatedAt: s.now(),
	}
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	return s.store.CreateSubmission(storeCtx, sub, in.IdempotencyKey, in.RequestHash)
}
