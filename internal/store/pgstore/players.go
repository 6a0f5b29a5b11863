package pgstore

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// CreatePlayer stores a new player under a unique name (game.NameKey;
// ECONFLICT if taken) and the SHA-256 hash of their token.
func (s *Store) CreatePlayer(ctx context.Context, name string, role game.Role, tokenHash []byte) (game.Player, error) {
	p, err := game.NewPlayer(name, role, tokenHash, s.Now())
	if err != nil {
		return game.Player{}, err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO players (id, name, name_key, role, token_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		p.ID, p.Name, game.NameKey(p.Name), string(p.Role), tokenHash, p.CreatedAt)
	if err != nil {
		return game.Player{}, translate("create player", err)
	}
	return p, nil
}

const playerColumns = `id, name, role, created_at`

func scanPlayer(row pgx.Row) (game.Player, error) {
	var p game.Player
	var role string
	if err := row.Scan(&p.ID, &p.Name, &role, &p.CreatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return game.Player{}, game.Errorf(game.ENOTFOUND, "player not found")
		}
		return game.Player{}, err
	}
	p.Role = game.Role(role)
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// PlayerByTokenHash returns the player whose token hashes to hash, ENOTFOUND
// if there is none. Players are cached briefly (see tokenCache).
func (s *Store) PlayerByTokenHash(ctx context.Context, hash []byte) (game.Player, error) {
	if p, ok := s.tokens.get(hash, s.Now()); ok {
		return p, nil
	}
	p, err := scanPlayer(s.pool.QueryRow(ctx,
		`SELECT `+playerColumns+` FROM players WHERE token_hash = $1`, hash))
	if err != nil {
		return game.Player{}, translate("player by token", err)
	}
	s.tokens.put(hash, p, s.Now())
	return p, nil
}

// PlayerByID returns the player with the given ID, ENOTFOUND if there is none.
func (s *Store) PlayerByID(ctx context.Context, id uuid.UUID) (game.Player, error) {
	p, err := scanPlayer(s.pool.QueryRow(ctx,
		`SELECT `+playerColumns+` FROM players WHERE id = $1`, id))
	return p, translate("player by id", err)
}

// PlayerByName returns the player whose name has the same key as name
// (game.NameKey: case and look-alike characters ignored), ENOTFOUND if
// there is none.
func (s *Store) PlayerByName(ctx context.Context, name string) (game.Player, error) {
	p, err := scanPlayer(s.pool.QueryRow(ctx,
		`SELECT `+playerColumns+` FROM players WHERE name_key = $1`, game.NameKey(name)))
	return p, translate("player by name", err)
}

// SetRole changes a player's role.
func (s *Store) SetRole(ctx context.Context, playerID uuid.UUID, role game.Role) error {
	if !role.Valid() {
		return game.Invalid("invalid role", []game.FieldError{{Field: "role", Reason: "must be player, author or admin"}})
	}
	tag, err := s.pool.Exec(ctx, `UPDATE players SET role = $2 WHERE id = $1`, playerID, string(role))
	if err != nil {
		return translate("set role", err)
	}
	s.tokens.clear()
	if tag.RowsAffected() == 0 {
		return game.Errorf(game.ENOTFOUND, "player not found")
	}
	return nil
}

// rekeyNames recomputes the name keys written under an older uniqueness
// rule (game.IsCurrentNameKey), so that a new name is checked against every
// stored name by the current rule. Two stored names that the current rule
// finds alike both keep their names: the later one's key gets its id
// appended, and any new name like either is refused. Concurrent replicas
// may run it at once: each update is idempotent.
func (s *Store) rekeyNames(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT id, name FROM players WHERE name_key NOT LIKE 's1:%' ORDER BY created_at, id`)
	if err != nil {
		return translate("find old name keys", err)
	}
	type old struct {
		ID   uuid.UUID
		Name string
	}
	olds, err := pgx.CollectRows(rows, pgx.RowToStructByPos[old])
	if err != nil {
		return translate("find old name keys", err)
	}
	for _, o := range olds {
		key := game.NameKey(o.Name)
		_, err := s.pool.Exec(ctx, `UPDATE players SET name_key = $2 WHERE id = $1 AND name_key NOT LIKE 's1:%'`, o.ID, key)
		if game.ErrorCode(translate("", err)) == game.ECONFLICT {
			_, err = s.pool.Exec(ctx, `UPDATE players SET name_key = $2 WHERE id = $1 AND name_key NOT LIKE 's1:%'`, o.ID, key+"#"+o.ID.String())
		}
		if err != nil {
			return translate("rekey name", err)
		}
	}
	return nil
}
