package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"backpressure/internal/api"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/store/pgstore"
)

// config is the whole configuration, read from the environment.
type config struct {
	Host        string
	Port        string
	DatabaseURL string
	// DatabaseDirectURL reaches PostgreSQL without a transaction-mode
	// pooler, for what needs a session: migrations (golang-migrate's
	// advisory lock), LISTEN. Default: DatabaseURL.
	DatabaseDirectURL string
	Database          pgstore.Options
	LogLevel          slog.Level
	LogFormat         string
	ShutdownTimeout   time.Duration
	// HeaderTimeout bounds reading a request's headers; IdleTimeout how
	// long a keep-alive connection may wait for its next request.
	HeaderTimeout time.Duration
	IdleTimeout   time.Duration
	API           api.Config
	// EventCheckInterval: with the in-memory store, how often ended events
	// are looked for and finished.
	EventCheckInterval time.Duration
	// EventFinishTimeout bounds the final runs of one event; a finish
	// whose replica died is taken up by another after twice as long.
	EventFinishTimeout time.Duration
	// Seasons is the global board's reset schedule (SEASON_SCHEDULE,
	// SEASON_START).
	Seasons game.SeasonSchedule
}

// minAdminTokenLen keeps the admin token out of guessing range.
const minAdminTokenLen = 32

// loadConfig reads the environment and reports every bad variable at once.
func loadConfig(getenv func(string) string) (config, error) {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s %s", name, fmt.Sprintf(format, args...)))
	}
	str := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	integer := func(name string, def, lo, hi int) int {
		v := str(name, "")
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			bad(name, "must be an integer from %d to %d, not %q", lo, hi, v)
			return def
		}
		return n
	}
	duration := func(name string, def time.Duration) time.Duration {
		v := str(name, "")
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			bad(name, "must be a positive duration like 10s or 1m30s, not %q", v)
			return def
		}
		return d
	}
	list := func(name string) []string {
		var out []string
		for _, item := range strings.Split(getenv(name), ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		return out
	}

	c := config{
		Host:        str("HOST", ""),
		Port:        str("PORT", "8080"),
		DatabaseURL: str("DATABASE_URL", ""),
		Database: pgstore.Options{
			MaxConns:  integer("DATABASE_MAX_CONNS", 0, 1, 10_000),
			QueryMode: str("DATABASE_QUERY_MODE", pgstore.QueryModeCacheStatement),
		},
		LogFormat:       str("LOG_FORMAT", "json"),
		ShutdownTimeout: duration("SHUTDOWN_TIMEOUT", 30*time.Second),
		HeaderTimeout:   duration("HEADER_TIMEOUT", 5*time.Second),
		IdleTimeout:     duration("IDLE_TIMEOUT", 2*time.Minute),
	}
	// Live standings and events.
	c.DatabaseDirectURL = str("DATABASE_DIRECT_URL", "")
	c.EventCheckInterval = duration("EVENT_CHECK_INTERVAL", 10*time.Second)
	c.EventFinishTimeout = duration("EVENT_FINISH_TIMEOUT", 5*time.Minute)
	// Seasons.
	if sc, err := game.ParseSeasonSchedule(getenv("SEASON_SCHEDULE"), strings.TrimSpace(getenv("SEASON_START"))); err != nil {
		bad("SEASON_SCHEDULE/SEASON_START", "%v", err)
	} else {
		c.Seasons = sc
	}
	if p, err := strconv.Atoi(c.Port); err != nil || p < 0 || p > 65535 {
		bad("PORT", "must be a port number (0 picks a free one), not %q", c.Port)
	}
	if err := c.LogLevel.UnmarshalText([]byte(str("LOG_LEVEL", "info"))); err != nil {
		bad("LOG_LEVEL", "must be debug, info, warn or error")
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		bad("LOG_FORMAT", "must be json or text")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		// Not echoed: it may hold a password.
		bad("DATABASE_URL", "must be a postgres:// or postgresql:// URL")
	}
	c.DatabaseDirectURL = str("DATABASE_DIRECT_URL", c.DatabaseURL)
	if c.DatabaseDirectURL != "" && !strings.HasPrefix(c.DatabaseDirectURL, "postgres://") && !strings.HasPrefix(c.DatabaseDirectURL, "postgresql://") {
		bad("DATABASE_DIRECT_URL", "must be a postgres:// or postgresql:// URL")
	}
	if m := c.Database.QueryMode; m != pgstore.QueryModeCacheStatement && m != pgstore.QueryModeCacheDescribe {
		bad("DATABASE_QUERY_MODE", "must be %s (direct to PostgreSQL) or %s (behind PgBouncer in transaction mode), not %q",
			pgstore.QueryModeCacheStatement, pgstore.QueryModeCacheDescribe, m)
	}

	a := api.Config{
		AdminToken:           getenv("ADMIN_TOKEN"),
		SimWorkers:           integer("SIM_WORKERS", 0, 1, 1024),
		SimQueue:             integer("SIM_QUEUE", api.DefaultSimQueue, 0, 100_000),
		SimTimeout:           duration("SIM_TIMEOUT", api.DefaultSimTimeout),
		HintTimeout:          duration("HINT_TIMEOUT", api.DefaultHintTimeout),
		MaxBodyBytes:         int64(integer("MAX_BODY_BYTES", api.DefaultMaxBodyBytes, 1024, 64<<20)),
		MaxInFlight:          integer("MAX_INFLIGHT", 0, 1, 1_000_000),
		MaxInFlightPerClient: integer("MAX_INFLIGHT_PER_CLIENT", api.DefaultMaxInFlightPerClient, 1, 1_000_000),
		BodyTimeout:          duration("BODY_TIMEOUT", api.DefaultBodyTimeout),
		RefusalHold:          duration("REFUSAL_HOLD", api.DefaultRefusalHold),
		HandlerTimeout:       duration("HANDLER_TIMEOUT", 0*time.Second),
		WriteTimeout:         duration("WRITE_TIMEOUT", api.DefaultWriteTimeout),
		RateLimitIP:          integer("RATE_LIMIT_IP", api.DefaultRateLimitIP, 0, 1_000_000),
		RateLimitPlayer:      integer("RATE_LIMIT_PLAYER", api.DefaultRateLimitPlayer, 0, 1_000_000),
		RateLimitSim:         integer("RATE_LIMIT_SIM", api.DefaultRateLimitSim, 0, 1_000_000),
		RateLimitWindow:      duration("RATE_LIMIT_WINDOW", api.DefaultRateLimitWindow),
		CORSOrigins:          list("CORS_ORIGINS"),
		TrustedProxies:       list("TRUSTED_PROXIES"),
	}
	// Live streams.
	a.MaxStreams = integer("MAX_STREAMS", api.DefaultMaxStreams, 1, 1_000_000)
	a.MaxStreamsPerAddress = integer("MAX_STREAMS_PER_ADDRESS", api.DefaultMaxStreamsPerAddress, 1, 1_000_000)
	a.StreamBuffer = integer("STREAM_BUFFER", api.DefaultStreamBuffer, 1, 100_000)
	a.StreamHeartbeat = duration("STREAM_HEARTBEAT", api.DefaultStreamHeartbeat)
	// Duels (docs/api.md "Duels").
	a.DuelChallengeTTL = duration("DUEL_CHALLENGE_TTL", rules.DefaultDuelChallengeTTL)
	a.DuelSubmitWindow = duration("DUEL_SUBMIT_WINDOW", rules.DefaultDuelSubmitWindow)
	a.DuelMatchWindow = duration("DUEL_MATCH_WINDOW", rules.DefaultDuelMatchWindow)
	a.DuelsPerDay = integer("DUELS_PER_DAY", rules.DefaultDuelsPerDay, 1, 1_000_000)
	a.DuelMatchBase = float64(integer("DUEL_MATCH_BASE", rules.DefaultDuelMatchBase, 1, 10_000))
	a.DuelMatchPerMinute = float64(integer("DUEL_MATCH_PER_MINUTE", rules.DefaultDuelMatchPerMinute, 1, 10_000))
	a.DuelMatchMax = float64(integer("DUEL_MATCH_MAX", rules.DefaultDuelMatchMax, 1, 10_000))
	if a.AdminToken != "" && len(a.AdminToken) < minAdminTokenLen {
		// Not echoed: it is a secret.
		bad("ADMIN_TOKEN", "must be at least %d characters (try: openssl rand -base64 32)", minAdminTokenLen)
	}
	for _, p := range a.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			bad("TRUSTED_PROXIES", "must be comma-separated CIDR prefixes like 10.0.0.0/8, not %q", p)
		}
	}
	for _, o := range a.CORSOrigins {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			bad("CORS_ORIGINS", "must be comma-separated origins like https://play.example.com (or *), not %q", o)
		}
	}
	c.API = a.WithDefaults()
	return c, errors.Join(errs...)
}
