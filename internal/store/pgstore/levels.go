package pgstore

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// Advisory lock classes (the first key of the two-int4 form, a key space
// separate from golang-migrate's single bigint key).
const (
	// lockLevel serialises PutLevel per slug (second key: hashtext(slug)),
	// so replicas loading the built-in campaign together do not race on a
	// new slug's first version.
	lockLevel int32 = 0x42500001
	// lockGlobal guards the global board: shared by every writer of a
	// global entry, exclusive while a new level version rebuilds it.
	lockGlobal int32 = 0x42500002
)

// PutLevel stores l under its slug and reports whether anything was written:
//   - a new slug becomes version l.Version (1 if it has none);
//   - the same ContentHash as the current version is a no-op (created is
//     false and the stored level is returned), so loading the built-in
//     campaign at every start-up is idempotent;
//   - different content becomes version l.Version, or current+1 when
//     l.Version is not above the current version, with a new, empty board, leaving
//     the old version and its board readable. A stored version never changes
//     (a trigger refuses it), so a submission stored against a version was
//     scored on exactly its content. The old version's scores leave the
//     global board (see drainGlobal): the switch is one short transaction,
//     and each player's total then moves in a short transaction of its own
//     batch, so no other player's submission waits for the whole board.
//
// l.Version is the level's own number (the "version" of its document), so
// the number a player reads in the level file, the CLI, the API and the web
// is the one stored; the returned level carries the version written.
// l.OwnerID is used only for a new slug: every later version keeps the
// owner of the first (callers check who may change a level; see CreateLevel
// for publishing a new slug atomically).
func (s *Store) PutLevel(ctx context.Context, l game.Level) (game.Level, bool, error) {
	if err := l.Validate(); err != nil {
		return game.Level{}, false, err
	}
	l.CreatedAt = game.Timestamp(l.CreatedAt)
	l.Definition = append([]byte(nil), l.Definition...)
	var out game.Level
	var created, drain bool
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		out, created, drain = game.Level{}, false, false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, hashtext($2))`, lockLevel, l.Slug); err != nil {
			return err
		}
		cur, boardID, err := scanLevel(tx.QueryRow(ctx,
			`SELECT `+levelColumns+`, board_id FROM levels WHERE slug = $1 AND is_current FOR UPDATE`, l.Slug))
		switch {
		case game.ErrorCode(err) == game.ENOTFOUND:
			l.Version = max(l.Version, 1)
			if err := insertLevel(ctx, tx, l); err != nil {
				return err
			}
			out, created = l, true
			return nil
		case err != nil:
			return err
		case cur.ContentHash == l.ContentHash:
			out = cur
			return nil
		}
		l.OwnerID = cur.OwnerID
		l.Version = max(l.Version, cur.Version+1)
		if _, err := tx.Exec(ctx, `UPDATE levels SET is_current = false WHERE slug = $1 AND version = $2`,
			l.Slug, cur.Version); err != nil {
			return err
		}
		if err := insertLevel(ctx, tx, l); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO global_drains (board_id)
			SELECT $1 WHERE EXISTS (SELECT 1 FROM board_entries WHERE board_id = $1)`, boardID)
		if err != nil {
			return err
		}
		out, created, drain = l, true, tag.RowsAffected() == 1
		return nil
	})
	s.levels.forget(l.Slug)
	if err != nil {
		return game.Level{}, false, translate("put level", err)
	}
	if drain {
		// The new version is stored and current whatever happens next; the
		// drain finishes even if the caller leaves, and one interrupted by a
		// crash is finished by the next PutLevel or DrainGlobal.
		if err := s.DrainGlobal(context.WithoutCancel(ctx)); err != nil {
			return game.Level{}, false, translate("put level: take the old version off the global board", err)
		}
	}
	return out, created, nil
}

// CreateLevel stores l as version l.Version (1 if it has none) of a new slug, owned by l.OwnerID
// (uuid.Nil: no owner). It is insert-only: if the slug exists, in any
// version, it writes nothing and returns ECONFLICT, so of two concurrent
// creations of one slug exactly one succeeds.
func (s *Store) CreateLevel(ctx context.Context, l game.Level) (game.Level, error) {
	if err := l.Validate(); err != nil {
		return game.Level{}, err
	}
	l.CreatedAt = game.Timestamp(l.CreatedAt)
	l.Definition = append([]byte(nil), l.Definition...)
	l.Version = max(l.Version, 1)
	err := s.tx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		// The same lock as PutLevel: creation and replacement of one slug
		// are serialised, so the existence check below is exact.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int4, hashtext($2))`, lockLevel, l.Slug); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM levels WHERE slug = $1)`, l.Slug).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return game.Errorf(game.ECONFLICT, "a level %q already exists", l.Slug)
		}
		return insertLevel(ctx, tx, l)
	})
	s.levels.forget(l.Slug)
	if err != nil {
		return game.Level{}, translate("create level", err)
	}
	return l, nil
}

// insertLevel inserts l as the current version with a new, empty board.
func insertLevel(ctx context.Context, tx pgx.Tx, l game.Level) error {
	var boardID int64
	if err := tx.QueryRow(ctx, `INSERT INTO boards (slug, version) VALUES ($1, $2) RETURNING id`,
		l.Slug, l.Version).Scan(&boardID); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, insertSentinel, boardID); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO levels (slug, version, title, difficulty, definition, content_hash, builtin,
			created_at, is_current, board_id, owner_id, worst_case_cost)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, true, $9, $10, $11)`,
		l.Slug, l.Version, l.Title, l.Difficulty, []byte(l.Definition), l.ContentHash, l.Builtin,
		l.CreatedAt, boardID, ownerArg(l.OwnerID), max(l.WorstCaseCost, 0))
	return err
}

const levelColumns = `slug, version, title, difficulty, definition, content_hash, created_at, builtin, owner_id, worst_case_cost`

// ownerArg stores uuid.Nil (no owner) as NULL.
func ownerArg(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return id
}

// scanLevel scans levelColumns followed by board_id.
func scanLevel(row pgx.Row) (game.Level, int64, error) {
	var l game.Level
	var def []byte
	var boardID int64
	var owner *uuid.UUID
	err := row.Scan(&l.Slug, &l.Version, &l.Title, &l.Difficulty, &def, &l.ContentHash, &l.CreatedAt, &l.Builtin, &owner, &l.WorstCaseCost, &boardID)
	if errors.Is(err, pgx.ErrNoRows) {
		return game.Level{}, 0, game.Errorf(game.ENOTFOUND, "level not found")
	}
	if err != nil {
		return game.Level{}, 0, err
	}
	l.Definition = def
	l.CreatedAt = l.CreatedAt.UTC()
	if owner != nil {
		l.OwnerID = *owner
	}
	return l, boardID, nil
}

// Level returns a level version; version 0 means the current one.
// The current version is cached briefly (see levelCache).
func (s *Store) Level(ctx context.Context, slug string, version int) (game.Level, error) {
	if version == 0 {
		if l, ok := s.levels.current(slug, s.Now()); ok {
			return l, nil
		}
	}
	l, _, err := scanLevel(s.pool.QueryRow(ctx, `
		SELECT `+levelColumns+`, board_id FROM levels
		WHERE slug = $1 AND (version = $2 OR ($2 = 0 AND is_current))`, slug, version))
	if err != nil {
		return game.Level{}, translate("level", err)
	}
	if version == 0 {
		s.levels.put(l, s.Now())
	}
	return l, nil
}

// levelSummaryColumns are the columns scanLevelSummary reads.
const levelSummaryColumns = `slug, version, title, difficulty, content_hash, created_at, builtin, worst_case_cost`

func scanLevelSummary(row pgx.CollectableRow) (game.LevelSummary, error) {
	var l game.LevelSummary
	err := row.Scan(&l.Slug, &l.Version, &l.Title, &l.Difficulty, &l.ContentHash, &l.CreatedAt, &l.Builtin, &l.WorstCaseCost)
	l.CreatedAt = l.CreatedAt.UTC()
	return l, err
}

// CurrentLevels returns the current version of each level named in slugs
// that exists, ordered by slug (bytewise): one index probe a slug.
func (s *Store) CurrentLevels(ctx context.Context, slugs []string) ([]game.LevelSummary, error) {
	return s.levelSummaries(ctx, "current levels", `SELECT `+levelSummaryColumns+`
		FROM levels WHERE is_current AND slug = ANY($1::text[]) ORDER BY slug COLLATE "C"`, slugs)
}

// LevelsAfter returns at most limit current levels whose slugs come after
// after (bytewise; "" for the first), ordered by slug, leaving out those
// named in skip: a range scan of levels_current_c that stops after limit
// rows plus those skipped.
func (s *Store) LevelsAfter(ctx context.Context, after string, skip []string, limit int) ([]game.LevelSummary, error) {
	if limit < 1 {
		return []game.LevelSummary{}, nil
	}
	return s.levelSummaries(ctx, "levels after", `SELECT `+levelSummaryColumns+`
		FROM levels WHERE is_current AND slug COLLATE "C" > $1 AND NOT slug = ANY(coalesce($2::text[], '{}'))
		ORDER BY slug COLLATE "C" LIMIT $3`, after, skip, limit)
}

// levelSummaries runs query, which selects levelSummaryColumns; op names
// it in errors.
func (s *Store) levelSummaries(ctx context.Context, op, query string, args ...any) ([]game.LevelSummary, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, translate(op, err)
	}
	out, err := pgx.CollectRows(rows, scanLevelSummary)
	if err != nil {
		return nil, translate(op, err)
	}
	if out == nil {
		out = []game.LevelSummary{}
	}
	return out, nil
}

// Levels returns the current version of every level, ordered by slug
// (bytewise).
func (s *Store) Levels(ctx context.Context) ([]game.LevelSummary, error) {
	return s.levelSummaries(ctx, "levels", `SELECT `+levelSummaryColumns+`
		FROM levels WHERE is_current ORDER BY slug COLLATE "C"`)
}
