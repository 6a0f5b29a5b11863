package memstore

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// DeadlineClock is the store's clock (Now), which decides seasons and every
// deadline players race against; see pgstore.Store.DeadlineClock.
func (s *Store) DeadlineClock(ctx context.Context) (time.Time, error) {
	return game.Timestamp(s.Now()), nil
}

// seasonState is one stored season and its board. Seasons sit in
// Store.seasons in start order; they never overlap.
type seasonState struct {
	season game.Season
	board  *board
	// bests holds each player's best passing score per level (by slug)
	// submitted during the season.
	bests map[uuid.UUID]map[string]entry
}

// EnsureSeasons stores the seasons sc plans from the latest stored one and
// the store's clock (see game.SeasonSchedule.Plan), and returns them.
func (s *Store) EnsureSeasons(ctx context.Context, sc game.SeasonSchedule) ([]game.Season, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *game.Season
	if n := len(s.seasons); n > 0 {
		last = &s.seasons[n-1].season
	}
	plan := sc.Plan(last, s.Now())
	for _, ns := range plan {
		if n := len(s.seasons); n > 0 && s.seasons[n-1].season.EndsAt.After(ns.StartsAt) {
			return nil, game.Errorf(game.ECONFLICT, "season %s overlaps a stored one", ns.ID)
		}
		ns.Current = false
		s.seasons = append(s.seasons, &seasonState{season: ns, board: newBoard(), bests: map[uuid.UUID]map[string]entry{}})
	}
	return plan, nil
}

// seasonAt returns the season containing t, nil if none.
func (s *Store) seasonAt(t int64) *seasonState {
	i, found := slices.BinarySearchFunc(s.seasons, t, func(st *seasonState, t int64) int {
		switch {
		case st.season.EndsAt.UnixMicro() <= t:
			return -1
		case st.season.StartsAt.UnixMicro() > t:
			return 1
		}
		return 0
	})
	if !found {
		return nil
	}
	return s.seasons[i]
}

// countInSeason counts a passing submission in the season containing the
// store's clock now (the moment it is stored), as the PostgreSQL store's
// trigger does at commit. The caller holds the lock.
func (s *Store) countInSeason(sub game.Submission) {
	st := s.seasonAt(game.Timestamp(s.Now()).UnixMicro())
	if st == nil {
		return
	}
	bests := st.bests[sub.PlayerID]
	if bests == nil {
		bests = map[string]entry{}
		st.bests[sub.PlayerID] = bests
	}
	key := game.BoardKey{Score: sub.Score, AchievedAt: sub.CreatedAt, PlayerID: sub.PlayerID}
	if old, ok := bests[sub.Slug]; ok && !key.Beats(old.key) {
		return
	}
	bests[sub.Slug] = entry{key: key, subID: sub.ID}
	var total game.BoardKey
	var latest entry
	for _, b := range bests {
		total.Score += b.key.Score
		if c := b.key.AchievedAt.Compare(latest.key.AchievedAt); c > 0 || (c == 0 && bytes.Compare(b.subID[:], latest.subID[:]) > 0) {
			latest = b
		}
	}
	total.AchievedAt, total.PlayerID = latest.key.AchievedAt, sub.PlayerID
	st.board.put(sub.PlayerID, entry{key: total, subID: latest.subID})
}

func (s *Store) viewSeason(st *seasonState) game.Season {
	out := st.season
	out.Current = out.Contains(game.Timestamp(s.Now()))
	return out
}

// Seasons returns one page of the stored seasons, the latest first
// (stored in order of start: a binary search, then the page).
func (s *Store) Seasons(ctx context.Context, q game.ListQuery) (game.SeasonList, error) {
	q, cur, err := game.ParseSeasonListQuery(q)
	if err != nil {
		return game.SeasonList{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := len(s.seasons) // seasons[:end] start before the cursor
	if cur != nil {
		end, _ = slices.BinarySearchFunc(s.seasons, cur.StartsAt, func(st *seasonState, t time.Time) int {
			return st.season.StartsAt.Compare(t)
		})
	}
	out := []game.Season{}
	for i := end - 1; i >= 0 && len(out) <= q.Limit; i-- {
		out = append(out, s.viewSeason(s.seasons[i]))
	}
	return game.SeasonListPage(out, q.Limit), nil
}

func (s *Store) season(id string) (*seasonState, error) {
	for _, st := range s.seasons {
		if st.season.ID == id {
			return st, nil
		}
	}
	return nil, game.Errorf(game.ENOTFOUND, "season not found")
}

// Season returns one season.
func (s *Store) Season(ctx context.Context, id string) (game.Season, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.season(id)
	if err != nil {
		return game.Season{}, err
	}
	return s.viewSeason(st), nil
}

// SeasonBoard returns one page of a season's board (q.Slug and q.Version
// are ignored), with exact ranks, like Board.
func (s *Store) SeasonBoard(ctx context.Context, id string, q game.BoardQuery) (game.BoardPage, error) {
	q.Slug, q.Version = "", 0
	q, cur, err := q.Normalize()
	if err != nil {
		return game.BoardPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.season(id)
	if err != nil {
		return game.BoardPage{}, err
	}
	page, err := s.page(st.board, q, cur)
	page.Season = id
	return page, err
}

// PlayerHistory returns the seasons a player played, the latest first, and
// their results in finished events, the latest finish first.
func (s *Store) PlayerHistory(ctx context.Context, playerID uuid.UUID) (game.PlayerHistory, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.players[playerID]; !ok {
		return game.PlayerHistory{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	h := game.PlayerHistory{Seasons: []game.PlayerSeason{}, Events: []game.PlayerEvent{}}
	for i := len(s.seasons) - 1; i >= 0 && len(h.Seasons) < game.MaxPlayerHistory; i-- {
		st := s.seasons[i]
		e, ok := st.board.entries[playerID]
		if !ok {
			continue
		}
		v := s.viewSeason(st)
		h.Seasons = append(h.Seasons, game.PlayerSeason{
			SeasonID: v.ID, Name: v.Name, StartsAt: v.StartsAt, EndsAt: v.EndsAt, Current: v.Current,
			Rank: st.board.rank(e.key), Score: e.key.Score, Total: int64(len(st.board.order)),
		})
	}
	for _, st := range s.events {
		if st.event.FinishedAt == nil {
			continue
		}
		for i, r := range st.results {
			if r.PlayerID == playerID {
				h.Events = append(h.Events, game.PlayerEvent{
					EventID: st.event.ID, Title: st.event.Title, Rank: int64(i + 1), Score: r.Score, Passed: r.Passed,
					Total: int64(len(st.results)), FinishedAt: *st.event.FinishedAt,
				})
				break
			}
		}
	}
	slices.SortFunc(h.Events, func(a, b game.PlayerEvent) int {
		if c := b.FinishedAt.Compare(a.FinishedAt); c != 0 {
			return c
		}
		return bytes.Compare(b.EventID[:], a.EventID[:])
	})
	if len(h.Events) > game.MaxPlayerHistory {
		h.Events = h.Events[:game.MaxPlayerHistory]
	}
	return h, nil
}
