package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"backpressure/internal/game"
)

// DefaultBucketSize is the number of board entries after which a rank
// bucket is split in two. Rank queries count at most this many index
// entries and sum about 2N/DefaultBucketSize bucket rows.
const DefaultBucketSize = 1024

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool

	// Now returns the current time; it stamps new players only. Tests may
	// replace it before first use.
	Now func() time.Time

	bucketSize int
	// afterDrainBatch, if set (tests), is called after each batch of
	// DrainGlobal with the number of players it moved.
	afterDrainBatch func(moved int)
	drainBatch      int
	levels          *levelCache
	tokens          *tokenCache
	announcer       *announcer
}

// DefaultMaxConns is the pool size when Options.MaxConns is 0 and the URL
// sets no pool_max_conns. A connection is held only for a store call (one
// round trip for a submission's write), never during a simulation; 16 keeps
// the 128 requests a 2-CPU replica admits from queueing for connections,
// and is small enough for three replicas to share a PgBouncer pool or a
// PostgreSQL's default 100 connections.
const DefaultMaxConns = 16

// Query modes (Options.QueryMode), as pgx names them.
const (
	// QueryModeCacheStatement prepares each statement once per connection
	// (pgx's default): for a direct connection to PostgreSQL.
	QueryModeCacheStatement = "cache_statement"
	// QueryModeCacheDescribe caches statement descriptions (parameter and
	// result types) in the client and runs unnamed statements: no
	// server-side state outlives a statement, so it is safe behind
	// PgBouncer in transaction mode. (pgx's "exec" mode, which types
	// arguments from Go values alone, sends []byte as bytea and so cannot
	// write the json columns.)
	QueryModeCacheDescribe = "cache_describe"
)

// Options tune the connection pool; the zero value is a direct
// connection with DefaultMaxConns connections.
type Options struct {
	// MaxConns bounds the pool; 0 means the URL's pool_max_conns, else
	// DefaultMaxConns.
	MaxConns int
	// QueryMode is one of the QueryMode constants; "" is
	// QueryModeCacheStatement.
	QueryMode string
}

// Open connects to the database at url (a postgres:// URL or key=value DSN),
// pings it and returns the store. It does not migrate; see Migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with pool options.
func OpenWith(ctx context.Context, url string, o Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgstore: parse database url: %w", err)
	}
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = int32(min(o.MaxConns, 10_000))
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	switch o.QueryMode {
	case "", QueryModeCacheStatement:
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	case QueryModeCacheDescribe:
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	default:
		return nil, fmt.Errorf("pgstore: unknown query mode %q", o.QueryMode)
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		registerUUID(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: open: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgstore: ping: %w", err)
	}
	s := &Store{pool: pool, Now: time.Now, bucketSize: DefaultBucketSize, drainBatch: defaultDrainBatch, levels: newLevelCache(), tokens: newTokenCache()}
	s.announcer = newAnnouncer(s)
	return s, nil
}

// Close stops the announcer, waits for in-flight queries and closes every
// connection.
func (s *Store) Close() {
	s.announcer.close()
	s.pool.Close()
}

// Ping reports whether the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	return translate("ping", s.pool.Ping(ctx))
}

// maxAttempts bounds retries of transactions that PostgreSQL aborted because
// of a deadlock or a serialization failure.
const maxAttempts = 5

// tx runs fn in one transaction, retrying it when PostgreSQL reports a
// deadlock or serialization failure. fn must not keep state across attempts.
func (s *Store) tx(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginTxFunc(ctx, s.pool, opts, fn)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

// retry runs one statement (fn), again when PostgreSQL reports a deadlock
// or serialization failure.
func (s *Store) retry(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
}

var readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// translate turns an error from pgx into what the store's callers may see:
// a *game.Error for anything a caller can act on, the context's error for
// cancellation, and otherwise an opaque error (EINTERNAL) whose text keeps
// the driver's message for the log.
func translate(op string, err error) error {
	if err == nil {
		return nil
	}
	var gameErr *game.Error
	if errors.As(err, &gameErr) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgstore: %s: %w", op, contextErr(err))
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505": // unique_violation
			return game.Errorf(game.ECONFLICT, "%s", conflictMessage(pgErr.ConstraintName))
		case pgErr.Code == "23503": // foreign_key_violation
			return game.Errorf(game.ENOTFOUND, "%s", missingMessage(pgErr.ConstraintName))
		case pgErr.Code == "23514", pgErr.Code == "23502", strings.HasPrefix(pgErr.Code, "22"):
			// check, not-null and data exceptions: input the domain's
			// validation should have caught.
			return game.Errorf(game.EINVALID, "invalid input")
		case pgErr.Code == "40001", pgErr.Code == "40P01", pgErr.Code == "55P03":
			return game.Errorf(game.EUNAVAILABLE, "database busy, try again")
		case strings.HasPrefix(pgErr.Code, "08"), strings.HasPrefix(pgErr.Code, "53"),
			strings.HasPrefix(pgErr.Code, "57P"):
			// connection exceptions, insufficient resources, shutdown
			return game.Errorf(game.EUNAVAILABLE, "database unavailable")
		}
		return fmt.Errorf("pgstore: %s: %s (SQLSTATE %s)", op, pgErr.Message, pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) || connectionLost(err) || pgconn.SafeToRetry(err) {
		return game.Errorf(game.EUNAVAILABLE, "database unavailable")
	}
	return fmt.Errorf("pgstore: %s: %v", op, err)
}

// (pgconn.SafeToRetry: the statement never left, e.g. "conn closed" for a
// transaction whose connection an earlier statement found broken.)
//
// connectionLost reports an error from a connection that broke under a
// statement (PostgreSQL or PgBouncer restarted, a reset): the statement
// may or may not have committed, so the caller must retry with the same
// idempotency key, which replays it if it did.
func connectionLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED)
}

// contextErr returns the context error inside err's chain.
func contextErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

func conflictMessage(constraint string) string {
	switch constraint {
	case "players_name_key_key", "players_name_lower_key_key":
		return "player name is already taken (or looks the same as one that is)"
	case "players_token_hash_key":
		return "token is already in use"
	case "submissions_pkey":
		return "submission already exists"
	case "players_pkey":
		return "player already exists"
	}
	return "already exists"
}

func missingMessage(constraint string) string {
	switch {
	case strings.Contains(constraint, "player_id"), strings.Contains(constraint, "owner_id"):
		return "player not found"
	case strings.Contains(constraint, "slug"), strings.Contains(constraint, "level"):
		return "level not found"
	}
	return "referenced record not found"
}
