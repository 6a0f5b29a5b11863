package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// Duels reads duels and ratings (see pgstore's duels.go for each method's
// contract; the rules create, accept, decline and settle).
type Duels interface {
	Duel(ctx context.Context, id uuid.UUID) (game.Duel, error)
	PlayerDuels(ctx context.Context, playerID uuid.UUID, q game.ListQuery) (game.DuelList, error)
	Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error)
	Ratings(ctx context.Context, q game.ListQuery) (game.RatingsPage, error)
}

type createDuelRequest struct {
	Level string `json:"level" validate:"required,max=64"`
	// Opponent: the player challenged; empty asks to be matched.
	Opponent string `json:"opponent" validate:"omitempty,uuid"`
}

func (s *server) writeDuel(w http.ResponseWriter, r *http.Request, status int, d game.Duel) {
	v, err := s.rules.ShowDuel(r.Context(), d, nil)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/duels/"+d.ID.String())
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, status, v)
}

// handleCreateDuel challenges a player, or (without an opponent) asks to
// be matched, on a level's current version.
func (s *server) handleCreateDuel(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	player, _ := playerFrom(ctx)
	if player.ID == uuid.Nil {
		s.writeError(w, r, errorf(game.EFORBIDDEN, "the configured admin is not a player; create a player to duel"))
		return
	}
	var req createDuelRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	created, err := s.rules.CreateDuel(ctx, player, req.Level, req.Opponent)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeDuel(w, r, http.StatusCreated, created)
}

func (s *server) pathDuel(r *http.Request) (game.Duel, error) {
	id, err := pathUUID(r, "id", "duel")
	if err != nil {
		return game.Duel{}, err
	}
	return s.store.Duel(r.Context(), id)
}

func (s *server) handleDuel(w http.ResponseWriter, r *http.Request) {
	d, err := s.pathDuel(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	viewer, signedIn := playerFrom(r.Context())
	if !rules.CanSeeDuel(d, viewer, signedIn) {
		s.writeError(w, r, errorf(game.EDUELPRIVATE, "a duel is seen by its players only until it has ended"))
		return
	}
	s.writeDuel(w, r, http.StatusOK, d)
}

// handleMyDuels lists the signed-in player's duels by pages, newest
// first: ?limit= 1..100 (50); ?cursor= a page's next.
func (s *server) handleMyDuels(w http.ResponseWriter, r *http.Request) {
	q := game.ListQuery{Cursor: r.URL.Query().Get("cursor")}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultDuelListLimit, game.MaxListLimit); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, _, err := game.ParseDuelListQuery(q); err != nil {
		s.writeError(w, r, badRequest("a query parameter is malformed", game.ErrorFields(err)...))
		return
	}
	player, _ := playerFrom(r.Context())
	list, err := s.store.PlayerDuels(r.Context(), player.ID, q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Duels []rules.DuelView `json:"duels"`
		Next  string           `json:"next"`
	}{Duels: []rules.DuelView{}, Next: list.Next}
	ratings := make(map[uuid.UUID]game.Rating)
	for _, d := range list.Duels {
		v, err := s.rules.ShowDuel(r.Context(), d, ratings)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Duels = append(out.Duels, rules.Listed(v))
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleDuelAnswer serves the challenged player's answer to a duel:
// answer is the rule that accepts or declines it.
func (s *server) handleDuelAnswer(answer func(ctx context.Context, id uuid.UUID, player game.Player) (game.Duel, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := pathUUID(r, "id", "duel")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		player, _ := playerFrom(r.Context())
		d, err := answer(r.Context(), id, player)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.writeDuel(w, r, http.StatusOK, d)
	}
}

type duelDesignRequest struct {
	Design json.RawMessage `json:"design" validate:"required"`
}

// handleDuelDesign takes a side's design (rules.Service.SubmitDuelDesign);
// the second design in settles the duel in this request.
func (s *server) handleDuelDesign(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req duelDesignRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, design, err := rules.ParseDesign(req.Design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathUUID(r, "id", "duel")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	player, _ := playerFrom(ctx)
	duel, err := s.rules.SubmitDuelDesign(ctx, id, player, keyByPlayerOrAddress(r), clientGroup(r), d, design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeDuel(w, r, http.StatusOK, duel)
}

// handleRatings is the ratings board by pages, best first: ?limit=
// 1..100 (50); ?cursor= a page's next.
func (s *server) handleRatings(w http.ResponseWriter, r *http.Request) {
	q := game.ListQuery{Cursor: r.URL.Query().Get("cursor")}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultRatingsLimit, game.MaxListLimit); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, _, err := game.ParseRatingsQuery(q); err != nil {
		s.writeError(w, r, badRequest("a query parameter is malformed", game.ErrorFields(err)...))
		return
	}
	page, err := s.store.Ratings(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, page)
}

// playerRating is a player's rating as the profile shows it.
type playerRating struct {
	Rating    float64 `json:"rating"`
	Deviation float64 `json:"deviation"`
	Duels     int     `json:"duels"`
	Wins      int     `json:"wins"`
	Losses    int     `json:"losses"`
	Draws     int     `json:"draws"`
}

func (s *server) ratingOf(ctx context.Context, id uuid.UUID) (playerRating, error) {
	r, err := s.store.Rating(ctx, id)
	return playerRating{Rating: r.Rating, Deviation: r.Deviation, Duels: r.Duels, Wins: r.Wins, Losses: r.Losses, Draws: r.Draws}, err
}
