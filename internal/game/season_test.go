package game

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseSeasonSchedule(t *testing.T) {
	tests := []struct {
		schedule, anchor string
		want             SeasonSchedule
		err              bool
	}{
		{"", "", SeasonSchedule{Kind: SeasonsMonthly, Anchor: DefaultSeasonAnchor}, false},
		{"monthly", "", SeasonSchedule{Kind: SeasonsMonthly, Anchor: DefaultSeasonAnchor}, false},
		{"weekly", "2026-01-07T09:00:00+01:00", SeasonSchedule{Kind: SeasonsWeekly, Anchor: time.Date(2026, 1, 7, 8, 0, 0, 0, time.UTC)}, false},
		{"336h", "", SeasonSchedule{Kind: SeasonsEvery, Every: 336 * time.Hour, Anchor: DefaultSeasonAnchor}, false},
		{"1m", "", SeasonSchedule{Kind: SeasonsEvery, Every: time.Minute, Anchor: DefaultSeasonAnchor}, false},
		{"59s", "", SeasonSchedule{}, true},
		{"1m30.5s", "", SeasonSchedule{}, true},
		{"9000h", "", SeasonSchedule{}, true},
		{"daily", "", SeasonSchedule{}, true},
		{"monthly", "yesterday", SeasonSchedule{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSeasonSchedule(tt.schedule, tt.anchor)
		if (err != nil) != tt.err {
			t.Errorf("ParseSeasonSchedule(%q, %q) error %v, want error %v", tt.schedule, tt.anchor, err, tt.err)
			continue
		}
		if !tt.err && !cmp.Equal(got, tt.want) {
			t.Errorf("ParseSeasonSchedule(%q, %q) = %+v, want %+v", tt.schedule, tt.anchor, got, tt.want)
		}
	}
}

func TestSeasonPlan(t *testing.T) {
	d := func(y int, m time.Month, day, h int) time.Time { return time.Date(y, m, day, h, 0, 0, 0, time.UTC) }
	monthly := SeasonSchedule{Kind: SeasonsMonthly, Anchor: DefaultSeasonAnchor}
	late := SeasonSchedule{Kind: SeasonsMonthly, Anchor: d(2024, 1, 31, 0)}
	weekly := SeasonSchedule{Kind: SeasonsWeekly, Anchor: DefaultSeasonAnchor}
	every := SeasonSchedule{Kind: SeasonsEvery, Every: 90 * time.Minute, Anchor: d(2026, 12, 1, 0)}
	dec := Season{ID: "2026-12", Name: "December 2026", StartsAt: d(2026, 12, 1, 0), EndsAt: d(2027, 1, 1, 0)}
	jan := Season{ID: "2027-01", Name: "January 2027", StartsAt: d(2027, 1, 1, 0), EndsAt: d(2027, 2, 1, 0)}
	tests := []struct {
		name string
		sc   SeasonSchedule
		last *Season
		now  time.Time
		want []Season
	}{
		{"first start", monthly, nil, d(2026, 12, 15, 13), []Season{dec, jan}},
		{"present and next stored", monthly, &jan, d(2026, 12, 15, 13), nil},
		{"present stored", monthly, &dec, d(2026, 12, 15, 13), []Season{jan}},
		{"at the boundary", monthly, &dec, d(2027, 1, 1, 0), []Season{jan, {ID: "2027-02", Name: "February 2027", StartsAt: d(2027, 2, 1, 0), EndsAt: d(2027, 3, 1, 0)}}},
		{"after a gap", monthly, &dec, d(2027, 5, 2, 0), []Season{
			{ID: "2027-05", Name: "May 2027", StartsAt: d(2027, 5, 1, 0), EndsAt: d(2027, 6, 1, 0)},
			{ID: "2027-06", Name: "June 2027", StartsAt: d(2027, 6, 1, 0), EndsAt: d(2027, 7, 1, 0)}}},
		{"before the anchor", every, nil, d(2026, 11, 1, 0), []Season{
			{ID: "20261201T000000Z", Name: "Season of 1 Dec 2026 00:00 UTC", StartsAt: d(2026, 12, 1, 0), EndsAt: d(2026, 12, 1, 0).Add(90 * time.Minute)},
			{ID: "20261201T013000Z", Name: "Season of 1 Dec 2026 01:30 UTC", StartsAt: d(2026, 12, 1, 0).Add(90 * time.Minute), EndsAt: d(2026, 12, 1, 3)}}},
		{"weekly", weekly, nil, d(2026, 12, 1, 14), []Season{
			{ID: "2026-W49", Name: "Week 49, 2026", StartsAt: d(2026, 11, 30, 0), EndsAt: d(2026, 12, 7, 0)},
			{ID: "2026-W50", Name: "Week 50, 2026", StartsAt: d(2026, 12, 7, 0), EndsAt: d(2026, 12, 14, 0)}}},
		{"anchored on the 31st", late, nil, d(2024, 3, 1, 0), nil},
		{"schedule changed mid-period", weekly, &dec, d(2026, 12, 31, 12), []Season{
			{ID: "2026-W53", Name: "Week 53, 2026", StartsAt: d(2027, 1, 1, 0), EndsAt: d(2027, 1, 4, 0)}}},
	}
	for _, tt := range tests {
		if tt.name == "anchored on the 31st" {
			// 2024-01-31 + 1 month is 2 March (Go normalises 31 Feb):
			// the periods still tile time without gaps.
			got := tt.sc.Plan(tt.last, tt.now)
			if len(got) != 2 || !got[0].EndsAt.Equal(got[1].StartsAt) || !got[0].Contains(tt.now) {
				t.Errorf("%s: %+v", tt.name, got)
			}
			continue
		}
		got := tt.sc.Plan(tt.last, tt.now)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Plan (-want +got):\n%s", tt.name, diff)
		}
		if again := tt.sc.Plan(tt.last, tt.now); !cmp.Equal(got, again) {
			t.Errorf("%s: Plan is not deterministic", tt.name)
		}
	}
}
