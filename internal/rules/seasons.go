package rules

import (
	"context"
	"log/slog"
	"time"

	"backpressure/internal/game"
)

// SeasonStore stores the seasons of the operator's schedule (see
// game/season.go for the rules).
type SeasonStore interface {
	// EnsureSeasons stores the seasons sc plans (the one containing the
	// store's clock and the next) and returns those it stored.
	EnsureSeasons(ctx context.Context, sc game.SeasonSchedule) ([]game.Season, error)
}

// SeasonKeeper keeps the seasons of the operator's schedule stored ahead
// of time: the current one and the next, so that every replica (and the
// database, which decides which season a submission counts for) finds
// them. Every replica runs one; storing a season is idempotent.
type SeasonKeeper struct {
	store    SeasonStore
	schedule game.SeasonSchedule
	log      *slog.Logger
}

// NewSeasonKeeper returns the keeper of sc's seasons in store.
func NewSeasonKeeper(store SeasonStore, sc game.SeasonSchedule, log *slog.Logger) *SeasonKeeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &SeasonKeeper{store: store, schedule: sc, log: log}
}

// Ensure stores the seasons due now.
func (k *SeasonKeeper) Ensure(ctx context.Context) error {
	made, err := k.store.EnsureSeasons(ctx, k.schedule)
	for _, s := range made {
		k.log.InfoContext(ctx, "season stored", "season_id", s.ID, "starts_at", s.StartsAt, "ends_at", s.EndsAt)
	}
	return err
}

// Interval is how often Run checks: a minute, or a quarter of a season if
// seasons are shorter, so the next season is always stored before it
// starts.
func (k *SeasonKeeper) Interval() time.Duration {
	if k.schedule.Kind == game.SeasonsEvery {
		return min(time.Minute, k.schedule.Every/4)
	}
	return time.Minute
}

// Run calls Ensure every Interval until ctx is done.
func (k *SeasonKeeper) Run(ctx context.Context) {
	t := time.NewTicker(k.Interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := k.Ensure(ctx); err != nil && ctx.Err() == nil {
			k.log.WarnContext(ctx, "storing the next season failed; it is retried", "err", err)
		}
	}
}
