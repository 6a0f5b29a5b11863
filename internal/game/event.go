package game

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Event error codes: each rule an event enforces has its own, so clients
// (and problem+json types) can tell them apart.
const (
	EEVENTNOTSTARTED = "event_not_started"
	EEVENTENDED      = "event_ended"
	EATTEMPTLIMIT    = "attempt_limit_reached"
	ENOTJOINED       = "not_joined"
	EEVENTFULL       = "event_full"
	EEVENTCONFLICT   = "event_conflict_of_interest"
)

// Event limits.
const (
	MaxEventTitleLen    = 100
	MaxEventBriefingLen = 4000
	MaxEventDuration    = 30 * 24 * time.Hour
	MaxEventAttempts    = 1000
	MaxEventEntrants    = 100_000
	// DefaultMaxEntrants is the cap on entrants of an event scheduled
	// without one (MaxEntrants 0): every event is bounded. The stores
	// apply it (WithDefaults) when an event is created.
	DefaultMaxEntrants = MaxEventEntrants
)

// Which of an entrant's designs the final run uses.
const (
	FinalBest = "best" // the best on the public part of the level
	FinalLast = "last" // the last one submitted
)

// Event is a scheduled competition on one level version. During [StartsAt,
// EndsAt) entrants submit designs and see their verdict on the level as
// published; after EndsAt every entrant's final design is run once more
// against the level with HiddenChaos added, and those runs make the final
// standings, frozen at FinishedAt. HiddenChaos is shown to nobody before.
type Event struct {
	ID           uuid.UUID       `json:"id"`
	Slug         string          `json:"slug"`
	Version      int             `json:"version"` // the level version, fixed when scheduled
	Title        string          `json:"title"`
	Briefing     string          `json:"briefing"`
	StartsAt     time.Time       `json:"starts_at"`
	EndsAt       time.Time       `json:"ends_at"`
	AttemptLimit int             `json:"attempt_limit"` // 0: none
	JoinRequired bool            `json:"join_required"`
	MaxEntrants  int             `json:"max_entrants"` // 0: none
	Final        string          `json:"final"`        // FinalBest or FinalLast
	HiddenChaos  json.RawMessage `json:"hidden_chaos"` // a level's chaos list
	// HiddenResilience, if not nil, is the level's resilience rule for
	// the final runs (required by the level format when a level without
	// chaos of its own gets hidden chaos); hidden like the chaos.
	HiddenResilience json.RawMessage `json:"hidden_resilience,omitempty"`
	CreatedBy        uuid.UUID       `json:"created_by"` // uuid.Nil: the configured admin
	CreatedAt        time.Time       `json:"created_at"`
	FinishedAt       *time.Time      `json:"finished_at"` // nil until the final standings are frozen
	Entrants         int             `json:"entrants"`
}

// WithDefaults returns e with the defaults of what it leaves unset.
func (e Event) WithDefaults() Event {
	if e.MaxEntrants == 0 {
		e.MaxEntrants = DefaultMaxEntrants
	}
	return e
}

// Validate reports the invariants a store relies on (the hidden chaos's
// content is the level format's business).
func (e Event) Validate() error {
	var fe []FieldError
	if e.ID == uuid.Nil {
		fe = append(fe, FieldError{Field: "id", Reason: "is required"})
	}
	if e.Slug == "" {
		fe = append(fe, FieldError{Field: "level", Reason: "is required"})
	}
	if e.Version < 1 {
		fe = append(fe, FieldError{Field: "version", Reason: "must be at least 1"})
	}
	if n := utf8.RuneCountInString(e.Title); n < 1 || n > MaxEventTitleLen {
		fe = append(fe, FieldError{Field: "title", Reason: "must be 1 to 100 characters"})
	}
	if utf8.RuneCountInString(e.Briefing) > MaxEventBriefingLen {
		fe = append(fe, FieldError{Field: "briefing", Reason: "must be at most 4000 characters"})
	}
	switch {
	case e.StartsAt.IsZero():
		fe = append(fe, FieldError{Field: "starts_at", Reason: "is required"})
	case e.EndsAt.IsZero():
		fe = append(fe, FieldError{Field: "ends_at", Reason: "is required"})
	case !e.EndsAt.After(e.StartsAt):
		fe = append(fe, FieldError{Field: "ends_at", Reason: "must be after starts_at"})
	case e.EndsAt.Sub(e.StartsAt) > MaxEventDuration:
		fe = append(fe, FieldError{Field: "ends_at", Reason: "must be at most 30 days after starts_at"})
	}
	if e.AttemptLimit < 0 || e.AttemptLimit > MaxEventAttempts {
		fe = append(fe, FieldError{Field: "attempt_limit", Reason: "must be 0 (no limit) to 1000"})
	}
	if e.MaxEntrants < 0 || e.MaxEntrants > MaxEventEntrants {
		fe = append(fe, FieldError{Field: "max_entrants", Reason: "must be 0 (no limit) to 100000"})
	}
	if e.Final != FinalBest && e.Final != FinalLast {
		fe = append(fe, FieldError{Field: "final", Reason: `must be "best" or "last"`})
	}
	if !json.Valid(e.HiddenChaos) {
		fe = append(fe, FieldError{Field: "hidden_chaos", Reason: "must be a JSON array"})
	}
	if e.HiddenResilience != nil && !json.Valid(e.HiddenResilience) {
		fe = append(fe, FieldError{Field: "resilience", Reason: "must be a JSON object"})
	}
	if e.CreatedAt.IsZero() {
		fe = append(fe, FieldError{Field: "created_at", Reason: "is required"})
	}
	return Invalid("invalid event", fe)
}

// Phase is where an event stands at time now.
func (e Event) Phase(now time.Time) string {
	switch {
	case e.FinishedAt != nil:
		return "finished"
	case now.Before(e.StartsAt):
		return "upcoming"
	case now.Before(e.EndsAt):
		return "live"
	}
	return "finishing"
}

// EventSubmission is one design an entrant submitted during an event, with
// its verdict on the public part of the level.
type EventSubmission struct {
	ID        uuid.UUID       `json:"id"`
	EventID   uuid.UUID       `json:"event_id"`
	PlayerID  uuid.UUID       `json:"player_id"`
	Design    json.RawMessage `json:"design"`
	Result    json.RawMessage `json:"result"`
	Passed    bool            `json:"passed"`
	Score     int64           `json:"score"` // counts only when Passed
	CreatedAt time.Time       `json:"created_at"`
}

// EventStanding is an entrant's place: during the event by their best
// public score (Passed), after it by their final run.
type EventStanding struct {
	Rank         int64           `json:"rank"`
	PlayerID     uuid.UUID       `json:"player_id"`
	PlayerName   string          `json:"player_name"`
	Score        int64           `json:"score"`
	Passed       bool            `json:"passed"`
	Attempts     int             `json:"attempts"`
	SubmissionID *uuid.UUID      `json:"submission_id"` // nil: joined, nothing submitted
	AchievedAt   *time.Time      `json:"achieved_at"`
	Result       json.RawMessage `json:"result,omitempty"` // the final run's verdict, after the event
}

// EventResult is one entrant's final run, as the finisher computed it.
type EventResult struct {
	PlayerID     uuid.UUID       `json:"player_id"`
	SubmissionID uuid.UUID       `json:"submission_id"`
	Passed       bool            `json:"passed"`
	Score        int64           `json:"score"`
	Result       json.RawMessage `json:"result"`
}

// CompareStandings orders an event's standings: passing first, higher score, reached earlier, player id.
func CompareStandings(a, b EventStanding) int {
	if a.Passed != b.Passed {
		if a.Passed {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	if a.AchievedAt != nil && b.AchievedAt != nil {
		if c := a.AchievedAt.Compare(*b.AchievedAt); c != 0 {
			return c
		}
	}
	return bytes.Compare(a.PlayerID[:], b.PlayerID[:])
}

// RankResults checks results (one per entrant, each naming a submission
// of theirs) and sorts them in final order: passing first, higher score,
// the design submitted earlier, player id.
func RankResults(results []EventResult, submittedAt func(EventResult) (time.Time, bool)) ([]EventResult, error) {
	type ranked struct {
		r  EventResult
		at time.Time
	}
	seen := map[uuid.UUID]bool{}
	var rs []ranked
	for _, r := range results {
		at, ok := submittedAt(r)
		if !ok || seen[r.PlayerID] || r.Score < 0 || !json.Valid(r.Result) {
			return nil, Errorf(EINVALID, "invalid event results")
		}
		seen[r.PlayerID] = true
		rs = append(rs, ranked{r, at})
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		return CompareStandings(
			EventStanding{PlayerID: a.r.PlayerID, Passed: a.r.Passed, Score: a.r.Score, AchievedAt: &a.at},
			EventStanding{PlayerID: b.r.PlayerID, Passed: b.r.Passed, Score: b.r.Score, AchievedAt: &b.at})
	})
	out := make([]EventResult, len(rs))
	for i, r := range rs {
		out[i] = r.r
	}
	return out, nil
}

// EventBoard is a page of an event's standings as of one snapshot: Seq is
// the number of its latest change (see EventChange), Total the entrants in
// the standings (those who submitted at least once).
type EventBoard struct {
	EventID uuid.UUID       `json:"event_id"`
	Seq     int64           `json:"seq"`
	Final   bool            `json:"final"` // the frozen final results
	Total   int             `json:"total"`
	Entries []EventStanding `json:"entries"` // never nil
	// Next and Prev are cursors to the following and preceding pages, ""
	// when there is nothing there.
	Next string `json:"next"`
	Prev string `json:"prev"`
}

// Kinds of EventChange.
const (
	EventAttempt = "attempt" // an entrant submitted; Standing is theirs after it
	EventFinal   = "final"   // the final standings are frozen
)

// EventChange is one change of an event's standings, numbered 1, 2, 3... in
// commit order per event.
type EventChange struct {
	Seq      int64          `json:"seq"`
	EventID  uuid.UUID      `json:"event_id"`
	Kind     string         `json:"kind"`
	Standing *EventStanding `json:"standing,omitempty"`
	Total    int            `json:"total"`
}

// EventTopic is the topic of an event's changes.
func EventTopic(id uuid.UUID) string { return "event:" + id.String() }

// Notice returns the announcement of c on its event's topic.
func (c EventChange) Notice() (Notice, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return Notice{}, err
	}
	return Notice{Topic: EventTopic(c.EventID), Seq: c.Seq, Data: data}, nil
}

// CheckEntrant: whoever can read an event's hidden chaos before the end
// (its creator, and every admin) may not enter it, neither by joining nor
// by submitting: they would compete against chaos only they can see.
func (e Event) CheckEntrant(p Player) error {
	switch {
	case p.ID == e.CreatedBy:
		return Errorf(EEVENTCONFLICT, "you created this event and can read its hidden chaos, so you may not enter it")
	case p.Role == RoleAdmin:
		return Errorf(EEVENTCONFLICT, "admins can read every event's hidden chaos, so they may not enter events")
	}
	return nil
}
