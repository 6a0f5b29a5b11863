// Package pgtest gives tests their own PostgreSQL database: a clone of a
// template database migrated once per schema version (by pgtestdb), so each
// test, and each parallel subtest, starts from a fresh, fully migrated
// schema in about 10 ms.
//
// The server comes from TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable). When it is
// unreachable, tests are skipped, except when CI=true, where that is a
// failure. It is for tests only.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver pgtestdb connects with
	"github.com/peterldowns/pgtestdb"
	"github.com/peterldowns/pgtestdb/migrators/common"

	"backpressure/internal/store/pgstore"
	"backpressure/migrations"
)

// DefaultURL is the server used when TEST_DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// ServerURL returns the URL of the test server's maintenance database,
// skipping the test (failing it when CI=true) if the server is unreachable.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		u = DefaultURL
	}
	if err := reachable(u); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: PostgreSQL is required when CI=true: %v", err)
		}
		t.Skipf("pgtest: PostgreSQL unreachable, skipping (set TEST_DATABASE_URL): %v", err)
	}
	return u
}

var (
	reachMu sync.Mutex
	reached = map[string]error{}
)

// reachable connects to the server once per URL and process.
func reachable(u string) error {
	reachMu.Lock()
	defer reachMu.Unlock()
	if err, ok := reached[u]; ok {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err == nil {
		err = conn.Ping(ctx)
		conn.Close(ctx)
	}
	reached[u] = err
	return err
}

// NewDatabase returns the URL of a new database holding the current schema
// (every embedded migration applied), for t alone. It is dropped when t
// ends, unless t failed (then it is kept and its URL logged, to inspect).
// Connections still open at the end are terminated.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), migrator{}).URL()
}

// NewEmptyDatabase is NewDatabase without the schema, for migration tests.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return pgtestdb.Custom(t, config(t), pgtestdb.NoopMigrator{}).URL()
}

func config(t testing.TB) pgtestdb.Config {
	t.Helper()
	raw := ServerURL(t)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("pgtest: TEST_DATABASE_URL must be a postgres:// URL")
	}
	pass, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		db = "postgres"
	}
	return pgtestdb.Config{
		DriverName:                "pgx",
		Host:                      u.Hostname(),
		Port:                      port,
		User:                      u.User.Username(),
		Password:                  pass,
		Database:                  db,
		Options:                   u.RawQuery,
		ForceTerminateConnections: true,
	}
}

// migrator makes pgtestdb's template with pgstore.Migrate, the code the
// server runs, and names templates by a hash of the migration files so a
// changed schema gets a new template.
type migrator struct{}

func (migrator) Hash() (string, error) {
	h := common.NewRecursiveHash()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		h.AddField(path, string(b))
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("pgtest: hash migrations: %w", err)
	}
	return h.String(), nil
}

func (migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	return pgstore.Migrate(ctx, conf.URL())
}
