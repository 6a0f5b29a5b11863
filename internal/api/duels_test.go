package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
	"backpressure/internal/sim"
	"backpressure/internal/store/memstore"
)

// duelLevel has chaos of its own, so its duels get a surprise.
const duelLevel = "lose-a-node"

func (f *eventFixture) duelDesigns() (pass, fail json.RawMessage) {
	f.t.Helper()
	pass, err := os.ReadFile("../challenges/testdata/solutions/" + duelLevel + ".json")
	if err != nil {
		f.t.Fatal(err)
	}
	l, err := challenges.CampaignLevel(duelLevel)
	if err != nil {
		f.t.Fatal(err)
	}
	fail, err = json.Marshal(l.StartingDesign)
	if err != nil {
		f.t.Fatal(err)
	}
	return pass, fail
}

// rawDuel is a duel as the wire carries it, its runs byte for byte.
type rawDuel struct {
	ID            string          `json:"id"`
	Level         string          `json:"level"`
	Version       int             `json:"version"`
	State         string          `json:"state"`
	SurpriseChaos json.RawMessage `json:"surprise_chaos"`
	Result        *struct {
		Winner *string `json:"winner"`
		Reason string  `json:"reason"`
		Sides  []struct {
			PlayerID   string          `json:"player_id"`
			Passed     bool            `json:"passed"`
			Design     json.RawMessage `json:"design"`
			Evaluation json.RawMessage `json:"evaluation"`
			Ticks      json.RawMessage `json:"ticks"`
			Every      int             `json:"every"`
			TotalTicks int             `json:"total_ticks"`
		} `json:"sides"`
		Ratings []game.RatingChange `json:"ratings"`
	} `json:"result"`
}

func (f *eventFixture) raw(path, token string) (int, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest("GET", f.http.URL+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func wantProblem(t *testing.T, what string, status int, body map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || body["code"] != wantCode {
		t.Errorf("%s: %d %v, want %d %s", what, status, body["code"], wantStatus, wantCode)
	}
}

// A challenge from start to result: every rule a problem naming it, the
// designs hidden until the end, the result with both runs and the
// revealed surprise, ratings moved once.
func TestDuelChallengeLifecycle(t *testing.T) {
	f := newEventFixture(t)
	ada, bob := f.player("ada"), f.player("bob")
	f.player("cy")
	pass, fail := f.duelDesigns()

	status, body := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": ada})
	wantProblem(t, "challenge yourself", status, body, 422, game.EDUELSELF)
	status, body = f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": "0193c0de-0000-7000-8000-000000000000"})
	wantProblem(t, "challenge nobody", status, body, 422, game.EINVALID)
	status, body = f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": "no-such-level", "opponent": bob})
	wantProblem(t, "no such level", status, body, 422, game.EINVALID)
	status, body = f.do("POST", "/v1/duels", "", map[string]any{"level": duelLevel, "opponent": bob})
	wantProblem(t, "anonymous", status, body, 401, game.EUNAUTHORIZED)

	status, duel := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": bob})
	if status != 201 || duel["state"] != game.DuelChallenged || duel["result"] != nil || duel["surprise_chaos"] != nil {
		t.Fatalf("challenge: %d %v", status, duel)
	}
	id := duel["id"].(string)
	path := "/v1/duels/" + id
	status, body = f.do("POST", "/v1/duels", f.tokens["bob"], map[string]any{"level": duelLevel, "opponent": ada})
	wantProblem(t, "a second duel for the pair", status, body, 409, game.EDUELPAIRACTIVE)
	status, body = f.do("GET", path, f.tokens["cy"], nil)
	wantProblem(t, "a spectator reads a pending duel", status, body, 403, game.EDUELPRIVATE)
	status, body = f.do("GET", path, "", nil)
	wantProblem(t, "anonymous reads a pending duel", status, body, 403, game.EDUELPRIVATE)
	status, body = f.do("POST", path+"/accept", f.tokens["ada"], nil)
	wantProblem(t, "the challenger accepts", status, body, 403, game.EDUELNOTPLAYER)
	status, body = f.do("POST", path+"/design", f.tokens["ada"], map[string]any{"design": json.RawMessage(pass)})
	wantProblem(t, "submit before the accept", status, body, 409, game.EDUELSTATE)

	status, duel = f.do("POST", path+"/accept", f.tokens["bob"], nil)
	if status != 200 || duel["state"] != game.DuelActive || duel["submit_by"] == nil {
		t.Fatalf("accept: %d %v", status, duel)
	}
	status, body = f.do("POST", path+"/accept", f.tokens["bob"], nil)
	wantProblem(t, "accept twice", status, body, 409, game.EDUELSTATE)
	status, body = f.do("POST", path+"/design", f.tokens["cy"], map[string]any{"design": json.RawMessage(pass)})
	wantProblem(t, "a spectator submits", status, body, 403, game.EDUELNOTPLAYER)
	status, body = f.do("POST", path+"/design", f.tokens["ada"], map[string]any{"design": map[string]any{"components": "no"}})
	wantProblem(t, "a malformed design", status, body, 422, game.EINVALID)

	status, duel = f.do("POST", path+"/design", f.tokens["ada"], map[string]any{"design": json.RawMessage(pass)})
	if status != 200 || duel["state"] != game.DuelActive {
		t.Fatalf("first design: %d %v", status, duel)
	}
	status, raw := f.raw(path, f.tokens["bob"])
	if status != 200 || bytes.Contains(raw, []byte(`"components"`)) || bytes.Contains(raw, []byte(`"surprise"`)) {
		t.Errorf("the other side sees the design or the surprise before the end: %s", raw)
	}
	players := duel["players"].([]any)
	if players[0].(map[string]any)["submitted"] != true || players[1].(map[string]any)["submitted"] != false {
		t.Errorf("submitted flags: %v", players)
	}
	status, body = f.do("POST", path+"/design", f.tokens["ada"], map[string]any{"design": json.RawMessage(pass)})
	wantProblem(t, "submit twice", status, body, 409, game.EDUELSUBMITTED)

	// The second design decides it in its request.
	status, duel = f.do("POST", path+"/design", f.tokens["bob"], map[string]any{"design": json.RawMessage(fail)})
	if status != 200 || duel["state"] != game.DuelFinished {
		t.Fatalf("second design: %d %v", status, duel)
	}
	status, raw = f.raw(path, "") // public once finished
	if status != 200 {
		t.Fatalf("a finished duel, anonymously: %d %s", status, raw)
	}
	if out := os.Getenv("DUEL_EXAMPLE"); out != "" {
		// Regenerates the example in the duel API contract.
		var pretty bytes.Buffer
		_ = json.Indent(&pretty, raw, "", "  ")
		_ = os.WriteFile(out, pretty.Bytes(), 0o644)
	}
	var got rawDuel
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	r := got.Result
	if r == nil || r.Winner == nil || *r.Winner != ada || r.Reason != game.ReasonPassed || len(r.Sides) != 2 ||
		!r.Sides[0].Passed || r.Sides[1].Passed {
		t.Fatalf("result: %s", raw)
	}
	var surprise []sim.ChaosEvent
	if err := json.Unmarshal(got.SurpriseChaos, &surprise); err != nil || len(surprise) != 1 || surprise[0].ID != challenges.SurpriseID {
		t.Fatalf("surprise_chaos = %s (%v), want the surprise revealed", got.SurpriseChaos, err)
	}
	checkThirdPartyRerun(t, f, got)

	// Ratings: two new players move neither rating (game.RateDuel); the duel counts on
	// the profile, and the board shows neither.
	if rs := r.Ratings; len(rs) != 2 || rs[0].Unrated != game.UnratedProvisionalOpponent || rs[0].After != rs[0].Before {
		t.Errorf("rating changes: %+v", rs)
	}
	_, board := f.do("GET", "/v1/ratings", "", nil)
	if board["total"].(float64) != 0 || len(board["entries"].([]any)) != 0 {
		t.Errorf("ratings board: %v", board)
	}
	_, profile := f.do("GET", "/v1/players/"+bob, "", nil)
	if rt := profile["rating"].(map[string]any); rt["duels"].(float64) != 1 || rt["losses"].(float64) != 1 || rt["rating"].(float64) != 1500 {
		t.Errorf("bob's profile rating: %v", profile["rating"])
	}
	_, list := f.do("GET", "/v1/duels", f.tokens["ada"], nil)
	if ds := list["duels"].([]any); len(ds) != 1 || ds[0].(map[string]any)["id"] != id {
		t.Errorf("ada's duels: %v", list)
	} else {
		// The list says who won and the scores, never the runs themselves.
		res := ds[0].(map[string]any)["result"].(map[string]any)
		for _, side := range res["sides"].([]any) {
			sd := side.(map[string]any)
			for _, heavy := range []string{"design", "summary", "evaluation", "components", "ticks"} {
				if sd[heavy] != nil {
					t.Errorf("ada's duels list: a side's %s is %.80v, want null", heavy, sd[heavy])
				}
			}
			if _, ok := sd["passed"].(bool); !ok {
				t.Errorf("ada's duels list: a side without its outcome: %v", sd)
			}
		}
		if res["winner"] == nil {
			t.Errorf("ada's duels list: no winner: %v", res)
		}
	}
	// The pair may duel again on the level now.
	if status, body := f.do("POST", "/v1/duels", f.tokens["bob"], map[string]any{"level": duelLevel, "opponent": ada}); status != 201 {
		t.Errorf("a rematch: %d %v", status, body)
	}
}

// checkThirdPartyRerun runs both stored designs against the level as
// published plus the revealed surprise, as anyone can, and checks that
// the verdicts and timelines are the stored ones, byte for byte.
func checkThirdPartyRerun(t *testing.T, f *eventFixture, d rawDuel) {
	t.Helper()
	_, level := f.raw("/v1/challenges/"+d.Level+"?version="+itoa(d.Version), "")
	var published struct {
		Definition json.RawMessage `json:"definition"`
	}
	if err := json.Unmarshal(level, &published); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(published.Definition, &doc); err != nil {
		t.Fatal(err)
	}
	var surprise []any
	_ = json.Unmarshal(d.SurpriseChaos, &surprise)
	run := doc["run"].(map[string]any)
	chaos, _ := run["chaos"].([]any)
	run["chaos"] = append(chaos, surprise...)
	def, _ := json.Marshal(doc)
	full, err := challenges.Parse(def)
	if err != nil {
		t.Fatalf("the level with the revealed surprise: %v", err)
	}
	for i, side := range d.Result.Sides {
		design, err := challenges.ParseDesign(side.Design)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := full.Evaluate(context.Background(), design)
		if err != nil {
			t.Fatal(err)
		}
		verdict, _ := json.Marshal(ev)
		if !jsonEqualBytes(verdict, side.Evaluation) {
			t.Errorf("side %d: the re-run's verdict differs from the stored one", i)
		}
		// The stored timeline is one tick of every `every`, and the last.
		var kept []sim.Tick
		for j := side.Every - 1; j < len(ev.Result.Ticks); j += side.Every {
			kept = append(kept, ev.Result.Ticks[j])
		}
		if last := ev.Result.Ticks[len(ev.Result.Ticks)-1]; kept[len(kept)-1].T != last.T {
			kept = append(kept, last)
		}
		ticks, _ := json.Marshal(kept)
		if side.TotalTicks != len(ev.Result.Ticks) || !jsonEqualBytes(ticks, side.Ticks) {
			t.Errorf("side %d: the re-run's ticks differ from the stored ones (%d ticks, stored says %d)", i, len(ev.Result.Ticks), side.TotalTicks)
		}
	}
}

func jsonEqualBytes(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// newDuelFixture is newEventFixture with cfg (the admin token added).
func newDuelFixture(t *testing.T, cfg Config) *eventFixture {
	t.Helper()
	f := newEventFixture(t)
	cfg.AdminToken = f.admin
	f.deps.Config = cfg
	hs := httptest.NewServer(newServer(f.deps).routes())
	t.Cleanup(hs.Close)
	f.http = hs
	return f
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// Deadlines decide by the server's clock: an unanswered challenge
// expires, a duel with one design is forfeited to it, one with none
// expires without rating anyone, an unmatched request expires.
func TestDuelDeadlines(t *testing.T) {
	f := newEventFixture(t)
	ada, bob := f.player("ada"), f.player("bob")
	pass, _ := f.duelDesigns()
	referee := f.deps.rulesService().DuelReferee()
	ctx := context.Background()
	start := func() string {
		status, d := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": bob})
		if status != 201 {
			t.Fatalf("challenge: %d %v", status, d)
		}
		return d["id"].(string)
	}
	state := func(id string) map[string]any {
		_, d := f.do("GET", "/v1/duels/"+id, f.tokens["ada"], nil)
		return d
	}

	// Unanswered.
	id := start()
	f.clock.set(f.clock.Now().Add(rules.DefaultDuelChallengeTTL - time.Second))
	if err := referee.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if d := state(id); d["state"] != game.DuelChallenged {
		t.Fatalf("expired before accept_by: %v", d["state"])
	}
	duelID := mustUUID(t, id)
	if _, err := referee.Settle(ctx, duelID); !errors.Is(err, rules.ErrNotEnded) {
		t.Errorf("Settle before the deadline: %v, want rules.ErrNotEnded", err)
	}
	f.clock.set(f.clock.Now().Add(time.Second))
	status, body := f.do("POST", "/v1/duels/"+id+"/accept", f.tokens["bob"], nil)
	wantProblem(t, "accept at accept_by", status, body, 409, game.EDUELDEADLINE)
	if done, err := referee.Settle(ctx, duelID); err != nil || !done {
		t.Fatalf("Settle at accept_by: %v, %v", done, err)
	}
	if d := state(id); d["state"] != game.DuelExpired || d["result"].(map[string]any)["reason"] != game.ReasonUnanswered {
		t.Errorf("unanswered: %v", d)
	}

	// Forfeit: ada submits, bob never does.
	id = start()
	f.do("POST", "/v1/duels/"+id+"/accept", f.tokens["bob"], nil)
	if status, d := f.do("POST", "/v1/duels/"+id+"/design", f.tokens["ada"], map[string]any{"design": json.RawMessage(pass)}); status != 200 {
		t.Fatalf("design: %d %v", status, d)
	}
	f.clock.set(f.clock.Now().Add(rules.DefaultDuelSubmitWindow))
	status, body = f.do("POST", "/v1/duels/"+id+"/design", f.tokens["bob"], map[string]any{"design": json.RawMessage(pass)})
	wantProblem(t, "submit at submit_by", status, body, 409, game.EDUELDEADLINE)
	if err := referee.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	d := state(id)
	res, _ := d["result"].(map[string]any)
	if d["state"] != game.DuelForfeited || res["winner"] != ada || res["reason"] != game.ReasonForfeit || len(res["ratings"].([]any)) != 2 {
		t.Fatalf("forfeit: %v", d)
	}
	_, prof := f.do("GET", "/v1/players/"+ada, "", nil)
	before := prof["rating"].(map[string]any)

	// Neither submits: expired, nobody rated.
	id = start()
	f.do("POST", "/v1/duels/"+id+"/accept", f.tokens["bob"], nil)
	f.clock.set(f.clock.Now().Add(rules.DefaultDuelSubmitWindow))
	if err := referee.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if d := state(id); d["state"] != game.DuelExpired || d["result"].(map[string]any)["reason"] != game.ReasonNoDesigns {
		t.Errorf("no designs: %v", d)
	}
	_, prof = f.do("GET", "/v1/players/"+ada, "", nil)
	if after := prof["rating"].(map[string]any); after["duels"] != before["duels"] || after["rating"] != before["rating"] {
		t.Errorf("an expired duel moved a rating: %v, was %v", after, before)
	}

	// Unmatched.
	status, m := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel})
	if status != 201 || m["state"] != game.DuelMatching {
		t.Fatalf("match request: %d %v", status, m)
	}
	f.clock.set(f.clock.Now().Add(rules.DefaultDuelMatchWindow))
	if err := referee.SettleDue(ctx); err != nil {
		t.Fatal(err)
	}
	if d := state(m["id"].(string)); d["state"] != game.DuelExpired || d["result"].(map[string]any)["reason"] != game.ReasonUnmatched {
		t.Errorf("unmatched: %v", d)
	}
}

func TestDuelMatchingAndDailyLimit(t *testing.T) {
	f := newDuelFixture(t, Config{DuelsPerDay: 2})
	f.player("ada")
	f.player("bob")
	status, m := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel})
	if status != 201 || m["state"] != game.DuelMatching || len(m["players"].([]any)) != 1 {
		t.Fatalf("match request: %d %v", status, m)
	}
	status, body := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel})
	wantProblem(t, "ask twice", status, body, 409, game.EDUELMATCHING)
	status, paired := f.do("POST", "/v1/duels", f.tokens["bob"], map[string]any{"level": duelLevel})
	if status != 201 || paired["id"] != m["id"] || paired["state"] != game.DuelActive || len(paired["players"].([]any)) != 2 {
		t.Fatalf("pairing: %d %v", status, paired)
	}
	// ada started one, asked twice (refused: not counted), so one more.
	f.player("cy")
	status, _ = f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": "first-request"})
	if status != 201 {
		t.Fatalf("second duel of the day: %d", status)
	}
	status, body = f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": "rush-hour"})
	wantProblem(t, "third duel of the day", status, body, 429, game.EDUELDAILYLIMIT)
	f.clock.set(game.DayStart(f.clock.Now()).Add(24 * time.Hour))
	if status, body = f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": "rush-hour"}); status != 201 {
		t.Errorf("the next day: %d %v", status, body)
	}
}

// Both players follow a pending duel live; spectators may not.
func TestDuelStream(t *testing.T) {
	f := newEventFixture(t)
	f.player("ada")
	bob := f.player("bob")
	f.player("cy")
	_, d := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": bob})
	id := d["id"].(string)
	open := func(token string, header map[string]string) (<-chan event, *http.Response) {
		ctx, cancel := context.WithCancel(t.Context())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/v1/duels/"+id+"/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		events := make(chan event, 64)
		go func() {
			defer close(events)
			readEvents(resp.Body, events)
		}()
		return events, resp
	}
	if _, resp := open(f.tokens["cy"], nil); resp.StatusCode != 403 {
		t.Errorf("a spectator's stream of a pending duel: %d", resp.StatusCode)
	}
	events, resp := open(f.tokens["bob"], nil)
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	first := next(t, events, true)
	if first.name != "duel" || first.id != "1" || !bytes.Contains([]byte(first.data), []byte(`"state":"challenged"`)) {
		t.Fatalf("first event: %+v", first)
	}
	f.do("POST", "/v1/duels/"+id+"/accept", f.tokens["bob"], nil)
	second := next(t, events, true)
	if second.name != "duel" || second.id != "2" || !bytes.Contains([]byte(second.data), []byte(`"state":"active"`)) {
		t.Fatalf("after the accept: %+v", second)
	}
	// Resuming at the latest change sends nothing until the next one.
	resumed, _ := open(f.tokens["ada"], map[string]string{"Last-Event-ID": "2"})
	pass, _ := f.duelDesigns()
	f.do("POST", "/v1/duels/"+id+"/design", f.tokens["ada"], map[string]any{"design": json.RawMessage(pass)})
	if e := next(t, resumed, true); e.id != "3" {
		t.Errorf("resumed stream: %+v, want the change 3", e)
	}
	// An id ahead of the duel's sequence gets the duel as it is, as a board stream
	// gets a snapshot, and the stream goes on from there.
	ahead, _ := open(f.tokens["bob"], map[string]string{"Last-Event-ID": "99"})
	if e := next(t, ahead, true); e.name != "duel" || e.id != "3" {
		t.Errorf("a stream resumed ahead of the duel: %+v, want the duel at 3", e)
	}
	if _, resp := open(f.tokens["ada"], map[string]string{"Last-Event-ID": "x"}); resp.StatusCode != 400 {
		t.Errorf("a malformed Last-Event-ID: %d", resp.StatusCode)
	}
}

// FuzzDuelDecode feeds arbitrary bodies to the duel requests: never a
// panic, every error a client error.
func FuzzDuelDecode(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add([]byte(b))
	}
	f.Add([]byte(`{"level": "lose-a-node", "opponent": "0193c0de-0000-7000-8000-000000000000"}`))
	f.Add([]byte(`{"level": "lose-a-node", "opponent": "not-a-uuid"}`))
	f.Add([]byte(`{"level": "lose-a-node", "LEVEL": "x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, newV := range []func() any{func() any { return &createDuelRequest{} }, func() any { return &duelDesignRequest{} }} {
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			v := newV()
			err := decode(httptest.NewRecorder(), r, 64<<10, v)
			if err != nil && !clientError(err) {
				t.Fatalf("decode(%q) into %T: %v is not a client error", body, v, err)
			}
			if c, ok := v.(*createDuelRequest); ok && err == nil && c.Opponent != "" {
				if _, perr := uuid.Parse(c.Opponent); perr != nil {
					t.Fatalf("decode accepted opponent %q, which the handler parses as a UUID", c.Opponent)
				}
			}
		}
	})
}

// FuzzDuelLastEventID: any resume id is refused as malformed or read as a
// seq, never a panic, and never a seq the id does not spell.
func FuzzDuelLastEventID(f *testing.F) {
	for _, s := range []string{"", "0", "17", "-1", "01", "+3", "99999999999999999999", "9223372036854775807", "1-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		r := httptest.NewRequest("GET", "/v1/duels/x/stream", nil)
		r.Header.Set("Last-Event-ID", id)
		if r.Header.Get("Last-Event-ID") != id {
			t.Skip() // not a header value
		}
		seq, err := duelLastEventID(r)
		switch {
		case err != nil:
			if game.ErrorCode(err) != eBadRequest {
				t.Errorf("%q: %v", id, err)
			}
		case id == "":
			if seq != -1 {
				t.Errorf("no id: %d", seq)
			}
		case strconv.FormatInt(seq, 10) != id:
			t.Errorf("%q read as %d", id, seq)
		}
	})
}

// failFirstEnd fails a duel's first end, as a settle whose runs cannot start now (the
// background workers busy) does.
type failFirstEnd struct {
	*memstore.Store
	failed atomic.Bool
}

func (s *failFirstEnd) EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error) {
	if end.State == game.DuelFinished && s.failed.CompareAndSwap(false, true) {
		return game.Duel{}, false, scheduler.ErrBusy
	}
	return s.Store.EndDuel(ctx, id, end)
}

// serveDuelsWith serves the fixture's API from store st, with rules that ask jobs for
// settling jobs, and returns the rules.
func (f *eventFixture) serveDuelsWith(st interface {
	Store
	rules.Store
}, jobs rules.DuelScheduler) *rules.Service {
	f.t.Helper()
	svc := rules.New(rules.Deps{Store: st, Config: f.deps.Config.Rules(), Now: f.clock.Now, DuelDeadlines: jobs})
	d := f.deps
	d.Store, d.Rules = st, svc
	hs := httptest.NewServer(newServer(d).routes())
	f.t.Cleanup(hs.Close)
	f.http = hs
	return svc
}

// scheduledSettles records the settling jobs the rules ask for.
type scheduledSettles struct {
	mu   sync.Mutex
	jobs map[uuid.UUID][]time.Time
}

func (s *scheduledSettles) ScheduleDuel(ctx context.Context, id uuid.UUID, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs[id] = append(s.jobs[id], at)
	return nil
}

// Issue 25: a duel whose second design came in while the workers were busy stayed active
// with both designs in until its deadline, 30 minutes later. Now a settle that cannot run
// at once is a job due at once, which the referee of any replica runs: the duel ends once.
func TestDuelSettledByAJobWhenItCannotBeSettledAtOnce(t *testing.T) {
	f := newEventFixture(t)
	st := &failFirstEnd{Store: f.deps.Store.(*memstore.Store)}
	jobs := &scheduledSettles{jobs: map[uuid.UUID][]time.Time{}}
	svc := f.serveDuelsWith(st, jobs)
	f.player("ada")
	bob := f.player("bob")
	_, duel := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": bob})
	id := duel["id"].(string)
	f.do("POST", "/v1/duels/"+id+"/accept", f.tokens["bob"], nil)
	pass, fail := f.duelDesigns()
	f.do("POST", "/v1/duels/"+id+"/design", f.tokens["ada"], map[string]any{"design": pass})
	status, last := f.do("POST", "/v1/duels/"+id+"/design", f.tokens["bob"], map[string]any{"design": fail})
	if status != 200 || last["state"] != "active" {
		t.Fatalf("the second design: %d %v; want it taken, the duel still active", status, last)
	}
	duelID := uuid.MustParse(id)
	jobs.mu.Lock()
	at := jobs.jobs[duelID]
	jobs.mu.Unlock()
	if len(at) == 0 || !at[len(at)-1].Equal(f.clock.Now()) {
		t.Fatalf("settle jobs %v; want one due now (%s)", at, f.clock.Now())
	}
	for range 2 { // the job, and a second replica's copy of it
		if _, err := svc.DuelReferee().Settle(t.Context(), duelID); err != nil {
			t.Fatalf("Settle: %v", err)
		}
	}
	if _, got := f.do("GET", "/v1/duels/"+id, f.tokens["ada"], nil); got["state"] != "finished" {
		t.Errorf("after the job: %v", got["state"])
	}
}

// A duel's design is paid for from its player's simulation budget when it is submitted,
// like any run: past the budget it is 429 with Retry-After, and not stored.
func TestDuelDesignChargedToTheBudget(t *testing.T) {
	f := newEventFixture(t)
	d := f.deps
	d.Config.SimBudgetBurst, d.Config.SimBudgetPerSecond = 1000, 1 // one design's cost, refilled slowly
	d.Rules = nil
	hs := httptest.NewServer(newServer(d).routes())
	t.Cleanup(hs.Close)
	f.http = hs
	f.player("ada")
	var ids []string
	for _, name := range []string{"bob", "cy"} {
		opp := f.player(name)
		_, duel := f.do("POST", "/v1/duels", f.tokens["ada"], map[string]any{"level": duelLevel, "opponent": opp})
		ids = append(ids, duel["id"].(string))
		f.do("POST", "/v1/duels/"+duel["id"].(string)+"/accept", f.tokens[name], nil)
	}
	pass, _ := f.duelDesigns()
	if status, out := f.do("POST", "/v1/duels/"+ids[0]+"/design", f.tokens["ada"], map[string]any{"design": pass}); status != 200 {
		t.Fatalf("the first design: %d %v", status, out)
	}
	status, out := f.do("POST", "/v1/duels/"+ids[1]+"/design", f.tokens["ada"], map[string]any{"design": pass})
	if status != http.StatusTooManyRequests || out["code"] != "rate_limited" {
		t.Errorf("a design past the budget: %d %v, want 429 rate_limited", status, out)
	}
	if _, got := f.do("GET", "/v1/duels/"+ids[1], f.tokens["ada"], nil); got["players"].([]any)[0].(map[string]any)["submitted"] != false {
		t.Errorf("the refused design was stored: %v", got["players"])
	}
}

// holdFirstEnd holds the first duel ending until released, as a long settle would.
type holdFirstEnd struct {
	*memstore.Store
	held    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *holdFirstEnd) EndDuel(ctx context.Context, id uuid.UUID, end game.DuelEnd) (game.Duel, bool, error) {
	if end.State == game.DuelFinished && s.held.CompareAndSwap(false, true) {
		close(s.entered)
		<-s.release
	}
	return s.Store.EndDuel(ctx, id, end)
}

// A burst of duels from one address settles one at a time in its requests: while one of
// the address's duels is being settled in its request, the next one's second design is
// taken at once and left to a job (which gives way to duels settled in requests), so
// a burst from a few addresses stands in front of another player's duel by at most one
// duel an address.
func TestDuelsOfOneAddressSettleOneAtATimeInRequests(t *testing.T) {
	f := newEventFixture(t)
	st := &holdFirstEnd{Store: f.deps.Store.(*memstore.Store), entered: make(chan struct{}), release: make(chan struct{})}
	jobs := &scheduledSettles{jobs: map[uuid.UUID][]time.Time{}}
	svc := f.serveDuelsWith(st, jobs)
	pass, fail := f.duelDesigns()
	var ids []string
	for _, names := range [][2]string{{"ada", "bob"}, {"cy", "dee"}} {
		f.player(names[0])
		opp := f.player(names[1])
		_, duel := f.do("POST", "/v1/duels", f.tokens[names[0]], map[string]any{"level": duelLevel, "opponent": opp})
		id := duel["id"].(string)
		f.do("POST", "/v1/duels/"+id+"/accept", f.tokens[names[1]], nil)
		f.do("POST", "/v1/duels/"+id+"/design", f.tokens[names[0]], map[string]any{"design": pass})
		ids = append(ids, id)
	}
	first := make(chan map[string]any, 1)
	go func() {
		_, out := f.do("POST", "/v1/duels/"+ids[0]+"/design", f.tokens["bob"], map[string]any{"design": fail})
		first <- out
	}()
	<-st.entered
	status, second := f.do("POST", "/v1/duels/"+ids[1]+"/design", f.tokens["dee"], map[string]any{"design": fail})
	if status != 200 || second["state"] != "active" {
		t.Fatalf("the second duel's design while the first settles: %d %v; want it taken, the duel left to a job", status, second)
	}
	jobs.mu.Lock()
	at := jobs.jobs[uuid.MustParse(ids[1])]
	jobs.mu.Unlock()
	if len(at) == 0 || !at[len(at)-1].Equal(f.clock.Now()) {
		t.Errorf("settle jobs of the second duel %v; want one due now", at)
	}
	close(st.release)
	if out := <-first; out["state"] != "finished" {
		t.Errorf("the first duel, settled in its request: %v", out["state"])
	}
	if _, err := svc.DuelReferee().Settle(t.Context(), uuid.MustParse(ids[1])); err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if _, got := f.do("GET", "/v1/duels/"+ids[1], f.tokens["cy"], nil); got["state"] != "finished" {
		t.Errorf("the second duel after its job: %v", got["state"])
	}
}
