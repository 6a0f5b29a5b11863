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

// Events reads events, their standings and results, and enters players
// (see pgstore's events.go for each method's contract; the rules create,
// attempt and finish).
type Events interface {
	Event(ctx context.Context, id uuid.UUID) (game.Event, error)
	EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error)
	JoinEvent(ctx context.Context, eventID, playerID uuid.UUID, at time.Time) error
	IsEntrant(ctx context.Context, eventID, playerID uuid.UUID) (bool, error)
	EventStandingsPage(ctx context.Context, id uuid.UUID, q game.EventStandingsQuery) (game.EventBoard, error)
	EventResult(ctx context.Context, id, playerID uuid.UUID) (game.EventResult, game.EventSubmission, error)
}

type createEventRequest struct {
	Level string `json:"level" validate:"required,max=64"`
	// Version 0: the level's current version (rules.NewEvent).
	Version      int             `json:"version" validate:"min=0,max=2147483647"`
	Title        string          `json:"title" validate:"required"`
	Briefing     string          `json:"briefing"`
	StartsAt     time.Time       `json:"starts_at" validate:"required"`
	EndsAt       time.Time       `json:"ends_at" validate:"required"`
	AttemptLimit int             `json:"attempt_limit" validate:"min=0,max=1000"`
	JoinRequired bool            `json:"join_required"`
	MaxEntrants  int             `json:"max_entrants" validate:"min=0,max=100000"`
	Final        string          `json:"final" validate:"omitempty,oneof=best last"`
	HiddenChaos  json.RawMessage `json:"hidden_chaos"`
	Resilience   json.RawMessage `json:"resilience"`
}

// handleCreateEvent schedules an event (rules.Service.CreateEvent).
func (s *server) handleCreateEvent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req createEventRequest
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	creator, _ := playerFrom(ctx)
	created, err := s.rules.CreateEvent(ctx, creator, rules.NewEvent{
		Level: req.Level, Version: req.Version, Title: req.Title, Briefing: req.Briefing,
		StartsAt: req.StartsAt, EndsAt: req.EndsAt, AttemptLimit: req.AttemptLimit, JoinRequired: req.JoinRequired,
		MaxEntrants: req.MaxEntrants, Final: req.Final, HiddenChaos: req.HiddenChaos, Resilience: req.Resilience,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/events/"+created.ID.String())
	writeJSON(w, r, http.StatusCreated, s.rules.EventView(created, creator, true))
}

func (s *server) pathEvent(r *http.Request) (game.Event, error) {
	id, err := pathUUID(r, "id", "event")
	if err != nil {
		return game.Event{}, err
	}
	return s.store.Event(r.Context(), id)
}

func (s *server) handleEvent(w http.ResponseWriter, r *http.Request) {
	e, err := s.pathEvent(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	viewer, signedIn := playerFrom(r.Context())
	v := s.rules.EventView(e, viewer, signedIn)
	if signedIn && viewer.ID != uuid.Nil {
		in, err := s.store.IsEntrant(r.Context(), e.ID, viewer.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		v.Joined = &in
	}
	writeJSON(w, r, http.StatusOK, v)
}

func (s *server) handleJoinEvent(w http.ResponseWriter, r *http.Request) {
	player, _ := playerFrom(r.Context())
	if player.ID == uuid.Nil {
		s.writeError(w, r, errorf(game.EFORBIDDEN, "the configured admin is not a player; create a player to enter"))
		return
	}
	e, err := s.pathEvent(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := e.CheckEntrant(player); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.store.JoinEvent(r.Context(), e.ID, player.ID, s.rules.DeadlineClock(r.Context())); err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err = s.store.Event(r.Context(), e.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, joined := s.rules.EventView(e, player, true), true
	v.Joined = &joined
	writeJSON(w, r, http.StatusOK, v)
}

type eventSubmitResponse struct {
	ID         uuid.UUID       `json:"id"`
	EventID    uuid.UUID       `json:"event_id"`
	Passed     bool            `json:"passed"`
	Score      int64           `json:"score"`
	CreatedAt  time.Time       `json:"created_at"`
	Attempts   int             `json:"attempts"`
	Evaluation json.RawMessage `json:"evaluation"`
}

// handleEventSubmit enters a design in a live event as an attempt
// (rules.Service.SubmitToEvent).
func (s *server) handleEventSubmit(w http.ResponseWriter, r *http.Request) {
	defer s.sched.Submitting()()
	ctx := r.Context()
	player, _ := playerFrom(ctx)
	if player.ID == uuid.Nil {
		s.writeError(w, r, errorf(game.EFORBIDDEN, "the configured admin is not a player; create a player to enter"))
		return
	}
	var req struct {
		Design json.RawMessage `json:"design" validate:"required"`
	}
	if err := decode(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	d, design, err := rules.ParseDesign(req.Design)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathUUID(r, "id", "event")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, attempts, err := s.rules.SubmitToEvent(ctx, rules.EventAttempt{Player: player, Who: keyByPlayerOrAddress(r), EventID: id, Design: d, Raw: design})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, eventSubmitResponse{ID: sub.ID, EventID: sub.EventID, Passed: sub.Passed,
		Score: sub.Score, CreatedAt: game.Timestamp(sub.CreatedAt), Attempts: attempts, Evaluation: sub.Result})
}

// handleEventResult is an entrant's final run: the design, the hidden
// chaos and the verdict, so that anyone can check it by running the same
// design against the same level and chaos.
func (s *server) handleEventResult(w http.ResponseWriter, r *http.Request) {
	e, err := s.pathEvent(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	pid, err := pathUUID(r, "player_id", "player")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, sub, err := s.store.EventResult(r.Context(), e.ID, pid)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, struct {
		EventID      uuid.UUID       `json:"event_id"`
		PlayerID     uuid.UUID       `json:"player_id"`
		SubmissionID uuid.UUID       `json:"submission_id"`
		Level        string          `json:"level"`
		Version      int             `json:"version"`
		HiddenChaos  json.RawMessage `json:"hidden_chaos"`
		Resilience   json.RawMessage `json:"resilience"`
		Design       json.RawMessage `json:"design"`
		Passed       bool            `json:"passed"`
		Score        int64           `json:"score"`
		Evaluation   json.RawMessage `json:"evaluation"`
	}{e.ID, pid, res.SubmissionID, e.Slug, e.Version, e.HiddenChaos, orNull(e.HiddenResilience), sub.Design, res.Passed, res.Score, res.Result})
}

func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}
