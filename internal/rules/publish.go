package rules

import (
	"context"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
)

// Publisher stores authors' levels: CreateLevel publishes a new slug,
// insert-only (ECONFLICT if it exists).
type Publisher interface {
	CreateLevel(ctx context.Context, l game.Level) (game.Level, error)
}

// Outcomes of publishing a level. A stored version never changes, so new
// content is always a new version with its own board.
const (
	LevelCreated    = "created"     // a new slug, version 1
	LevelNewVersion = "new_version" // new content: a new version and board
	LevelUnchanged  = "unchanged"   // same content as the current version
)

// PublishLevel stores l, already checked (its starting design run), as
// author's: a new slug, or, if change is set, a new version of a level the
// author owns (admins: any level but the built-in ones, which change only
// with a server release).
func (s *Service) PublishLevel(ctx context.Context, author game.Player, l *challenges.Level, change bool) (game.Level, string, error) {
	rec, err := LevelRecord(l, false, s.now())
	if err != nil {
		return game.Level{}, "", err
	}
	// The configured admin is not a player (uuid.Nil): its levels have
	// no owner, and only admins may change them.
	rec.OwnerID = author.ID
	current, err := s.store.Level(ctx, l.Slug, 0)
	exists := err == nil
	switch {
	case err != nil && game.ErrorCode(err) != game.ENOTFOUND:
		return game.Level{}, "", err
	case exists && !change:
		return game.Level{}, "", game.Errorf(game.ECONFLICT, "a level %q already exists; change it with PUT /v1/challenges/%s", l.Slug, l.Slug)
	case exists && current.Builtin:
		return game.Level{}, "", game.Errorf(game.EFORBIDDEN, "%q is a built-in level; built-in levels change only with a server release", l.Slug)
	case exists && author.Role != game.RoleAdmin && (current.OwnerID == uuid.Nil || current.OwnerID != author.ID):
		// The owner never changes once the slug exists, so this check
		// cannot be raced.
		return game.Level{}, "", game.Errorf(game.EFORBIDDEN, "%q belongs to another author; only its owner or an admin may change it", l.Slug)
	}
	var stored game.Level
	var written bool
	if exists {
		stored, written, err = s.store.PutLevel(ctx, rec)
	} else {
		// Insert-only: of two concurrent creations of one slug (by POST
		// or PUT) exactly one wins; the other gets ECONFLICT.
		stored, err = s.store.CreateLevel(ctx, rec)
		written = err == nil
		if game.ErrorCode(err) == game.ECONFLICT {
			err = game.Errorf(game.ECONFLICT, "a level %q already exists; change it with PUT /v1/challenges/%s", l.Slug, l.Slug)
		}
	}
	if err != nil {
		return game.Level{}, "", err
	}
	s.levels.add(stored.ContentHash, l)
	switch {
	case !written:
		return stored, LevelUnchanged, nil
	case !exists:
		return stored, LevelCreated, nil
	}
	return stored, LevelNewVersion, nil
}
