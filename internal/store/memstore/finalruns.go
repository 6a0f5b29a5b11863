package memstore

import (
	"bytes"
	"context"
	"slices"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// EventFinalRuns returns the final runs stored for an unfinished event;
// see pgstore.Store.EventFinalRuns.
func (s *Store) EventFinalRuns(ctx context.Context, id uuid.UUID) ([]game.EventResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil {
		return nil, err
	}
	out := []game.EventResult{}
	for _, r := range st.finalRuns {
		r.Result = clone(r.Result)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b game.EventResult) int { return bytes.Compare(a.PlayerID[:], b.PlayerID[:]) })
	return out, nil
}

// SaveEventFinalRuns stores final runs of an unfinished event; see
// pgstore.Store.SaveEventFinalRuns.
func (s *Store) SaveEventFinalRuns(ctx context.Context, id uuid.UUID, runs []game.EventResult) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.eventState(id)
	if err != nil || st.event.FinishedAt != nil {
		return err
	}
	for _, r := range runs {
		if r.Score < 0 {
			return game.Errorf(game.EINVALID, "invalid final run")
		}
	}
	if st.finalRuns == nil {
		st.finalRuns = map[uuid.UUID]game.EventResult{}
	}
	for _, r := range runs {
		if old, ok := st.finalRuns[r.PlayerID]; ok && old.SubmissionID == r.SubmissionID {
			continue
		}
		r.Result = clone(r.Result)
		st.finalRuns[r.PlayerID] = r
	}
	return nil
}
