package rules

import (
	"context"
	"time"

	"backpressure/internal/game"
)

// eventLister pages through events (see pgstore.Store.EventList).
type eventLister interface {
	EventList(ctx context.Context, q game.EventListQuery) (game.EventList, error)
}

// eventsIn returns the events in the given phases at now, page by page:
// what the finisher looks for (the finishing ones, each check; the
// unfinished ones, at start-up) without ever loading a finished event or
// anyone's hidden chaos.
func eventsIn(ctx context.Context, store eventLister, now time.Time, phases ...string) ([]game.Event, error) {
	var out []game.Event
	for _, phase := range phases {
		q := game.EventListQuery{Phase: phase, Limit: game.MaxEventListLimit, Now: now}
		for {
			page, err := store.EventList(ctx, q)
			if err != nil {
				return nil, err
			}
			out = append(out, page.Events...)
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	return out, nil
}
