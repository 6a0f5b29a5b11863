package api

import (
	"net/http"

	"backpressure/internal/game"
)

// handlePlayerByName finds one player by name (?name=, required) and returns
// their public page, as GET /v1/players/{id} does. The name matches by the
// name rule's keys (game.NameKey and game.NameLowerKey: case and look-alike
// characters ignored). There is no listing of players.
func (s *server) handlePlayerByName(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("name") {
		s.writeError(w, r, game.Invalid("the request is invalid", []game.FieldError{
			{Field: "name", Reason: "is required: players are looked up by name, never listed"}}))
		return
	}
	name, fe := game.CanonicalName("name", q.Get("name"))
	if err := game.Invalid("the request is invalid", fe); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.store.PlayerByName(r.Context(), name)
	s.writeProfile(w, r, p, err)
}
