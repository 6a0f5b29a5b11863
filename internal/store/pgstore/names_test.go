package pgstore_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// Names stored under an older key are rekeyed by RekeyNames, in batches:
// afterwards every player has both keys, a name that is one name with any
// of them under either key is refused, two old names that the current rule
// finds alike both stay (only the key they share is made unique), and a
// second pass has nothing to do.
func TestOldNameKeysAreRekeyed(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	// "еve" with a Cyrillic е, "admın" with a dotless ı, and "ADMIN" were
	// distinct names under older rules.
	names := []string{"eve", "\u0435ve", "bob", "adm\u0131n", "carol", "ADMIN", "dave", "erin"}
	for _, name := range names {
		_, hash := game.NewToken()
		if _, err := conn.Exec(t.Context(), `INSERT INTO players (id, name, name_key, role, token_hash, created_at) VALUES ($1, $2, $3, 'player', $4, now())`,
			uuid.Must(uuid.NewV7()), name, name, hash); err != nil {
			t.Fatal(err)
		}
	}
	s, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if n, err := s.RekeyNames(t.Context(), 2); err != nil || n != len(names) {
		t.Fatalf("RekeyNames = %d, %v; want %d", n, err, len(names))
	}
	var old int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM players WHERE name_key NOT LIKE $1 OR name_lower_key IS NULL OR name_lower_key NOT LIKE $1`,
		game.NameKeyPattern).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d old keys left after RekeyNames (%v)", old, err)
	}
	if n, err := s.RekeyNames(t.Context(), 2); err != nil || n != 0 {
		t.Errorf("second RekeyNames = %d, %v; want nothing to do", n, err)
	}
	for _, name := range []string{"EVE", "b\u043eb", "admin", "Admin", "ADMLN"} {
		_, hash := game.NewToken()
		if _, err := s.CreatePlayer(t.Context(), name, game.RolePlayer, hash); game.ErrorCode(err) != game.ECONFLICT {
			t.Errorf("CreatePlayer(%q) after rekeying: %v, want a conflict", name, err)
		}
	}
}
