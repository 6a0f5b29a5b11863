package game

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"time"

	"github.com/google/uuid"
)

// Every list the API serves is a page: at most MaxListLimit items, and a
// cursor to the next page ("" on the last), opaque to clients. A cursor is
// a position in the list's order, exclusive, so items added between two
// pages are neither repeated nor make an existing item skipped, and each
// page costs the store O(page) whatever the list's length. Each kind of
// cursor starts with a byte of its own, so a cursor of one list is refused
// by another.

// List page sizes, unless a list documents its own default.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
	// DefaultDuelListLimit is GET /v1/duels' default page.
	DefaultDuelListLimit = 50
)

// Cursor kinds (the first byte of a list cursor).
const (
	levelListCursorVersion  = 4
	seasonListCursorVersion = 5
	duelListCursorVersion   = 6
	ratingsCursorVersion    = 7
)

// ListQuery asks for one page of a list.
type ListQuery struct {
	Limit  int    // 1..MaxListLimit; 0 means the list's default
	Cursor string // a page's Next; "" for the first page
}

// normalize fills in def and checks the limit; the cursor is each list's
// to decode.
func (q ListQuery) normalize(def int) (ListQuery, []FieldError) {
	if q.Limit == 0 {
		q.Limit = def
	}
	if q.Limit < 1 || q.Limit > MaxListLimit {
		return q, []FieldError{{Field: "limit", Reason: "must be 1 to 100"}}
	}
	return q, nil
}

func encodeListCursor(version byte, payload []byte) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{version}, payload...))
}

// decodeListCursor returns the payload of a cursor of kind version, of
// between minLen and maxLen bytes.
func decodeListCursor(s string, version byte, minLen, maxLen int) ([]byte, bool) {
	if len(s) > base64.RawURLEncoding.EncodedLen(1+maxLen) {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 1+minLen || len(b) > 1+maxLen || b[0] != version {
		return nil, false
	}
	return b[1:], true
}

var errBadCursor = FieldError{Field: "cursor", Reason: "is not a valid cursor"}

// timeCursor decodes a cursor of kind version: a time (microseconds since
// 1970, UTC), which must lie within PostgreSQL's timestamps (years 1 to
// 9999), then rest bytes, returned.
func timeCursor(s string, version byte, rest int) (time.Time, []byte, bool) {
	b, ok := decodeListCursor(s, version, 8+rest, 8+rest)
	if !ok {
		return time.Time{}, nil, false
	}
	t := time.UnixMicro(int64(binary.BigEndian.Uint64(b))).UTC()
	return t, b[8:], t.Year() >= 1 && t.Year() <= 9999
}

// Level list: the built-in campaign first, in campaign order, then every
// other level by slug (byte order).

// LevelListCursor is a decoded level list cursor: the next page starts at
// campaign position Position (Campaign true), or after the non-campaign
// level After.
type LevelListCursor struct {
	Campaign bool
	Position int
	After    string
}

// maxCursorSlug bounds the slug a level list cursor carries (a level's
// slug is at most 64 characters).
const maxCursorSlug = 64

// String encodes c as an opaque URL-safe string.
func (c LevelListCursor) String() string {
	if c.Campaign {
		return encodeListCursor(levelListCursorVersion, binary.BigEndian.AppendUint16([]byte{'c'}, uint16(c.Position)))
	}
	return encodeListCursor(levelListCursorVersion, append([]byte{'o'}, c.After...))
}

// ParseLevelListQuery checks q (default limit DefaultListLimit) and decodes
// its cursor (nil when there is none); campaignLen is the campaign's
// length, past which no position is valid.
func ParseLevelListQuery(q ListQuery, campaignLen int) (ListQuery, *LevelListCursor, error) {
	q, fe := q.normalize(DefaultListLimit)
	var cur *LevelListCursor
	if q.Cursor != "" {
		b, ok := decodeListCursor(q.Cursor, levelListCursorVersion, 1, 1+maxCursorSlug)
		switch {
		case ok && b[0] == 'c' && len(b) == 3:
			cur = &LevelListCursor{Campaign: true, Position: int(binary.BigEndian.Uint16(b[1:]))}
			ok = cur.Position <= campaignLen
		case ok && b[0] == 'o':
			// After "": the campaign ended a page exactly.
			cur = &LevelListCursor{After: string(b[1:])}
			ok = cur.After == "" || validCursorSlug(cur.After)
		default:
			ok = false
		}
		if !ok {
			cur = nil
			fe = append(fe, errBadCursor)
		}
	}
	if err := Invalid("invalid level list query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// validCursorSlug reports whether s could be a level's slug: lower-case
// letters, digits and single hyphens between them.
func validCursorSlug(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && s[i-1] != '-') {
			return false
		}
	}
	return true
}

// Season list: the latest first (seasons never overlap, so by start).

// SeasonList is one page of seasons.
type SeasonList struct {
	Seasons []Season `json:"seasons"` // never nil
	Next    string   `json:"next"`    // "" on the last page
}

// SeasonListCursor is a decoded season list cursor: the seasons that
// start before StartsAt.
type SeasonListCursor struct {
	StartsAt time.Time
}

// String encodes c as an opaque URL-safe string.
func (c SeasonListCursor) String() string {
	return encodeListCursor(seasonListCursorVersion, binary.BigEndian.AppendUint64(nil, uint64(c.StartsAt.UnixMicro())))
}

// ParseSeasonListQuery checks q (default limit DefaultListLimit) and
// decodes its cursor (nil when there is none).
func ParseSeasonListQuery(q ListQuery) (ListQuery, *SeasonListCursor, error) {
	q, fe := q.normalize(DefaultListLimit)
	var cur *SeasonListCursor
	if q.Cursor != "" {
		if at, _, ok := timeCursor(q.Cursor, seasonListCursorVersion, 0); ok {
			cur = &SeasonListCursor{StartsAt: at}
		} else {
			fe = append(fe, errBadCursor)
		}
	}
	if err := Invalid("invalid season list query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// Duel list: a player's duels, newest first (by creation, then id, both
// descending).

// DuelList is one page of a player's duels.
type DuelList struct {
	Duels []Duel `json:"duels"` // never nil
	Next  string `json:"next"`  // "" on the last page
}

// DuelListCursor is a decoded duel list cursor: the duels before the one
// created at CreatedAt with ID, in list order.
type DuelListCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// String encodes c as an opaque URL-safe string.
func (c DuelListCursor) String() string {
	b := binary.BigEndian.AppendUint64(nil, uint64(c.CreatedAt.UnixMicro()))
	return encodeListCursor(duelListCursorVersion, append(b, c.ID[:]...))
}

// ParseDuelListQuery checks q (default limit DefaultDuelListLimit) and
// decodes its cursor (nil when there is none).
func ParseDuelListQuery(q ListQuery) (ListQuery, *DuelListCursor, error) {
	q, fe := q.normalize(DefaultDuelListLimit)
	var cur *DuelListCursor
	if q.Cursor != "" {
		if at, id, ok := timeCursor(q.Cursor, duelListCursorVersion, 16); ok {
			cur = &DuelListCursor{CreatedAt: at, ID: uuid.UUID(id)}
		} else {
			fe = append(fe, errBadCursor)
		}
	}
	if err := Invalid("invalid duel list query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// DuelListNext is the Next of a page of duels read with one more than
// limit asked for: the cursor after the page's last, or "" when nothing
// was left over.
func DuelListNext(duels []Duel, limit int) ([]Duel, string) {
	if len(duels) <= limit {
		return duels, ""
	}
	last := duels[limit-1]
	return duels[:limit], DuelListCursor{CreatedAt: last.CreatedAt, ID: last.ID}.String()
}

// SeasonListPage is the page of seasons read with one more than limit
// asked for: Next is the cursor after the page's last, "" when nothing was
// left over.
func SeasonListPage(seasons []Season, limit int) SeasonList {
	if len(seasons) <= limit {
		return SeasonList{Seasons: append([]Season{}, seasons...)}
	}
	return SeasonList{Seasons: seasons[:limit], Next: SeasonListCursor{StartsAt: seasons[limit-1].StartsAt}.String()}
}

// Ratings board: by rating (highest first), then player id (see
// CompareRatings). A cursor carries the rank of the entry it follows, so
// ranks continue from page to page; each rank is exact within the
// snapshot its page was read from.

// DefaultRatingsLimit is GET /v1/ratings' default page.
const DefaultRatingsLimit = 50

// maxCursorRank bounds the rank a ratings cursor carries (far beyond any
// board, and exact in a JSON number).
const maxCursorRank = 1 << 53

// RatingsCursor is a decoded ratings board cursor: the entries after the
// one with Rating and PlayerID, which was ranked Rank.
type RatingsCursor struct {
	Rating   float64
	PlayerID uuid.UUID
	Rank     int64
}

// String encodes c as an opaque URL-safe string.
func (c RatingsCursor) String() string {
	b := binary.BigEndian.AppendUint64(nil, math.Float64bits(c.Rating))
	b = append(b, c.PlayerID[:]...)
	return encodeListCursor(ratingsCursorVersion, binary.BigEndian.AppendUint64(b, uint64(c.Rank)))
}

// After reports whether r comes after the cursor's entry on the board.
func (c RatingsCursor) After(r Rating) bool {
	return CompareRatings(r, Rating{Rating: c.Rating, PlayerID: c.PlayerID}) > 0
}

// ParseRatingsQuery checks q (default limit DefaultRatingsLimit) and
// decodes its cursor (nil when there is none).
func ParseRatingsQuery(q ListQuery) (ListQuery, *RatingsCursor, error) {
	q, fe := q.normalize(DefaultRatingsLimit)
	var cur *RatingsCursor
	if q.Cursor != "" {
		b, ok := decodeListCursor(q.Cursor, ratingsCursorVersion, 32, 32)
		if ok {
			cur = &RatingsCursor{
				Rating:   math.Float64frombits(binary.BigEndian.Uint64(b)),
				PlayerID: uuid.UUID(b[8:24]),
				Rank:     int64(binary.BigEndian.Uint64(b[24:])),
			}
			ok = !math.IsNaN(cur.Rating) && !math.IsInf(cur.Rating, 0) && cur.Rank >= 1 && cur.Rank <= maxCursorRank
		}
		if !ok {
			cur = nil
			fe = append(fe, errBadCursor)
		}
	}
	if err := Invalid("invalid ratings query", fe); err != nil {
		return q, nil, err
	}
	return q, cur, nil
}

// RatingsPageOf is the page of the board after cur (nil: from the top)
// given the ratings that follow cur in board order, at least limit+1 of
// them when there are: entries ranked on from cur's rank, and Next the
// cursor after the page's last, "" when nothing was left over.
func RatingsPageOf(ratings []Rating, limit int, cur *RatingsCursor, total int64) RatingsPage {
	var rank int64
	if cur != nil {
		rank = cur.Rank
	}
	page := RatingsPage{Total: total, Entries: []RatingEntry{}}
	for i, r := range ratings {
		if i == limit {
			last := page.Entries[limit-1]
			page.Next = RatingsCursor{Rating: last.Rating.Rating, PlayerID: last.PlayerID, Rank: last.Rank}.String()
			break
		}
		page.Entries = append(page.Entries, RatingEntry{Rank: rank + int64(i) + 1, Rating: r})
	}
	return page
}
