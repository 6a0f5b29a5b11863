package api

import (
	"encoding/json"
	"net/http"

	"backpressure/internal/rules"
)

// checkLevelRequest is a level an author wants tried before publishing, with
// a design the author says passes it.
type checkLevelRequest struct {
	Level           json.RawMessage `json:"level" validate:"required"`
	ReferenceDesign json.RawMessage `json:"reference_design"`
}

// handleCheckChallenge runs every check publishing runs (authors), stores
// nothing, and answers with both designs' verdicts and the level's cost
// bound; a level with problems is a 422 listing them all, as at upload.
func (s *server) handleCheckChallenge(w http.ResponseWriter, r *http.Request) {
	var req checkLevelRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	_, check, err := s.rules.CheckLevel(r.Context(), keyByPlayerOrAddress(r), rules.LevelDraft{
		Document: req.Level, Field: "level", Reference: req.ReferenceDesign})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, check)
}
