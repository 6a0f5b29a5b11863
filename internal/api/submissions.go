package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

type submitRequest struct {
	Design json.RawMessage `json:"design" validate:"required"`
	// Version, if set, must be the level's current version: a client that
	// looked at an older version learns that the level changed.
	Version int `json:"version" validate:"min=0,max=2147483647"`
}

// submissionView is a stored submission as clients see it.
type submissionView struct {
	ID         uuid.UUID       `json:"id"`
	PlayerID   uuid.UUID       `json:"player_id"`
	PlayerName string          `json:"player_name"`
	Slug       string          `json:"slug"`
	Version    int             `json:"version"`
	Passed     bool            `json:"passed"`
	Score      int64           `json:"score"`
	CreatedAt  time.Time       `json:"created_at"`
	Design     json.RawMessage `json:"design"`
	// Evaluation is the verdict (conditions, score, why it happened...) without
	// the per-tick timeline; re-run the design with POST /v1/simulations
	// for that: the engine is deterministic.
	Evaluation json.RawMessage `json:"evaluation"`
}

func newSubmissionView(sub game.Submission, playerName string) submissionView {
	ev := sub.Result
	if ev == nil {
		ev = json.RawMessage("null")
	}
	return submissionView{
		ID: sub.ID, PlayerID: sub.PlayerID, PlayerName: playerName, Slug: sub.Slug, Version: sub.Version,
		Passed: sub.Passed, Score: sub.Score, CreatedAt: sub.CreatedAt, Design: sub.Design, Evaluation: ev,
	}
}

type submitResponse struct {
	Submission submissionView `json:"submission"`
	// Improved: this submission is the player's new best on the level
	// version's board (or their first pass).
	Improved bool `json:"improved"`
	// Rank is the player's rank on the level version's board right after
	// this submission; null when it did not pass.
	Rank *int64 `json:"rank"`
	// Replayed: the answer to an earlier request with the same
	// Idempotency-Key; nothing new was stored.
	Replayed bool `json:"replayed"`
}

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 255

// handleSubmit scores a design on the level's current version and stores
// it (rules.Service.Submit); a retry with the same Idempotency-Key is
// answered with the first request's receipt.
func (s *server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	defer s.sched.Submitting()()
	ctx := r.Context()
	player, _ := playerFrom(ctx)
	if player.ID == uuid.Nil {
		s.writeError(w, r, errorf(game.EFORBIDDEN, "the configured admin is not a player; create a player to submit"))
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey || !printableASCII(key) {
		s.writeError(w, r, badRequest("the Idempotency-Key header is malformed",
			game.FieldError{Field: "Idempotency-Key", Reason: "must be 1 to 255 printable ASCII characters"}))
		return
	}
	var req submitRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, design, err := rules.ParseDesign(req.Design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	slug, err := pathSlug(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.rules.Submit(ctx, rules.Submission{Player: player, Who: keyByPlayerOrAddress(r), Slug: slug, Version: req.Version,
		Design: d, Raw: design, IdempotencyKey: key, RequestHash: requestHash(slug, req.Version, design)})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeReceipt(w, r, player, rec)
}

// writeReceipt answers a submission with its receipt (stored now or
// replayed).
func (s *server) writeReceipt(w http.ResponseWriter, r *http.Request, player game.Player, rec game.SubmissionReceipt) {
	ctx := r.Context()
	sub := rec.Submission
	resp := submitResponse{
		Submission: newSubmissionView(rec.Submission, player.Name),
		Improved:   rec.Improved,
		Replayed:   rec.Replayed,
	}
	if rec.Rank > 0 {
		resp.Rank = &rec.Rank
	}
	if rec.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	} else {
		s.logger(ctx).InfoContext(ctx, "submission stored", "submission_id", sub.ID.String(), "slug", sub.Slug,
			"version", sub.Version, "passed", sub.Passed, "score", sub.Score, "improved", rec.Improved, "rank", rec.Rank)
	}
	w.Header().Set("Location", "/v1/submissions/"+rec.Submission.ID.String())
	writeJSON(w, r, http.StatusCreated, resp)
}

// requestHash identifies a submission request for idempotency: the same key
// with a different level or design is a conflict, not a replay.
func requestHash(slug string, version int, design []byte) string {
	h := sha256.New()
	h.Write([]byte(slug))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(version)))
	h.Write([]byte{0})
	h.Write(design)
	return hex.EncodeToString(h.Sum(nil))
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// handleSubmission returns a stored submission (public: leaderboards link
// to the submissions behind their entries).
func (s *server) handleSubmission(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "submission")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, err := s.store.Submission(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.store.PlayerByID(r.Context(), sub.PlayerID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, newSubmissionView(sub, p.Name))
}
