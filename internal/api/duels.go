package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// Duels reads duels and ratings (see pgstore's duels.go for each method's
// contract; the rules create, accept, decline and settle).
type Duels interface {
	Duel(ctx context.Context, id uuid.UUID) (game.Duel, error)
	PlayerDuels(ctx context.Context, playerID uuid.UUID, limit int) ([]game.Duel, error)
	Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error)
	Ratings(ctx context.Context, offset, limit int) (game.RatingsPage, error)
}

// maxDuelList bounds GET /v1/duels.
const maxDuelList = 100

type createDuelRequest struct {
	Level string `json:"level" validate:"required,max=64"`
	// Opponent: the player challenged; empty asks to be matched.
	Opponent string `json:"opponent" validate:"omitempty,uuid"`
}

type duelPlayerView struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Rating    float64   `json:"rating"`
	Submitted bool      `json:"submitted"`
}

// duelView is a duel as clients see it: designs, the surprise chaos and
// the result only once it has ended.
type duelView struct {
	ID            uuid.UUID        `json:"id"`
	Level         string           `json:"level"`
	Version       int              `json:"version"`
	State         string           `json:"state"`
	Players       []duelPlayerView `json:"players"`
	CreatedAt     time.Time        `json:"created_at"`
	AcceptBy      time.Time        `json:"accept_by"`
	SubmitBy      *time.Time       `json:"submit_by"`
	EndedAt       *time.Time       `json:"ended_at"`
	Seq           int64            `json:"seq"`
	SurpriseChaos json.RawMessage  `json:"surprise_chaos"`
	Result        *game.DuelResult `json:"result"`
}

func (s *server) duelView(ctx context.Context, d game.Duel) (duelView, error) {
	return s.duelViewRated(ctx, d, nil)
}

// duelViewRated is duelView reading each player's rating once per ratings
// map: a list of a player's duels names that player in every one of them.
func (s *server) duelViewRated(ctx context.Context, d game.Duel, ratings map[uuid.UUID]game.Rating) (duelView, error) {
	v := duelView{ID: d.ID, Level: d.Slug, Version: d.Version, State: d.State, Players: []duelPlayerView{},
		CreatedAt: d.CreatedAt, AcceptBy: d.AcceptBy, SubmitBy: d.SubmitBy, EndedAt: d.EndedAt, Seq: d.Seq,
		SurpriseChaos: json.RawMessage("null")}
	for _, side := range d.Sides {
		if side.PlayerID == uuid.Nil {
			continue
		}
		rating, known := ratings[side.PlayerID]
		if !known {
			var err error
			if rating, err = s.store.Rating(ctx, side.PlayerID); err != nil {
				return duelView{}, err
			}
			if ratings != nil {
				ratings[side.PlayerID] = rating
			}
		}
		v.Players = append(v.Players, duelPlayerView{ID: side.PlayerID, Name: side.PlayerName, Rating: rating.Rating, Submitted: side.Submitted()})
	}
	if game.DuelEnded(d.State) && d.Result != nil {
		v.Result = d.Result
		if d.Result.Surprise != nil {
			v.SurpriseChaos = d.Result.Surprise
		} else {
			v.SurpriseChaos = json.RawMessage("[]")
		}
	}
	return v, nil
}

// canSee: a pending duel is its players' business; an ended one is public.
func canSee(d game.Duel, viewer game.Player, signedIn bool) bool {
	if game.DuelEnded(d.State) {
		return true
	}
	return signedIn && (viewer.Role == game.RoleAdmin || d.Side(viewer.ID) >= 0)
}

func (s *server) writeDuel(w http.ResponseWriter, r *http.Request, status int, d game.Duel) {
	v, err := s.duelView(r.Context(), d)
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
	if !canSee(d, viewer, signedIn) {
		s.writeError(w, r, errorf(game.EDUELPRIVATE, "a duel is seen by its players only until it has ended"))
		return
	}
	s.writeDuel(w, r, http.StatusOK, d)
}

// handleMyDuels lists the signed-in player's duels, newest first.
func (s *server) handleMyDuels(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 50, 1, maxDuelList)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if limit < 1 {
		s.writeError(w, r, badRequest("limit is malformed", game.FieldError{Field: "limit", Reason: "must be 1 to 100"}))
		return
	}
	player, _ := playerFrom(r.Context())
	duels, err := s.store.PlayerDuels(r.Context(), player.ID, limit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := struct {
		Duels []duelView `json:"duels"`
	}{Duels: []duelView{}}
	ratings := make(map[uuid.UUID]game.Rating)
	for _, d := range duels {
		v, err := s.duelViewRated(r.Context(), d, ratings)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out.Duels = append(out.Duels, listed(v))
	}
	writeJSON(w, r, http.StatusOK, out)
}

// listed is a duel as a list shows it: who won and the scores, without
// either side's design, verdict or timeline. An ended duel carries both
// runs' ticks (a megabyte or more), so a list of them would cost its reader
// and the server a hundred times what one duel does; GET /v1/duels/{id}
// has them.
func listed(v duelView) duelView {
	if v.Result == nil {
		return v
	}
	res := *v.Result
	null := json.RawMessage("null")
	res.Sides = make([]game.DuelResultSide, len(v.Result.Sides))
	for i, side := range v.Result.Sides {
		side.Design, side.Summary, side.Evaluation, side.Components, side.Ticks = null, null, null, null, null
		side.Every, side.TotalTicks = 0, 0
		res.Sides[i] = side
	}
	v.Result = &res
	return v
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
	duel, err := s.rules.SubmitDuelDesign(ctx, id, player, keyByPlayerOrAddress(r), d, design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeDuel(w, r, http.StatusOK, duel)
}

// handleRatings is the ratings board.
func (s *server) handleRatings(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 50, 1, game.MaxRatingsLimit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, err := queryInt(r, "offset", 0, 0, 1_000_000_000)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if limit < 1 {
		s.writeError(w, r, badRequest("limit is malformed", game.FieldError{Field: "limit", Reason: "must be 1 to 100"}))
		return
	}
	page, err := s.store.Ratings(r.Context(), offset, limit)
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
