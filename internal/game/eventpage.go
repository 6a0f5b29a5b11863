package game

import (
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// An event's standings are ranked by StandingKey in board order (see
// board.go): a passing best by its score and when it was reached, an
// entrant whose attempts all failed after every passing one, by player id.
// That is game.CompareStandings' order, so live pages, changes and the
// whole-field recount agree. Entrants who joined but never submitted have
// no key: they are not in the standings and cost no attempt or read
// anything.

// failedKeyScore is the score of a key of an entrant with no passing
// attempt: below every real score (scores are never negative).
const failedKeyScore = -1

// failedKeyAt is when an entrant with no passing attempt "reached" it: the
// same for all of them, so they are ordered by player id.
var failedKeyAt = time.Unix(0, 0).UTC()

// StandingKey is an entrant's position in live standings order: their best
// passing score and when they reached it, or (passed false) the place after
// every passing entrant.
func StandingKey(player uuid.UUID, passed bool, score int64, at time.Time) BoardKey {
	if !passed {
		return BoardKey{Score: failedKeyScore, AchievedAt: failedKeyAt, PlayerID: player}
	}
	return BoardKey{Score: score, AchievedAt: Timestamp(at), PlayerID: player}
}

// Key returns a live standing's position (see StandingKey).
func (s EventStanding) Key() BoardKey {
	if !s.Passed || s.AchievedAt == nil {
		return StandingKey(s.PlayerID, false, 0, time.Time{})
	}
	return StandingKey(s.PlayerID, true, s.Score, *s.AchievedAt)
}

// Event standings page sizes: as every board's.
const (
	DefaultStandingsLimit = DefaultBoardLimit
	MaxStandingsLimit     = MaxBoardLimit
)

// EventStandingsQuery asks for one page of an event's standings.
type EventStandingsQuery struct {
	Limit int // 1..MaxStandingsLimit; 0 means DefaultStandingsLimit
	// Cursor is an EventBoard's Next or Prev, opaque to callers.
	Cursor string
	// AroundPlayer asks for the page with that entrant in its middle;
	// it excludes Cursor.
	AroundPlayer *uuid.UUID
}

// Normalize checks q, fills in the default limit and decodes its cursor
// (nil when there is none).
func (q EventStandingsQuery) Normalize() (EventStandingsQuery, *EventCursor, error) {
	var fe []FieldError
	if q.Limit == 0 {
		q.Limit = DefaultStandingsLimit
	}
	if q.Limit < 1 || q.Limit > MaxStandingsLimit {
		fe = append(fe, FieldError{Field: "limit", Reason: "must be 1 to 100"})
	}
	var cur *EventCursor
	if q.Cursor != "" {
		if q.AroundPlayer != nil {
			fe = append(fe, FieldError{Field: "cursor", Reason: "cannot be combined with around"})
		}
		c, err := ParseEventCursor(q.Cursor)
		if err != nil {
			fe = append(fe, FieldError{Field: "cursor", Reason: "is not a valid cursor"})
		} else {
			cur = &c
		}
	}
	if err := Invalid("invalid standings query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// EventCursor is a decoded cursor of an event's standings, exclusive: the
// live standings page by key, the frozen final standings by rank.
type EventCursor struct {
	Before bool
	Final  bool
	Key    BoardKey // live standings
	Rank   int64    // final standings
}

const (
	finalCursorVersion = 2
	finalCursorLen     = 1 + 1 + 8
)

// String encodes c as an opaque URL-safe string.
func (c EventCursor) String() string {
	if !c.Final {
		return Cursor{Key: c.Key, Before: c.Before}.String()
	}
	var b [finalCursorLen]byte
	b[0] = finalCursorVersion
	b[1] = 'n'
	if c.Before {
		b[1] = 'p'
	}
	binary.BigEndian.PutUint64(b[2:], uint64(c.Rank))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseEventCursor decodes a string made by EventCursor.String.
func ParseEventCursor(s string) (EventCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil && len(b) == finalCursorLen && b[0] == finalCursorVersion && (b[1] == 'p' || b[1] == 'n') {
		rank := int64(binary.BigEndian.Uint64(b[2:]))
		if rank >= 1 {
			return EventCursor{Final: true, Before: b[1] == 'p', Rank: rank}, nil
		}
	}
	c, err := ParseCursor(s)
	if err != nil {
		return EventCursor{}, err
	}
	return EventCursor{Key: c.Key, Before: c.Before}, nil
}

// ErrStaleCursor is the answer to a cursor of the live standings once the
// final ones are frozen (and the reverse cannot happen): the client starts
// again from the first page.
func ErrStaleCursor() error {
	return Invalid("invalid standings query", []FieldError{{Field: "cursor",
		Reason: "is from the live standings, and the final standings are now frozen: start again without it"}})
}

// StandingsCursors returns the cursors of a non-empty page of ranked
// standings (final: the frozen final standings, paged by rank).
func StandingsCursors(entries []EventStanding, total int, final bool) (prev, next string) {
	first, last := entries[0], entries[len(entries)-1]
	cursor := func(s EventStanding, before bool) string {
		if final {
			return EventCursor{Final: true, Before: before, Rank: s.Rank}.String()
		}
		return EventCursor{Before: before, Key: s.Key()}.String()
	}
	if first.Rank > 1 {
		prev = cursor(first, true)
	}
	if last.Rank < int64(total) {
		next = cursor(last, false)
	}
	return prev, next
}

// Event list page sizes.
const (
	DefaultEventListLimit = 20
	MaxEventListLimit     = 100
)

// Event list filters: an event's Phase.
const (
	PhaseUpcoming  = "upcoming"
	PhaseLive      = "live"
	PhaseFinishing = "finishing"
	PhaseFinished  = "finished"
)

// EventListQuery asks for one page of the events, by start time then id.
type EventListQuery struct {
	Phase  string    // "" for every event, else one Phase value
	Limit  int       // 1..MaxEventListLimit; 0 means DefaultEventListLimit
	Cursor string    // an EventList's Next
	Now    time.Time // the clock the phases are decided by
}

// EventList is one page of events. Its events carry neither hidden chaos nor
// hidden resilience (both nil): a list costs O(page) whatever was
// scheduled, at most a title and a briefing an event.
type EventList struct {
	Events []Event `json:"events"` // never nil
	Next   string  `json:"next"`   // "" on the last page
}

// EventListCursor is a decoded event list cursor: the events after the one
// that starts at StartsAt with ID, exclusive.
type EventListCursor struct {
	StartsAt time.Time
	ID       uuid.UUID
}

const (
	eventListCursorVersion = 3
	eventListCursorLen     = 1 + 8 + 16
)

// String encodes c as an opaque URL-safe string.
func (c EventListCursor) String() string {
	var b [eventListCursorLen]byte
	b[0] = eventListCursorVersion
	binary.BigEndian.PutUint64(b[1:], uint64(c.StartsAt.UnixMicro()))
	copy(b[9:], c.ID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Normalize checks q, fills in the default limit and decodes its cursor
// (nil when there is none).
func (q EventListQuery) Normalize() (EventListQuery, *EventListCursor, error) {
	var fe []FieldError
	if q.Limit == 0 {
		q.Limit = DefaultEventListLimit
	}
	if q.Limit < 1 || q.Limit > MaxEventListLimit {
		fe = append(fe, FieldError{Field: "limit", Reason: "must be 1 to 100"})
	}
	switch q.Phase {
	case "", PhaseUpcoming, PhaseLive, PhaseFinishing, PhaseFinished:
	default:
		fe = append(fe, FieldError{Field: "phase", Reason: `must be "upcoming", "live", "finishing" or "finished"`})
	}
	var cur *EventListCursor
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || len(b) != eventListCursorLen || b[0] != eventListCursorVersion {
			fe = append(fe, FieldError{Field: "cursor", Reason: "is not a valid cursor"})
		} else {
			cur = &EventListCursor{StartsAt: time.UnixMicro(int64(binary.BigEndian.Uint64(b[1:]))).UTC()}
			copy(cur.ID[:], b[9:])
		}
	}
	if q.Now.IsZero() {
		fe = append(fe, FieldError{Field: "now", Reason: "is required"})
	}
	if err := Invalid("invalid event list query", fe); err != nil {
		return q, nil, err
	}
	q.Now = Timestamp(q.Now)
	return q, cur, nil
}

// ListedEvent strips e to what a list carries (see EventList).
func ListedEvent(e Event) Event {
	e.HiddenChaos, e.HiddenResilience = nil, nil
	return e
}
