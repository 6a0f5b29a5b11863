package rules

import (
	"context"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
)

// DuelReferee settles duels at their deadlines.
type DuelReferee struct{ s *Service }

// DuelReferee is the referee of the service's duels; its runs use the event
// workers of the service's scheduler, never the submissions'.
func (s *Service) DuelReferee() *DuelReferee { return &DuelReferee{s: s} }

// Settle settles one duel (see settleDuel): done reports that this call
// ended it; a *NotEndedError (ErrNotEnded) says how long until it is due.
func (f *DuelReferee) Settle(ctx context.Context, id uuid.UUID) (bool, error) {
	d, done, err := f.s.settleDuel(ctx, f.s.settleDeferred, id)
	if err != nil || done || game.DuelEnded(d.State) {
		return done, err
	}
	if wait := d.Deadline().Sub(f.s.DeadlineClock(ctx)); wait > 0 {
		return false, &NotEndedError{Wait: wait}
	}
	return false, nil
}

// Open lists the duels not yet ended, with their deadlines, so that a
// scheduler can (re)arrange their settling.
func (f *DuelReferee) Open(ctx context.Context) ([]game.Duel, error) { return f.s.store.OpenDuels(ctx) }

// SettleDue settles every open duel that is due now.
func (f *DuelReferee) SettleDue(ctx context.Context) error {
	duels, err := f.s.store.OpenDuels(ctx)
	if err != nil {
		return err
	}
	for _, d := range duels {
		if _, _, err := f.s.settleDuel(ctx, f.s.settleDeferred, d.ID); err != nil {
			f.s.log.WarnContext(ctx, "settling a duel failed; it is retried", "duel_id", d.ID.String(), "err", err)
		}
	}
	return nil
}

// Run settles due duels every interval until ctx is done (the in-memory
// store's scheduler; with PostgreSQL, river jobs call Settle).
func (f *DuelReferee) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := f.SettleDue(ctx); err != nil && ctx.Err() == nil {
			f.s.log.WarnContext(ctx, "looking for due duels failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
