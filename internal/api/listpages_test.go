package api

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/store/memstore"
)

// storeLevel stores a level that is not built in under slug (its document
// is the first campaign level's: the list reads only the summary).
func (f *eventFixture) storeLevel(slug string) {
	f.t.Helper()
	campaign, err := challenges.Campaign()
	if err != nil {
		f.t.Fatal(err)
	}
	rec, err := rules.LevelRecord(campaign[0], false, f.clock.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	rec.Slug, rec.Title = slug, "Uploaded "+slug
	if _, _, err := f.deps.Store.(*memstore.Store).PutLevel(context.Background(), rec); err != nil {
		f.t.Fatal(err)
	}
}

// walk reads a list route page by page (?limit=limit, then each page's
// next) and returns the items of key, calling between(i) after page i.
func (f *eventFixture) walk(path, key, token string, limit int, between func(page int)) ([]map[string]any, []map[string]any) {
	f.t.Helper()
	var items, pages []map[string]any
	q := url.Values{"limit": {fmt.Sprint(limit)}}
	for i := 0; ; i++ {
		status, page := f.do("GET", path+"?"+q.Encode(), token, nil)
		if status != 200 {
			f.t.Fatalf("GET %s?%s: %d %v", path, q.Encode(), status, page)
		}
		list, _ := page[key].([]any)
		next, _ := page["next"].(string)
		if len(list) > limit || (next != "" && len(list) != limit) {
			f.t.Errorf("GET %s page %d: %d items, next %q, limit %d", path, i, len(list), next, limit)
		}
		for _, it := range list {
			items = append(items, it.(map[string]any))
		}
		pages = append(pages, page)
		if next == "" || i > 1000 {
			return items, pages
		}
		if between != nil {
			between(i)
		}
		q.Set("cursor", next)
	}
}

// GET /v1/challenges by pages: the campaign first in campaign order, then
// the others by slug, each level once, also when levels are uploaded
// between two pages; the campaign's stars on every page.
func TestChallengeListPages(t *testing.T) {
	f := newEventFixture(t)
	f.player("walker")
	campaign, err := challenges.Campaign()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range campaign {
		want = append(want, l.Slug)
	}
	uploaded := []string{"zeta", "alpha-2", "alpha0", "mid", "beta"}
	for _, slug := range uploaded {
		f.storeLevel(slug)
	}
	want = append(want, "alpha-2", "alpha0", "beta", "mid", "zeta")
	slugs := func(items []map[string]any) []string {
		var out []string
		for _, it := range items {
			out = append(out, it["slug"].(string))
		}
		return out
	}
	for _, limit := range []int{1, 7, 20, len(campaign), len(campaign) + 1, 100} {
		items, pages := f.walk("/v1/challenges", "challenges", f.tokens["walker"], limit, nil)
		if diff := cmp.Diff(want, slugs(items)); diff != "" {
			t.Errorf("limit %d (-want +got):\n%s", limit, diff)
		}
		for i, p := range pages {
			if _, ok := p["campaign_stars"]; !ok {
				t.Errorf("limit %d: page %d has no campaign_stars", limit, i)
			}
		}
	}
	// Uploads between pages: before the cursor they are not listed, after
	// it they are; nothing listed moves.
	items, _ := f.walk("/v1/challenges", "challenges", "", 16, func(page int) {
		if page == 1 { // the cursor is now past "alpha0"
			f.storeLevel("aardvark")
			f.storeLevel("omega")
		}
	})
	wantAfter := slices.Insert(slices.Clone(want), len(want)-1, "omega")
	if diff := cmp.Diff(wantAfter, slugs(items)); diff != "" {
		t.Errorf("uploads between pages (-want +got):\n%s", diff)
	}
	if _, first := f.do("GET", "/v1/challenges", "", nil); len(first["challenges"].([]any)) != 20 {
		t.Errorf("default page: %d levels, want 20", len(first["challenges"].([]any)))
	}
}

var weeklySeasons = game.SeasonSchedule{Kind: game.SeasonsWeekly, Anchor: game.DefaultSeasonAnchor}

// GET /v1/seasons and GET /v1/duels by pages: every item once, in order.
func TestSeasonAndDuelListPages(t *testing.T) {
	f := newEventFixture(t)
	st := f.deps.Store.(*memstore.Store)
	for w := range 5 {
		f.clock.set(f.clock.Now().AddDate(0, 0, 7))
		if _, err := st.EnsureSeasons(context.Background(), weeklySeasons); err != nil {
			t.Fatalf("week %d: %v", w, err)
		}
	}
	all, _ := f.walk("/v1/seasons", "seasons", "", 100, nil)
	paged, _ := f.walk("/v1/seasons", "seasons", "", 2, nil)
	if len(all) < 6 || !cmp.Equal(all, paged) {
		t.Errorf("seasons in pages of 2 differ from one page:\n%v\n%v", paged, all)
	}
	for i := 1; i < len(all); i++ {
		if all[i]["starts_at"].(string) >= all[i-1]["starts_at"].(string) {
			t.Errorf("season %d starts no earlier than season %d", i, i-1)
		}
	}

	f.player("me")
	var ids []string
	for i := range 7 {
		f.player(fmt.Sprintf("rival%d", i))
		status, d := f.do("GET", "/v1/players/me", f.tokens[fmt.Sprintf("rival%d", i)], nil)
		if status != 200 {
			t.Fatalf("me: %d %v", status, d)
		}
		status, d = f.do("POST", "/v1/duels", f.tokens["me"], map[string]any{"level": "first-request", "opponent": d["id"]})
		if status != 201 {
			t.Fatalf("duel %d: %d %v", i, status, d)
		}
		ids = append([]string{d["id"].(string)}, ids...)
		f.clock.set(f.clock.Now().Add(time.Second))
	}
	duels, _ := f.walk("/v1/duels", "duels", f.tokens["me"], 3, nil)
	var got []string
	for _, d := range duels {
		got = append(got, d["id"].(string))
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("duels in pages of 3, newest first (-want +got):\n%s", diff)
	}
}
