package game

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Seasons. The global board never resets; beside it, the operator's
// schedule (SeasonSchedule) cuts time into seasons, each with a board of
// its own: per player, the sum over levels (by slug, whatever the version)
// of their best passing score submitted during the season. A level that
// gets a new version keeps its season scores: the season counts what a
// player achieved while it ran. A season's board orders and ties exactly
// like every other board (see board.go); its AchievedAt and SubmissionID
// are those of the latest of the player's per-level season bests, the
// moment they reached their total.
//
// Which season a submission counts for is decided by one clock, the
// store's, when the submission is stored (PostgreSQL: the database's
// clock as the submission's transaction commits; memory: the store's
// Now), not by the replica that ran it. A season that has ended is
// final: nothing lands in it any more, and its board (its final ranks)
// never changes.

// Season is one stored season: [StartsAt, EndsAt).
type Season struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	// Current: the season contains the store's clock now.
	Current bool `json:"current"`
}

// Contains reports whether t falls in the season.
func (s Season) Contains(t time.Time) bool { return !t.Before(s.StartsAt) && t.Before(s.EndsAt) }

// Season limits.
const (
	MinSeasonLength = time.Minute
	MaxSeasonLength = 366 * 24 * time.Hour
	// MaxSeasonIDLen bounds a season id (ids are made by SeasonSchedule).
	MaxSeasonIDLen = 40
	// MaxPlayerHistory is how many seasons, and how many events, a
	// player's page lists: the latest ones.
	MaxPlayerHistory = 100
)

// Season schedule kinds.
const (
	SeasonsMonthly = "monthly"
	SeasonsWeekly  = "weekly"
	SeasonsEvery   = "every" // a fixed duration
)

// DefaultSeasonAnchor is when seasons start counting unless the operator
// says otherwise: a Monday, the first of a month, midnight UTC.
var DefaultSeasonAnchor = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// SeasonSchedule is the operator's reset schedule: seasons of one calendar
// month, one week or a fixed duration, the first starting at Anchor and
// each next one where the previous ended. Nothing before Anchor counts in
// any season.
type SeasonSchedule struct {
	Kind   string
	Every  time.Duration // SeasonsEvery only
	Anchor time.Time
}

// ParseSeasonSchedule reads a schedule ("monthly", "weekly" or a duration
// such as "336h") and its anchor (RFC 3339; "" is DefaultSeasonAnchor).
func ParseSeasonSchedule(schedule, anchor string) (SeasonSchedule, error) {
	sc := SeasonSchedule{Anchor: DefaultSeasonAnchor}
	if anchor != "" {
		a, err := time.Parse(time.RFC3339, anchor)
		if err != nil {
			return sc, fmt.Errorf("season start %q is not an RFC 3339 time like 2026-01-01T00:00:00Z", anchor)
		}
		sc.Anchor = Timestamp(a).Truncate(time.Second)
	}
	switch s := strings.TrimSpace(schedule); s {
	case "", SeasonsMonthly:
		sc.Kind = SeasonsMonthly
	case SeasonsWeekly:
		sc.Kind = SeasonsWeekly
	default:
		d, err := time.ParseDuration(s)
		if err != nil || d < MinSeasonLength || d > MaxSeasonLength || d%time.Second != 0 {
			return sc, fmt.Errorf("season schedule %q must be monthly, weekly or a whole number of seconds from 1m to 8784h", schedule)
		}
		sc.Kind, sc.Every = SeasonsEvery, d
	}
	return sc, nil
}

// String is the schedule as the operator writes it.
func (sc SeasonSchedule) String() string {
	if sc.Kind == SeasonsEvery {
		return sc.Every.String()
	}
	return sc.Kind
}

// period returns the schedule's n-th period (n >= 0).
func (sc SeasonSchedule) period(n int) (start, end time.Time) {
	switch sc.Kind {
	case SeasonsMonthly:
		return sc.Anchor.AddDate(0, n, 0), sc.Anchor.AddDate(0, n+1, 0)
	case SeasonsWeekly:
		return sc.Anchor.AddDate(0, 0, 7*n), sc.Anchor.AddDate(0, 0, 7*(n+1))
	}
	return sc.Anchor.Add(time.Duration(n) * sc.Every), sc.Anchor.Add(time.Duration(n+1) * sc.Every)
}

// periodAt returns the index of the period containing t (t >= Anchor).
func (sc SeasonSchedule) periodAt(t time.Time) int {
	var n int
	switch sc.Kind {
	case SeasonsMonthly:
		n = (t.Year()-sc.Anchor.Year())*12 + int(t.Month()) - int(sc.Anchor.Month())
	case SeasonsWeekly:
		n = int(t.Sub(sc.Anchor) / (7 * 24 * time.Hour))
	default:
		n = int(t.Sub(sc.Anchor) / sc.Every)
	}
	// Calendar arithmetic (month lengths, an anchor late in a month) may
	// put the estimate one period off either way.
	for n > 0 {
		if s, _ := sc.period(n); !s.After(t) {
			break
		}
		n--
	}
	for {
		if _, e := sc.period(n); e.After(t) {
			return max(n, 0)
		}
		n++
	}
}

// named returns the season [start, end) with the id and name of the
// schedule's period that contains start.
func (sc SeasonSchedule) named(start, end time.Time) Season {
	s := Season{StartsAt: start, EndsAt: end}
	switch sc.Kind {
	case SeasonsMonthly:
		s.ID = start.Format("2006-01")
		s.Name = start.Format("January 2006")
	case SeasonsWeekly:
		y, w := start.ISOWeek()
		s.ID = fmt.Sprintf("%d-W%02d", y, w)
		s.Name = fmt.Sprintf("Week %d, %d", w, y)
	default:
		s.ID = start.Format("20060102T150405Z")
		s.Name = "Season of " + start.Format("2 Jan 2006 15:04 UTC")
	}
	return s
}

// Plan returns the seasons to store so that the season containing now,
// and the one after it, exist. It continues from last (the latest stored
// season, nil if none) while that reaches into the present, so a changed
// schedule takes effect when the stored seasons end; after a gap (no
// replica ran) it starts again from the schedule's period containing
// now, so no season is made that nobody could play in. Before the
// anchor it plans the first two seasons. The same arguments give the same
// plan.
func (sc SeasonSchedule) Plan(last *Season, now time.Time) []Season {
	now = Timestamp(now)
	want := 2
	var start time.Time
	switch {
	case last != nil && last.StartsAt.After(now):
		return nil // the season after the present is stored already
	case last != nil && last.EndsAt.After(now):
		start, want = last.EndsAt, 1
	case now.Before(sc.Anchor):
		start = sc.Anchor
	default:
		start, _ = sc.period(sc.periodAt(now))
		if last != nil && last.EndsAt.After(start) {
			start = last.EndsAt
		}
	}
	out := make([]Season, 0, want)
	for range want {
		_, end := sc.period(sc.periodAt(start))
		s := sc.named(start, end)
		if last != nil && len(out) == 0 && s.ID == last.ID {
			// The schedule changed within a period: the rest of
			// it is a season of its own.
			s.ID += "-2"
		}
		out = append(out, s)
		start = end
	}
	return out
}

// ValidSeasonID reports whether id can be a season id (letters, digits
// and '-', at most MaxSeasonIDLen), so a malformed path is a 404 at once.
func ValidSeasonID(id string) bool {
	if id == "" || len(id) > MaxSeasonIDLen {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// PlayerSeason is a player's place on one season's board.
type PlayerSeason struct {
	SeasonID string    `json:"season_id"`
	Name     string    `json:"name"`
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Current  bool      `json:"current"`
	Rank     int64     `json:"rank"`
	Score    int64     `json:"score"`
	Total    int64     `json:"total"` // players on that season's board
}

// PlayerEvent is a player's final result in one finished event.
type PlayerEvent struct {
	EventID    uuid.UUID `json:"event_id"`
	Title      string    `json:"title"`
	Rank       int64     `json:"rank"`
	Score      int64     `json:"score"`
	Passed     bool      `json:"passed"`
	Total      int64     `json:"total"` // entrants with a final result
	FinishedAt time.Time `json:"finished_at"`
}

// PlayerHistory is what a player's page shows beside the player: the
// seasons they played (newest first) and their results in finished events
// (latest finish first), at most MaxPlayerHistory of each.
type PlayerHistory struct {
	Seasons []PlayerSeason `json:"seasons"`
	Events  []PlayerEvent  `json:"events"`
}
