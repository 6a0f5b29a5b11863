package api

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

type createPlayerRequest struct {
	Name string `json:"name" validate:"required"`
}

type createPlayerResponse struct {
	Player game.Player `json:"player"`
	// Token is shown once; only its hash is stored.
	Token string `json:"token"`
}

// handleCreatePlayer registers a player (role player) and returns their
// bearer token, once.
func (s *server) handleCreatePlayer(w http.ResponseWriter, r *http.Request) {
	var req createPlayerRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	// The name is stored in its canonical form (game/name.go: PRECIS
	// Nickname), unique by its confusable skeleton.
	name, fe := game.CanonicalName("name", req.Name)
	if len(fe) == 0 && strings.ContainsRune(req.Name, utf8.RuneError) {
		// What encoding/json makes of a lone UTF-16 surrogate (\ud800): the
		// client did not send this character.
		fe = append(fe, game.FieldError{Field: "name", Reason: "must be valid Unicode (no unpaired surrogates or U+FFFD)"})
	}
	if err := game.Invalid("the player is invalid", fe); err != nil {
		s.writeError(w, r, err)
		return
	}
	token, hash := game.NewToken()
	p, err := s.store.CreatePlayer(r.Context(), name, game.RolePlayer, hash)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.logger(r.Context()).InfoContext(r.Context(), "player created", "player_id", p.ID.String())
	w.Header().Set("Location", "/v1/players/"+p.ID.String())
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusCreated, createPlayerResponse{Player: p, Token: token})
}

// handleMe returns the authenticated player.
func (s *server) handleMe(w http.ResponseWriter, r *http.Request) {
	p, _ := playerFrom(r.Context())
	writeJSON(w, r, http.StatusOK, p)
}

// handlePlayer returns a player's public profile (never a token), with
// their season history and event results.
func (s *server) handlePlayer(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "player")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.store.PlayerByID(r.Context(), id)
	s.writeProfile(w, r, p, err)
}

// writeProfile answers with p's public profile, or with err, the error of
// finding p.
func (s *server) writeProfile(w http.ResponseWriter, r *http.Request, p game.Player, err error) {
	var profile playerProfile
	if err == nil {
		profile, err = s.playerProfile(r.Context(), p)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, profile)
}

type setRoleRequest struct {
	Role game.Role `json:"role" validate:"required,oneof=player author admin"`
}

// handleSetRole grants or revokes a role (admins only).
func (s *server) handleSetRole(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "player")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req setRoleRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.store.SetRole(r.Context(), id, req.Role); err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.store.PlayerByID(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	admin, _ := playerFrom(r.Context())
	s.logger(r.Context()).InfoContext(r.Context(), "role changed",
		"target_player_id", id.String(), "role", string(req.Role), "by", admin.ID.String())
	writeJSON(w, r, http.StatusOK, p)
}

// pathUUID parses a UUID path parameter; a malformed one is a 404 (no such
// resource can exist), not a 400.
func pathUUID(r *http.Request, param, what string) (uuid.UUID, error) {
	id, err := uuid.Parse(chi.URLParam(r, param))
	if err != nil {
		return uuid.Nil, errorf(game.ENOTFOUND, "%s not found", what)
	}
	return id, nil
}
