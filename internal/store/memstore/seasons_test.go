package memstore_test

import (
	"testing"
	"time"

	"backpressure/internal/store/memstore"
	"backpressure/internal/store/storetest"
)

// seasonStore lets the suite set the memory store's clock, which decides
// seasons.
type seasonStore struct{ *memstore.Store }

func (s seasonStore) SetSeasonClock(t time.Time) { s.Now = func() time.Time { return t } }

func TestSeasonsContract(t *testing.T) {
	storetest.RunSeasons(t, func(t *testing.T) storetest.SeasonStore { return seasonStore{memstore.New()} })
}
