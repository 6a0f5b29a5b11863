package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/live"
	"backpressure/internal/rules"
	"backpressure/internal/sim"
	"backpressure/internal/store/memstore"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

type eventFixture struct {
	t      *testing.T
	http   *httptest.Server
	clock  *clock
	admin  string
	deps   Deps
	tokens map[string]string
}

func newEventFixture(t *testing.T) *eventFixture {
	t.Helper()
	st := memstore.New()
	broker := live.NewBroker()
	st.Notify = broker.Publish
	ck := &clock{now: time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)}
	st.Now = ck.Now // the store's clock decides deadlines
	if err := rules.LoadCampaign(context.Background(), st, slog.New(slog.DiscardHandler), ck.Now()); err != nil {
		t.Fatal(err)
	}
	admin := strings.Repeat("a", 40)
	d := Deps{Store: st, Now: ck.Now, Config: Config{AdminToken: admin}, Live: broker}
	hs := httptest.NewServer(newServer(d).routes())
	t.Cleanup(func() {
		broker.Close()
		hs.Close()
	})
	return &eventFixture{t: t, http: hs, clock: ck, admin: admin, deps: d, tokens: map[string]string{}}
}

func (f *eventFixture) do(method, path, token string, body any) (int, map[string]any) {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, f.http.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func (f *eventFixture) player(name string) string {
	f.t.Helper()
	status, out := f.do("POST", "/v1/players", "", map[string]any{"name": name})
	if status != 201 {
		f.t.Fatalf("create player: %d %v", status, out)
	}
	f.tokens[name] = out["token"].(string)
	return out["player"].(map[string]any)["id"].(string)
}

func testDesign(replicas int) map[string]any {
	return map[string]any{
		"components": []any{
			map[string]any{"id": "app", "type": "app_service", "params": map[string]any{"replicas": replicas}},
			map[string]any{"id": "db", "type": "database"},
		},
		"edges": []any{map[string]any{"from": "app", "to": "db"}},
	}
}

const hiddenSpike = `[{"id":"surprise","kind":"traffic_spike","at_sec":30,"duration_sec":40,"params":{"multiplier":3}}]`

// An event from scheduling to frozen results: briefing only before the
// start, every rule a problem naming it, the final runs with the hidden
// chaos, published with the results, and re-runnable to the same bytes.
func TestEventLifecycle(t *testing.T) {
	f := newEventFixture(t)
	start := f.clock.Now().Add(time.Hour)
	end := start.Add(time.Hour)
	status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
		"level": "first-request", "title": "Spike night", "briefing": "Something will happen.",
		"starts_at": start, "ends_at": end, "attempt_limit": 2, "join_required": true, "max_entrants": 2,
		"hidden_chaos": json.RawMessage(hiddenSpike), "resilience": map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	id := ev["id"].(string)
	alice, bob := f.player("alice"), f.player("bob")
	f.player("carol")

	// Before the start: the briefing, not the level, not the chaos.
	_, public := f.do("GET", "/v1/events/"+id, f.tokens["alice"], nil)
	if public["phase"] != "upcoming" || public["level"] != nil || public["hidden_chaos"] != nil || public["briefing"] != "Something will happen." {
		t.Errorf("upcoming event as a player sees it: %v", public)
	}
	checks := []struct {
		name, who, path string
		body            any
		status          int
		code            string
	}{
		{"not started", "alice", "/submissions", map[string]any{"design": testDesign(2)}, 409, game.EEVENTNOTSTARTED},
	}
	check := func() {
		t.Helper()
		for _, r := range checks {
			status, p := f.do("POST", "/v1/events/"+id+r.path, f.tokens[r.who], r.body)
			if status != r.status || p["code"] != r.code || !strings.HasSuffix(p["type"].(string), r.code) {
				t.Errorf("%s: %d %v, want %d %s", r.name, status, p, r.status, r.code)
			}
		}
	}
	check()
	for _, who := range []string{"alice", "bob"} {
		if status, out := f.do("POST", "/v1/events/"+id+"/join", f.tokens[who], nil); status != 200 {
			t.Fatalf("%s joins: %d %v", who, status, out)
		}
	}
	checks = []struct {
		name, who, path string
		body            any
		status          int
		code            string
	}{{"full", "carol", "/join", nil, 409, game.EEVENTFULL}}
	check()

	f.clock.set(start.Add(time.Minute))
	_, live := f.do("GET", "/v1/events/"+id, f.tokens["alice"], nil)
	if live["phase"] != "live" || live["level"] != "first-request" || live["hidden_chaos"] != nil {
		t.Errorf("live event: %v", live)
	}
	for _, s := range []struct {
		who      string
		replicas int
	}{{"alice", 2}, {"alice", 3}, {"bob", 2}} {
		status, out := f.do("POST", "/v1/events/"+id+"/submissions", f.tokens[s.who], map[string]any{"design": testDesign(s.replicas)})
		if status != 201 {
			t.Fatalf("%s submits: %d %v", s.who, status, out)
		}
	}
	checks = []struct {
		name, who, path string
		body            any
		status          int
		code            string
	}{
		{"attempt limit", "alice", "/submissions", map[string]any{"design": testDesign(2)}, 409, game.EATTEMPTLIMIT},
		{"not joined", "carol", "/submissions", map[string]any{"design": testDesign(2)}, 403, game.ENOTJOINED},
	}
	check()
	_, standings := f.do("GET", "/v1/events/"+id+"/standings", "", nil)
	if standings["final"] != false || len(standings["entries"].([]any)) != 2 {
		t.Errorf("live standings: %v", standings)
	}

	fin := f.deps.rulesService().EventFinisher()
	if err := fin.FinishDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, e := f.do("GET", "/v1/events/"+id, "", nil); e["finished_at"] != nil {
		t.Fatal("finished before its end")
	}
	f.clock.set(end)
	checks = []struct {
		name, who, path string
		body            any
		status          int
		code            string
	}{{"ended", "bob", "/submissions", map[string]any{"design": testDesign(3)}, 409, game.EEVENTENDED}}
	check()
	for range 2 { // a second run finds it finished and changes nothing
		if err := fin.FinishDue(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	_, done := f.do("GET", "/v1/events/"+id, "", nil)
	if done["phase"] != "finished" || done["hidden_chaos"] == nil {
		t.Fatalf("finished event: %v", done)
	}
	_, final := f.do("GET", "/v1/events/"+id+"/standings", "", nil)
	entries := final["entries"].([]any)
	if final["final"] != true || len(entries) != 2 {
		t.Fatalf("final standings: %v", final)
	}

	// Anyone can re-run a final design against the level and the published
	// chaos and get the same bytes.
	for _, pid := range []string{alice, bob} {
		req, _ := http.NewRequest("GET", f.http.URL+"/v1/events/"+id+"/results/"+pid, nil)
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Resilience  json.RawMessage `json:"resilience"`
			HiddenChaos json.RawMessage `json:"hidden_chaos"`
			Design      json.RawMessage `json:"design"`
			Evaluation  json.RawMessage `json:"evaluation"`
			Score       int64           `json:"score"`
		}
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("result of %s: %d %v", pid, resp.StatusCode, err)
		}
		campaign, _ := challenges.Campaign()
		var chaos []sim.ChaosEvent
		var rule *challenges.Resilience
		if err := errors.Join(json.Unmarshal(res.HiddenChaos, &chaos), json.Unmarshal(res.Resilience, &rule)); err != nil {
			t.Fatal(err)
		}
		full, err := challenges.WithHidden(campaign[0], chaos, rule)
		if err != nil {
			t.Fatal(err)
		}
		d, _, err := rules.ParseDesign(res.Design)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := full.Evaluate(t.Context(), d)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(ev)
		if !bytes.Equal(again, res.Evaluation) {
			t.Errorf("re-running %s's final design gave other bytes", pid)
		}
		var public, hidden struct {
			Conditions json.RawMessage `json:"conditions"`
		}
		_ = json.Unmarshal(res.Evaluation, &hidden)
		ev2, _ := campaign[0].Evaluate(t.Context(), d)
		pub, _ := json.Marshal(ev2)
		_ = json.Unmarshal(pub, &public)
		if bytes.Equal(public.Conditions, hidden.Conditions) {
			t.Errorf("%s's final run is the same as on the public level: the hidden chaos did not apply", pid)
		}
	}
	if status, _ := f.do("GET", "/v1/events/"+id+"/results/"+uuid.NewString(), "", nil); status != 404 {
		t.Errorf("result of a stranger: %d, want 404", status)
	}
}

func TestCreateEventRefusals(t *testing.T) {
	f := newEventFixture(t)
	f.player("pat")
	start := f.clock.Now().Add(time.Hour)
	base := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"level": "first-request", "title": "T", "starts_at": start, "ends_at": start.Add(time.Hour)}
		mut(m)
		return m
	}
	for _, tt := range []struct {
		name   string
		token  string
		body   map[string]any
		status int
		field  string
	}{
		{"a player", f.tokens["pat"], base(func(map[string]any) {}), 403, ""},
		{"no such level", f.admin, base(func(m map[string]any) { m["level"] = "nope" }), 404, ""},
		{"ends before it starts", f.admin, base(func(m map[string]any) { m["ends_at"] = start.Add(-time.Minute) }), 422, "ends_at"},
		{"in the past", f.admin, base(func(m map[string]any) {
			m["starts_at"], m["ends_at"] = start.Add(-3*time.Hour), start.Add(-2*time.Hour)
		}), 422, "ends_at"},
		{"chaos not a list", f.admin, base(func(m map[string]any) { m["hidden_chaos"] = map[string]any{} }), 422, "hidden_chaos"},
		{"chaos on no component", f.admin, base(func(m map[string]any) {
			m["hidden_chaos"] = json.RawMessage(`[{"kind":"node_failure","at_sec":10,"target":"ghost"}]`)
		}), 422, ""},
		{"bad final", f.admin, base(func(m map[string]any) { m["final"] = "worst" }), 422, "final"},
	} {
		status, p := f.do("POST", "/v1/events", tt.token, tt.body)
		if status != tt.status {
			t.Errorf("%s: %d %v, want %d", tt.name, status, p, tt.status)
			continue
		}
		if tt.field != "" && !strings.Contains(jsonString(p["errors"]), `"field":"`+tt.field) {
			t.Errorf("%s: errors %v do not name %s", tt.name, p["errors"], tt.field)
		}
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

func (f *eventFixture) stream(t *testing.T, id string, header map[string]string) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/v1/events/"+id+"/stream", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", resp, err)
	}
	events := make(chan event, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		readEvents(resp.Body, events)
	}()
	return events
}

// The event stream: a snapshot, each attempt with the entrant's exact
// standing, the finish; resuming at the latest change sends nothing old.
func TestEventStream(t *testing.T) {
	f := newEventFixture(t)
	start := f.clock.Now().Add(time.Minute)
	status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
		"level": "first-request", "title": "Stream night", "starts_at": start, "ends_at": start.Add(time.Hour),
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	id := ev["id"].(string)
	f.player("ann")
	f.player("ben")
	events := f.stream(t, id, nil)
	if e := next(t, events, true); e.name != "standings" || e.id != "0" {
		t.Fatalf("first event %+v, want the standings at 0", e)
	}
	f.clock.set(start)
	for i, s := range []struct {
		who      string
		replicas int
		rank     int64
	}{{"ann", 1, 1}, {"ben", 2, 1}, {"ann", 3, 1}} {
		if status, out := f.do("POST", "/v1/events/"+id+"/submissions", f.tokens[s.who], map[string]any{"design": testDesign(s.replicas)}); status != 201 {
			t.Fatalf("%s submits: %d %v", s.who, status, out)
		}
		e := next(t, events, true)
		var c game.EventChange
		if err := json.Unmarshal([]byte(e.data), &c); err != nil || e.name != "change" || c.Seq != int64(i+1) ||
			c.Kind != game.EventAttempt || c.Standing == nil || c.Standing.PlayerName != s.who || c.Standing.Attempts < 1 {
			t.Fatalf("attempt %d: %+v (%v)", i, e, err)
		}
		_, board := f.do("GET", "/v1/events/"+id+"/standings", "", nil)
		for _, en := range board["entries"].([]any) {
			en := en.(map[string]any)
			if en["player_name"] == s.who && int64(en["rank"].(float64)) != c.Standing.Rank {
				t.Errorf("attempt %d: streamed rank %d, standings say %v", i, c.Standing.Rank, en["rank"])
			}
		}
	}
	resumed := f.stream(t, id, map[string]string{"Last-Event-ID": "3"})
	f.clock.set(start.Add(time.Hour))
	if err := f.deps.rulesService().EventFinisher().FinishDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, es := range []<-chan event{events, resumed} {
		e := next(t, es, true)
		var c game.EventChange
		if err := json.Unmarshal([]byte(e.data), &c); err != nil || e.id != "4" || c.Kind != game.EventFinal {
			t.Errorf("after the finish: %+v (%v), want change 4 of kind final", e, err)
		}
	}
	if status, _ := f.do("GET", "/v1/events/"+id+"/stream?last_event_id=x", "", nil); status != 400 {
		t.Errorf("malformed resume id: %d, want 400", status)
	}
}

// Whoever can read an event's hidden chaos before its end (its creator, every admin) may
// not enter it: joining and submitting are 403 event_conflict_of_interest.
func TestEventConflictOfInterest(t *testing.T) {
	f := newEventFixture(t)
	authorID, adminID := f.player("author"), f.player("boss")
	f.player("plain")
	for id, role := range map[string]string{authorID: "author", adminID: "admin"} {
		if status, out := f.do("PUT", "/v1/players/"+id+"/role", f.admin, map[string]any{"role": role}); status != 200 {
			t.Fatalf("set role %s: %d %v", role, status, out)
		}
	}
	l, _ := challenges.CampaignLevel("first-request")
	var doc map[string]any
	b, _ := json.Marshal(l)
	_ = json.Unmarshal(b, &doc)
	doc["slug"] = "authors-own"
	if status, out := f.do("POST", "/v1/challenges", f.tokens["author"], doc); status != 201 {
		t.Fatalf("upload: %d %v", status, out)
	}
	start := f.clock.Now().Add(-time.Minute)
	status, ev := f.do("POST", "/v1/events", f.tokens["author"], map[string]any{
		"level": "authors-own", "title": "Mine", "starts_at": f.clock.Now().Add(time.Second), "ends_at": start.Add(time.Hour),
		"hidden_chaos": json.RawMessage(hiddenSpike), "resilience": map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	})
	if status != 201 {
		t.Fatalf("create event: %d %v", status, ev)
	}
	id := ev["id"].(string)
	f.clock.set(f.clock.Now().Add(time.Minute))
	for _, who := range []string{"author", "boss"} {
		for _, req := range []struct {
			path string
			body any
		}{{"/v1/events/" + id + "/join", nil}, {"/v1/events/" + id + "/submissions", map[string]any{"design": testDesign(2)}}} {
			status, out := f.do("POST", req.path, f.tokens[who], req.body)
			if status != http.StatusForbidden || out["code"] != "event_conflict_of_interest" {
				t.Errorf("%s POST %s: %d %v, want 403 event_conflict_of_interest", who, req.path, status, out)
			}
		}
	}
	if status, out := f.do("POST", "/v1/events/"+id+"/join", f.tokens["plain"], nil); status != 200 {
		t.Errorf("a player joins: %d %v", status, out)
	}
}

// One clock decides every deadline: the store's (the database's with PostgreSQL). A
// replica whose own clock lags an hour behind still refuses an attempt after the event's
// end and a design after the duel's deadline, and one whose clock runs ahead still takes
// them before.
func TestDeadlinesFollowTheStoreClockNotTheReplicas(t *testing.T) {
	for _, skew := range []time.Duration{-time.Hour, time.Hour} {
		t.Run(skew.String(), func(t *testing.T) {
			f := newEventFixture(t)
			storeClock := f.clock
			// The replica's own clock moves with the store's, an hour off.
			d := f.deps
			d.Now = func() time.Time { return storeClock.Now().Add(skew) }
			hs := httptest.NewServer(newServer(d).routes())
			t.Cleanup(hs.Close)
			f.http = hs
			f.player("ann")
			bob := f.player("bob")

			end := storeClock.Now().Add(10 * time.Minute)
			status, ev := f.do("POST", "/v1/events", f.admin, map[string]any{
				"level": "first-request", "title": "Skew", "starts_at": storeClock.Now().Add(time.Second), "ends_at": end,
			})
			if status != 201 {
				t.Fatalf("create event: %d %v", status, ev)
			}
			eventID := ev["id"].(string)
			_, duel := f.do("POST", "/v1/duels", f.tokens["ann"], map[string]any{"level": duelLevel, "opponent": bob})
			duelID := duel["id"].(string)
			if status, out := f.do("POST", "/v1/duels/"+duelID+"/accept", f.tokens["bob"], nil); status != 200 {
				t.Fatalf("accept: %d %v", status, out)
			}

			// Just before the deadlines by the store's clock: taken, whatever the replica's says.
			storeClock.set(end.Add(-time.Second))
			if status, out := f.do("POST", "/v1/events/"+eventID+"/submissions", f.tokens["ann"], map[string]any{"design": testDesign(2)}); status != 201 {
				t.Errorf("attempt a second before the end: %d %v", status, out)
			}
			// Past them by the store's clock: refused, whatever the replica's says.
			storeClock.set(end.Add(time.Second))
			if status, out := f.do("POST", "/v1/events/"+eventID+"/submissions", f.tokens["ann"], map[string]any{"design": testDesign(2)}); out["code"] != "event_ended" {
				t.Errorf("attempt a second after the end: %d %v, want event_ended", status, out)
			}
			storeClock.set(storeClock.Now().Add(time.Hour))
			pass, _ := f.duelDesigns()
			if status, out := f.do("POST", "/v1/duels/"+duelID+"/design", f.tokens["ann"], map[string]any{"design": json.RawMessage(pass)}); out["code"] != "duel_deadline_passed" {
				t.Errorf("a design after submit_by: %d %v, want duel_deadline_passed", status, out)
			}
		})
	}
}
