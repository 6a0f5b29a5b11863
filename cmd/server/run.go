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
	"syscall"
	"time"

	"backpressure/internal/api"
	"backpressure/internal/store/memstore"
	"backpressure/internal/store/pgstore"
	"backpressure/web"
)

// Both stores serve the API.
var (
	_ api.Store = (*memstore.Store)(nil)
	_ api.Store = (*pgstore.Store)(nil)
)

// run is the whole server: it reads the configuration, opens (and
// migrates) the store, loads the built-in campaign, serves until ctx is
// cancelled or SIGINT/SIGTERM arrives, then stops accepting connections and
// waits for in-flight requests (submissions included) to finish, up to
// SHUTDOWN_TIMEOUT. It logs "listening" with the bound address, so PORT=0
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

	if err := api.LoadCampaign(ctx, store, logger, time.Now()); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, cfg.Port))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler: api.NewServer(api.Deps{
			Logger: logger,
			Store:  store,
			Config: cfg.API,
			Web:    web.FS(),
		}),
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
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.InfoContext(shutdownCtx, "stopped")
	return nil
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
func openStore(ctx context.Context, cfg config, logger *slog.Logger) (api.Store, func(), error) {
	if cfg.DatabaseURL == "" {
		logger.WarnContext(ctx, "no DATABASE_URL: using the in-memory store; scores will not survive a restart")
		return memstore.New(), func() {}, nil
	}
	where := databaseName(cfg.DatabaseURL)
	logger.InfoContext(ctx, "migrating the database", "database", where)
	if err := pgstore.Migrate(ctx, cfg.DatabaseURL); err != nil {
		return nil, nil, fmt.Errorf("migrate: %w", err)
	}
	store, err := pgstore.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("open the database: %w", err)
	}
	logger.InfoContext(ctx, "using the PostgreSQL store", "database", where)
	return store, store.Close, nil
}

// databaseName is host/database from a database URL, for logs: never the
// user or password.
func databaseName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return u.Host + u.Path
}
