package scheduler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"backpressure/internal/game"
)

// At most one hint and DryRunsPerPlayer dry runs of one player are in flight at once.
func TestPerPlayerInFlight(t *testing.T) {
	unit := func() (int64, error) { return 1, nil }
	sc := New(Config{Workers: 8, Queue: 4, DryRunsPerPlayer: 2}, time.Now, NewMetrics())
	for _, tt := range []struct {
		kind string
		n    int
	}{{KindHint, 1}, {KindSimulation, 2}} {
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range tt.n {
			wg.Go(func() {
				_ = sc.Run(t.Context(), "ada", tt.kind, unit, func(context.Context) error { <-release; return nil })
			})
		}
		waitFor(t, func() bool { sc.mu.Lock(); defer sc.mu.Unlock(); return sc.flying[flightKey{"ada", tt.kind}] == tt.n })
		err := sc.Run(t.Context(), "ada", tt.kind, unit, func(context.Context) error { t.Error("ran past the limit"); return nil })
		var retry *RetryError
		if game.ErrorCode(err) != game.ERATELIMIT || !errors.As(err, &retry) || retry.After <= 0 {
			t.Errorf("%s number %d: %v, want 429 with Retry-After", tt.kind, tt.n+1, err)
		}
		if err := sc.Run(t.Context(), "bob", tt.kind, unit, func(context.Context) error { return nil }); err != nil {
			t.Errorf("%s of another player: %v", tt.kind, err)
		}
		close(release)
		wg.Wait()
	}
}
