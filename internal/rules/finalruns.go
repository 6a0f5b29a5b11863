package rules

import (
	"context"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// FinalRuns stores an event's final runs while it finishes, so that a
// finisher that dies mid-way leaves its work to the next (see
// finishEvent).
type FinalRuns interface {
	EventFinalRuns(ctx context.Context, id uuid.UUID) ([]game.EventResult, error)
	SaveEventFinalRuns(ctx context.Context, id uuid.UUID, runs []game.EventResult) error
}
