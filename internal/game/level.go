package game

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Level is one version of a challenge. Its Definition is owned by the
// challenges package; to the store it is an opaque JSON document, kept byte
// for byte.
type Level struct {
	Slug       string          `json:"slug"`
	Version    int             `json:"version"`
	Title      string          `json:"title"`
	Difficulty string          `json:"difficulty"`
	Definition json.RawMessage `json:"definition"`
	// ContentHash identifies the content; loading the same content again is a
	// no-op (see Store.PutLevel in the store packages).
	ContentHash string    `json:"content_hash"`
	CreatedAt   time.Time `json:"created_at"`
	Builtin     bool      `json:"builtin"`
	// WorstCaseCost is what the server found when it stored the version: the
	// most simulation work one run on it may cost, in path-ticks (0: stored
	// before this was kept).
	WorstCaseCost int64 `json:"worst_case_cost"`
	// OwnerID is the player who created the slug (uuid.Nil for built-in
	// levels and levels the configured admin created). Every version keeps
	// its first version's owner; only the owner or an admin may change it.
	OwnerID uuid.UUID `json:"owner_id"`
}

// LevelBest is a player's best passing score on one version of a level: the
// player's entry on that version's board.
type LevelBest struct {
	Slug    string `json:"slug"`
	Version int    `json:"version"`
	Score   int64  `json:"score"`
}

// LevelSummary is a Level without its definition, for listings.
type LevelSummary struct {
	Slug        string    `json:"slug"`
	Version     int       `json:"version"`
	Title       string    `json:"title"`
	Difficulty  string    `json:"difficulty"`
	ContentHash string    `json:"content_hash"`
	CreatedAt   time.Time `json:"created_at"`
	Builtin     bool      `json:"builtin"`
	// WorstCaseCost: see Level.
	WorstCaseCost int64 `json:"worst_case_cost"`
}

// Summary returns l without its definition.
func (l Level) Summary() LevelSummary {
	return LevelSummary{
		Slug:          l.Slug,
		Version:       l.Version,
		Title:         l.Title,
		Difficulty:    l.Difficulty,
		ContentHash:   l.ContentHash,
		CreatedAt:     l.CreatedAt,
		Builtin:       l.Builtin,
		WorstCaseCost: l.WorstCaseCost,
	}
}

// MaxSlugLen bounds a level slug.
const MaxSlugLen = 64

// Validate reports the invariants a store relies on. Richer checks (slug
// format, definition schema) are the challenges package's business.
func (l Level) Validate() error {
	var fe []FieldError
	if l.Slug == "" || len(l.Slug) > MaxSlugLen {
		fe = append(fe, FieldError{Field: "slug", Reason: "must be 1 to 64 bytes"})
	}
	if l.ContentHash == "" {
		fe = append(fe, FieldError{Field: "content_hash", Reason: "is required"})
	}
	if !json.Valid(l.Definition) {
		fe = append(fe, FieldError{Field: "definition", Reason: "must be a JSON document"})
	}
	if l.CreatedAt.IsZero() {
		fe = append(fe, FieldError{Field: "created_at", Reason: "is required"})
	}
	return Invalid("invalid level", fe)
}
