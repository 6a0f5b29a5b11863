package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"backpressure/internal/api"
	"backpressure/internal/rules"
	"backpressure/internal/store/memstore"
	"backpressure/internal/store/pgstore"
	"backpressure/web"
)

// serverStore is what the server needs of persistence: the API's reads and the
// rules' writes (api.Store holds rules.Store), and the seasons kept ahead.
type serverStore interface {
	api.Store
	rules.SeasonStore
}

// Both stores serve the server.
var (
	_ serverStore = (*memstore.Store)(nil)
	_ serverStore = (*pgstore.Store)(nil)
)

// run is the whole server: it reads the configuration, opens (and
// migrates) the store, loads the built-in campaign, serves until ctx is
// cancelled or SIGINT/SIGTERM arrives, then stops accepting connections and
// waits for in-flight requests (submissions included) to finish, up to
// SHUTDOWN_TIMEOUT; at that deadline it closes every connection still open
// (idle, slow or waiting) and waits for the submissions being stored, then
// returns nil: every acknowledged write is in the store. It logs "listening" with the bound address, so PORT=0
// works.
//
// "server healthcheck" instead asks a running server's /healthz on PORT
// (for container health checks in images without curl).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := loadConfig(getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	if len(args) > 1 {
		if args[1] != "healthcheck" || len(args) > 2 {
			return fmt.Errorf("usage: %s [healthcheck] (configuration comes from the environment)", args[0])
		}
		return healthcheck(ctx, cfg, stdout)
	}
	logger := newLogger(stderr, cfg)

	store, closeStore, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	broker, stopLive := startLive(ctx, cfg, store, logger)
	defer stopLive()

	if err := rules.LoadCampaign(ctx, store, logger, time.Now()); err != nil {
		return err
	}

	// The current season and the next are stored before the first
	// request, and kept stored ahead while the server runs.
	seasons := rules.NewSeasonKeeper(store, cfg.Seasons, logger)
	if err := seasons.Ensure(ctx); err != nil {
		return fmt.Errorf("store the current season: %w", err)
	}
	keeperDone := make(chan struct{})
	keeperCtx, stopKeeper := context.WithCancel(ctx)
	go func() { defer close(keeperDone); seasons.Run(keeperCtx) }()
	defer func() { stopKeeper(); <-keeperDone }()

	// The game's rules are built once: the handlers and the background
	// jobs (event finisher, duel referee) share their simulation scheduler
	// and level cache.
	svc := rules.New(rules.Deps{Store: store, Config: cfg.API.Rules(), Logger: logger})
	deps := api.Deps{
		Logger: logger,
		Store:  store,
		Config: cfg.API,
		Web:    web.FS(),
		Live:   broker,
		Rules:  svc,
	}
	stopEvents, err := startEvents(ctx, cfg, store, svc, logger)
	if err != nil {
		return err
	}
	defer stopEvents()

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, cfg.Port))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	handlers := &inFlight{}
	srv := &http.Server{
		Handler: handlers.track(api.NewServer(deps)),
		// Per phase: the API bounds the body, the handler and the write
		// of each /v1 request more tightly (internal/api/admission.go);
		// these are the outer bounds for every route.
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.HeaderTimeout + cfg.API.BodyTimeout,
		WriteTimeout:      cfg.API.BodyTimeout + cfg.API.HandlerTimeout + cfg.API.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// Live streams never go idle: end them when shutdown starts.
	srv.RegisterOnShutdown(broker.Close)
	logger.InfoContext(ctx, "listening", "addr", ln.Addr().String(),
		"sim_workers", cfg.API.SimWorkers, "sim_queue", cfg.API.SimQueue)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	// The signal context is done; the drain gets a fresh deadline.
	logger.InfoContext(ctx, "shutting down: draining in-flight requests", "timeout", cfg.ShutdownTimeout.String())
	base := context.WithoutCancel(ctx)
	shutdownCtx, cancel := context.WithTimeout(base, cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// The deadline: cut every connection still open (idle, slow
		// or waiting), which cancels the handlers' contexts. A handler
		// past its simulation stores its result regardless (its write
		// is detached from the client), so wait for those writes:
		// whatever was acknowledged, and whatever is still being
		// stored, is in the store when run returns.
		logger.WarnContext(ctx, "shutdown deadline: closing the remaining connections", "err", err)
		_ = srv.Close()
		writesCtx, cancelWrites := context.WithTimeout(base, api.DefaultStoreTimeout+5*time.Second)
		defer cancelWrites()
		if err := handlers.wait(writesCtx); err != nil {
			return fmt.Errorf("shutdown: handlers still running after the connections were closed: %w", err)
		}
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.InfoContext(base, "stopped")
	return nil
}

// inFlight counts the handlers running, so that shutdown can wait for them
// after it has closed their connections (http.Server.Close does not).
type inFlight struct{ wg sync.WaitGroup }

func (f *inFlight) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.wg.Add(1)
		defer f.wg.Done()
		next.ServeHTTP(w, r)
	})
}

// wait returns when every handler has returned, or ctx's error.
func (f *inFlight) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// healthcheck asks the server listening on PORT whether it is alive.
func healthcheck(ctx context.Context, cfg config, stdout io.Writer) error {
	host := cfg.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, cfg.Port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s", resp.Status)
	}
	fmt.Fprintln(stdout, "ok")
	return nil
}

func newLogger(w io.Writer, cfg config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// openStore returns the PostgreSQL store, migrated, when DATABASE_URL is
// set, and otherwise the in-memory store.
func openStore(ctx context.Context, cfg config, logger *slog.Logger) (serverStore, func(), error) {
	if cfg.DatabaseURL == "" {
		logger.WarnContext(ctx, "no DATABASE_URL: using the in-memory store; scores will not survive a restart")
		return memstore.New(), func() {}, nil
	}
	where := databaseName(cfg.DatabaseURL)
	logger.InfoContext(ctx, "migrating the database", "database", where)
	// Migrations hold a session-level advisory lock: not through a
	// transaction-mode pooler.
	if err := pgstore.Migrate(ctx, cfg.DatabaseDirectURL); err != nil {
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	store, err := pgstore.OpenWith(ctx, cfg.DatabaseURL, cfg.Database)
	if err != nil {
		return nil, nil, fmt.Errorf("open the database: %w", err)
	}
	// A new level version whose old bests were still leaving the global
	// board when a replica stopped is finished here (a no-op otherwise).
	if err := store.DrainGlobal(ctx); err != nil {
		store.Close()
		return nil, nil, fmt.Errorf("finish taking superseded level versions off the global board: %w", err)
	}
	logger.InfoContext(ctx, "using the PostgreSQL store", "database", where)
	// Names keyed by an older rule are rekeyed in the background, so that
	// readiness never waits for a pass over every player.
	rekeyCtx, stopRekey := context.WithCancel(ctx)
	rekeyed := make(chan struct{})
	go func() {
		defer close(rekeyed)
		n, err := store.RekeyNames(rekeyCtx, rekeyBatch)
		switch {
		case err != nil && rekeyCtx.Err() == nil:
			logger.ErrorContext(ctx, "rekeying player names", "rekeyed", n, "err", err)
		case n > 0:
			logger.InfoContext(ctx, "rekeyed player names", "rekeyed", n)
		}
	}()
	return store, func() { stopRekey(); <-rekeyed; store.Close() }, nil
}

// rekeyBatch is how many players one statement rekeys: large enough that a
// million players take a few hundred statements, small enough that each
// holds its row locks for milliseconds.
const rekeyBatch = 2000

// databaseName is host/database from a database URL, for logs: never the
// user or password.
func databaseName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Host + u.Path
}
