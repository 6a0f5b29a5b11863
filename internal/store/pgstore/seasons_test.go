package pgstore_test

import (
	"testing"
	"time"

	"backpressure/internal/store/pgstore"
	"backpressure/internal/store/storetest"
)

// seasonStore sets the database's season clock (bp_season_now) of the
// test's own database.
type seasonStore struct{ *pgstore.Store }

func (s seasonStore) SetSeasonClock(t time.Time) { pgstore.SetSeasonClock(s.Store, t) }

func TestSeasonsContract(t *testing.T) {
	t.Parallel()
	storetest.RunSeasons(t, func(t *testing.T) storetest.SeasonStore { return seasonStore{open(t, 0)} })
}

// TestSeasonsContractTinyBuckets runs it with buckets of at most 2
// entries, so the trigger splits and deletes buckets on most writes; the
// buckets' invariants are checked at the end of each test.
func TestSeasonsContractTinyBuckets(t *testing.T) {
	t.Parallel()
	storetest.RunSeasons(t, func(t *testing.T) storetest.SeasonStore { return seasonStore{open(t, 2)} })
}
