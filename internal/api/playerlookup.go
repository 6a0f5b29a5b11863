package api

import (
	"net/http"
	"strings"

	"backpressure/internal/game"
)

// handlePlayerByName finds one player by name (?name=, required) and returns
// their public page, as GET /v1/players/{id} does. The name matches by the
// name rule's key (game.NameKey: look-alike characters ignored); a name
// typed in capitals that matches nobody is looked up once more in lower
// case, since the key takes the skeleton before folding case (a capital I
// reads as an l). There is no listing of players.
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
	if lower := strings.ToLower(name); game.ErrorCode(err) == game.ENOTFOUND && lower != name {
		p, err = s.store.PlayerByName(r.Context(), lower)
	}
	s.writeProfile(w, r, p, err)
}
