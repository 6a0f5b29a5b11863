package memstore

import (
	"context"

	"backpressure/internal/game"
)

// recordChange numbers and logs the move of sub's player to rank on b (a
// level board; from old when hadBest) and announces it. The caller holds
// the lock.
func (s *Store) recordChange(b *board, sub game.Submission, old entry, hadBest bool, rank int64) {
	b.seq++
	c := game.BoardChange{
		Seq: b.seq, Slug: sub.Slug, Version: sub.Version, PlayerID: sub.PlayerID,
		PlayerName: s.players[sub.PlayerID].Name, Score: sub.Score, Rank: rank,
		AchievedAt: sub.CreatedAt, SubmissionID: sub.ID, Total: int64(len(b.order)),
	}
	if hadBest {
		// The new key is before the old one: subtract it.
		c.PreviousRank = b.rank(old.key) - 1
	}
	if len(b.changes) == game.ChangeRetention {
		b.changes = append(b.changes[:0], b.changes[1:]...)
	}
	b.changes = append(b.changes, c)
	if s.Notify != nil {
		if n, err := c.Notice(); err == nil {
			s.Notify(n)
		}
	}
}

// BoardChanges returns the changes of a level version's board after seq
// after; see pgstore.Store.BoardChanges for the contract, which is the same.
func (s *Store) BoardChanges(ctx context.Context, slug string, version int, after int64, limit int) ([]game.BoardChange, bool, error) {
	if limit <= 0 || limit > game.ChangeRetention {
		limit = game.ChangeRetention
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.level(slug, version); !ok || version == 0 {
		return nil, false, game.Errorf(game.ENOTFOUND, "level not found")
	}
	b := s.boards[levelRef{slug, version}]
	if after < 0 || after > b.seq {
		return []game.BoardChange{}, false, nil
	}
	out := []game.BoardChange{}
	if after == b.seq {
		return out, true, nil
	}
	first := b.seq - int64(len(b.changes)) + 1 // seq of b.changes[0]
	if after+1 < first {
		return out, false, nil
	}
	for _, c := range b.changes[after+1-first:] {
		if len(out) == limit {
			break
		}
		out = append(out, c)
	}
	return out, true, nil
}
