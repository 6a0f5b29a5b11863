package game_test

import (
	"encoding/base64"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// Live standings order by key is game.CompareStandings' order, for passing
// and failed-only entrants, ties on score and on time included.
func TestStandingKeyOrderIsCompareStandings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var standings []game.EventStanding
	for range 500 {
		st := game.EventStanding{PlayerID: uuid.New()}
		if rng.IntN(4) > 0 {
			at := t0.Add(time.Duration(rng.IntN(5)) * time.Second)
			st.Passed, st.Score, st.AchievedAt = true, int64(rng.IntN(4)), &at
		}
		standings = append(standings, st)
	}
	byCompare := slices.Clone(standings)
	slices.SortFunc(byCompare, game.CompareStandings)
	byKey := slices.Clone(standings)
	slices.SortFunc(byKey, func(a, b game.EventStanding) int { return a.Key().Compare(b.Key()) })
	if diff := cmp.Diff(byCompare, byKey); diff != "" {
		t.Errorf("key order differs from CompareStandings (-compare +key):\n%s", diff)
	}
}

func TestEventCursorRoundTrip(t *testing.T) {
	for _, c := range []game.EventCursor{
		{Key: game.BoardKey{Score: 7, AchievedAt: time.UnixMicro(123456789).UTC(), PlayerID: uuid.New()}},
		{Before: true, Key: game.StandingKey(uuid.New(), false, 0, time.Time{})},
		{Final: true, Rank: 1},
		{Final: true, Before: true, Rank: 1 << 40},
	} {
		got, err := game.ParseEventCursor(c.String())
		if err != nil {
			t.Fatalf("ParseEventCursor(%+v): %v", c, err)
		}
		if diff := cmp.Diff(c, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
	zeroRank := base64.RawURLEncoding.EncodeToString([]byte{2, 'n', 0, 0, 0, 0, 0, 0, 0, 0})
	for _, bad := range []string{"", "x", zeroRank, base64.RawURLEncoding.EncodeToString(make([]byte, 10))} {
		if _, err := game.ParseEventCursor(bad); game.ErrorCode(err) != game.EINVALID {
			t.Errorf("ParseEventCursor(%q) = %v, want EINVALID", bad, err)
		}
	}
}

func TestEventQueriesNormalize(t *testing.T) {
	id := uuid.New()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	final := game.EventCursor{Final: true, Rank: 3}.String()
	list := game.EventListCursor{StartsAt: now, ID: id}.String()
	tests := []struct {
		name   string
		err    error
		fields []string
	}{
		{"standings defaults", normalizeStandings(game.EventStandingsQuery{}, game.DefaultStandingsLimit), nil},
		{"standings cursor", normalizeStandings(game.EventStandingsQuery{Limit: 100, Cursor: final}, 100), nil},
		{"standings all wrong", normalizeStandings(game.EventStandingsQuery{Limit: 101, Cursor: final, AroundPlayer: &id}, 0),
			[]string{"limit", "cursor"}},
		{"standings bad cursor", normalizeStandings(game.EventStandingsQuery{Limit: -1, Cursor: "zz"}, 0), []string{"limit", "cursor"}},
		{"list defaults", normalizeList(game.EventListQuery{Now: now}, game.DefaultEventListLimit), nil},
		{"list cursor and phase", normalizeList(game.EventListQuery{Now: now, Limit: 1, Phase: game.PhaseLive, Cursor: list}, 1), nil},
		{"list all wrong", normalizeList(game.EventListQuery{Limit: 101, Phase: "soon", Cursor: final}, 0),
			[]string{"limit", "phase", "cursor", "now"}},
	}
	for _, tt := range tests {
		var got []string
		for _, f := range game.ErrorFields(tt.err) {
			got = append(got, f.Field)
		}
		if diff := cmp.Diff(tt.fields, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", tt.name, diff)
		}
	}
}

// normalizeStandings returns q's error, or one naming "defaults" if the
// limit it fills in is not want.
func normalizeStandings(q game.EventStandingsQuery, want int) error {
	got, _, err := q.Normalize()
	if err == nil && got.Limit != want {
		return game.Invalid("", []game.FieldError{{Field: "defaults"}})
	}
	return err
}

func normalizeList(q game.EventListQuery, want int) error {
	got, _, err := q.Normalize()
	if err == nil && got.Limit != want {
		return game.Invalid("", []game.FieldError{{Field: "defaults"}})
	}
	return err
}

func FuzzParseEventCursor(f *testing.F) {
	f.Add(game.EventCursor{Key: game.BoardKey{Score: 1, AchievedAt: time.Unix(1, 0), PlayerID: uuid.New()}}.String())
	f.Add(game.EventCursor{Final: true, Before: true, Rank: 9}.String())
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := game.ParseEventCursor(s)
		if err != nil {
			return
		}
		again, err := game.ParseEventCursor(c.String())
		if err != nil || again != c {
			t.Errorf("re-encoding %q: %+v, %v; want %+v", s, again, err, c)
		}
	})
}

func FuzzEventListCursor(f *testing.F) {
	f.Add(game.EventListCursor{StartsAt: time.Unix(1, 0), ID: uuid.New()}.String())
	f.Add("")
	now := time.Unix(1e9, 0)
	f.Fuzz(func(t *testing.T, s string) {
		_, c, err := game.EventListQuery{Now: now, Cursor: s}.Normalize()
		if err != nil || c == nil {
			return
		}
		_, again, err := game.EventListQuery{Now: now, Cursor: c.String()}.Normalize()
		if err != nil || *again != *c {
			t.Errorf("re-encoding %q: %+v, %v; want %+v", s, again, err, c)
		}
	})
}
