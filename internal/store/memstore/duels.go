package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// duelState is the store's duels and ratings, and each player's history
// against each opponent (game.PairHistory), keyed player then opponent.
type duelState struct {
	byID    map[uuid.UUID]*game.Duel
	ratings map[uuid.UUID]game.Rating
	pairs   map[pairKey]game.PairHistory
}

type pairKey struct{ player, opponent uuid.UUID }

func (s *Store) duelsInit() {
	if s.duels.byID == nil {
		s.duels.byID = map[uuid.UUID]*game.Duel{}
		s.duels.ratings = map[uuid.UUID]game.Rating{}
		s.duels.pairs = map[pairKey]game.PairHistory{}
	}
}

// copyDuel is a deep copy of d, with its players' names.
func (s *Store) copyDuel(d *game.Duel) game.Duel {
	out := *d
	for i := range out.Sides {
		out.Sides[i].Design = clone(out.Sides[i].Design)
		if t := out.Sides[i].SubmittedAt; t != nil {
			at := *t
			out.Sides[i].SubmittedAt = &at
		}
		out.Sides[i].PlayerName = s.players[out.Sides[i].PlayerID].Name
	}
	if d.SubmitBy != nil {
		at := *d.SubmitBy
		out.SubmitBy = &at
	}
	if d.EndedAt != nil {
		at := *d.EndedAt
		out.EndedAt = &at
	}
	if d.Result != nil {
		var r game.DuelResult
		b, _ := json.Marshal(d.Result)
		_ = json.Unmarshal(b, &r)
		out.Result = &r
	}
	return out
}

// announceDuel numbers a change of d and tells Notify.
func (s *Store) announceDuel(d *game.Duel) {
	d.Seq++
	if s.Notify != nil {
		s.Notify(game.DuelNotice(d.ID, d.Seq))
	}
}

// startChecks applies the rules of starting a duel (see
// pgstore.Store.CreateDuel) for player p at t.
func (s *Store) startChecks(d game.Duel, rules game.DuelRules) error {
	if _, ok := s.level(d.Slug, d.Version); !ok {
		return game.Errorf(game.ENOTFOUND, "level not found")
	}
	for _, side := range d.Sides {
		if _, ok := s.players[side.PlayerID]; !ok && side.PlayerID != uuid.Nil {
			return game.Errorf(game.ENOTFOUND, "player not found")
		}
	}
	if d.Sides[0].PlayerID == d.Sides[1].PlayerID {
		return game.Errorf(game.EDUELSELF, "a player cannot duel themselves")
	}
	return s.dailyCheck(d.Sides[0].PlayerID, d.CreatedAt, rules)
}

// dailyCheck applies rules.PerDay to player entering a duel at at.
func (s *Store) dailyCheck(player uuid.UUID, at time.Time, rules game.DuelRules) error {
	day, entered := game.DayStart(at), 0
	for _, o := range s.duels.byID {
		if o.EnteredSince(player, day, rules.SubmitWindow) {
			entered++
		}
	}
	return rules.CheckDaily(entered)
}

// pairOpen reports whether a and b have a duel on slug that is not over
// (a challenge not yet answered, or an active duel).
func (s *Store) pairOpen(a, b uuid.UUID, slug string) bool {
	for _, o := range s.duels.byID {
		if o.Slug != slug || (o.State != game.DuelChallenged && o.State != game.DuelActive) {
			continue
		}
		x, y := o.Sides[0].PlayerID, o.Sides[1].PlayerID
		if (x == a && y == b) || (x == b && y == a) {
			return true
		}
	}
	return false
}

func normalDuel(d game.Duel) game.Duel {
	d.CreatedAt, d.AcceptBy = game.Timestamp(d.CreatedAt), game.Timestamp(d.AcceptBy)
	d.SubmitBy, d.EndedAt, d.Result, d.Seq = nil, nil, nil, 0
	for i := range d.Sides {
		d.Sides[i].Design, d.Sides[i].SubmittedAt, d.Sides[i].PlayerName = nil, nil, ""
	}
	return d
}

// CreateDuel stores a challenge; see pgstore.Store.CreateDuel.
func (s *Store) CreateDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error) {
	if err := d.Validate(); err != nil {
		return game.Duel{}, err
	}
	if d.State != game.DuelChallenged {
		return game.Duel{}, game.Errorf(game.EINVALID, "a challenge starts challenged")
	}
	d = normalDuel(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duelsInit()
	if _, ok := s.duels.byID[d.ID]; ok {
		return game.Duel{}, game.Errorf(game.ECONFLICT, "duel already exists")
	}
	if err := s.startChecks(d, rules); err != nil {
		return game.Duel{}, err
	}
	if s.pairOpen(d.Sides[0].PlayerID, d.Sides[1].PlayerID, d.Slug) {
		return game.Duel{}, game.Errorf(game.EDUELPAIRACTIVE, "you already have an open duel with this player on %q", d.Slug)
	}
	s.duels.byID[d.ID] = &d
	s.announceDuel(&d)
	return s.copyDuel(&d), nil
}

// MatchDuel pairs a match request or queues it; see pgstore.Store.MatchDuel.
func (s *Store) MatchDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error) {
	if err := d.Validate(); err != nil {
		return game.Duel{}, err
	}
	if d.State != game.DuelMatching {
		return game.Duel{}, game.Errorf(game.EINVALID, "a match request starts matching")
	}
	d = normalDuel(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duelsInit()
	if err := s.startChecks(d, rules); err != nil {
		return game.Duel{}, err
	}
	me := d.Sides[0].PlayerID
	var best *game.Duel
	bestDiff := math.Inf(1)
	for _, o := range s.duels.byID {
		if o.State != game.DuelMatching || o.Slug != d.Slug || o.Version != d.Version || !d.CreatedAt.Before(o.AcceptBy) {
			continue
		}
		if o.Sides[0].PlayerID == me {
			return game.Duel{}, game.Errorf(game.EDUELMATCHING, "you are already waiting to be matched on %q (duel %s)", d.Slug, o.ID)
		}
		diff := math.Abs(o.MatchRating - d.MatchRating)
		if diff > rules.MatchAllowance(d.CreatedAt.Sub(o.CreatedAt)) || s.pairOpen(me, o.Sides[0].PlayerID, d.Slug) {
			continue
		}
		if best == nil || diff < bestDiff || (diff == bestDiff && cmp.Or(o.CreatedAt.Compare(best.CreatedAt), compareID(o.ID, best.ID)) < 0) {
			best, bestDiff = o, diff
		}
	}
	if best == nil {
		s.duels.byID[d.ID] = &d
		s.announceDuel(&d)
		return s.copyDuel(&d), nil
	}
	best.Sides[1].PlayerID = me
	best.State = game.DuelActive
	by := game.Timestamp(d.CreatedAt.Add(rules.SubmitWindow))
	best.SubmitBy = &by
	s.announceDuel(best)
	return s.copyDuel(best), nil
}

func compareID(a, b uuid.UUID) int { return cmp.Compare(a.String(), b.String()) }

func (s *Store) duel(id uuid.UUID) (*game.Duel, error) {
	s.duelsInit()
	d, ok := s.duels.byID[id]
	if !ok {
		return nil, game.Errorf(game.ENOTFOUND, "duel not found")
	}
	return d, nil
}

// Duel returns a duel.
func (s *Store) Duel(ctx context.Context, id uuid.UUID) (game.Duel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.duel(id)
	if err != nil {
		return game.Duel{}, err
	}
	return s.copyDuel(d), nil
}

// PlayerDuels returns one page of a player's duels, newest first; see
// pgstore. It looks at every duel (they are all in memory) and copies only
// the page's.
func (s *Store) PlayerDuels(ctx context.Context, playerID uuid.UUID, q game.ListQuery) (game.DuelList, error) {
	q, cur, err := game.ParseDuelListQuery(q)
	if err != nil {
		return game.DuelList{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duelsInit()
	newestFirst := func(a, b *game.Duel) int { return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), compareID(b.ID, a.ID)) }
	var mine []*game.Duel
	for _, d := range s.duels.byID {
		if d.Side(playerID) >= 0 && (cur == nil || newestFirst(d, &game.Duel{CreatedAt: cur.CreatedAt, ID: cur.ID}) > 0) {
			mine = append(mine, d)
		}
	}
	slices.SortFunc(mine, newestFirst)
	page := []game.Duel{}
	for _, d := range mine[:min(len(mine), q.Limit+1)] {
		page = append(page, s.copyDuel(d))
	}
	out := game.DuelList{}
	out.Duels, out.Next = game.DuelListNext(page, q.Limit)
	return out, nil
}

// OpenDuels returns every duel that has not ended, by deadline.
func (s *Store) OpenDuels(ctx context.Context) ([]game.Duel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duelsInit()
	out := []game.Duel{}
	for _, d := range s.duels.byID {
		if !game.DuelEnded(d.State) {
			out = append(out, s.copyDuel(d))
		}
	}
	slices.SortFunc(out, func(a, b game.Duel) int { return cmp.Or(a.Deadline().Compare(b.Deadline()), compareID(a.ID, b.ID)) })
	return out, nil
}

// AcceptDuel starts a challenge; see pgstore.Store.AcceptDuel.
func (s *Store) AcceptDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time, rules game.DuelRules) (game.Duel, error) {
	at = game.Timestamp(at)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.duel(id)
	if err != nil {
		return game.Duel{}, err
	}
	if err := game.CheckAccept(*d, playerID, at); err != nil {
		return game.Duel{}, err
	}
	if err := s.dailyCheck(playerID, at, rules); err != nil {
		return game.Duel{}, err
	}
	d.State = game.DuelActive
	by := game.Timestamp(at.Add(rules.SubmitWindow))
	d.SubmitBy = &by
	s.announceDuel(d)
	return s.copyDuel(d), nil
}

// DeclineDuel refuses (or withdraws) a challenge; see pgstore.Store.DeclineDuel.
func (s *Store) DeclineDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time) (game.Duel, error) {
	at = game.Timestamp(at)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.duel(id)
	if err != nil {
		return game.Duel{}, err
	}
	if err := game.CheckDecline(*d, playerID); err != nil {
		return game.Duel{}, err
	}
	d.State, d.EndedAt = game.DuelDeclined, &at
	d.Result = &game.DuelResult{Reason: game.ReasonDeclined, Sides: []game.DuelResultSide{}, Ratings: []game.RatingChange{}}
	s.announceDuel(d)
	return s.copyDuel(d), nil
}

// SubmitDuelDesign stores a side's design; see pgstore.Store.SubmitDuelDesign.
func (s *Store) SubmitDuelDesign(ctx context.Context, id, playerID uuid.UUID, design json.RawMessage, at time.Time) (game.Duel, error) {
	at = game.Timestamp(at)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.duel(id)
	if err != nil {
		return game.Duel{}, err
	}
	side, err := game.CheckSubmit(*d, playerID, design, at)
	if err != nil {
		return game.Duel{}, err
	}
	d.Sides[side].Design, d.Sides[side].SubmittedAt = clone(design), &at
	s.announceDuel(d)
	return s.copyDuel(d), nil
}

// EndDuel ends a duel once; see pgstore.Store.EndDuel.
func (s *Store) EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error) {
	end.At = game.Timestamp(end.At)
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.duel(id)
	if err != nil {
		return game.Duel{}, false, err
	}
	if game.DuelEnded(d.State) {
		return s.copyDuel(d), false, nil
	}
	if err := game.CheckEnd(*d, end); err != nil {
		return game.Duel{}, false, err
	}
	res := end.Result
	res.Ratings = []game.RatingChange{}
	if end.Rated() {
		a, b := s.rating(d.Sides[0].PlayerID), s.rating(d.Sides[1].PlayerID)
		ab, ba := pairKey{a.PlayerID, b.PlayerID}, pairKey{b.PlayerID, a.PlayerID}
		var na, nb game.Rating
		na, nb, res.Ratings = game.RateDuel(a, b, game.WinnerIndex(*d, res), s.duels.pairs[ab], s.duels.pairs[ba], end.At)
		s.duels.ratings[na.PlayerID], s.duels.ratings[nb.PlayerID] = na, nb
		for i, k := range []pairKey{ab, ba} {
			h := s.duels.pairs[k]
			h.Met = true
			if res.Ratings[i].Unrated == "" {
				h.LastRated = end.At
			}
			s.duels.pairs[k] = h
		}
	}
	d.State, d.EndedAt, d.Result = end.State, &end.At, &res
	s.announceDuel(d)
	return s.copyDuel(d), true, nil
}

func (s *Store) rating(id uuid.UUID) game.Rating {
	s.duelsInit()
	if r, ok := s.duels.ratings[id]; ok {
		return r
	}
	return game.NewRating(id)
}

// Rating returns a player's rating (the default before their first duel).
func (s *Store) Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.players[playerID]
	if !ok {
		return game.Rating{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	r := s.rating(playerID)
	r.PlayerName = p.Name
	return r, nil
}

// Ratings returns a page of the ratings board; see pgstore.Store.Ratings.
func (s *Store) Ratings(ctx context.Context, q game.ListQuery) (game.RatingsPage, error) {
	q, cur, err := game.ParseRatingsQuery(q)
	if err != nil {
		return game.RatingsPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.duelsInit()
	var total int64
	rest := []game.Rating{}
	for _, r := range s.duels.ratings {
		if !r.OnBoard() {
			continue
		}
		total++
		if cur == nil || cur.After(r) {
			r.PlayerName = s.players[r.PlayerID].Name
			rest = append(rest, r)
		}
	}
	slices.SortFunc(rest, game.CompareRatings)
	return game.RatingsPageOf(rest, q.Limit, cur, total), nil
}
