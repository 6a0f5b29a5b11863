package pgstore

import (
	"context"
	"errors"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SetBucketSize makes tests split rank buckets early.
func SetBucketSize(s *Store, n int) { s.bucketSize = n }

// Translate exposes the error translation.
var Translate = translate

// Pool exposes the pool to invariant checks.
func Pool(s *Store) *pgxpool.Pool { return s.pool }

// MigrateDown reverts every migration.
func MigrateDown(ctx context.Context, dbURL string) error {
	m, err := newMigrate(dbURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := runMigration(ctx, m, m.Down); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

// SetDrain sets the players moved per drain transaction and a hook run after each.
func SetDrain(s *Store, batch int, after func(moved int)) {
	s.drainBatch, s.afterDrainBatch = batch, after
}
