package memstore

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

type eventState struct {
	event    game.Event
	entrants map[uuid.UUID]*entrant
	subs     map[uuid.UUID]game.EventSubmission
	results  []game.EventResult // in final order, once finished
	seq      int64              // the latest change
	// finalRuns are the final runs a finisher stored before the finish
	// (finalruns.go), by player; dropped by the finish.
	finalRuns map[uuid.UUID]game.EventResult
	// ranked holds the live standings' keys (game.StandingKey) of the
	// entrants with at least one attempt, in order.
	ranked *board
}

type entrant struct {
	joinedAt time.Time
	attempts int
	best     *game.EventSubmission // best passing
	last     *game.EventSubmission
}

// CreateEvent stores a new event; see pgstore.Store.CreateEvent.
func (s *Store) CreateEvent(ctx context.Context, e game.Event) (game.Event, error) {
	if err := e.Validate(); err != nil {
		return game.Event{}, err
	}
	e = e.WithDefaults()
	e.StartsAt, e.EndsAt, e.CreatedAt = game.Timestamp(e.StartsAt), game.Timestamp(e.EndsAt), game.Timestamp(e.CreatedAt)
	e.HiddenChaos, e.HiddenResilience = clone(e.HiddenChaos), clone(e.HiddenResilience)
	e.FinishedAt, e.Entrants = nil, 0
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.level(e.Slug, e.Version); !ok {
		return game.Event{}, game.Errorf(game.ENOTFOUND, "level not found")
	}
	if _, ok := s.players[e.CreatedBy]; !ok && e.CreatedBy != uuid.Nil {
		return game.Event{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	if s.events == nil {
		s.events = map[uuid.UUID]*eventState{}
	}
	if _, ok := s.events[e.ID]; ok {
		return game.Event{}, game.Errorf(game.ECONFLICT, "event already exists")
	}
	s.events[e.ID] = &eventState{event: e, entrants: map[uuid.UUID]*entrant{}, subs: map[uuid.UUID]game.EventSubmission{},
		ranked: newBoard()}
	return copyEvent(s.events[e.ID]), nil
}

func copyEvent(st *eventState) game.Event {
	e := st.event
	e.HiddenChaos, e.HiddenResilience = clone(e.HiddenChaos), clone(e.HiddenResilience)
	if e.FinishedAt != nil {
		at := *e.FinishedAt
		e.FinishedAt = &at
	}
	e.Entrants = len(st.entrants)
	return e
}

func (s *Store) eventState(id uuid.UUID) (*eventState, error) {
	st, ok := s.events[id]
	if !ok {
		return nil, game.Errorf(game.ENOTFOUND, "event not found")
	}
	return st, nil
}

// Event returns an event.
func (s *Store) Event(ctx context.Context, id uuid.UUID) (game.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return game.Event{}, err
	}
	return copyEvent(st), nil
}

// JoinEvent enters a player; see pgstore.Store.JoinEvent.
func (s *Store) JoinEvent(ctx context.Context, eventID, playerID uuid.UUID, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(eventID)
	if err != nil {
		return err
	}
	if _, ok := s.players[playerID]; !ok {
		return game.Errorf(game.ENOTFOUND, "player not found")
	}
	return s.join(st, playerID, game.Timestamp(at))
}

// IsEntrant says whether a player has entered an event (joined it, or
// submitted to it); see pgstore.Store.IsEntrant.
func (s *Store) IsEntrant(ctx context.Context, eventID, playerID uuid.UUID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(eventID)
	if err != nil {
		return false, err
	}
	_, ok := st.entrants[playerID]
	return ok, nil
}

func (s *Store) join(st *eventState, playerID uuid.UUID, at time.Time) error {
	if st.event.FinishedAt != nil || !at.Before(st.event.EndsAt) {
		return game.Errorf(game.EEVENTENDED, "the event has ended")
	}
	if _, ok := st.entrants[playerID]; ok {
		return nil
	}
	if st.event.MaxEntrants > 0 && len(st.entrants) >= st.event.MaxEntrants {
		return game.Errorf(game.EEVENTFULL, "the event is full (%d entrants)", st.event.MaxEntrants)
	}
	st.entrants[playerID] = &entrant{joinedAt: at}
	return nil
}

// CreateEventSubmission stores an entrant's design; see
// pgstore.Store.CreateEventSubmission.
func (s *Store) CreateEventSubmission(ctx context.Context, sub game.EventSubmission) (attempts int, err error) {
	if err := validEventSubmission(sub); err != nil {
		return 0, err
	}
	sub.CreatedAt = game.Timestamp(sub.CreatedAt)
	sub.Design, sub.Result = clone(sub.Design), clone(sub.Result)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(sub.EventID)
	if err != nil {
		return 0, err
	}
	if _, ok := s.players[sub.PlayerID]; !ok {
		return 0, game.Errorf(game.ENOTFOUND, "player not found")
	}
	if sub.CreatedAt.Before(st.event.StartsAt) {
		return 0, game.Errorf(game.EEVENTNOTSTARTED, "the event has not started")
	}
	en, joined := st.entrants[sub.PlayerID]
	switch {
	case joined:
	case st.event.JoinRequired:
		if st.event.FinishedAt != nil || !sub.CreatedAt.Before(st.event.EndsAt) {
			return 0, game.Errorf(game.EEVENTENDED, "the event has ended")
		}
		return 0, game.Errorf(game.ENOTJOINED, "join the event before submitting")
	default:
		if err := s.join(st, sub.PlayerID, sub.CreatedAt); err != nil {
			return 0, err
		}
		en = st.entrants[sub.PlayerID]
	}
	if st.event.FinishedAt != nil || !sub.CreatedAt.Before(st.event.EndsAt) {
		return 0, game.Errorf(game.EEVENTENDED, "the event has ended")
	}
	if st.event.AttemptLimit > 0 && en.attempts >= st.event.AttemptLimit {
		return en.attempts, game.Errorf(game.EATTEMPTLIMIT, "you have used all %d attempts", st.event.AttemptLimit)
	}
	if _, ok := st.subs[sub.ID]; ok {
		return 0, game.Errorf(game.ECONFLICT, "submission already exists")
	}
	st.subs[sub.ID] = sub
	en.attempts++
	stored := st.subs[sub.ID]
	en.last = &stored
	if sub.Passed && (en.best == nil || game.BoardKey{Score: sub.Score, AchievedAt: sub.CreatedAt}.Beats(
		game.BoardKey{Score: en.best.Score, AchievedAt: en.best.CreatedAt})) {
		en.best = &stored
	}
	key := entrantKey(sub.PlayerID, en)
	st.ranked.put(sub.PlayerID, entry{key: key})
	standing := s.standing(sub.PlayerID, en)
	standing.Rank = st.ranked.rank(key)
	change := game.EventChange{EventID: st.event.ID, Kind: game.EventAttempt, Standing: &standing, Total: len(st.ranked.order)}
	s.announceEvent(st, change)
	return en.attempts, nil
}

func validEventSubmission(sub game.EventSubmission) error {
	return game.Submission{ID: sub.ID, PlayerID: sub.PlayerID, Slug: "event", Version: 1, Design: sub.Design,
		Result: sub.Result, Passed: sub.Passed, Score: sub.Score, CreatedAt: sub.CreatedAt}.Validate()
}

// announceEvent numbers change and tells Notify.
func (s *Store) announceEvent(st *eventState, change game.EventChange) {
	st.seq++
	change.Seq = st.seq
	if s.Notify != nil {
		if n, err := change.Notice(); err == nil {
			s.Notify(n)
		}
	}
}

// standing is an entrant's live standing, without its rank.
func (s *Store) standing(p uuid.UUID, en *entrant) game.EventStanding {
	e := game.EventStanding{PlayerID: p, PlayerName: s.players[p].Name, Attempts: en.attempts}
	if en.best != nil {
		id, at := en.best.ID, en.best.CreatedAt
		e.Score, e.Passed = en.best.Score, true
		e.SubmissionID, e.AchievedAt = &id, &at
	}
	return e
}

// entrantKey is an entrant's position in the live standings.
func entrantKey(p uuid.UUID, en *entrant) game.BoardKey {
	if en.best == nil {
		return game.StandingKey(p, false, 0, time.Time{})
	}
	return game.StandingKey(p, true, en.best.Score, en.best.CreatedAt)
}

// EventFinals returns each entrant's final design; see
// pgstore.Store.EventFinals.
func (s *Store) EventFinals(ctx context.Context, id uuid.UUID) ([]game.EventSubmission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return nil, err
	}
	out := []game.EventSubmission{}
	for _, en := range st.entrants {
		final := en.last
		if st.event.Final == game.FinalBest && en.best != nil {
			final = en.best
		}
		if final != nil {
			f := *final
			f.Design, f.Result = clone(f.Design), clone(f.Result)
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b game.EventSubmission) int { return bytes.Compare(a.PlayerID[:], b.PlayerID[:]) })
	return out, nil
}

// FinishEvent freezes the final standings; see pgstore.Store.FinishEvent.
func (s *Store) FinishEvent(ctx context.Context, id uuid.UUID, results []game.EventResult, at time.Time) (bool, error) {
	at = game.Timestamp(at)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return false, err
	}
	if st.event.FinishedAt != nil {
		return false, nil
	}
	if at.Before(st.event.EndsAt) {
		return false, game.Errorf(game.ECONFLICT, "the event has not ended")
	}
	ordered, err := game.RankResults(results, func(r game.EventResult) (time.Time, bool) {
		sub, ok := st.subs[r.SubmissionID]
		return sub.CreatedAt, ok && sub.PlayerID == r.PlayerID
	})
	if err != nil {
		return false, err
	}
	// The results must be those of the final designs as they are now
	// (see pgstore.Store.FinishEvent).
	finals := 0
	for p, en := range st.entrants {
		final := en.last
		if st.event.Final == game.FinalBest && en.best != nil {
			final = en.best
		}
		if final == nil {
			continue
		}
		finals++
		if !slices.ContainsFunc(results, func(r game.EventResult) bool { return r.PlayerID == p && r.SubmissionID == final.ID }) {
			return false, game.Errorf(game.ECONFLICT, "the final designs changed while the final runs ran; finish again")
		}
	}
	if finals != len(results) {
		return false, game.Errorf(game.ECONFLICT, "the final designs changed while the final runs ran; finish again")
	}
	for i := range ordered {
		ordered[i].Result = clone(ordered[i].Result)
	}
	st.results = ordered
	st.finalRuns = nil
	st.event.FinishedAt = &at
	s.announceEvent(st, game.EventChange{EventID: id, Kind: game.EventFinal, Total: len(ordered)})
	return true, nil
}

// EventResult returns an entrant's final run; see pgstore.Store.EventResult.
func (s *Store) EventResult(ctx context.Context, id, playerID uuid.UUID) (game.EventResult, game.EventSubmission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return game.EventResult{}, game.EventSubmission{}, err
	}
	for _, r := range st.results {
		if r.PlayerID == playerID {
			sub := st.subs[r.SubmissionID]
			r.Result = clone(r.Result)
			sub.Design, sub.Result = clone(sub.Design), clone(sub.Result)
			return r, sub, nil
		}
	}
	return game.EventResult{}, game.EventSubmission{}, game.Errorf(game.ENOTFOUND, "no final result for this player in this event")
}
