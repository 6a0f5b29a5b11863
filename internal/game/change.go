package game

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// BoardChange is one move on a level version's board: a player's new best
// put them at Rank (PreviousRank 0: they were not on the board). Changes of
// one board are numbered 1, 2, 3... in commit order by Seq, and Rank is
// exact as of that change: the board after change n is the board after
// change n-1 with this one move. A client holding a board at Seq n that
// applies changes n+1, n+2... in order holds the board every replica
// serves: the entry moves to Rank and every entry from Rank up to
// PreviousRank-1 (or to the end, for a newcomer) moves down one place.
type BoardChange struct {
	Seq          int64     `json:"seq"`
	Slug         string    `json:"slug"`
	Version      int       `json:"version"`
	PlayerID     uuid.UUID `json:"player_id"`
	PlayerName   string    `json:"player_name"`
	Score        int64     `json:"score"`
	Rank         int64     `json:"rank"`
	PreviousRank int64     `json:"previous_rank"`
	AchievedAt   time.Time `json:"achieved_at"`
	SubmissionID uuid.UUID `json:"submission_id"`
	// Total is the number of entries on the board after the change.
	Total int64 `json:"total"`
}

// ChangeRetention is how many of each board's latest changes the stores
// keep, at least, for readers that resume: a reader further behind starts
// again from the board's current page.
const ChangeRetention = 256

// Notice is what a store announces once a write has committed, for the
// readers following Topic (a live stream, on any replica). Seq orders the
// notices of one topic without gaps; Data is the JSON of what changed, or
// null when it was too large to announce (the reader then reads it from the
// store by Seq).
type Notice struct {
	Topic string          `json:"topic"`
	Seq   int64           `json:"seq"`
	Data  json.RawMessage `json:"data"`
}

// BoardTopic is the topic of a level version's board changes.
func BoardTopic(slug string, version int) string {
	return "board:" + slug + ":" + strconv.Itoa(version)
}

// Notice returns the announcement of c on its board's topic.
func (c BoardChange) Notice() (Notice, error) {
	data, err := json.Marshal(c)
	if err != nil {
		return Notice{}, err
	}
	return Notice{Topic: BoardTopic(c.Slug, c.Version), Seq: c.Seq, Data: data}, nil
}
