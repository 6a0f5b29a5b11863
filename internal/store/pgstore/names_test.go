package pgstore_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// Names stored under the older, case-folding key are rekeyed by Migrate: afterwards a name that only looks like one of them is refused, and
// two old names that the current rule finds alike both stay.
func TestOldNameKeysAreRekeyed(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	for _, name := range []string{"eve", "\u0435ve", "bob"} { // "еve" with a Cyrillic е: a distinct name under the old rule
		_, hash := game.NewToken()
		if _, err := conn.Exec(t.Context(), `INSERT INTO players (id, name, name_key, role, token_hash, created_at) VALUES ($1, $2, $3, 'player', $4, now())`,
			uuid.Must(uuid.NewV7()), name, name, hash); err != nil {
			t.Fatal(err)
		}
	}
	if err := pgstore.Migrate(t.Context(), url); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	s, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	var old int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM players WHERE name_key NOT LIKE 's1:%'`).Scan(&old); err != nil || old != 0 {
		t.Errorf("%d old keys left after Migrate (%v)", old, err)
	}
	for _, name := range []string{"EVE", "b\u043eb"} {
		_, hash := game.NewToken()
		if _, err := s.CreatePlayer(t.Context(), name, game.RolePlayer, hash); game.ErrorCode(err) != game.ECONFLICT {
			t.Errorf("CreatePlayer(%q) after rekeying: %v, want a conflict", name, err)
		}
	}
	if err := pgstore.Migrate(t.Context(), url); err != nil {
		t.Errorf("second Migrate: %v", err)
	}
}
