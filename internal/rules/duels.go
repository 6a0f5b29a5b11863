package rules

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
)

// Duels stores duels and ratings (see pgstore's duels.go for each
// method's contract). Every rule is checked by the store, in the
// transaction that applies it, against the duel as locked there.
type Duels interface {
	CreateDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	MatchDuel(ctx context.Context, d game.Duel, rules game.DuelRules) (game.Duel, error)
	Duel(ctx context.Context, id uuid.UUID) (game.Duel, error)
	OpenDuels(ctx context.Context) ([]game.Duel, error)
	AcceptDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time, rules game.DuelRules) (game.Duel, error)
	DeclineDuel(ctx context.Context, id, playerID uuid.UUID, at time.Time) (game.Duel, error)
	SubmitDuelDesign(ctx context.Context, id, playerID uuid.UUID, design json.RawMessage, at time.Time) (game.Duel, error)
	EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error)
	Rating(ctx context.Context, playerID uuid.UUID) (game.Rating, error)
}

// DuelScheduler arranges for a duel to be settled at (or soon after) a
// deadline, once, across replicas (a PostgreSQL job queue in cmd/server).
type DuelScheduler interface {
	ScheduleDuel(ctx context.Context, duelID uuid.UUID, at time.Time) error
}

// Duel defaults (docs/api.md "Duels").
const (
	DefaultDuelChallengeTTL   = 24 * time.Hour
	DefaultDuelSubmitWindow   = 30 * time.Minute
	DefaultDuelMatchWindow    = 10 * time.Minute
	DefaultDuelsPerDay        = 20
	DefaultDuelMatchBase      = 100
	DefaultDuelMatchPerMinute = 50
	DefaultDuelMatchMax       = 400
	// duelMaxPoints bounds the ticks stored (and shown) of each side's run.
	duelMaxPoints = 300
)

// duelConfig is c's duel settings with the defaults filled in.
func (c Config) duelConfig() Config {
	if c.DuelChallengeTTL <= 0 {
		c.DuelChallengeTTL = DefaultDuelChallengeTTL
	}
	if c.DuelSubmitWindow <= 0 {
		c.DuelSubmitWindow = DefaultDuelSubmitWindow
	}
	if c.DuelMatchWindow <= 0 {
		c.DuelMatchWindow = DefaultDuelMatchWindow
	}
	if c.DuelsPerDay <= 0 {
		c.DuelsPerDay = DefaultDuelsPerDay
	}
	if c.DuelMatchBase <= 0 {
		c.DuelMatchBase = DefaultDuelMatchBase
	}
	if c.DuelMatchPerMinute <= 0 {
		c.DuelMatchPerMinute = DefaultDuelMatchPerMinute
	}
	if c.DuelMatchMax <= 0 {
		c.DuelMatchMax = DefaultDuelMatchMax
	}
	return c
}

func (s *Service) duelRules() game.DuelRules {
	c := s.cfg.duelConfig()
	return game.DuelRules{PerDay: c.DuelsPerDay, MatchBase: c.DuelMatchBase, MatchPerMinute: c.DuelMatchPerMinute,
		MatchMax: c.DuelMatchMax, SubmitWindow: c.DuelSubmitWindow}
}

func newSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// CreateDuel challenges opponent (a player id), or with an empty opponent
// asks to be matched, on a level's current version.
func (s *Service) CreateDuel(ctx context.Context, player game.Player, level, opponent string) (game.Duel, error) {
	if !challenges.ValidSlug(level) {
		return game.Duel{}, game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level"}})
	}
	stored, _, err := s.Level(ctx, level, 0)
	if game.ErrorCode(err) == game.ENOTFOUND {
		err = game.Invalid("the request is invalid", []game.FieldError{{Field: "level", Reason: "names no level"}})
	}
	if err != nil {
		return game.Duel{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return game.Duel{}, err
	}
	cfg, now := s.cfg.duelConfig(), s.DeadlineClock(ctx)
	d := game.Duel{ID: id, Slug: stored.Slug, Version: stored.Version, Seed: newSeed(), CreatedAt: now}
	d.Sides[0].PlayerID = player.ID
	var created game.Duel
	if opponent == "" {
		rating, err := s.store.Rating(ctx, player.ID)
		if err != nil {
			return game.Duel{}, err
		}
		d.State, d.AcceptBy, d.MatchRating = game.DuelMatching, now.Add(cfg.DuelMatchWindow), rating.Rating
		if created, err = s.store.MatchDuel(ctx, d, s.duelRules()); err != nil {
			return game.Duel{}, err
		}
	} else {
		opp, err := uuid.Parse(opponent)
		if err != nil {
			return game.Duel{}, game.Invalid("the request is invalid", []game.FieldError{{Field: "opponent", Reason: "must be a player id (a UUID)"}})
		}
		if opp == player.ID {
			return game.Duel{}, game.Errorf(game.EDUELSELF, "a player cannot challenge themselves")
		}
		if _, err := s.store.PlayerByID(ctx, opp); err != nil {
			if game.ErrorCode(err) == game.ENOTFOUND {
				err = game.Invalid("the request is invalid", []game.FieldError{{Field: "opponent", Reason: "names no player"}})
			}
			return game.Duel{}, err
		}
		d.Sides[1].PlayerID = opp
		d.State, d.AcceptBy = game.DuelChallenged, now.Add(cfg.DuelChallengeTTL)
		if created, err = s.store.CreateDuel(ctx, d, s.duelRules()); err != nil {
			return game.Duel{}, err
		}
	}
	s.scheduleDuel(ctx, created)
	s.log.InfoContext(ctx, "duel started", "duel_id", created.ID.String(), "state", created.State, "slug", created.Slug)
	return created, nil
}

// settleInRequest settles duel id in the request that brought its second
// design, unless a duel from the same address group (from) is being
// settled in a request already (a *scheduler.RetryError then).
func (s *Service) settleInRequest(ctx context.Context, from string, id uuid.UUID) (game.Duel, error) {
	done, err := s.sched.Admit(from, settleKind, 1)
	if err != nil {
		return game.Duel{}, err
	}
	defer done()
	d, _, err := s.settleDuel(ctx, s.sched.Background, id)
	return d, err
}

// settleKind counts the duels being settled in requests, per address group.
const settleKind = "duel_settle"

// scheduleSettle arranges for duel id to be settled at at by a job of the
// duel scheduler (without one, DuelReferee.Run finds it on its next round).
func (s *Service) scheduleSettle(ctx context.Context, id uuid.UUID, at time.Time) {
	if s.duelDeadlines == nil {
		return
	}
	if err := s.duelDeadlines.ScheduleDuel(context.WithoutCancel(ctx), id, at); err != nil {
		s.log.ErrorContext(ctx, "scheduling a duel's settling failed; its deadline settles it", "duel_id", id.String(), "err", err)
	}
}

// scheduleDuel arranges for d to be settled at its deadline. A failure is
// repaired at the next start of any replica, which schedules every open
// duel again (idempotently).
func (s *Service) scheduleDuel(ctx context.Context, d game.Duel) {
	if s.duelDeadlines == nil || game.DuelEnded(d.State) {
		return
	}
	if err := s.duelDeadlines.ScheduleDuel(context.WithoutCancel(ctx), d.ID, d.Deadline()); err != nil {
		s.log.ErrorContext(ctx, "scheduling a duel deadline failed", "duel_id", d.ID.String(), "err", err)
	}
}

// AcceptDuel is the challenged player's yes; the duel's submit deadline is
// scheduled.
func (s *Service) AcceptDuel(ctx context.Context, id uuid.UUID, player game.Player) (game.Duel, error) {
	d, err := s.store.AcceptDuel(ctx, id, player.ID, s.DeadlineClock(ctx), s.duelRules())
	if err != nil {
		return game.Duel{}, err
	}
	s.scheduleDuel(ctx, d)
	return d, nil
}

// DeclineDuel is the challenged player's no.
func (s *Service) DeclineDuel(ctx context.Context, id uuid.UUID, player game.Player) (game.Duel, error) {
	return s.store.DeclineDuel(ctx, id, player.ID, s.DeadlineClock(ctx))
}

// SubmitDuelDesign takes a side's design: checked against the level (not
// run: both designs run together once both are in), stored hidden from the
// other side, its run paid now from who's simulation budget. The second
// design in settles the duel at once, on the scheduler's background
// workers, if no other duel is being settled in a request from the same
// client address group (from); otherwise, or if the workers cannot take
// it, a job settles it within seconds, on whichever replica takes it,
// once, giving way to duels settled in requests. So a burst of duels from
// a few addresses settles one at a time per address in its requests, and
// another player's duel waits for at most one duel of each address.
func (s *Service) SubmitDuelDesign(ctx context.Context, id uuid.UUID, player game.Player, who, from string, d sim.Design, raw []byte) (game.Duel, error) {
	duel, err := s.store.Duel(ctx, id)
	if err != nil {
		return game.Duel{}, err
	}
	if duel.Side(player.ID) < 0 {
		return game.Duel{}, game.Errorf(game.EDUELNOTPLAYER, "only the players of this duel may submit to it")
	}
	_, l, err := s.Level(ctx, duel.Slug, duel.Version)
	if err != nil {
		return game.Duel{}, err
	}
	cost, err := l.RunCost(d)
	if err != nil {
		return game.Duel{}, DesignProblems(err)
	}
	if err := s.sched.Charge(who, "duel", cost); err != nil {
		return game.Duel{}, err
	}
	storeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), StoreTimeout)
	defer cancel()
	duel, err = s.store.SubmitDuelDesign(storeCtx, duel.ID, player.ID, raw, s.DeadlineClock(storeCtx))
	if err != nil {
		return game.Duel{}, err
	}
	if duel.Sides[0].Submitted() && duel.Sides[1].Submitted() {
		settled, err := s.settleInRequest(storeCtx, from, duel.ID)
		if err != nil {
			var later *scheduler.RetryError
			if !errors.As(err, &later) && game.ErrorCode(err) != scheduler.EBUSY {
				s.log.WarnContext(ctx, "settling a duel now failed; a job settles it", "duel_id", duel.ID.String(), "err", err)
			}
			s.scheduleSettle(storeCtx, duel.ID, s.DeadlineClock(storeCtx))
		} else {
			duel = settled
		}
	}
	return duel, nil
}
