package api

import (
	"context"
	"encoding/json"
	"net/http"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

type simulationRequest struct {
	Level   string          `json:"level" validate:"required,max=64"`
	Version int             `json:"version" validate:"min=0,max=2147483647"`
	Design  json.RawMessage `json:"design" validate:"required"`
	// MaxPoints downsamples the timeline to at most this many ticks
	// (DefaultMaxPoints if absent).
	MaxPoints *int `json:"max_points" validate:"omitnil,min=2,max=100000"`
	// Event, if set, adds a finished event's hidden chaos to the level
	// (see rules.Service.EventRerunLevel).
	Event string `json:"event" validate:"omitempty,max=64"`
}

type simulationResponse struct {
	Slug       string                 `json:"slug"`
	Version    int                    `json:"version"`
	Evaluation *challenges.Evaluation `json:"evaluation"`
	// Result is the engine's output; with max_points, Ticks holds one tick
	// of every Every (the engine's own ticks, not averages) and the last.
	Result     *sim.Result `json:"result"`
	Every      int         `json:"every"`
	TotalTicks int         `json:"total_ticks"`
}

// handleSimulate is a dry run: the full per-tick result, nothing stored.
func (s *server) handleSimulate(w http.ResponseWriter, r *http.Request) {
	var req simulationRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !challenges.ValidSlug(req.Level) {
		s.writeError(w, r, game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level (or no such version)"}}))
		return
	}
	d, stored, l, err := s.designForLevel(r.Context(), req.Design, req.Level, req.Version)
	if game.ErrorCode(err) == game.ENOTFOUND {
		err = game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level (or no such version)"}})
	}
	if err == nil && req.Event != "" {
		l, err = s.rules.EventRerunLevel(r.Context(), req.Event, stored, l)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, err := s.rules.Evaluate(r.Context(), keyByPlayerOrAddress(r), scheduler.KindSimulation, l, d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	maxPoints := DefaultMaxPoints
	if req.MaxPoints != nil {
		maxPoints = *req.MaxPoints
	}
	res, every := rules.Downsample(ev.Result, maxPoints)
	s.writeSimulation(w, r, simulationResponse{
		Slug:       stored.Slug,
		Version:    stored.Version,
		Evaluation: ev,
		Result:     res,
		Every:      every,
		TotalTicks: len(ev.Result.Ticks),
	})
	l.Release(ev) // written out: the level's next run makes its result in the same memory
}

type hintRequest struct {
	Version int             `json:"version" validate:"min=0,max=2147483647"`
	Design  json.RawMessage `json:"design" validate:"required"`
}

type hintResponse struct {
	Slug    string           `json:"slug"`
	Version int              `json:"version"`
	Hint    *challenges.Hint `json:"hint"`
}

// handleHint finds the smallest single change that makes a design pass.
func (s *server) handleHint(w http.ResponseWriter, r *http.Request) {
	var req hintRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	slug, err := pathSlug(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	d, stored, l, err := s.designForLevel(r.Context(), req.Design, slug, req.Version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.HintTimeout)
	defer cancel()
	var h *challenges.Hint
	var cost int64
	costOf := func() (int64, error) {
		var err error
		cost, err = l.HintCost(d)
		return cost, err
	}
	// A hint holds one hint worker and runs its candidates one at a time on
	// it, within its cost bound (challenges.MaxHintCost), yielding to
	// submissions between them, so that it takes no more than its share of
	// the CPUs from other players and none from their submissions.
	err = s.sched.Run(ctx, keyByPlayerOrAddress(r), scheduler.KindHint, costOf, func(ctx context.Context) error {
		var err error
		h, err = l.HintWithin(ctx, d, challenges.HintLimits{MaxCost: cost, Parallelism: 1, Yield: s.sched.YieldToSubmissions})
		return err
	})
	if ps, ok := challenges.AsProblems(err); ok {
		err = rules.ProblemsError("the design is invalid for this level", "design", ps)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, hintResponse{Slug: stored.Slug, Version: stored.Version, Hint: h})
}

// designForLevel parses a request's design and finds the level (and version) it is for:
// the common start of a dry run and a hint. A missing level is ENOTFOUND.
func (s *server) designForLevel(ctx context.Context, raw json.RawMessage, slug string, version int) (sim.Design, game.Level, *challenges.Level, error) {
	d, _, err := rules.ParseDesign(raw)
	if err != nil {
		return sim.Design{}, game.Level{}, nil, err
	}
	stored, l, err := s.rules.Level(ctx, slug, version)
	return d, stored, l, err
}
