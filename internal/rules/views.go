package rules

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// Who sees what of an event or a duel is a rule of fair play: the level of
// an upcoming event and its hidden chaos stay with its insiders, and a
// pending duel with its players. The transport encodes these views as they
// are.

// EventView is an event as clients see it: the level only once it starts
// (before, the briefing alone) and the hidden chaos only once the final
// standings are frozen. Its creator and admins see everything.
type EventView struct {
	ID           uuid.UUID       `json:"id"`
	Title        string          `json:"title"`
	Briefing     string          `json:"briefing"`
	Phase        string          `json:"phase"` // upcoming, live, finishing, finished
	StartsAt     time.Time       `json:"starts_at"`
	EndsAt       time.Time       `json:"ends_at"`
	AttemptLimit int             `json:"attempt_limit"`
	JoinRequired bool            `json:"join_required"`
	MaxEntrants  int             `json:"max_entrants"`
	Final        string          `json:"final"`
	Entrants     int             `json:"entrants"`
	Level        *string         `json:"level"`
	Version      *int            `json:"version"`
	HiddenChaos  json.RawMessage `json:"hidden_chaos"`
	Resilience   json.RawMessage `json:"resilience"`
	FinishedAt   *time.Time      `json:"finished_at"`
	// Joined says whether the signed-in viewer has entered (joined or
	// submitted); absent for anonymous readers and in lists.
	Joined *bool `json:"joined,omitempty"`
}

// EventView shows e to viewer (signedIn false: anonymous).
func (s *Service) EventView(e game.Event, viewer game.Player, signedIn bool) EventView {
	v := EventView{
		ID: e.ID, Title: e.Title, Briefing: e.Briefing, Phase: e.Phase(s.now()), StartsAt: e.StartsAt, EndsAt: e.EndsAt,
		AttemptLimit: e.AttemptLimit, JoinRequired: e.JoinRequired, MaxEntrants: e.MaxEntrants, Final: e.Final,
		Entrants: e.Entrants, FinishedAt: e.FinishedAt, HiddenChaos: json.RawMessage("null"), Resilience: json.RawMessage("null"),
	}
	insider := signedIn && (viewer.Role == game.RoleAdmin || (viewer.ID != uuid.Nil && viewer.ID == e.CreatedBy))
	if v.Phase != "upcoming" || insider {
		v.Level, v.Version = &e.Slug, &e.Version
	}
	if v.Phase == "finished" || insider {
		v.HiddenChaos = e.HiddenChaos
		if e.HiddenResilience != nil {
			v.Resilience = e.HiddenResilience
		}
	}
	return v
}

type DuelPlayerView struct {
	ID        uuid.UUID `json:"id"`
	Name      string    `json:"name"`
	Rating    float64   `json:"rating"`
	Submitted bool      `json:"submitted"`
}

// DuelView is a duel as clients see it: designs, the surprise chaos and
// the result only once it has ended.
type DuelView struct {
	ID            uuid.UUID        `json:"id"`
	Level         string           `json:"level"`
	Version       int              `json:"version"`
	State         string           `json:"state"`
	Players       []DuelPlayerView `json:"players"`
	CreatedAt     time.Time        `json:"created_at"`
	AcceptBy      time.Time        `json:"accept_by"`
	SubmitBy      *time.Time       `json:"submit_by"`
	EndedAt       *time.Time       `json:"ended_at"`
	Seq           int64            `json:"seq"`
	SurpriseChaos json.RawMessage  `json:"surprise_chaos"`
	Result        *game.DuelResult `json:"result"`
}

// ShowDuel is d as clients see it, reading each player's rating once per
// ratings map (nil: no sharing): a list of a player's duels names that
// player in every one of them.
func (s *Service) ShowDuel(ctx context.Context, d game.Duel, ratings map[uuid.UUID]game.Rating) (DuelView, error) {
	v := DuelView{ID: d.ID, Level: d.Slug, Version: d.Version, State: d.State, Players: []DuelPlayerView{},
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
				return DuelView{}, err
			}
			if ratings != nil {
				ratings[side.PlayerID] = rating
			}
		}
		v.Players = append(v.Players, DuelPlayerView{ID: side.PlayerID, Name: side.PlayerName, Rating: rating.Rating, Submitted: side.Submitted()})
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

// CanSeeDuel: a pending duel is its players' business; an ended one is public.
func CanSeeDuel(d game.Duel, viewer game.Player, signedIn bool) bool {
	if game.DuelEnded(d.State) {
		return true
	}
	return signedIn && (viewer.Role == game.RoleAdmin || d.Side(viewer.ID) >= 0)
}

// Listed is a duel as a list shows it: who won and the scores, without
// either side's design, verdict or timeline. An ended duel carries both
// runs' ticks (a megabyte or more), so a list of them would cost its reader
// and the server a hundred times what one duel does; GET /v1/duels/{id}
// has them.
func Listed(v DuelView) DuelView {
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
