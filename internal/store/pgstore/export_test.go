package pgstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SetBucketSize makes tests split rank buckets early, in Go and in the
// season trigger (a setting of the test's own database).
func SetBucketSize(s *Store, n int) {
	s.bucketSize = n
	setParam(s, "backpressure.bucket_size", strconv.Itoa(n))
}

// SetSeasonClock makes the database's season clock (bp_season_now) read
// t, for this test's database only.
func SetSeasonClock(s *Store, t time.Time) {
	setParam(s, "backpressure.season_now", t.UTC().Format(time.RFC3339Nano))
}

// setParam reconnects the store with a session setting on every
// connection (settings of its own, which any role may set). Tests call it
// between store calls, never during one; the announcer, which reads the
// pool on its own timer, is stopped while the pool is replaced and started
// again on the new one.
func setParam(s *Store, name, value string) {
	s.announcer.close()
	defer func() { s.announcer = newAnnouncer(s) }()
	cfg := s.pool.Config()
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams[name] = value
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		panic(err)
	}
	old := s.pool
	s.pool = pool
	old.Close()
}

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
