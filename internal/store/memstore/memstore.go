// Package memstore is an in-memory store with the same contract as the
// PostgreSQL store (checked by internal/store/storetest), for development
// and tests without a database.
//
// Everything sits behind one mutex and is lost when the process exits.
// Each board keeps its entries in a slice sorted in board order: a rank is
// a binary search (O(log n)), but moving an entry shifts the slice (O(n)),
// so it is fine for thousands of players, not for the million the
// PostgreSQL store is designed for. It must never be used in production.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// Store is the in-memory store. It is safe for concurrent use.
type Store struct {
	// Now returns the current time; it stamps new players only (every other
	// time comes from the caller). Replace it before first use.
	Now func() time.Time
	// Notify, if set, is told of every board change as it is stored, in
	// order, while the store is locked: it must not block or call the store
	// (an in-process broker's Publish). Set it before first use.
	Notify func(game.Notice)

	mu          sync.Mutex
	players     map[uuid.UUID]game.Player
	nameKeys    map[string]uuid.UUID // by game.NameKey and by game.NameLowerKey
	tokens      map[string]uuid.UUID // by string(token hash)
	levels      map[string][]game.Level
	submissions map[uuid.UUID]game.Submission
	requests    map[requestRef]request
	boards      map[levelRef]*board // the global board is levelRef{}
	events      map[uuid.UUID]*eventState
	seasons     []*seasonState // in start order
	duels       duelState
}

type levelRef struct {
	slug    string
	version int
}

type requestRef struct {
	player uuid.UUID
	key    string
}

type request struct {
	hash     string
	subID    uuid.UUID
	improved bool
	rank     int64
}

// New returns an empty store.
func New() *Store {
	return &Store{
		Now:         time.Now,
		players:     map[uuid.UUID]game.Player{},
		nameKeys:    map[string]uuid.UUID{},
		tokens:      map[string]uuid.UUID{},
		levels:      map[string][]game.Level{},
		submissions: map[uuid.UUID]game.Submission{},
		requests:    map[requestRef]request{},
		boards:      map[levelRef]*board{{}: newBoard()},
	}
}

// Ping always succeeds.
func (s *Store) Ping(ctx context.Context) error { return ctx.Err() }

// CreatePlayer stores a new player under a unique name (game.NameKey and
// game.NameLowerKey; ECONFLICT if either is taken).
func (s *Store) CreatePlayer(ctx context.Context, name string, role game.Role, tokenHash []byte) (game.Player, error) {
	p, err := game.NewPlayer(name, role, tokenHash, s.Now())
	if err != nil {
		return game.Player{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key, lowerKey := nameKeys(p.Name)
	_, seen := s.nameKeys[key]
	_, lower := s.nameKeys[lowerKey]
	if seen || lower {
		return game.Player{}, game.Errorf(game.ECONFLICT, "player name is already taken (or looks the same as one that is)")
	}
	if _, ok := s.tokens[string(tokenHash)]; ok {
		return game.Player{}, game.Errorf(game.ECONFLICT, "token is already in use")
	}
	s.players[p.ID] = p
	s.nameKeys[key] = p.ID
	s.nameKeys[lowerKey] = p.ID
	s.tokens[string(tokenHash)] = p.ID
	return p, nil
}

// PlayerByTokenHash returns the player whose token hashes to hash.
func (s *Store) PlayerByTokenHash(ctx context.Context, hash []byte) (game.Player, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.tokens[string(hash)]
	if !ok {
		return game.Player{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	return s.players[id], nil
}

// PlayerByID returns the player with the given ID.
func (s *Store) PlayerByID(ctx context.Context, id uuid.UUID) (game.Player, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.players[id]
	if !ok {
		return game.Player{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	return p, nil
}

// PlayerByName returns the player whose name is one name with name
// (game.NameKey or game.NameLowerKey: case and look-alike characters
// ignored), ENOTFOUND if there is none. When name is one name with two
// players, the one it matches read in lower case is found.
func (s *Store) PlayerByName(ctx context.Context, name string) (game.Player, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, lowerKey := nameKeys(name)
	id, ok := s.nameKeys[lowerKey]
	if !ok {
		id, ok = s.nameKeys[key]
	}
	if !ok {
		return game.Player{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	return s.players[id], nil
}

// nameKeys returns name's two keys, each marked with which it is: one map
// holds both, and a key of one kind never equals a key of the other.
func nameKeys(name string) (key, lowerKey string) {
	return "seen " + game.NameKey(name), "lower " + game.NameLowerKey(name)
}

// SetRole changes a player's role.
func (s *Store) SetRole(ctx context.Context, playerID uuid.UUID, role game.Role) error {
	if !role.Valid() {
		return game.Invalid("invalid role", []game.FieldError{{Field: "role", Reason: "must be player, author or admin"}})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.players[playerID]
	if !ok {
		return game.Errorf(game.ENOTFOUND, "player not found")
	}
	p.Role = role
	s.players[playerID] = p
	return nil
}

// PutLevel stores l under its slug; see pgstore.Store.PutLevel for the
// versioning rules, which are the same.
func (s *Store) PutLevel(ctx context.Context, l game.Level) (game.Level, bool, error) {
	if err := l.Validate(); err != nil {
		return game.Level{}, false, err
	}
	l.CreatedAt = game.Timestamp(l.CreatedAt)
	l.Definition = clone(l.Definition)
	s.mu.Lock()
	defer s.mu.Unlock()
	versions := s.levels[l.Slug]
	if len(versions) > 0 {
		l.OwnerID = versions[0].OwnerID // the owner of the slug never changes
	}
	if len(versions) == 0 {
		l.Version = max(l.Version, 1)
		s.levels[l.Slug] = []game.Level{l}
		s.boards[levelRef{l.Slug, l.Version}] = newBoard()
		return copyLevel(l), true, nil
	}
	cur := versions[len(versions)-1]
	if cur.ContentHash == l.ContentHash {
		return copyLevel(cur), false, nil
	}
	// A stored version never changes: new content is a new version, numbered
	// as the level itself says when that is above the current one.
	l.Version = max(l.Version, cur.Version+1)
	s.levels[l.Slug] = append(versions, l)
	s.boards[levelRef{l.Slug, l.Version}] = newBoard()
	s.dropFromGlobal(s.boards[levelRef{l.Slug, cur.Version}])
	return copyLevel(l), true, nil
}

// CreateLevel stores l as version l.Version (1 if it has none) of a new slug; see
// pgstore.Store.CreateLevel.
func (s *Store) CreateLevel(ctx context.Context, l game.Level) (game.Level, error) {
	if err := l.Validate(); err != nil {
		return game.Level{}, err
	}
	l.CreatedAt = game.Timestamp(l.CreatedAt)
	l.Definition = clone(l.Definition)
	l.Version = max(l.Version, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.levels[l.Slug]) > 0 {
		return game.Level{}, game.Errorf(game.ECONFLICT, "a level %q already exists", l.Slug)
	}
	if l.OwnerID != uuid.Nil {
		if _, ok := s.players[l.OwnerID]; !ok {
			return game.Level{}, game.Errorf(game.ENOTFOUND, "player not found")
		}
	}
	s.levels[l.Slug] = []game.Level{l}
	s.boards[levelRef{l.Slug, l.Version}] = newBoard()
	return copyLevel(l), nil
}

// dropFromGlobal removes the bests on old, a level version that just stopped
// being current, from the global board.
func (s *Store) dropFromGlobal(old *board) {
	global := s.boards[levelRef{}]
	for player, e := range old.entries {
		g := global.entries[player]
		// A player reached their new total when they set the latest of
		// their remaining current-version bests.
		latest := s.latestCurrentBest(player)
		if latest == nil {
			global.remove(player)
			continue
		}
		global.put(player, entry{
			key:   game.BoardKey{Score: g.key.Score - e.key.Score, AchievedAt: latest.key.AchievedAt, PlayerID: player},
			subID: latest.subID,
		})
	}
}

// latestCurrentBest returns the latest (by laterBest) of the player's bests
// on current level versions, nil if they have none.
func (s *Store) latestCurrentBest(player uuid.UUID) *entry {
	var latest *entry
	for slug, versions := range s.levels {
		b := s.boards[levelRef{slug, versions[len(versions)-1].Version}]
		c, ok := b.entries[player]
		if ok && (latest == nil || laterBest(c, *latest)) {
			latest = &c
		}
	}
	return latest
}

// laterBest orders bests by (achieved_at, submission id), descending.
func laterBest(a, b entry) bool {
	if c := a.key.AchievedAt.Compare(b.key.AchievedAt); c != 0 {
		return c > 0
	}
	return bytes.Compare(a.subID[:], b.subID[:]) > 0
}

// Level returns a level version; version 0 means the current one.
func (s *Store) Level(ctx context.Context, slug string, version int) (game.Level, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.level(slug, version)
	if !ok {
		return game.Level{}, game.Errorf(game.ENOTFOUND, "level not found")
	}
	return copyLevel(l), nil
}

func (s *Store) level(slug string, version int) (game.Level, bool) {
	versions := s.levels[slug]
	if len(versions) == 0 {
		return game.Level{}, false
	}
	if version == 0 {
		return versions[len(versions)-1], true
	}
	// Versions are numbered by the levels themselves, so they may skip numbers.
	i := slices.IndexFunc(versions, func(l game.Level) bool { return l.Version == version })
	if i < 0 {
		return game.Level{}, false
	}
	return versions[i], true
}

// Levels returns the current version of every level, ordered by slug.
func (s *Store) Levels(ctx context.Context) ([]game.LevelSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []game.LevelSummary{}
	for _, versions := range s.levels {
		out = append(out, versions[len(versions)-1].Summary())
	}
	slices.SortFunc(out, func(a, b game.LevelSummary) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}

// CurrentLevels returns the current version of each level named in slugs
// that exists, ordered by slug.
func (s *Store) CurrentLevels(ctx context.Context, slugs []string) ([]game.LevelSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []game.LevelSummary{}
	for _, slug := range slugs {
		if versions := s.levels[slug]; len(versions) > 0 && !slices.ContainsFunc(out, func(l game.LevelSummary) bool { return l.Slug == slug }) {
			out = append(out, versions[len(versions)-1].Summary())
		}
	}
	slices.SortFunc(out, func(a, b game.LevelSummary) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}

// LevelsAfter returns at most limit current levels whose slugs come after
// after, ordered by slug, leaving out those named in skip (see pgstore).
// It looks at every level's slug (they are all in memory) and copies only
// the page's summaries.
func (s *Store) LevelsAfter(ctx context.Context, after string, skip []string, limit int) ([]game.LevelSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var slugs []string
	for slug := range s.levels {
		if slug > after && !slices.Contains(skip, slug) {
			slugs = append(slugs, slug)
		}
	}
	slices.Sort(slugs)
	out := []game.LevelSummary{}
	for _, slug := range slugs[:min(max(limit, 0), len(slugs))] {
		versions := s.levels[slug]
		out = append(out, versions[len(versions)-1].Summary())
	}
	return out, nil
}

// CreateSubmission stores sub and updates the boards; see
// pgstore.Store.CreateSubmission for the contract, which is the same.
func (s *Store) CreateSubmission(ctx context.Context, sub game.Submission, idempotencyKey, requestHash string) (game.SubmissionReceipt, error) {
	if err := sub.Validate(); err != nil {
		return game.SubmissionReceipt{}, err
	}
	sub.CreatedAt = game.Timestamp(sub.CreatedAt)
	sub.Design = clone(sub.Design)
	sub.Result = clone(sub.Result)
	s.mu.Lock()
	defer s.mu.Unlock()
	ref := requestRef{sub.PlayerID, idempotencyKey}
	if idempotencyKey != "" {
		if _, ok := s.players[sub.PlayerID]; !ok {
			return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "player not found")
		}
		if req, ok := s.requests[ref]; ok {
			return s.replay(req, requestHash)
		}
	}
	if _, ok := s.level(sub.Slug, sub.Version); !ok || sub.Version == 0 {
		return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "level not found")
	}
	if _, ok := s.players[sub.PlayerID]; !ok {
		return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "player not found")
	}
	if _, ok := s.submissions[sub.ID]; ok {
		return game.SubmissionReceipt{}, game.Errorf(game.ECONFLICT, "submission already exists")
	}
	s.submissions[sub.ID] = sub
	if sub.Passed {
		s.countInSeason(sub)
	}
	lref := levelRef{sub.Slug, sub.Version}
	rec := game.SubmissionReceipt{Submission: copySubmission(sub)}
	if sub.Passed {
		b := s.boards[lref]
		old, hadBest := b.entries[sub.PlayerID]
		key := game.BoardKey{Score: sub.Score, AchievedAt: sub.CreatedAt, PlayerID: sub.PlayerID}
		if !hadBest || key.Beats(old.key) {
			rec.Improved = true
			b.put(sub.PlayerID, entry{key: key, subID: sub.ID})
			if versions := s.levels[sub.Slug]; sub.Version == versions[len(versions)-1].Version { // current version
				delta := sub.Score - old.key.Score // old is zero without a best
				global := s.boards[levelRef{}]
				g, onGlobal := global.entries[sub.PlayerID]
				switch {
				case hadBest && delta == 0:
					// The same score reached earlier: the total was
					// reached at the latest of the current bests.
					latest := s.latestCurrentBest(sub.PlayerID)
					global.put(sub.PlayerID, entry{
						key:   game.BoardKey{Score: g.key.Score, AchievedAt: latest.key.AchievedAt, PlayerID: sub.PlayerID},
						subID: latest.subID,
					})
				case !onGlobal || delta != 0:
					global.put(sub.PlayerID, entry{
						key:   game.BoardKey{Score: g.key.Score + delta, AchievedAt: sub.CreatedAt, PlayerID: sub.PlayerID},
						subID: sub.ID,
					})
				}
			}
		}
		rec.Rank = b.rank(b.entries[sub.PlayerID].key)
		if rec.Improved {
			s.recordChange(b, sub, old, hadBest, rec.Rank)
		}
	}
	if idempotencyKey != "" {
		s.requests[ref] = request{hash: requestHash, subID: sub.ID, improved: rec.Improved, rank: rec.Rank}
	}
	return rec, nil
}

// SubmissionByIdempotencyKey returns the stored receipt of the player's
// earlier request with key; see pgstore.Store.SubmissionByIdempotencyKey.
func (s *Store) SubmissionByIdempotencyKey(ctx context.Context, playerID uuid.UUID, key, requestHash string) (game.SubmissionReceipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req, ok := s.requests[requestRef{playerID, key}]
	if !ok || key == "" {
		return game.SubmissionReceipt{}, game.Errorf(game.ENOTFOUND, "no request with this idempotency key")
	}
	return s.replay(req, requestHash)
}

// replay is the first answer to a request again, if the request is the same one.
func (s *Store) replay(req request, requestHash string) (game.SubmissionReceipt, error) {
	if req.hash != requestHash {
		return game.SubmissionReceipt{}, game.Errorf(game.ECONFLICT, "idempotency key was already used for a different request")
	}
	return game.SubmissionReceipt{
		Submission: copySubmission(s.submissions[req.subID]),
		Improved:   req.improved,
		Rank:       req.rank,
		Replayed:   true,
	}, nil
}

// Submission returns the submission with the given ID.
func (s *Store) Submission(ctx context.Context, id uuid.UUID) (game.Submission, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, ok := s.submissions[id]
	if !ok {
		return game.Submission{}, game.Errorf(game.ENOTFOUND, "submission not found")
	}
	return copySubmission(sub), nil
}

// Board returns one page of a board with exact ranks.
func (s *Store) Board(ctx context.Context, q game.BoardQuery) (game.BoardPage, error) {
	q, cur, err := q.Normalize()
	if err != nil {
		return game.BoardPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, version, err := s.board(q.Slug, q.Version)
	if err != nil {
		return game.BoardPage{}, err
	}
	page, err := s.page(b, q, cur)
	page.Slug, page.Version = q.Slug, version
	return page, err
}

// page is one page of b (q normalised, cur its cursor). The caller holds
// the lock.
func (s *Store) page(b *board, q game.BoardQuery, cur *game.Cursor) (game.BoardPage, error) {
	page := game.BoardPage{Entries: []game.Entry{}, Total: int64(len(b.order)), Seq: b.seq}
	var from, to int // page is b.order[from:to]
	switch {
	case q.AroundPlayer != nil:
		e, ok := b.entries[*q.AroundPlayer]
		if !ok {
			return game.BoardPage{}, game.Errorf(game.ENOTFOUND, "player is not on this board")
		}
		i := b.index(e.key)
		nb, na := game.AroundWindow(min(i, q.Limit-1), min(len(b.order)-i, q.Limit), q.Limit)
		from, to = i-nb, i+na
	case cur == nil:
		from, to = 0, min(q.Limit, len(b.order))
	case cur.Before:
		to = b.index(cur.Key)
		from = max(0, to-q.Limit)
	default:
		from = b.index(cur.Key)
		if from < len(b.order) && b.order[from].Compare(cur.Key) == 0 {
			from++
		}
		to = min(from+q.Limit, len(b.order))
	}
	for i := from; i < to; i++ {
		k := b.order[i]
		page.Entries = append(page.Entries, game.Entry{
			Rank:         int64(i + 1),
			PlayerID:     k.PlayerID,
			PlayerName:   s.players[k.PlayerID].Name,
			Score:        k.Score,
			AchievedAt:   k.AchievedAt,
			SubmissionID: b.entries[k.PlayerID].subID,
		})
	}
	if len(page.Entries) > 0 {
		page.Prev, page.Next = game.PageCursors(page.Entries, page.Total)
	}
	return page, nil
}

// PlayerRank returns a player's entry, with its rank, on a board.
func (s *Store) PlayerRank(ctx context.Context, slug string, version int, playerID uuid.UUID) (game.Entry, error) {
	if slug == "" {
		version = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _, err := s.board(slug, version)
	if err != nil {
		return game.Entry{}, err
	}
	e, ok := b.entries[playerID]
	if !ok {
		return game.Entry{}, game.Errorf(game.ENOTFOUND, "player is not on this board")
	}
	return game.Entry{
		Rank:         b.rank(e.key),
		PlayerID:     playerID,
		PlayerName:   s.players[playerID].Name,
		Score:        e.key.Score,
		AchievedAt:   e.key.AchievedAt,
		SubmissionID: e.subID,
	}, nil
}

func (s *Store) board(slug string, version int) (*board, int, error) {
	if slug == "" {
		return s.boards[levelRef{}], 0, nil
	}
	l, ok := s.level(slug, version)
	if !ok {
		return nil, 0, game.Errorf(game.ENOTFOUND, "level not found")
	}
	return s.boards[levelRef{slug, l.Version}], l.Version, nil
}

type entry struct {
	key   game.BoardKey
	subID uuid.UUID
}

// board is one leaderboard: each player's entry and all keys in board
// order.
type board struct {
	entries map[uuid.UUID]entry
	order   []game.BoardKey
	// seq numbers the latest change; changes holds the latest ones, at
	// most game.ChangeRetention, oldest first (level boards only).
	seq     int64
	changes []game.BoardChange
}

func newBoard() *board { return &board{entries: map[uuid.UUID]entry{}} }

// index returns the position of the first key not before k.
func (b *board) index(k game.BoardKey) int {
	return sort.Search(len(b.order), func(i int) bool { return b.order[i].Compare(k) >= 0 })
}

func (b *board) rank(k game.BoardKey) int64 { return int64(b.index(k) + 1) }

func (b *board) remove(player uuid.UUID) {
	e, ok := b.entries[player]
	if !ok {
		return
	}
	delete(b.entries, player)
	i := b.index(e.key)
	b.order = slices.Delete(b.order, i, i+1)
}

func (b *board) put(player uuid.UUID, e entry) {
	b.remove(player)
	b.entries[player] = e
	i := b.index(e.key)
	b.order = slices.Insert(b.order, i, e.key)
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func copyLevel(l game.Level) game.Level {
	l.Definition = clone(l.Definition)
	return l
}

func copySubmission(s game.Submission) game.Submission {
	s.Design = clone(s.Design)
	s.Result = clone(s.Result)
	return s
}

// PlayerBests returns the player's best passing score on every level version
// they have passed, by slug and version; none for a player who passed none.
func (s *Store) PlayerBests(ctx context.Context, playerID uuid.UUID) ([]game.LevelBest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []game.LevelBest{}
	for ref, b := range s.boards {
		if e, ok := b.entries[playerID]; ok && ref.slug != "" {
			out = append(out, game.LevelBest{Slug: ref.slug, Version: ref.version, Score: e.key.Score})
		}
	}
	slices.SortFunc(out, func(a, b game.LevelBest) int {
		return cmp.Or(cmp.Compare(a.Slug, b.Slug), cmp.Compare(a.Version, b.Version))
	})
	return out, nil
}
