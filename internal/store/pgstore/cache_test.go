package pgstore_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/pgtest"
	"backpressure/internal/store/pgstore"
)

// replicas opens two stores on one database, as two server replicas.
func replicas(t *testing.T) (a, b *pgstore.Store) {
	t.Helper()
	url := pgtest.NewDatabase(t)
	for _, s := range []**pgstore.Store{&a, &b} {
		st, err := pgstore.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		*s = st
	}
	return a, b
}

// A role taken away on one replica is never still granted by another: only
// the lowest role is cached, and a replica sees its own changes at once.
func TestTokenCacheNeverGrantsARevokedRole(t *testing.T) {
	t.Parallel()
	a, b := replicas(t)
	ctx := t.Context()
	hash := game.HashToken("token-of-ada")
	p, err := a.CreatePlayer(ctx, "ada", game.RolePlayer, hash)
	if err != nil {
		t.Fatal(err)
	}
	role := func(s *pgstore.Store) game.Role {
		t.Helper()
		got, err := s.PlayerByTokenHash(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		return got.Role
	}
	if got := role(a); got != game.RolePlayer {
		t.Fatalf("role %q, want player", got)
	}
	// Promoted here: seen here at once, although "player" was cached.
	if err := a.SetRole(ctx, p.ID, game.RoleAuthor); err != nil {
		t.Fatal(err)
	}
	if got := role(a); got != game.RoleAuthor {
		t.Errorf("after a local promotion: role %q, want author", got)
	}
	// Demoted on the other replica: this one must not keep the author role.
	if err := b.SetRole(ctx, p.ID, game.RolePlayer); err != nil {
		t.Fatal(err)
	}
	if got := role(a); got != game.RolePlayer {
		t.Errorf("after a demotion elsewhere: role %q, want player (a revoked role was served from a cache)", got)
	}
	if _, err := a.PlayerByTokenHash(ctx, game.HashToken("no such token")); game.ErrorCode(err) != game.ENOTFOUND {
		t.Errorf("unknown token: %v, want ENOTFOUND", err)
	}
}

// A replica that scored a design against the level version it had cached
// as current stores nothing if another replica changed the level since;
// once its cache has expired it serves the new content.
func TestLevelCacheChecksEveryWrite(t *testing.T) {
	t.Parallel()
	a, b := replicas(t)
	ctx := t.Context()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a.Now = func() time.Time { return clock }
	level := func(hash string) game.Level {
		return game.Level{Slug: "lvl", Title: "L", Difficulty: "easy", Definition: []byte(`{"n":"` + hash + `"}`),
			ContentHash: hash, CreatedAt: clock}
	}
	if _, _, err := a.PutLevel(ctx, level("h1")); err != nil {
		t.Fatal(err)
	}
	p, err := a.CreatePlayer(ctx, "bo", game.RolePlayer, game.HashToken("token-of-bo"))
	if err != nil {
		t.Fatal(err)
	}
	submit := func(version int) error {
		_, err := a.CreateSubmission(ctx, game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: "lvl",
			Version: version, Design: []byte(`{}`), Result: []byte(`{}`), Passed: true, Score: 10, CreatedAt: clock}, "", "")
		return err
	}
	served, err := a.Level(ctx, "lvl", 0)
	if err != nil || served.ContentHash != "h1" {
		t.Fatalf("Level = %+v, %v", served, err)
	}
	if err := submit(served.Version); err != nil {
		t.Fatalf("submission to the current version: %v", err)
	}
	// Another replica publishes new content.
	if _, _, err := b.PutLevel(ctx, level("h2")); err != nil {
		t.Fatal(err)
	}
	if cached, err := a.Level(ctx, "lvl", 0); err != nil || cached.ContentHash != "h1" {
		t.Fatalf("within the cache's lifetime: %+v, %v; want the cached h1", cached, err)
	}
	if err := submit(served.Version); game.ErrorCode(err) != game.ECONFLICT {
		t.Errorf("submission scored against the replaced content: %v, want ECONFLICT", err)
	}
	var stored int
	if err := pgstore.Pool(a).QueryRow(ctx, `SELECT count(*) FROM submissions`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 1 {
		t.Errorf("%d submissions stored, want 1 (the refused one must leave nothing)", stored)
	}
	// The refusal dropped the cached level: the next read is fresh.
	if fresh, err := a.Level(ctx, "lvl", 0); err != nil || fresh.ContentHash != "h2" {
		t.Errorf("after the refusal: %+v, %v; want h2", fresh, err)
	}
	// And without a refusal, the cache expires by itself.
	if _, _, err := b.PutLevel(ctx, level("h3")); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * time.Second)
	if fresh, err := a.Level(ctx, "lvl", 0); err != nil || fresh.ContentHash != "h3" {
		t.Errorf("after expiry: %+v, %v; want h3", fresh, err)
	}
}

// A connection that breaks under a statement is "unavailable" (503, retry
// with the same key), never an internal error.
func TestTranslateBrokenConnection(t *testing.T) {
	for _, err := range []error{io.EOF, io.ErrUnexpectedEOF, fmt.Errorf("read: %w", syscall.ECONNRESET), net.ErrClosed,
		fmt.Errorf("write: %w", syscall.EPIPE)} {
		if got := game.ErrorCode(pgstore.Translate("op", err)); got != game.EUNAVAILABLE {
			t.Errorf("%v: %s, want %s", err, got, game.EUNAVAILABLE)
		}
	}
	if got := game.ErrorCode(pgstore.Translate("op", errors.New("something else"))); got != game.EINTERNAL {
		t.Errorf("an unknown error: %s, want %s", got, game.EINTERNAL)
	}
}
