package api

import (
	"context"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// The persistence the transport needs, in the small pieces the handlers use.
// internal/store/memstore and internal/store/pgstore both satisfy Store
// (asserted in cmd/server and in this package's tests).

// Players finds and changes accounts.
type Players interface {
	CreatePlayer(ctx context.Context, name string, role game.Role, tokenHash []byte) (game.Player, error)
	PlayerByTokenHash(ctx context.Context, hash []byte) (game.Player, error)
	PlayerByID(ctx context.Context, id uuid.UUID) (game.Player, error)
	PlayerByName(ctx context.Context, name string) (game.Player, error)
	SetRole(ctx context.Context, playerID uuid.UUID, role game.Role) error
}

// Levels reads level versions (the rules store them).
type Levels interface {
	Level(ctx context.Context, slug string, version int) (game.Level, error)
	// CurrentLevels and LevelsAfter read GET /v1/challenges a page at a
	// time (see pgstore).
	CurrentLevels(ctx context.Context, slugs []string) ([]game.LevelSummary, error)
	LevelsAfter(ctx context.Context, after string, skip []string, limit int) ([]game.LevelSummary, error)
}

// Submissions reads stored submissions (the rules store them).
type Submissions interface {
	Submission(ctx context.Context, id uuid.UUID) (game.Submission, error)
}

// Boards reads leaderboards with exact ranks.
type Boards interface {
	Board(ctx context.Context, q game.BoardQuery) (game.BoardPage, error)
	PlayerRank(ctx context.Context, slug string, version int, playerID uuid.UUID) (game.Entry, error)
}

// Changes reads what changed on a board, for live streams that resume
// (see pgstore.Store.BoardChanges).
type Changes interface {
	BoardChanges(ctx context.Context, slug string, version int, after int64, limit int) ([]game.BoardChange, bool, error)
}

// Pinger reports whether the store can serve requests.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Store is everything the server needs from persistence.
type Store interface {
	Players
	Levels
	Submissions
	Boards
	Bests
	Changes
	Events
	Seasons
	Duels
	Pinger
	// What the game's rules need, for the rules a server builds of its
	// own (Deps.Rules nil).
	rules.Store
}
