package rules

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
)

// Config is what the rules need to know of the server's tuning; the transport's
// configuration fills it in with its defaults (api.Config.Rules).
type Config struct {
	// Sim sizes the simulation scheduler.
	Sim scheduler.Config
	// SimTimeout bounds one simulation (queueing included).
	SimTimeout time.Duration

	// Duels (0: the Default* of duelcreate.go). A challenge must be
	// accepted within DuelChallengeTTL, a match found within
	// DuelMatchWindow; once active, both designs are due within
	// DuelSubmitWindow. A player starts at most DuelsPerDay duels per UTC
	// day. Matching allows a rating difference of DuelMatchBase, plus
	// DuelMatchPerMinute for every minute the waiting player has waited,
	// up to DuelMatchMax.
	DuelChallengeTTL   time.Duration
	DuelSubmitWindow   time.Duration
	DuelMatchWindow    time.Duration
	DuelsPerDay        int
	DuelMatchBase      float64
	DuelMatchPerMinute float64
	DuelMatchMax       float64
}

// Store is the persistence the rules need, in the pieces declared next to
// the rules that use them.
type Store interface {
	Levels
	Publisher
	Submissions
	Events
	FinalRuns
	Duels
	Players
}

// Levels reads and stores level versions.
type Levels interface {
	PutLevel(ctx context.Context, l game.Level) (game.Level, bool, error)
	Level(ctx context.Context, slug string, version int) (game.Level, error)
}

// Players finds accounts (a duel's opponent).
type Players interface {
	PlayerByID(ctx context.Context, id uuid.UUID) (game.Player, error)
}

// Deps are what New builds a Service from.
type Deps struct {
	Store  Store
	Config Config
	Logger *slog.Logger
	// Now is the clock of every rule (an event's phases, a duel's
	// deadlines, a submission's stamp); nil means time.Now.
	Now func() time.Time
	// Finishes, if not nil, is told of every new event, to finish it at
	// its end (EventFinisher.Finish); without it, something must call
	// EventFinisher.Run.
	Finishes FinishScheduler
	// DuelDeadlines, if not nil, is told of every duel deadline
	// (DuelReferee.Settle); without it, something must call DuelReferee.Run.
	DuelDeadlines DuelScheduler
}

// Service applies the game's rules over time. One is built per process and
// shared by the HTTP handlers and the background jobs (event finisher, duel
// referee), so that all of them share one simulation scheduler and one
// level cache.
type Service struct {
	store         Store
	cfg           Config
	log           *slog.Logger
	now           func() time.Time
	sched         *scheduler.Scheduler
	levels        *levelCache
	loads         singleflight.Group // level loads by content hash
	levelLoads    prometheus.Counter
	eventFinishes FinishScheduler
	duelDeadlines DuelScheduler
}

// New returns the rules over d's store, with a scheduler of d.Config.Sim's
// size and the built-in campaign already in its level cache.
func New(d Deps) *Service {
	s := &Service{
		store:         d.Store,
		cfg:           d.Config,
		log:           d.Logger,
		now:           d.Now,
		levels:        newLevelCache(),
		eventFinishes: d.Finishes,
		duelDeadlines: d.DuelDeadlines,
		levelLoads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backpressure_level_loads_total",
			Help: "Stored level versions decoded into the level cache (concurrent misses of one version share one load; a load never simulates).",
		}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.sched = scheduler.New(d.Config.Sim, s.now, scheduler.NewMetrics())
	if levels, err := challenges.Campaign(); err == nil {
		for _, l := range levels {
			s.levels.add(l.ContentHash(), l)
		}
	}
	return s
}

// ScheduleWith sets where new events' finishes and duels' deadlines are
// scheduled. It is for the server's start, before any request is served:
// the job queue that calls the finisher and the referee is built after the
// Service they call.
func (s *Service) ScheduleWith(finishes FinishScheduler, duels DuelScheduler) {
	s.eventFinishes, s.duelDeadlines = finishes, duels
}

// Scheduler is the simulation scheduler the rules run on, for the
// transport's own simulations (dry runs, hints, level uploads).
func (s *Service) Scheduler() *scheduler.Scheduler { return s.sched }

// Collectors are the rules' Prometheus collectors: the scheduler's and the
// level cache's loads.
func (s *Service) Collectors() []prometheus.Collector {
	return append(s.sched.Metrics().Collectors(), s.levelLoads)
}

// LevelLoads counts stored level versions decoded into the cache.
func (s *Service) LevelLoads() prometheus.Counter { return s.levelLoads }

// orNull is b, or JSON null if b is nil.
func orNull(b json.RawMessage) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// DeadlineClock is the time every deadline players race against is decided
// by (an event's start and end, a duel's accept and submit deadlines): the
// store's clock, the database's with PostgreSQL, so that a replica whose own
// clock is off neither accepts late moves nor refuses timely ones. It falls
// back on the server's clock only if the store cannot tell the time (the
// store call that follows then fails as well).
func (s *Service) DeadlineClock(ctx context.Context) time.Time {
	if c, ok := s.store.(interface {
		DeadlineClock(ctx context.Context) (time.Time, error)
	}); ok {
		if t, err := c.DeadlineClock(ctx); err == nil {
			return t
		}
	}
	return s.now()
}
