package rules

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// FinishScheduler arranges for an event to be finished at (or soon after)
// its end, once, across replicas (a PostgreSQL job queue in cmd/server).
type FinishScheduler interface {
	ScheduleFinish(ctx context.Context, eventID uuid.UUID, at time.Time) error
}

// Events stores scheduled events, their entrants and results (see
// pgstore's events.go for each method's contract).
type Events interface {
	CreateEvent(ctx context.Context, e game.Event) (game.Event, error)
	Event(ctx context.Context, id uuid.UUID) (game.Event, error)
	EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error)
	CreateEventSubmission(ctx context.Context, sub game.EventSubmission) (int, error)
	EventFinals(ctx context.Context, id uuid.UUID) ([]game.EventSubmission, error)
	FinishEvent(ctx context.Context, id uuid.UUID, results []game.EventResult, at time.Time) (bool, error)
}

// NewEvent is an event as its creator asks for it.
type NewEvent struct {
	Level string
	// Version 0: the level's current version, fixed from now on.
	Version      int
	Title        string
	Briefing     string
	StartsAt     time.Time
	EndsAt       time.Time
	AttemptLimit int
	JoinRequired bool
	MaxEntrants  int
	Final        string
	HiddenChaos  json.RawMessage
	// Resilience: the level's resilience rule for the final runs, hidden
	// with the chaos; needed when the level has no chaos (nor rule) of
	// its own.
	Resilience json.RawMessage
}

// CreateEvent schedules an event: admins on any level, authors on the
// levels they own. The hidden chaos is checked as part of the level, and
// the event's finish is scheduled at its end.
func (s *Service) CreateEvent(ctx context.Context, creator game.Player, req NewEvent) (game.Event, error) {
	stored, l, err := s.Level(ctx, req.Level, req.Version)
	if err != nil {
		return game.Event{}, err
	}
	if creator.Role != game.RoleAdmin && (stored.OwnerID == uuid.Nil || stored.OwnerID != creator.ID) {
		return game.Event{}, game.Errorf(game.EFORBIDDEN, "authors schedule events on their own levels only; %q is not yours", req.Level)
	}
	if len(req.HiddenChaos) == 0 || string(req.HiddenChaos) == "null" {
		req.HiddenChaos = json.RawMessage("[]")
	}
	if string(req.Resilience) == "null" {
		req.Resilience = nil
	}
	if req.Final == "" {
		req.Final = game.FinalBest
	}
	id, err := uuid.NewV7()
	if err != nil {
		return game.Event{}, err
	}
	e := game.Event{
		ID: id, Slug: stored.Slug, Version: stored.Version, Title: req.Title, Briefing: req.Briefing,
		StartsAt: req.StartsAt, EndsAt: req.EndsAt, AttemptLimit: req.AttemptLimit, JoinRequired: req.JoinRequired,
		MaxEntrants: req.MaxEntrants, Final: req.Final, HiddenChaos: req.HiddenChaos, HiddenResilience: req.Resilience,
		CreatedBy: creator.ID,
		CreatedAt: s.now(),
	}
	if err := e.Validate(); err != nil {
		return game.Event{}, err
	}
	if !req.EndsAt.After(s.DeadlineClock(ctx)) {
		return game.Event{}, game.Invalid("invalid event", []game.FieldError{{Field: "ends_at", Reason: "must be in the future"}})
	}
	if _, err := s.fullLevel(ctx, l, e.HiddenChaos, e.HiddenResilience); err != nil {
		return game.Event{}, err
	}
	created, err := s.store.CreateEvent(ctx, e)
	if err != nil {
		return game.Event{}, err
	}
	if s.eventFinishes != nil {
		// A failure here is repaired at the next start of any replica,
		// which schedules every unfinished event again (idempotently).
		if err := s.eventFinishes.ScheduleFinish(context.WithoutCancel(ctx), created.ID, created.EndsAt); err != nil {
			s.log.ErrorContext(ctx, "scheduling the finish of an event failed", "event_id", created.ID.String(), "err", err)
		}
	}
	return created, nil
}
