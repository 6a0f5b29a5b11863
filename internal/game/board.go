package game

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// Every board is ordered by score descending, then by who reached the score
// first (AchievedAt ascending), then by player ID ascending, so no two
// entries tie and ranks run 1..N without gaps or shared places.
//
// A level version's board holds each player's best passing score on it. The
// global board (Slug "") holds, per player, the sum of their best scores on
// the current version of every level; its AchievedAt and SubmissionID are
// those of the submission that last raised the sum.

// Entry is one row of a board.
type Entry struct {
	Rank         int64     `json:"rank"`
	PlayerID     uuid.UUID `json:"player_id"`
	PlayerName   string    `json:"player_name"`
	Score        int64     `json:"score"`
	AchievedAt   time.Time `json:"achieved_at"`
	SubmissionID uuid.UUID `json:"submission_id"`
}

// Key returns the entry's position in board order.
func (e Entry) Key() BoardKey {
	return BoardKey{Score: e.Score, AchievedAt: e.AchievedAt, PlayerID: e.PlayerID}
}

// Board page sizes.
const (
	DefaultBoardLimit = 25
	MaxBoardLimit     = 100
)

// BoardQuery asks for one page of a board.
type BoardQuery struct {
	Slug    string // "" is the global board
	Version int    // 0 is the level's current version; ignored for the global board
	Limit   int    // 1..MaxBoardLimit; 0 means DefaultBoardLimit
	// Cursor is a BoardPage's Next or Prev, opaque to callers.
	Cursor string
	// AroundPlayer asks for the page with that player in its middle; it
	// excludes Cursor.
	AroundPlayer *uuid.UUID
}

// BoardPage is one page of a board. Every entry carries its exact rank as of
// one consistent snapshot of the board.
type BoardPage struct {
	Slug    string  `json:"slug"`
	Version int     `json:"version"` // the version served; 0 for the global board
	Entries []Entry `json:"entries"` // never nil
	// Next and Prev are cursors to the following and preceding pages, ""
	// when there is nothing there.
	Next  string `json:"next"`
	Prev  string `json:"prev"`
	Total int64  `json:"total"` // entries on the whole board
	// Seq is the number of the board's latest change (see BoardChange) in
	// the same snapshot as the page: a live stream resumed after Seq
	// continues from this page. 0 for the global board, which has no
	// changes stream.
	Seq int64 `json:"seq"`
	// Season is the season of a season's board, "" for every other board.
	Season string `json:"season,omitempty"`
}

// Normalize checks q, fills in the default limit and decodes its cursor (nil
// when there is none).
func (q BoardQuery) Normalize() (BoardQuery, *Cursor, error) {
	var fe []FieldError
	if q.Limit == 0 {
		q.Limit = DefaultBoardLimit
	}
	if q.Limit < 1 || q.Limit > MaxBoardLimit {
		fe = append(fe, FieldError{Field: "limit", Reason: "must be 1 to 100"})
	}
	if q.Version < 0 {
		fe = append(fe, FieldError{Field: "version", Reason: "must not be negative"})
	}
	if q.Slug == "" {
		q.Version = 0
	}
	var cur *Cursor
	if q.Cursor != "" {
		if q.AroundPlayer != nil {
			fe = append(fe, FieldError{Field: "cursor", Reason: "cannot be combined with around_player"})
		}
		c, err := ParseCursor(q.Cursor)
		if err != nil {
			fe = append(fe, FieldError{Field: "cursor", Reason: "is not a valid cursor"})
		} else {
			cur = &c
		}
	}
	if err := Invalid("invalid board query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// BoardKey is a position in board order.
type BoardKey struct {
	Score      int64
	AchievedAt time.Time
	PlayerID   uuid.UUID
}

// Compare returns -1 if k comes before o on a board, +1 if after and 0 if
// they are the same position.
func (k BoardKey) Compare(o BoardKey) int {
	switch {
	case k.Score > o.Score:
		return -1
	case k.Score < o.Score:
		return 1
	}
	if c := k.AchievedAt.Compare(o.AchievedAt); c != 0 {
		return c
	}
	return bytes.Compare(k.PlayerID[:], o.PlayerID[:])
}

// Cursor is a decoded page cursor: the page after (or before) Key, exclusive.
type Cursor struct {
	Key    BoardKey
	Before bool
}

const (
	cursorVersion = 1
	cursorLen     = 1 + 1 + 8 + 8 + 16
)

// String encodes c as an opaque URL-safe string.
func (c Cursor) String() string {
	var b [cursorLen]byte
	b[0] = cursorVersion
	if c.Before {
		b[1] = 'p'
	} else {
		b[1] = 'n'
	}
	binary.BigEndian.PutUint64(b[2:], uint64(c.Key.Score))
	binary.BigEndian.PutUint64(b[10:], uint64(c.Key.AchievedAt.UnixMicro()))
	copy(b[18:], c.Key.PlayerID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ParseCursor decodes a string made by Cursor.String.
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != cursorLen || b[0] != cursorVersion || (b[1] != 'p' && b[1] != 'n') {
		return Cursor{}, Errorf(EINVALID, "invalid cursor")
	}
	var c Cursor
	c.Before = b[1] == 'p'
	c.Key.Score = int64(binary.BigEndian.Uint64(b[2:]))
	c.Key.AchievedAt = time.UnixMicro(int64(binary.BigEndian.Uint64(b[10:]))).UTC()
	copy(c.Key.PlayerID[:], b[18:])
	return c, nil
}

// Beats reports whether k should replace o as one player's best: a higher
// score, or the same score reached earlier. (Two submissions of one player
// may commit out of order; the earlier reach of a score is the one that
// counts, whichever commits first.)
func (k BoardKey) Beats(o BoardKey) bool {
	return k.Score > o.Score || (k.Score == o.Score && k.AchievedAt.Before(o.AchievedAt))
}

// AroundWindow chooses how many of the b entries before a player and of the a entries from
// the player on (the player first) make a page of at most limit entries with the player as
// near the middle as the board allows. Both stores page around a player with it.
func AroundWindow(b, a, limit int) (nb, na int) {
	nb = min(b, (limit-1)/2)
	na = min(a, limit-nb)
	nb = min(b, limit-na)
	return nb, na
}

// PageCursors returns the cursors of a non-empty page of ranked entries.
func PageCursors(entries []Entry, total int64) (prev, next string) {
	firstE, lastE := entries[0], entries[len(entries)-1]
	if firstE.Rank > 1 {
		prev = Cursor{Key: firstE.Key(), Before: true}.String()
	}
	if lastE.Rank < total {
		next = Cursor{Key: lastE.Key()}.String()
	}
	return prev, next
}
