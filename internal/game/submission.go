package game

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Submission is one design a player submitted for one level version, with the
// simulation's verdict. Submissions are never changed or deleted.
type Submission struct {
	ID       uuid.UUID       `json:"id"` // uuid.NewV7, made by the caller
	PlayerID uuid.UUID       `json:"player_id"`
	Slug     string          `json:"slug"`
	Version  int             `json:"version"`
	Design   json.RawMessage `json:"design"`
	Result   json.RawMessage `json:"result,omitempty"` // may be nil
	Passed   bool            `json:"passed"`
	// Score counts only when Passed; it must not be negative.
	Score     int64     `json:"score"`
	CreatedAt time.Time `json:"created_at"` // set by the caller; see Timestamp
}

// SubmissionReceipt is what storing a submission reports.
type SubmissionReceipt struct {
	Submission Submission `json:"submission"`
	// Improved reports that the submission beat the player's previous best
	// (or was their first pass) on its level version.
	Improved bool `json:"improved"`
	// Rank is the player's rank on the level version's board right after
	// the write, 0 if the submission did not pass.
	Rank int64 `json:"rank"`
	// Replayed reports that the receipt is the stored answer to an earlier
	// request with the same idempotency key; nothing was written.
	Replayed bool `json:"replayed"`
}

// Validate reports the invariants a store relies on.
func (s Submission) Validate() error {
	var fe []FieldError
	if s.ID == uuid.Nil {
		fe = append(fe, FieldError{Field: "id", Reason: "is required"})
	}
	if s.PlayerID == uuid.Nil {
		fe = append(fe, FieldError{Field: "player_id", Reason: "is required"})
	}
	if s.Slug == "" {
		fe = append(fe, FieldError{Field: "slug", Reason: "is required"})
	}
	if s.Version < 1 {
		fe = append(fe, FieldError{Field: "version", Reason: "must be at least 1"})
	}
	if !json.Valid(s.Design) {
		fe = append(fe, FieldError{Field: "design", Reason: "must be a JSON document"})
	}
	if s.Result != nil && !json.Valid(s.Result) {
		fe = append(fe, FieldError{Field: "result", Reason: "must be a JSON document"})
	}
	if s.Score < 0 {
		fe = append(fe, FieldError{Field: "score", Reason: "must not be negative"})
	}
	if s.CreatedAt.IsZero() {
		fe = append(fe, FieldError{Field: "created_at", Reason: "is required"})
	}
	return Invalid("invalid submission", fe)
}

// Timestamp returns t as the stores keep it: UTC, truncated to microseconds
// (PostgreSQL's precision). Stores apply it to every time they are given, so
// what comes back equals what went in after Timestamp.
func Timestamp(t time.Time) time.Time {
	return t.UTC().Truncate(time.Microsecond)
}
