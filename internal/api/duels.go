package api

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// Duels stores duels and ratings (see pgstore's duels.go for each
// method's contract). Every rule is checked by the store, in the
// transaction that applies it, against the duel as locked there.
type Duels interface {
	CreateDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	MatchDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	Duel(ctx context.Context, id uuid.UUID) (game.Duel, error)
	PlayerDuels(ctx context.Context, playerID uuid.UUID, limit int) ([]game.Duel, error)
	OpenDuels(ctx context.Context) ([]game.Duel, error)
	AcceptDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time, rules game.DuelRules) (game.Duel, error)
	DeclineDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time) (game.Duel, error)
	SubmitDuelDesign(ctx context.Context, id, playerID uuid.UUID, design json.RawMessage, at time.Time) (game.Duel, error)
	EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error)
	Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error)
	Ratings(ctx context.Context, offset, limit int) (game.RatingsPage, error)
}

// DuelScheduler arranges for a duel to be settled at (or soon after) a
// deadline, once, across replicas (a PostgreSQL job queue in cmd/server).
type DuelScheduler interface {
	ScheduleDuel(ctx context.Context, duelID uuid.UUID, at time.Time) error
}

// Duel defaults (docs/api.md "Duels").
const (
	DefaultDuelChallengeTTL   = 24 * time.Hour
	DefaultDuelSubmitWindow   = 30 * time.Minute
	DefaultDuelMatchWindow    = 10 * time.Minute
	DefaultDuelsPerDay        = 20
	DefaultDuelMatchBase      = 100
	DefaultDuelMatchPerMinute = 50
	DefaultDuelMatchMax       = 400
	// duelMaxPoints bounds the ticks stored (and shown) of each side's run.
	duelMaxPoints = 300
	// maxDuelList bounds GET /v1/duels.
	maxDuelList = 100
)

// duelConfig is c's duel settings with the defaults filled in.
func (c Config) duelConfig() Config {
	if c.DuelChallengeTTL <= 0 {
		c.DuelChallengeTTL = DefaultDuelChallengeTTL
	}
	if c.DuelSubmitWindow <= 0 {
		c.DuelSubmitWindow = DefaultDuelSubmitWindow
	}
	if c.DuelMatchWindow <= 0 {
		c.DuelMatchWindow = DefaultDuelMatchWindow
	}
	if c.DuelsPerDay <= 0 {
		c.DuelsPerDay = DefaultDuelsPerDay
	}
	if c.DuelMatchBase <= 0 {
		c.DuelMatchBase = DefaultDuelMatchBase
	}
	if c.DuelMatchPerMinute <= 0 {
		c.DuelMatchPerMinute = DefaultDuelMatchPerMinute
	}
	if c.DuelMatchMax <= 0 {
		c.DuelMatchMax = DefaultDuelMatchMax
	}
	return c
}

func (s *server) duelRules() game.DuelRules {
	c := s.cfg.duelConfig()
	return game.DuelRules{PerDay: c.DuelsPerDay, MatchBase: c.DuelMatchBase, MatchPerMinute: c.DuelMatchPerMinute,
		MatchMax: c.DuelMatchMax, SubmitWindow: c.DuelSubmitWindow}
}

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

func newSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
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
	if !challenges.ValidSlug(req.Level) {
		s.writeError(w, r, game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level"}}))
		return
	}
	stored, _, err := s.level(ctx, req.Level, 0)
	if game.ErrorCode(err) == game.ENOTFOUND {
		err = game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level"}})
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := uuid.NewV7()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cfg, now := s.cfg.duelConfig(), s.now()
	d := game.Duel{ID: id, Slug: stored.Slug, Version: stored.Version, Seed: newSeed(), CreatedAt: now}
	d.Sides[0].PlayerID = player.ID
	var created game.Duel
	if req.Opponent == "" {
		rating, err := s.store.Rating(ctx, player.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		d.State, d.AcceptBy, d.MatchRating = game.DuelMatching, now.Add(cfg.DuelMatchWindow), rating.Rating
		created, err = s.store.MatchDuel(ctx, d, s.duelRules())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
	} else {
		opp, err := uuid.Parse(req.Opponent)
		if err != nil {
			s.writeError(w, r, game.Invalid("the request is invalid", []game.FieldError{{Field: "opponent", Reason: "must be a player id (a UUID)"}}))
			return
		}
		if opp == player.ID {
			s.writeError(w, r, errorf(game.EDUELSELF, "a player cannot challenge themselves"))
			return
		}
		if _, err := s.store.PlayerByID(ctx, opp); err != nil {
			if game.ErrorCode(err) == game.ENOTFOUND {
				err = game.Invalid("the request is invalid", []game.FieldError{{Field: "opponent", Reason: "names no player"}})
			}
			s.writeError(w, r, err)
			return
		}
		d.Sides[1].PlayerID = opp
		d.State, d.AcceptBy = game.DuelChallenged, now.Add(cfg.DuelChallengeTTL)
		created, err = s.store.CreateDuel(ctx, d, s.duelRules())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.scheduleDuel(ctx, created)
	s.logger(ctx).InfoContext(ctx, "duel started", "duel_id", created.ID.String(), "state", created.State, "slug", created.Slug)
	s.writeDuel(w, r, http.StatusCreated, created)
}

// scheduleDuel arranges for d to be settled at its deadline. A failure is
// repaired at the next start of any replica, which schedules every open
// duel again (idempotently).
func (s *server) scheduleDuel(ctx context.Context, d game.Duel) {
	if s.duelDeadlines == nil || game.DuelEnded(d.State) {
		return
	}
	if err := s.duelDeadlines.ScheduleDuel(context.WithoutCancel(ctx), d.ID, d.Deadline()); err != nil {
		s.logger(ctx).ErrorContext(ctx, "scheduling a duel deadline failed", "duel_id", d.ID.String(), "err", err)
	}
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
	limit, err := queryInt(r, "limit", 50, maxDuelList)
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

func (s *server) handleAcceptDuel(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "duel")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	player, _ := playerFrom(r.Context())
	d, err := s.store.AcceptDuel(r.Context(), id, player.ID, s.now(), s.duelRules())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.scheduleDuel(r.Context(), d)
	s.writeDuel(w, r, http.StatusOK, d)
}

func (s *server) handleDeclineDuel(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "duel")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	player, _ := playerFrom(r.Context())
	d, err := s.store.DeclineDuel(r.Context(), id, player.ID, s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeDuel(w, r, http.StatusOK, d)
}

type duelDesignRequest struct {
	Design json.RawMessage `json:"design" validate:"required"`
}

// handleDuelDesign takes a side's design: checked against the level (not
// run: both designs run together once both are in), stored hidden from the
// other side. The second design in settles the duel in this request; if
// that fails, the duel's deadline settles it.
func (s *server) handleDuelDesign(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req duelDesignRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, design, err := parseDesign(req.Design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	duel, err := s.pathDuel(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	player, _ := playerFrom(ctx)
	if duel.Side(player.ID) < 0 {
		s.writeError(w, r, errorf(game.EDUELNOTPLAYER, "only the players of this duel may submit to it"))
		return
	}
	_, l, err := s.level(ctx, duel.Slug, duel.Version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := l.RunCost(d); err != nil {
		s.writeError(w, r, designProblems(err))
		return
	}
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	duel, err = s.store.SubmitDuelDesign(storeCtx, duel.ID, player.ID, design, s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if duel.Sides[0].Submitted() && duel.Sides[1].Submitted() {
		settled, _, err := s.settleDuel(storeCtx, duel.ID)
		if err != nil {
			s.logger(ctx).WarnContext(ctx, "settling a duel failed; its deadline settles it", "duel_id", duel.ID.String(), "err", err)
		} else {
			duel = settled
		}
	}
	s.writeDuel(w, r, http.StatusOK, duel)
}

// handleRatings is the ratings board.
func (s *server) handleRatings(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 50, game.MaxRatingsLimit)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	offset, err := queryInt(r, "offset", 0, 1_000_000_000)
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
