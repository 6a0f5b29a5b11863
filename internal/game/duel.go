package game

import (
	"cmp"
	"encoding/json"
	"math"
	"time"

	"github.com/google/uuid"
)

// Duel states. A challenge waits for its opponent (challenged), a match
// request for a partner (matching); both players then have a submit window
// (active); a duel ends finished (both designs ran), forfeited (one side
// never submitted: the other wins), declined, or expired (nobody answered,
// nobody was matched, or neither side submitted; no rating changes).
const (
	DuelChallenged = "challenged"
	DuelMatching   = "matching"
	DuelActive     = "active"
	DuelFinished   = "finished"
	DuelDeclined   = "declined"
	DuelExpired    = "expired"
	DuelForfeited  = "forfeited"
)

// DuelEnded reports whether state is final.
func DuelEnded(state string) bool {
	switch state {
	case DuelFinished, DuelDeclined, DuelExpired, DuelForfeited:
		return true
	}
	return false
}

// Duel error codes: every duel rule has its own (docs/api.md "Duels").
const (
	EDUELSELF       = "duel_self"              // challenging or being matched with yourself
	EDUELPAIRACTIVE = "duel_pair_active"       // the pair already has an open duel on the level
	EDUELDAILYLIMIT = "duel_daily_limit"       // the player started their duels for the (UTC) day
	EDUELNOTPLAYER  = "duel_not_player"        // acting on a duel one is not a player of (or not the challenged one)
	EDUELSTATE      = "duel_state"             // the duel is not in a state that allows this
	EDUELDEADLINE   = "duel_deadline_passed"   // accept_by or submit_by has passed
	EDUELSUBMITTED  = "duel_already_submitted" // one design per side
	EDUELPRIVATE    = "duel_private"           // a pending duel is seen by its players only
	EDUELMATCHING   = "duel_already_matching"  // one match request per player and level
)

// Why a duel was decided as it was (DuelResult.Reason).
const (
	ReasonScore       = "higher_score"   // both passed: the higher score won
	ReasonPassed      = "passed"         // one passed, the other failed
	ReasonFailedLater = "failed_later"   // both failed: the one whose failure started later won
	ReasonFewerErrors = "fewer_errors"   // both failed at the same time: the lower error rate won
	ReasonDraw        = "draw"           // nothing told them apart
	ReasonForfeit     = "forfeit"        // the other side never submitted
	ReasonNoDesigns   = "no_submissions" // neither side submitted (expired)
	ReasonUnanswered  = "unanswered"     // the challenge was not accepted in time (expired)
	ReasonUnmatched   = "unmatched"      // nobody was matched in time (expired)
	ReasonDeclined    = "declined"
)

// DuelSide is one player of a duel and what they submitted. Design is nil
// until they submit.
type DuelSide struct {
	PlayerID    uuid.UUID       `json:"player_id"`
	PlayerName  string          `json:"player_name"`
	Design      json.RawMessage `json:"design,omitempty"`
	SubmittedAt *time.Time      `json:"submitted_at,omitempty"`
}

// Submitted reports whether the side has submitted its design.
func (s DuelSide) Submitted() bool { return s.Design != nil }

// Duel is two players on one level version. Sides[0] is the challenger (or
// the first to ask to be matched); Sides[1] is the opponent, uuid.Nil while
// matching. Seed fixes the surprise chaos event (drawn by
// challenges.Surprise) when the duel is created; nobody sees it, nor the
// designs, until the duel has ended.
type Duel struct {
	ID      uuid.UUID   `json:"id"`
	Slug    string      `json:"slug"`
	Version int         `json:"version"`
	State   string      `json:"state"`
	Seed    uint64      `json:"seed"`
	Sides   [2]DuelSide `json:"sides"`
	// MatchRating is the rating the first side asked to be matched with.
	MatchRating float64    `json:"match_rating"`
	CreatedAt   time.Time  `json:"created_at"`
	AcceptBy    time.Time  `json:"accept_by"` // challenge answered (or partner found) by
	SubmitBy    *time.Time `json:"submit_by"` // designs in by; set when the duel becomes active
	EndedAt     *time.Time `json:"ended_at"`
	Result      *DuelResult
	// Seq numbers the duel's changes (1 at creation), for live streams.
	Seq int64 `json:"seq"`
}

// Side returns the index of playerID's side, or -1.
func (d Duel) Side(playerID uuid.UUID) int {
	for i, s := range d.Sides {
		if s.PlayerID == playerID && playerID != uuid.Nil {
			return i
		}
	}
	return -1
}

// Deadline is the time at which the duel's current state runs out (zero
// for an ended duel).
func (d Duel) Deadline() time.Time {
	switch d.State {
	case DuelChallenged, DuelMatching:
		return d.AcceptBy
	case DuelActive:
		if d.SubmitBy != nil {
			return *d.SubmitBy
		}
	}
	return time.Time{}
}

// DuelTopic is the topic of a duel's changes.
func DuelTopic(id uuid.UUID) string { return "duel:" + id.String() }

// DuelNotice announces change seq of duel id. It carries no data: what a
// reader may see of a duel depends on who reads it, so the reader reads
// the duel from the store.
func DuelNotice(id uuid.UUID, seq int64) Notice {
	return Notice{Topic: DuelTopic(id), Seq: seq}
}

// DuelRun is what the referee measured of one side's run.
type DuelRun struct {
	Passed bool  `json:"passed"`
	Score  int64 `json:"score"`
	// FailedAtSec is when the run started failing (the first failing
	// stretch, or the start of the evaluation window for a design that
	// fails on something measured over the whole window, like cost); nil
	// for a passing run.
	FailedAtSec *float64 `json:"failed_at_sec"`
	// ErrorRate is the mean error rate over the evaluation window.
	ErrorRate float64 `json:"error_rate"`
}

// DecideDuel compares two runs: a passing run beats a failing one; of two
// passing runs the higher score wins; of two failing runs the one that
// started failing later wins, at the same time the one with fewer errors.
// winner is 0 or 1, or -1 for a draw.
func DecideDuel(a, b DuelRun) (winner int, reason string) {
	pick := func(c int, reason string) (int, string) {
		if c > 0 {
			return 0, reason
		}
		return 1, reason
	}
	switch {
	case a.Passed != b.Passed:
		if a.Passed {
			return 0, ReasonPassed
		}
		return 1, ReasonPassed
	case a.Passed:
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return pick(c, ReasonScore)
		}
		return -1, ReasonDraw
	}
	fa, fb := math.Inf(1), math.Inf(1)
	if a.FailedAtSec != nil {
		fa = *a.FailedAtSec
	}
	if b.FailedAtSec != nil {
		fb = *b.FailedAtSec
	}
	if c := cmp.Compare(fa, fb); c != 0 {
		return pick(c, ReasonFailedLater)
	}
	if c := cmp.Compare(b.ErrorRate, a.ErrorRate); c != 0 {
		return pick(c, ReasonFewerErrors)
	}
	return -1, ReasonDraw
}

// DuelResultSide is one side of an ended duel: the design, its verdict on
// the level with the surprise, and the timeline of its run.
type DuelResultSide struct {
	PlayerID uuid.UUID `json:"player_id"`
	DuelRun
	Submitted bool            `json:"submitted"`
	Design    json.RawMessage `json:"design"` // null if never submitted
	Summary   json.RawMessage `json:"summary"`
	// Evaluation is the verdict (challenges.Evaluation), Summary the
	// engine's summary of the run, Components the components in the
	// order each tick lists them, Ticks the run's ticks, downsampled (see
	// Every): all null without a run.
	Evaluation json.RawMessage `json:"evaluation"`
	Components json.RawMessage `json:"components"`
	Ticks      json.RawMessage `json:"ticks"`
	// Every: Ticks holds one tick of every Every of the run, and the last.
	Every      int `json:"every"`
	TotalTicks int `json:"total_ticks"`
}

// RatingChange is one player's rating before and after a duel; Unrated
// says why the duel did not move it (UnratedProvisionalOpponent,
// UnratedRepeatOpponent), empty if it did.
type RatingChange struct {
	PlayerID uuid.UUID `json:"player_id"`
	Before   float64   `json:"before"`
	After    float64   `json:"after"`
	Unrated  string    `json:"unrated,omitempty"`
}

// DuelResult is how a duel ended. Winner is nil for a draw and for a duel
// that ended without a contest (expired, declined).
type DuelResult struct {
	Winner *uuid.UUID       `json:"winner"`
	Draw   bool             `json:"draw"`
	Reason string           `json:"reason"`
	Sides  []DuelResultSide `json:"sides"`
	// Surprise is the surprise chaos (a level's run.chaos list), revealed
	// with the result.
	Surprise json.RawMessage `json:"surprise_chaos"`
	// Ratings: the rating change of each player, set by the store in the
	// transaction that ends the duel (none for expired or declined duels).
	Ratings []RatingChange `json:"ratings"`
}

// DuelEnd is how a referee ends a duel: the state it moves to (finished,
// forfeited, expired, declined), the result, and when.
type DuelEnd struct {
	State  string
	Result DuelResult
	At     time.Time
}

// Rated reports whether the end changes ratings: a contest with a winner
// or a draw.
func (e DuelEnd) Rated() bool { return e.State == DuelFinished || e.State == DuelForfeited }

// DuelRules are the limits a store enforces when it starts a duel.
type DuelRules struct {
	// PerDay duels a player may enter per UTC day: start (challenge or
	// ask to be matched), be paired into or accept (EnteredSince).
	PerDay int
	// Match: the rating difference allowed between two players grows from
	// MatchBase by MatchPerMinute for every minute the waiting one has
	// waited, up to MatchMax.
	MatchBase      float64
	MatchPerMinute float64
	MatchMax       float64
	// SubmitWindow is how long both sides have to submit once active.
	SubmitWindow time.Duration
}

// MatchAllowance is the rating difference allowed for a player who has
// waited waited.
func (r DuelRules) MatchAllowance(waited time.Duration) float64 {
	return math.Min(r.MatchMax, r.MatchBase+r.MatchPerMinute*math.Max(0, waited.Minutes()))
}

// EnteredSince reports whether player entered d at or after since: started
// it (Sides[0], at CreatedAt), or was paired into it or accepted it
// (Sides[1], when it became active: SubmitBy less the submit window).
func (d Duel) EnteredSince(player uuid.UUID, since time.Time, window time.Duration) bool {
	switch player {
	case d.Sides[0].PlayerID:
		return !d.CreatedAt.Before(since)
	case d.Sides[1].PlayerID:
		return d.SubmitBy != nil && !d.SubmitBy.Before(since.Add(window))
	}
	return false
}

// CheckDaily: a player who has entered entered duels this UTC day may
// enter another while under PerDay (0: no limit).
func (r DuelRules) CheckDaily(entered int) error {
	if r.PerDay > 0 && entered >= r.PerDay {
		return Errorf(EDUELDAILYLIMIT, "you have entered %d duels today (UTC: started, paired or accepted), the most a player may; try again tomorrow", r.PerDay)
	}
	return nil
}

// DayStart is the start of the UTC day of t: daily limits count from it.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Validate reports the invariants a store relies on for a new duel.
func (d Duel) Validate() error {
	var fe []FieldError
	if d.ID == uuid.Nil {
		fe = append(fe, FieldError{Field: "id", Reason: "is required"})
	}
	if d.Slug == "" || d.Version < 1 {
		fe = append(fe, FieldError{Field: "level", Reason: "is required"})
	}
	if d.Sides[0].PlayerID == uuid.Nil {
		fe = append(fe, FieldError{Field: "players[0]", Reason: "is required"})
	}
	switch d.State {
	case DuelChallenged:
		if d.Sides[1].PlayerID == uuid.Nil {
			fe = append(fe, FieldError{Field: "opponent", Reason: "is required"})
		}
	case DuelMatching:
		if d.Sides[1].PlayerID != uuid.Nil {
			fe = append(fe, FieldError{Field: "opponent", Reason: "must be empty when asking to be matched"})
		}
	default:
		fe = append(fe, FieldError{Field: "state", Reason: "a new duel is challenged or matching"})
	}
	if d.CreatedAt.IsZero() || !d.AcceptBy.After(d.CreatedAt) {
		fe = append(fe, FieldError{Field: "accept_by", Reason: "must be after created_at"})
	}
	return Invalid("invalid duel", fe)
}

// Rating is a player's Glicko-2 rating (see RateDuel), on the Glicko
// scale: a new player has 1500 ± 350. Opponents counts the distinct
// opponents of the player's rated duels, RatedOpponents those of them
// against whom the rating moved; a player is Provisional until they have
// EstablishedOpponents opponents.
type Rating struct {
	PlayerID       uuid.UUID `json:"player_id"`
	PlayerName     string    `json:"player_name"`
	Rating         float64   `json:"rating"`
	Deviation      float64   `json:"deviation"`
	Volatility     float64   `json:"volatility"`
	Duels          int       `json:"duels"`
	Wins           int       `json:"wins"`
	Losses         int       `json:"losses"`
	Draws          int       `json:"draws"`
	Opponents      int       `json:"opponents"`
	RatedOpponents int       `json:"rated_opponents"`
	Provisional    bool      `json:"provisional"`
}

// Rating defaults (Glickman's paper).
const (
	DefaultRating     = 1500
	DefaultDeviation  = 350
	DefaultVolatility = 0.06
)

// NewRating is the rating of a player who has not duelled.
func NewRating(playerID uuid.UUID) Rating {
	return Rating{PlayerID: playerID, Rating: DefaultRating, Deviation: DefaultDeviation, Volatility: DefaultVolatility, Provisional: true}
}

// RatingEntry is a place on the ratings board.
type RatingEntry struct {
	Rank int64 `json:"rank"`
	Rating
}

// RatingsPage is a page of the ratings board (players whose ratings moved
// against at least BoardOpponents distinct opponents, by rating, then
// player id). Total counts the whole board.
type RatingsPage struct {
	Total   int64         `json:"total"`
	Entries []RatingEntry `json:"entries"` // never nil
	Next    string        `json:"next"`    // "" on the last page
}

// CompareRatings orders the ratings board.
func CompareRatings(a, b Rating) int {
	if c := cmp.Compare(b.Rating, a.Rating); c != 0 {
		return c
	}
	return cmp.Compare(a.PlayerID.String(), b.PlayerID.String())
}

// The rules of each step of a duel, checked by both stores against the
// duel as locked in the transaction that changes it.

// CheckAccept: only the challenged player accepts, a challenge, before
// accept_by.
func CheckAccept(d Duel, playerID uuid.UUID, at time.Time) error {
	switch {
	case d.Side(playerID) != 1 || d.State == DuelMatching:
		return Errorf(EDUELNOTPLAYER, "only the challenged player may accept this duel")
	case d.State != DuelChallenged:
		return Errorf(EDUELSTATE, "the duel is %s; only a challenge can be accepted", d.State)
	case !at.Before(d.AcceptBy):
		return Errorf(EDUELDEADLINE, "the challenge had to be accepted by %s", d.AcceptBy.Format(time.RFC3339))
	}
	return nil
}

// CheckDecline: either player of a challenge declines it (the challenger
// withdraws it), until it is accepted.
func CheckDecline(d Duel, playerID uuid.UUID) error {
	switch {
	case d.Side(playerID) < 0:
		return Errorf(EDUELNOTPLAYER, "only the players of this duel may decline it")
	case d.State != DuelChallenged:
		return Errorf(EDUELSTATE, "the duel is %s; only a challenge can be declined", d.State)
	}
	return nil
}

// CheckSubmit: a player of an active duel submits once, before submit_by.
// It returns the player's side.
func CheckSubmit(d Duel, playerID uuid.UUID, design json.RawMessage, at time.Time) (int, error) {
	side := d.Side(playerID)
	switch {
	case side < 0:
		return -1, Errorf(EDUELNOTPLAYER, "only the players of this duel may submit to it")
	case d.State != DuelActive:
		return -1, Errorf(EDUELSTATE, "the duel is %s; designs are submitted while it is active", d.State)
	case d.SubmitBy != nil && !at.Before(*d.SubmitBy):
		return -1, Errorf(EDUELDEADLINE, "designs had to be in by %s", d.SubmitBy.Format(time.RFC3339))
	case d.Sides[side].Submitted():
		return -1, Errorf(EDUELSUBMITTED, "you have already submitted your design to this duel")
	case !json.Valid(design):
		return -1, Invalid("invalid design", []FieldError{{Field: "design", Reason: "must be JSON"}})
	}
	return side, nil
}

// CheckEnd: a finished duel was active with both designs in; a forfeited
// one was active with one design in and its deadline passed; an expired
// one ran out of its deadline with nothing to decide. The result names
// one of the players as winner, or none for a draw or no contest.
func CheckEnd(d Duel, end DuelEnd) error {
	in := 0
	for _, s := range d.Sides {
		if s.Submitted() {
			in++
		}
	}
	due := !end.At.Before(d.Deadline())
	var ok bool
	switch end.State {
	case DuelFinished:
		ok = d.State == DuelActive && in == 2
	case DuelForfeited:
		w := WinnerIndex(d, end.Result)
		ok = d.State == DuelActive && in == 1 && due && w >= 0 && d.Sides[w].Submitted()
	case DuelExpired:
		ok = due && (d.State != DuelActive || in == 0) && end.Result.Winner == nil
	}
	if w := end.Result.Winner; ok && w != nil && d.Side(*w) < 0 {
		ok = false
	}
	if !ok {
		return Errorf(EDUELSTATE, "a %s duel with %d designs in cannot end %s at %s", d.State, in, end.State, end.At.Format(time.RFC3339))
	}
	return nil
}

// WinnerIndex is the side of r's winner, -1 for none.
func WinnerIndex(d Duel, r DuelResult) int {
	if r.Winner == nil {
		return -1
	}
	return d.Side(*r.Winner)
}
