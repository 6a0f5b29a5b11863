package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers the pgx5:// driver
	"github.com/golang-migrate/migrate/v4/source/iofs"

	"backpressure/migrations"
)

// Migrate brings the database at dbURL (postgres:// or postgresql://) up to
// the newest embedded migration. Having nothing to do is success. Several
// processes may call it at once: golang-migrate serialises them with a
// PostgreSQL advisory lock (see the package documentation).
func Migrate(ctx context.Context, dbURL string) error {
	m, err := newMigrate(dbURL)
	if err != nil {
		return err
	}
	defer m.Close()
	// Name keys are computed in Go: Store.RekeyNames brings old ones up to
	// date while the server runs.
	return runMigration(ctx, m, m.Up)
}

// newMigrate returns a golang-migrate instance over the embedded migrations.
func newMigrate(dbURL string) (*migrate.Migrate, error) {
	u, err := url.Parse(dbURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("pgstore: migrate: database url must start with postgres:// or postgresql://")
	}
	u.Scheme = "pgx5"
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrate: read embedded migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, u.String())
	if err != nil {
		return nil, fmt.Errorf("pgstore: migrate: %s", redact(err.Error(), u))
	}
	return m, nil
}

// runMigration runs step, asking golang-migrate to stop after the current
// migration when ctx is cancelled (it has no context support of its own).
func runMigration(ctx context.Context, m *migrate.Migrate, step func() error) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			select {
			case m.GracefulStop <- true:
			default:
			}
		case <-done:
		}
	}()
	err := step()
	if errors.Is(err, migrate.ErrNoChange) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	return ctx.Err()
}

// redact removes the password from messages that may echo the URL.
func redact(msg string, u *url.URL) string {
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}
