package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Standings by pages: limits, cursors both ways, around=me, the problems
// naming each bad parameter; the stream's first message is such a page.
func TestEventStandingsPages(t *testing.T) {
	f := newEventFixture(t)
	start := f.clock.Now().Add(time.Minute)
	status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
		"level": "first-request", "title": "Pages", "starts_at": start, "ends_at": start.Add(time.Hour),
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	if ev["max_entrants"] != float64(100_000) {
		t.Errorf("max_entrants %v, want the default cap 100000", ev["max_entrants"])
	}
	id := ev["id"].(string)
	for i := range 5 {
		f.player(fmt.Sprintf("p%d", i))
	}
	f.player("idle")
	if status, out := f.do("POST", "/v1/events/"+id+"/join", f.tokens["idle"], nil); status != 200 {
		t.Fatalf("join: %d %v", status, out)
	}
	f.clock.set(start)
	for i := range 5 {
		if status, out := f.do("POST", "/v1/events/"+id+"/submissions", f.tokens[fmt.Sprintf("p%d", i)],
			map[string]any{"design": testDesign(1 + i%3)}); status != 201 {
			t.Fatalf("attempt %d: %d %v", i, status, out)
		}
	}
	base := "/v1/events/" + id + "/standings"
	var names []string
	path := base + "?limit=2"
	for range 10 {
		status, page := f.do("GET", path, "", nil)
		if status != 200 || page["total"] != float64(5) {
			t.Fatalf("page %s: %d %v", path, status, page)
		}
		for _, e := range page["entries"].([]any) {
			names = append(names, e.(map[string]any)["player_name"].(string))
		}
		if page["next"] == "" {
			break
		}
		path = base + "?limit=2&cursor=" + page["next"].(string)
	}
	if len(names) != 5 || strings.Contains(strings.Join(names, ","), "idle") {
		t.Errorf("paged standings %v, want the 5 who submitted and not the idle entrant", names)
	}
	status, mine := f.do("GET", base+"?limit=1&around=me", f.tokens["p3"], nil)
	if entries, _ := mine["entries"].([]any); status != 200 || len(entries) != 1 || entries[0].(map[string]any)["player_name"] != "p3" {
		t.Errorf("around=me: %d %v", status, mine)
	}
	for _, tc := range []struct {
		query, token string
		status       int
		field        string
	}{
		{"?limit=0", "", 400, "limit"},
		{"?limit=101", "", 400, "limit"},
		{"?limit=-1", "", 400, "limit"},
		{"?cursor=nope", "", 400, "cursor"},
		{"?around=you", "", 400, "around"},
		{"?around=me", "", 401, ""},
		{"?around=me", f.tokens["idle"], 404, ""},
	} {
		status, p := f.do("GET", base+tc.query, tc.token, nil)
		if status != tc.status || (tc.field != "" && !strings.Contains(jsonString(p["errors"]), `"`+tc.field+`"`)) {
			t.Errorf("%s: %d %v, want %d naming %q", tc.query, status, p, tc.status, tc.field)
		}
	}

	// The stream starts from a page.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/v1/events/"+id+"/stream?limit=2", nil)
	resp, err := f.http.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", resp, err)
	}
	events := make(chan event, 8)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		readEvents(resp.Body, events)
	}()
	first := next(t, events, true)
	var board struct {
		Total   int               `json:"total"`
		Entries []json.RawMessage `json:"entries"`
		Next    string            `json:"next"`
	}
	if err := json.Unmarshal([]byte(first.data), &board); err != nil || first.name != "standings" || board.Total != 5 || len(board.Entries) != 2 || board.Next == "" {
		t.Errorf("stream's first message %+v (%v), want a page of 2 of 5", first, err)
	}
	if status, _ := f.do("GET", "/v1/events/"+id+"/stream?cursor=x", "", nil); status != 400 {
		t.Errorf("a stream with a cursor: %d, want 400", status)
	}
}

// Events by pages and phases; a list never carries hidden chaos, even to
// admins.
func TestEventListPages(t *testing.T) {
	f := newEventFixture(t)
	now := f.clock.Now()
	for i := range 23 {
		start := now.Add(time.Duration(i+1) * time.Hour)
		if i == 0 {
			start = now.Add(-time.Minute) // live
		}
		if status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
			"level": "first-request", "title": fmt.Sprintf("E%d", i), "briefing": "secret-ish",
			"starts_at": start, "ends_at": start.Add(2 * time.Hour), "hidden_chaos": json.RawMessage(hiddenSpike),
			"resilience": map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
		}); status != 201 {
			t.Fatalf("create event: %d %v", status, ev)
		}
	}
	status, page := f.do("GET", "/v1/events", f.admin, nil)
	if status != 200 || len(page["events"].([]any)) != 20 || page["next"] == "" {
		t.Fatalf("first page: %d, %d events, next %v", status, len(page["events"].([]any)), page["next"])
	}
	for _, e := range page["events"].([]any) {
		e := e.(map[string]any)
		if e["hidden_chaos"] != nil || e["resilience"] != nil || e["briefing"] != "secret-ish" {
			t.Errorf("listed event carries hidden chaos, or not its briefing: %v", e)
		}
	}
	status, rest := f.do("GET", "/v1/events?cursor="+page["next"].(string), "", nil)
	if status != 200 || len(rest["events"].([]any)) != 3 || rest["next"] != "" {
		t.Errorf("second page: %d %v", status, rest)
	}
	status, live := f.do("GET", "/v1/events?phase=live", "", nil)
	if status != 200 || len(live["events"].([]any)) != 1 {
		t.Errorf("live: %d %v", status, live)
	}
	for _, tc := range []struct{ query, field string }{
		{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?phase=soon", "phase"}, {"?cursor=zz", "cursor"},
	} {
		status, p := f.do("GET", "/v1/events"+tc.query, "", nil)
		if status != 400 || !strings.Contains(jsonString(p["errors"]), `"`+tc.field+`"`) {
			t.Errorf("%s: %d %v, want 400 naming %s", tc.query, status, p, tc.field)
		}
	}
}

func TestEventRetryAfter(t *testing.T) {
	end := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	most := func(n int) int { return n - 1 }
	least := func(int) int { return 0 }
	for _, tc := range []struct {
		left        time.Duration
		asked       int
		least, most int
	}{
		{time.Hour, 1, 1, maxEventRetrySpread},
		{time.Hour, 60, 60, 60}, // a rate limit's reset: no sooner
		{30 * time.Second, 60, 29, 29},
		{5 * time.Second, 1, 1, 4},
		{2500 * time.Millisecond, 1, 1, 1},
		{time.Second, 1, 1, 1},
		{-time.Second, 5, 1, 1},
	} {
		now := end.Add(-tc.left)
		lo, hi := eventRetryAfter(now, end, tc.asked, least), eventRetryAfter(now, end, tc.asked, most)
		if lo != tc.least || hi != tc.most {
			t.Errorf("%v before the end, asked %d: Retry-After from %d to %d, want %d to %d", tc.left, tc.asked, lo, hi, tc.least, tc.most)
		}
	}
}

// A busy answer to an event attempt carries a Retry-After no later than the
// last second before the end; an acknowledged attempt carries none.
func TestEventBusyAnswerRetryAfter(t *testing.T) {
	f := newEventFixture(t)
	d := f.deps
	d.Config.RateLimitSim, d.Config.RateLimitWindow, d.Config.RefusalHold = 1, time.Hour, -1
	hs := httptest.NewServer(newServer(d).routes())
	t.Cleanup(hs.Close)
	f.http = hs
	start := f.clock.Now().Add(time.Minute)
	status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
		"level": "first-request", "title": "Busy", "starts_at": start, "ends_at": start.Add(time.Hour),
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	f.player("eve")
	f.clock.set(start)
	send := func() *http.Response {
		raw, _ := json.Marshal(map[string]any{"design": testDesign(2)})
		req, _ := http.NewRequest("POST", hs.URL+"/v1/events/"+ev["id"].(string)+"/submissions", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+f.tokens["eve"])
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := send(); resp.StatusCode != 201 || resp.Header.Get("Retry-After") != "" {
		t.Fatalf("first attempt: %d, Retry-After %q; want 201 without", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp := send()
	// The limit resets in an hour, the event ends sooner: the last second
	// before the end, by the server's clock.
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3599" {
		t.Errorf("second attempt: %d, Retry-After %q; want 429 with 3599", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
