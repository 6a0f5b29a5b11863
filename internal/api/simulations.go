package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/sim"
)

// parseDesign decodes a design from a request body's design field. Every
// problem is a 422 whose field is the JSON path from the body's root
// ("design.components[2].params.replicas").
func parseDesign(raw json.RawMessage) (sim.Design, []byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return sim.Design{}, nil, game.Invalid("the request is invalid", []game.FieldError{{Field: "design", Reason: "is required"}})
	}
	d, err := challenges.ParseDesign(raw)
	if ps, ok := challenges.AsProblems(err); ok {
		return sim.Design{}, nil, problemsError("the design is invalid", "design", ps)
	}
	if err != nil {
		return sim.Design{}, nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return sim.Design{}, nil, err
	}
	return d, compact.Bytes(), nil
}

// evaluate runs a design on a level on the kind's workers, within the simulation deadline
// and the client's lifetime, paid for from the client's simulation budget (its cost is
// known before it runs).
func (s *server) evaluate(w http.ResponseWriter, r *http.Request, kind string, l *challenges.Level, d sim.Design) (*challenges.Evaluation, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.SimTimeout)
	defer cancel()
	var ev *challenges.Evaluation
	costOf := func() (int64, error) { return l.RunCost(d) }
	run := l.Evaluate
	if kind == kindSubmission {
		run = l.Verdict // its stored verdict holds no ticks
	}
	err := s.sched.run(ctx, w, keyByPlayerOrAddress(r), kind, costOf, func(ctx context.Context) error {
		var err error
		ev, err = run(ctx, d)
		return err
	})
	return ev, designProblems(err)
}

// evaluateBackground is evaluate for the server's own work (an event's final runs, a duel's):
// on the event workers, under the simulation timeout, paid by nobody. run is the level's
// Evaluate, or its Verdict where only the verdict is kept.
func (s *server) evaluateBackground(ctx context.Context, run func(context.Context, sim.Design) (*challenges.Evaluation, error), d sim.Design) (*challenges.Evaluation, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SimTimeout)
	defer cancel()
	var ev *challenges.Evaluation
	err := s.sched.background(ctx, kindEvent, func(ctx context.Context) error {
		var err error
		ev, err = run(ctx, d)
		return err
	})
	return ev, designProblems(err)
}

// designProblems names the design as the field at fault when the level refuses it.
func designProblems(err error) error {
	if ps, ok := challenges.AsProblems(err); ok {
		return problemsError("the design is invalid for this level", "design", ps)
	}
	return err
}

type simulationRequest struct {
	Level   string          `json:"level" validate:"required,max=64"`
	Version int             `json:"version" validate:"min=0,max=2147483647"`
	Design  json.RawMessage `json:"design" validate:"required"`
	// MaxPoints downsamples the timeline to at most this many ticks
	// (DefaultMaxPoints if absent).
	MaxPoints int `json:"max_points" validate:"omitempty,min=2,max=100000"`
	// Event, if set, adds a finished event's hidden chaos to the level
	// (see eventRerunLevel).
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
		l, err = s.eventRerunLevel(r.Context(), req.Event, stored, l)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ev, err := s.evaluate(w, r, kindSimulation, l, d)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	maxPoints := req.MaxPoints
	if maxPoints == 0 {
		maxPoints = DefaultMaxPoints
	}
	res, every := downsample(ev.Result, maxPoints)
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

// downsample keeps every k-th tick (and the last) so that at most
// maxPoints remain; maxPoints 0 keeps everything. It returns the result
// to send and k.
func downsample(res *sim.Result, maxPoints int) (*sim.Result, int) {
	n := len(res.Ticks)
	if maxPoints <= 0 || n <= maxPoints {
		return res, 1
	}
	every := (n + maxPoints - 1) / maxPoints
	out := *res
	out.Ticks = make([]sim.Tick, 0, maxPoints)
	for i := every - 1; i < n; i += every {
		out.Ticks = append(out.Ticks, res.Ticks[i])
	}
	if last := res.Ticks[n-1]; out.Ticks[len(out.Ticks)-1].T != last.T {
		if len(out.Ticks) < maxPoints {
			out.Ticks = append(out.Ticks, last)
		} else {
			out.Ticks[len(out.Ticks)-1] = last
		}
	}
	return &out, every
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
	err = s.sched.run(ctx, w, keyByPlayerOrAddress(r), kindHint, costOf, func(ctx context.Context) error {
		var err error
		h, err = l.HintWithin(ctx, d, challenges.HintLimits{MaxCost: cost, Parallelism: 1, Yield: s.sched.yieldToSubmissions})
		return err
	})
	if ps, ok := challenges.AsProblems(err); ok {
		err = problemsError("the design is invalid for this level", "design", ps)
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
	d, _, err := parseDesign(raw)
	if err != nil {
		return sim.Design{}, game.Level{}, nil, err
	}
	stored, l, err := s.level(ctx, slug, version)
	return d, stored, l, err
}
