package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// Seasons stores the seasons of the operator's schedule and their boards
// (see game/season.go for the rules and pgstore's seasons.go for how the
// database keeps them).
type Seasons interface {
	Seasons(ctx context.Context, q game.ListQuery) (game.SeasonList, error)
	Season(ctx context.Context, id string) (game.Season, error)
	SeasonBoard(ctx context.Context, id string, q game.BoardQuery) (game.BoardPage, error)
	PlayerHistory(ctx context.Context, playerID uuid.UUID) (game.PlayerHistory, error)
}

// handleSeasons lists the stored seasons by pages, the latest first:
// ?limit= 1..100 (20); ?cursor= a page's next.
func (s *server) handleSeasons(w http.ResponseWriter, r *http.Request) {
	q := game.ListQuery{Cursor: r.URL.Query().Get("cursor")}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultListLimit, game.MaxListLimit); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, _, err := game.ParseSeasonListQuery(q); err != nil {
		s.writeError(w, r, badRequest("a query parameter is malformed", game.ErrorFields(err)...))
		return
	}
	seasons, err := s.store.Seasons(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, seasons)
}

// pathSeason reads the season id of the path; a malformed one is a 404.
func pathSeason(r *http.Request) (string, error) {
	id := chi.URLParam(r, "id")
	if !game.ValidSeasonID(id) {
		return "", errorf(game.ENOTFOUND, "season not found")
	}
	return id, nil
}

// handleSeason returns one season.
func (s *server) handleSeason(w http.ResponseWriter, r *http.Request) {
	id, err := pathSeason(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	season, err := s.store.Season(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, season)
}

// handleSeasonBoard serves one page of a season's board, with the same
// parameters as the global board (limit, cursor, around=me).
func (s *server) handleSeasonBoard(w http.ResponseWriter, r *http.Request) {
	id, err := pathSeason(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if r.URL.Query().Has("version") {
		s.writeError(w, r, badRequest("a query parameter is malformed",
			game.FieldError{Field: "version", Reason: "a season's board has no versions"}))
		return
	}
	q, err := s.boardQuery(r, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.store.SeasonBoard(r.Context(), id, q)
	if err != nil {
		if q.AroundPlayer != nil && game.ErrorCode(err) == game.ENOTFOUND {
			if _, serr := s.store.Season(r.Context(), id); serr == nil {
				err = errorf(game.ENOTFOUND, "you are not on this season's board: submit a passing design during the season first")
			}
		}
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, page)
}

// playerProfile is a player's public page: the player, the seasons they
// played and their event results (never a token).
type playerProfile struct {
	game.Player
	game.PlayerHistory
	Rating playerRating `json:"rating"`
	// Stars are the player's stars on each level they passed and their
	// campaign total.
	Stars rules.PlayerStars `json:"stars"`
}

func (s *server) playerProfile(ctx context.Context, p game.Player) (playerProfile, error) {
	h, err := s.store.PlayerHistory(ctx, p.ID)
	if err != nil {
		return playerProfile{}, err
	}
	rating, err := s.ratingOf(ctx, p.ID)
	if err != nil {
		return playerProfile{}, err
	}
	stars, err := s.playerStars(ctx, p.ID, nil)
	if err != nil {
		return playerProfile{}, err
	}
	return playerProfile{Player: p, PlayerHistory: h, Rating: rating, Stars: stars}, nil
}
