package pgstore

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"backpressure/internal/game"
)

// CreatePlayer stores a new player under a unique name (game.NameKey and
// game.NameLowerKey; ECONFLICT if either is taken) and the SHA-256 hash of
// their token.
func (s *Store) CreatePlayer(ctx context.Context, name string, role game.Role, tokenHash []byte) (game.Player, error) {
	p, err := game.NewPlayer(name, role, tokenHash, s.Now())
	if err != nil {
		return game.Player{}, err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO players (id, name, name_key, name_lower_key, role, token_hash, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.ID, p.Name, game.NameKey(p.Name), game.NameLowerKey(p.Name), string(p.Role), tokenHash, p.CreatedAt)
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

// PlayerByName returns the player whose name is one name with name
// (game.NameKey or game.NameLowerKey: case and look-alike characters
// ignored), ENOTFOUND if there is none. When name is one name with two
// players (a capital I read as an i by one and as an l by the other), the
// one it matches read in lower case is found.
func (s *Store) PlayerByName(ctx context.Context, name string) (game.Player, error) {
	p, err := scanPlayer(s.pool.QueryRow(ctx,
		`SELECT `+playerColumns+` FROM players WHERE name_lower_key = $2 OR name_key = $1
		ORDER BY name_lower_key = $2 IS TRUE DESC LIMIT 1`, game.NameKey(name), game.NameLowerKey(name)))
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

// RekeyNames recomputes the name keys written under an older uniqueness
// rule (game.IsCurrentNameKey), so that a new name is checked against every
// stored name by the current rule, and reports how many players it
// rekeyed. It walks the players in id order, batch at a time, one statement
// a batch, and it is safe to run while the replica serves and on several
// replicas at once (every update is conditional on the keys still being
// old), so a server runs it in the background and is ready before it ends.
// Until it ends, a new name is checked by the current rule against the
// names already rekeyed only. Two stored names that the current rule finds
// alike both keep their names: the later one's key that is taken gets its
// id appended, and any new name like either is refused.
func (s *Store) RekeyNames(ctx context.Context, batch int) (int, error) {
	type old struct {
		ID   uuid.UUID
		Name string
		Key  string
	}
	rekeyed := 0
	var after uuid.UUID
	for {
		rows, err := s.pool.Query(ctx, `SELECT id, name, name_key FROM players WHERE id > $1 ORDER BY id LIMIT $2`, after, batch)
		if err != nil {
			return rekeyed, translate("find old name keys", err)
		}
		page, err := pgx.CollectRows(rows, pgx.RowToStructByPos[old])
		if err != nil {
			return rekeyed, translate("find old name keys", err)
		}
		if len(page) == 0 {
			return rekeyed, nil
		}
		after = page[len(page)-1].ID
		var ids []uuid.UUID
		var keys, lowerKeys []string
		for _, o := range page {
			if !game.IsCurrentNameKey(o.Key) {
				ids = append(ids, o.ID)
				keys, lowerKeys = append(keys, game.NameKey(o.Name)), append(lowerKeys, game.NameLowerKey(o.Name))
			}
		}
		if len(ids) == 0 {
			continue
		}
		tag, err := s.pool.Exec(ctx, `UPDATE players p SET name_key = v.key, name_lower_key = v.lower_key
			FROM unnest($1::uuid[], $2::text[], $3::text[]) AS v (id, key, lower_key)
			WHERE p.id = v.id AND p.name_key NOT LIKE $4`, ids, keys, lowerKeys, game.NameKeyPattern)
		if game.ErrorCode(translate("", err)) == game.ECONFLICT {
			// Two names alike, in this batch or across: one at a time.
			n, err := s.rekeyOneByOne(ctx, ids, keys, lowerKeys)
			rekeyed += n
			if err != nil {
				return rekeyed, err
			}
			continue
		}
		if err != nil {
			return rekeyed, translate("rekey names", err)
		}
		rekeyed += int(tag.RowsAffected())
	}
}

// rekeyOneByOne is RekeyNames for a batch in which some key is taken: a
// key another player holds gets the player's id appended, the other key
// stays as it is. A name created between the check and the update makes
// the update fail; it is tried again.
func (s *Store) rekeyOneByOne(ctx context.Context, ids []uuid.UUID, keys, lowerKeys []string) (int, error) {
	const q = `UPDATE players p SET
		name_key = CASE WHEN EXISTS (SELECT 1 FROM players o WHERE o.name_key = $2 AND o.id <> p.id)
			THEN $2 || '#' || p.id ELSE $2 END,
		name_lower_key = CASE WHEN EXISTS (SELECT 1 FROM players o WHERE o.name_lower_key = $3 AND o.id <> p.id)
			THEN $3 || '#' || p.id ELSE $3 END
		WHERE p.id = $1 AND p.name_key NOT LIKE $4`
	const attempts = 3
	n := 0
	for i, id := range ids {
		var err error
		for range attempts {
			var tag pgconn.CommandTag
			tag, err = s.pool.Exec(ctx, q, id, keys[i], lowerKeys[i], game.NameKeyPattern)
			if err == nil {
				n += int(tag.RowsAffected())
				break
			}
			if game.ErrorCode(translate("", err)) != game.ECONFLICT {
				break
			}
		}
		if err != nil {
			return n, translate("rekey name", err)
		}
	}
	return n, nil
}
