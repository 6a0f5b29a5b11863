package storetest

import (
	"bytes"
	"slices"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// model is the contract's reference implementation of boards: a brute-force
// replay of submissions in commit order.
type model struct {
	names   map[uuid.UUID]string
	current map[string]int // slug -> current version
	boards  map[boardRef]map[uuid.UUID]game.Entry
}

type boardRef struct {
	slug    string
	version int
}

func newModel(players []game.Player) *model {
	m := &model{
		names:   map[uuid.UUID]string{},
		current: map[string]int{},
		boards:  map[boardRef]map[uuid.UUID]game.Entry{{}: {}},
	}
	for _, p := range players {
		m.names[p.ID] = p.Name
	}
	return m
}

func (m *model) addLevel(slug string) {
	m.current[slug]++
	m.boards[boardRef{slug, m.current[slug]}] = map[uuid.UUID]game.Entry{}
}

// newVersion makes a new current version of slug and drops the old one's
// bests from the global board.
func (m *model) newVersion(slug string) {
	old := m.boards[boardRef{slug, m.current[slug]}]
	m.addLevel(slug)
	global := m.boards[boardRef{}]
	for p, e := range old {
		g := global[p]
		latest := m.latestCurrentBest(p)
		if latest == nil {
			delete(global, p)
			continue
		}
		g.Score -= e.Score
		g.AchievedAt, g.SubmissionID = latest.AchievedAt, latest.SubmissionID
		global[p] = g
	}
}

// latestCurrentBest is the player's latest best on a current level version
// (by time, then submission ID), nil if none.
func (m *model) latestCurrentBest(p uuid.UUID) *game.Entry {
	var latest *game.Entry
	for s, v := range m.current {
		c, ok := m.boards[boardRef{s, v}][p]
		if ok && (latest == nil || c.AchievedAt.After(latest.AchievedAt) ||
			(c.AchievedAt.Equal(latest.AchievedAt) && bytes.Compare(c.SubmissionID[:], latest.SubmissionID[:]) > 0)) {
			latest = &c
		}
	}
	return latest
}

// submit applies a stored submission and reports whether it improved: a
// higher score, or the same score reached earlier.
func (m *model) submit(s game.Submission) bool {
	if !s.Passed {
		return false
	}
	b := m.boards[boardRef{s.Slug, s.Version}]
	old, had := b[s.PlayerID]
	at := game.Timestamp(s.CreatedAt)
	if had && !(game.BoardKey{Score: s.Score, AchievedAt: at}).Beats(old.Key()) {
		return false
	}
	b[s.PlayerID] = game.Entry{PlayerID: s.PlayerID, PlayerName: m.names[s.PlayerID], Score: s.Score, AchievedAt: at, SubmissionID: s.ID}
	if m.current[s.Slug] == s.Version {
		global := m.boards[boardRef{}]
		g, onGlobal := global[s.PlayerID]
		delta := s.Score - old.Score
		switch {
		case had && delta == 0: // the same score reached earlier
			latest := m.latestCurrentBest(s.PlayerID)
			g.AchievedAt, g.SubmissionID = latest.AchievedAt, latest.SubmissionID
			global[s.PlayerID] = g
		case !onGlobal || delta != 0:
			global[s.PlayerID] = game.Entry{PlayerID: s.PlayerID, PlayerName: m.names[s.PlayerID], Score: g.Score + delta, AchievedAt: at, SubmissionID: s.ID}
		}
	}
	return true
}

// board returns a board in order with ranks.
func (m *model) board(slug string, version int) []game.Entry {
	if slug != "" && version == 0 {
		version = m.current[slug]
	}
	if slug == "" {
		version = 0
	}
	out := []game.Entry{}
	for _, e := range m.boards[boardRef{slug, version}] {
		out = append(out, e)
	}
	sortEntries(out)
	return out
}

func sortEntries(es []game.Entry) {
	slices.SortFunc(es, func(a, b game.Entry) int { return a.Key().Compare(b.Key()) })
	for i := range es {
		es[i].Rank = int64(i + 1)
	}
}
