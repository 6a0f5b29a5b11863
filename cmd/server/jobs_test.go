package main

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"backpressure/internal/scheduler"
)

// A deadline job that finds the simulation workers busy tries again a second later, not at
// river's growing backoff, so that a duel or an event is settled within seconds.
func TestDeadlineJobSnoozesWhileBusy(t *testing.T) {
	err := deadlineDone(t.Context(), slog.New(slog.DiscardHandler), false, scheduler.ErrBusy, "duel settled")
	var snooze *rivertype.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration != time.Second {
		t.Errorf("deadlineDone(busy) = %v, want a snooze of a second", err)
	}
	if err := deadlineDone(t.Context(), slog.New(slog.DiscardHandler), false, errors.New("boom"), "duel settled"); errors.As(err, &snooze) {
		t.Errorf("deadlineDone(other error) = %v, want river's retry, not a snooze", err)
	}
}
