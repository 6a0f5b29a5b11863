package api

import (
	"crypto/sha256"
	"io/fs"
	"log/slog"
	"net/http"
	"runtime"
	"time"

	"github.com/go-chi/chi/v5"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
)

// Config is the server's tunable behaviour; zero values take the defaults
// documented in docs/api.md (see WithDefaults).
type Config struct {
	// AdminToken, if set, authenticates the configured administrator, who
	// grants and revokes roles. It is compared by hash and never logged.
	AdminToken string

	// SimWorkers submissions run at once; SimQueue more may wait for a
	// worker. Beyond that requests are refused with 503 and Retry-After.
	// Dry runs (and level uploads) and hints have workers of their own,
	// half as many each (at least one), so that they never hold up a
	// submission.
	SimWorkers int
	SimQueue   int
	// SimBudgetBurst and SimBudgetPerSecond are each player's (or
	// anonymous address's) budget of simulation work, in path-ticks
	// (sim.Cost): a token bucket every run is paid from before it starts.
	// 0 takes the defaults; a negative rate turns the budget off.
	SimBudgetBurst     int64
	SimBudgetPerSecond int64
	// DryRunsPerPlayer dry runs of one player may be in flight at once
	// (and one hint); beyond that, 429.
	DryRunsPerPlayer int
	// SimTimeout bounds one simulation request (queueing included);
	// HintTimeout bounds a hint, which runs up to challenges.MaxHintRuns
	// simulations.
	SimTimeout  time.Duration
	HintTimeout time.Duration

	// MaxBodyBytes caps every request body.
	MaxBodyBytes int64

	// MaxInFlight /v1 requests are served at once; one more is refused at once
	// with 503 and Retry-After, so that overload is shed instead of queued in
	// memory. 0 means DefaultMaxInFlightPerCPU per CPU.
	MaxInFlight int

	// MaxInFlightPerClient requests of one client address are served at
	// once (counted from the start of the body); one more is refused with
	// 429. 0 means DefaultMaxInFlightPerClient.
	MaxInFlightPerClient int

	// Timeouts by phase. The header phase is the http.Server's
	// (cmd/server). BodyTimeout bounds reading a request body (408
	// beyond), before the request takes an in-flight place;
	// HandlerTimeout bounds the handler (its context); WriteTimeout bounds
	// writing the response once the handler has it.
	BodyTimeout    time.Duration
	HandlerTimeout time.Duration
	WriteTimeout   time.Duration

	// RefusalHold is the longest a refusal by the per-address rate limit is
	// held before it is written (for the Retry-After it carries; see
	// refusal.go); 0 means DefaultRefusalHold, negative turns it off.
	RefusalHold time.Duration

	// Rate limits in requests per RateLimitWindow; 0 turns a limit off.
	// RateLimitIP applies to every /v1 request by client address,
	// RateLimitPlayer to authenticated requests by player, RateLimitSim to
	// requests that run simulations, by player or else by address.
	RateLimitIP     int
	RateLimitPlayer int
	RateLimitSim    int
	RateLimitWindow time.Duration

	// Live streams: at most MaxStreams open on this server and
	// MaxStreamsPerAddress per client address; StreamBuffer changes wait
	// for a slow client before it is dropped; a comment every
	// StreamHeartbeat keeps idle connections open through proxies.
	MaxStreams           int
	MaxStreamsPerAddress int
	StreamBuffer         int
	StreamHeartbeat      time.Duration
	// StreamWriteTimeout bounds one write to a stream: a client whose
	// connection takes no data for this long is dropped.
	StreamWriteTimeout time.Duration

	// CORSOrigins may call the API from browsers on other origins ("*" for
	// any). Empty: same-origin only.
	CORSOrigins []string
	// TrustedProxies are CIDR prefixes of reverse proxies whose
	// X-Forwarded-For is believed. Empty: the TCP peer is the client.
	TrustedProxies []string

	// Duels: see rules.Config (0: the rules.DefaultDuel* defaults).
	DuelChallengeTTL   time.Duration
	DuelSubmitWindow   time.Duration
	DuelMatchWindow    time.Duration
	DuelsPerDay        int
	DuelMatchBase      float64
	DuelMatchPerMinute float64
	DuelMatchMax       float64
}

// Defaults.
const (
	DefaultSimQueue     = 64
	DefaultSimTimeout   = 10 * time.Second
	DefaultHintTimeout  = 30 * time.Second
	DefaultMaxBodyBytes = 1 << 20
	// DefaultStoreTimeout is what a handler may spend storing its result
	// after its simulation.
	DefaultStoreTimeout = 15 * time.Second
	// DefaultMaxInFlightPerCPU: a CPU answers a tutorial submission in a few
	// milliseconds, so 64 requests in progress per CPU keep it busy while
	// bounding the memory overload can take.
	DefaultMaxInFlightPerCPU    = 64
	DefaultMaxInFlightPerClient = 16
	DefaultBodyTimeout          = 10 * time.Second
	DefaultWriteTimeout         = 15 * time.Second
	DefaultRateLimitIP          = 600
	DefaultRateLimitPlayer      = 300
	DefaultRateLimitSim         = 60
	DefaultRateLimitWindow      = time.Minute
	DefaultRefusalHold          = time.Second
	// DefaultSimBudgetBurst is two of the costliest hints; DefaultSimBudgetPerSecond
	// refills one of them a minute (a tutorial submission costs about 4,000).
	DefaultSimBudgetBurst     = 2 * challenges.MaxHintCost
	DefaultSimBudgetPerSecond = challenges.MaxHintCost / 60
	DefaultDryRunsPerPlayer   = 2

	// A stream costs a goroutine, a connection and a buffer of
	// DefaultStreamBuffer changes: about 70 KiB of resident memory
	// (BENCHMARKS.md), so the default cap is about 350 MiB.
	DefaultMaxStreams           = 5000
	DefaultMaxStreamsPerAddress = 8
	DefaultStreamBuffer         = 64
	DefaultStreamHeartbeat      = 15 * time.Second
	DefaultStreamWriteTimeout   = 10 * time.Second
)

// WithDefaults fills in every unset field. Rate limits are left alone: 0
// there means off, so callers that want the defaults set them.
func (c Config) WithDefaults() Config {
	if c.SimWorkers <= 0 {
		c.SimWorkers = runtime.GOMAXPROCS(0)
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlightPerCPU * runtime.GOMAXPROCS(0)
	}
	if c.MaxInFlightPerClient <= 0 {
		c.MaxInFlightPerClient = DefaultMaxInFlightPerClient
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.RefusalHold == 0 {
		c.RefusalHold = DefaultRefusalHold
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.SimQueue < 0 {
		c.SimQueue = 0
	}
	if c.SimTimeout <= 0 {
		c.SimTimeout = DefaultSimTimeout
	}
	if c.HintTimeout <= 0 {
		c.HintTimeout = DefaultHintTimeout
	}
	if c.HandlerTimeout <= 0 {
		// Long enough for the longest handler: a hint, then its answer.
		c.HandlerTimeout = max(c.SimTimeout, c.HintTimeout) + DefaultStoreTimeout
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.SimBudgetBurst <= 0 {
		c.SimBudgetBurst = DefaultSimBudgetBurst
	}
	if c.SimBudgetPerSecond == 0 {
		c.SimBudgetPerSecond = DefaultSimBudgetPerSecond
	}
	if c.DryRunsPerPlayer <= 0 {
		c.DryRunsPerPlayer = DefaultDryRunsPerPlayer
	}
	if c.RateLimitWindow <= 0 {
		c.RateLimitWindow = DefaultRateLimitWindow
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.MaxStreamsPerAddress <= 0 {
		c.MaxStreamsPerAddress = DefaultMaxStreamsPerAddress
	}
	if c.StreamBuffer <= 0 {
		c.StreamBuffer = DefaultStreamBuffer
	}
	if c.StreamHeartbeat <= 0 {
		c.StreamHeartbeat = DefaultStreamHeartbeat
	}
	if c.StreamWriteTimeout <= 0 {
		c.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	return c
}

// Rules is the part of c the game's rules use (c with its defaults).
func (c Config) Rules() rules.Config {
	c = c.WithDefaults()
	return rules.Config{
		Sim: scheduler.Config{Workers: c.SimWorkers, Queue: c.SimQueue, BudgetBurst: c.SimBudgetBurst,
			BudgetPerSecond: c.SimBudgetPerSecond, DryRunsPerPlayer: c.DryRunsPerPlayer},
		SimTimeout:       c.SimTimeout,
		DuelChallengeTTL: c.DuelChallengeTTL, DuelSubmitWindow: c.DuelSubmitWindow, DuelMatchWindow: c.DuelMatchWindow,
		DuelsPerDay: c.DuelsPerDay, DuelMatchBase: c.DuelMatchBase, DuelMatchPerMinute: c.DuelMatchPerMinute, DuelMatchMax: c.DuelMatchMax,
	}
}

// Deps are what NewServer is built from.
type Deps struct {
	Logger *slog.Logger
	Store  Store
	Config Config
	// Rules are the game's rules the handlers call, shared with the
	// background jobs (cmd/server builds them once); nil builds a Service
	// of the server's own from Store, Config, Logger and Now.
	Rules *rules.Service
	// Web, if not nil, is served at / for GET requests that match no API
	// route (the embedded web client). Without it such requests are 404.
	Web fs.FS
	// Now is the clock that stamps submissions; nil means time.Now.
	Now func() time.Time
	// Live, if not nil, serves the live streams; without it they are 503.
	Live Live
}

// rulesService is d.Rules, or rules of its own made from d.
func (d Deps) rulesService() *rules.Service {
	if d.Rules != nil {
		return d.Rules
	}
	return rules.New(rules.Deps{Store: d.Store, Config: d.Config.Rules(), Logger: d.Logger, Now: d.Now})
}

// server holds the handlers' shared dependencies.
type server struct {
	cfg       Config
	store     Store
	log       *slog.Logger
	now       func() time.Time
	rules     *rules.Service
	sched     *scheduler.Scheduler // the rules', for dry runs, hints and level uploads
	holds     *refusalHolds
	metrics   *metrics
	adminHash []byte
	web       fs.FS
	mux       *chi.Mux // set by routes, for the Allow header of 405s
	// campaign is the built-in campaign's slugs in campaign order: the
	// first levels of GET /v1/challenges.
	campaign []string

	// Live standings and events.
	live    Live
	streams *streamSlots
}

// NewServer returns the whole HTTP API as one handler: every route, with
// its middleware, is registered in routes.go.
func NewServer(d Deps) http.Handler {
	return newServer(d).routes()
}

func newServer(d Deps) *server {
	cfg := d.Config.WithDefaults()
	s := &server{
		cfg:   cfg,
		store: d.Store,
		log:   d.Logger,
		now:   d.Now,
		web:   d.Web,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.AdminToken != "" {
		sum := sha256.Sum256([]byte(cfg.AdminToken))
		s.adminHash = sum[:]
	}
	s.rules = d.rulesService()
	s.sched = s.rules.Scheduler()
	s.metrics = newMetrics(s.rules)
	s.holds = newRefusalHolds(cfg.RefusalHold, heldPerInFlight*cfg.MaxInFlight)
	s.live = d.Live
	s.streams = newStreamSlots(cfg.MaxStreams, cfg.MaxStreamsPerAddress, s.metrics.registry)
	if levels, err := challenges.Campaign(); err == nil {
		for _, l := range levels {
			s.campaign = append(s.campaign, l.Slug)
		}
	}
	return s
}

// configAdmin is the principal of the configured admin token: not a stored
// player (its ID is the nil UUID), so it cannot submit or appear on boards.
var configAdmin = game.Player{Name: "admin", Role: game.RoleAdmin}
