package api

import (
	"testing"

	"backpressure/internal/challenges"
)

// A signed-in player's stars come from the server: the level list, the level
// and the player's page give the stars of their best passing score by the
// level's thresholds, and the campaign total over the built-in levels; an
// anonymous reader's list has none.
func TestPlayerStars(t *testing.T) {
	f := newEventFixture(t)
	id := f.player("starry")
	f.player("nobody")
	tutorial, err := challenges.CampaignLevel("first-request")
	if err != nil {
		t.Fatal(err)
	}
	campaign, _ := challenges.Campaign()
	maxStars := float64(challenges.MaxStars * len(campaign))

	status, out := f.do("POST", "/v1/challenges/first-request/submissions", f.tokens["starry"],
		map[string]any{"design": testDesign(3), "version": tutorial.Version})
	if status != 201 && status != 200 {
		t.Fatalf("submit: %d %v", status, out)
	}
	sub := out["submission"].(map[string]any)
	if sub["passed"] != true {
		t.Fatalf("the reference design fails the tutorial: %v", sub)
	}
	score := int64(sub["score"].(float64))
	want := float64(tutorial.StarsForScore(score))
	if want < 1 {
		t.Fatalf("a pass earns %v stars", want)
	}

	starsOf := func(v any) float64 {
		t.Helper()
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("player_stars = %v, want an object", v)
		}
		return m["stars"].(float64)
	}
	for _, tt := range []struct {
		who            string
		tutorial, each float64
		campaign       float64
	}{{"starry", want, 0, want}, {"nobody", 0, 0, 0}} {
		_, list := f.do("GET", "/v1/challenges", f.tokens[tt.who], nil)
		for _, c := range list["challenges"].([]any) {
			c := c.(map[string]any)
			wantStars := tt.each
			if c["slug"] == "first-request" {
				wantStars = tt.tutorial
			}
			if got := starsOf(c["player_stars"]); got != wantStars {
				t.Errorf("%s's list: %v stars on %s, want %v", tt.who, got, c["slug"], wantStars)
			}
		}
		total := list["campaign_stars"].(map[string]any)
		if total["earned"] != tt.campaign || total["max"] != maxStars {
			t.Errorf("%s's campaign stars %v, want %v of %v", tt.who, total, tt.campaign, maxStars)
		}
		_, level := f.do("GET", "/v1/challenges/first-request", f.tokens[tt.who], nil)
		if got := starsOf(level["player_stars"]); got != tt.tutorial {
			t.Errorf("%s's level page: %v stars, want %v", tt.who, got, tt.tutorial)
		}
	}

	_, list := f.do("GET", "/v1/challenges", "", nil)
	if _, ok := list["campaign_stars"]; ok {
		t.Errorf("an anonymous list has campaign stars: %v", list["campaign_stars"])
	}
	if _, ok := list["challenges"].([]any)[0].(map[string]any)["player_stars"]; ok {
		t.Error("an anonymous list has a player's stars")
	}

	_, profile := f.do("GET", "/v1/players/"+id, "", nil)
	stars := profile["stars"].(map[string]any)
	levels := stars["levels"].([]any)
	if len(levels) != 1 || levels[0].(map[string]any)["slug"] != "first-request" || starsOf(levels[0]) != want ||
		levels[0].(map[string]any)["score"] != float64(score) {
		t.Errorf("player page stars %v, want %v on first-request for score %d", levels, want, score)
	}
	if c := stars["campaign"].(map[string]any); c["earned"] != want || c["max"] != maxStars {
		t.Errorf("player page campaign %v, want %v of %v", c, want, maxStars)
	}
}
