package memstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// EventStandingsPage returns one page of an event's standings; see
// pgstore.Store.EventStandingsPage.
func (s *Store) EventStandingsPage(ctx context.Context, id uuid.UUID, q game.EventStandingsQuery) (game.EventBoard, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.EventBoard{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return game.EventBoard{}, err
	}
	final := st.event.FinishedAt != nil
	board := game.EventBoard{EventID: id, Seq: st.seq, Final: final, Entries: []game.EventStanding{}}
	if cur != nil && cur.Final != final {
		return game.EventBoard{}, game.ErrStaleCursor()
	}
	n := len(st.ranked.order)
	if final {
		n = len(st.results)
	}
	board.Total = n
	// The page is positions [from, to) of the standings.
	var from, to int
	switch {
	case q.AroundPlayer != nil:
		i, ok := s.standingIndex(st, *q.AroundPlayer)
		if !ok {
			return game.EventBoard{}, game.Errorf(game.ENOTFOUND, "the player is not in this event's standings")
		}
		nb, na := game.AroundWindow(min(i, q.Limit-1), min(n-i, q.Limit), q.Limit)
		from, to = i-nb, i+na
	case cur == nil:
		from, to = 0, min(q.Limit, n)
	case final && cur.Before:
		to = int(min(cur.Rank-1, int64(n)))
		from = max(0, to-q.Limit)
	case final:
		from = int(min(cur.Rank, int64(n)))
		to = min(from+q.Limit, n)
	case cur.Before:
		to = st.ranked.index(cur.Key)
		from = max(0, to-q.Limit)
	default:
		from = st.ranked.index(cur.Key)
		if from < n && st.ranked.order[from].Compare(cur.Key) == 0 {
			from++
		}
		to = min(from+q.Limit, n)
	}
	for i := from; i < to; i++ {
		var e game.EventStanding
		if final {
			e = s.finalStanding(st, st.results[i])
		} else {
			p := st.ranked.order[i].PlayerID
			e = s.standing(p, st.entrants[p])
		}
		e.Rank = int64(i + 1)
		board.Entries = append(board.Entries, e)
	}
	if len(board.Entries) > 0 {
		board.Prev, board.Next = game.StandingsCursors(board.Entries, board.Total, final)
	}
	return board, nil
}

// standingIndex is the position of a player in an event's standings.
func (s *Store) standingIndex(st *eventState, p uuid.UUID) (int, bool) {
	if st.event.FinishedAt != nil {
		i := slices.IndexFunc(st.results, func(r game.EventResult) bool { return r.PlayerID == p })
		return i, i >= 0
	}
	e, ok := st.ranked.entries[p]
	if !ok {
		return 0, false
	}
	return st.ranked.index(e.key), true
}

// finalStanding is a frozen final result as a standing, without its rank.
func (s *Store) finalStanding(st *eventState, r game.EventResult) game.EventStanding {
	sub := st.subs[r.SubmissionID]
	id, at := r.SubmissionID, sub.CreatedAt
	return game.EventStanding{PlayerID: r.PlayerID, PlayerName: s.players[r.PlayerID].Name,
		Score: r.Score, Passed: r.Passed, Attempts: st.entrants[r.PlayerID].attempts,
		SubmissionID: &id, AchievedAt: &at}
}

// EventList returns one page of the events; see pgstore.Store.EventList.
func (s *Store) EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.EventList{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []game.Event
	for _, st := range s.events {
		e := st.event
		if (q.Phase != "" && e.Phase(q.Now) != q.Phase) ||
			(cur != nil && cmp.Or(e.StartsAt.Compare(cur.StartsAt), bytes.Compare(e.ID[:], cur.ID[:])) <= 0) {
			continue
		}
		all = append(all, game.ListedEvent(copyEvent(st)))
	}
	slices.SortFunc(all, func(a, b game.Event) int {
		return cmp.Or(a.StartsAt.Compare(b.StartsAt), bytes.Compare(a.ID[:], b.ID[:]))
	})
	out := game.EventList{Events: []game.Event{}}
	if len(all) > q.Limit {
		all = all[:q.Limit]
		last := all[q.Limit-1]
		out.Next = game.EventListCursor{StartsAt: last.StartsAt, ID: last.ID}.String()
	}
	out.Events = append(out.Events, all...)
	return out, nil
}
