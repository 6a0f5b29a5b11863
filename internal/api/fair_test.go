package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
	"backpressure/internal/store/memstore"
)

// fairServer is a server on an in-memory store with the campaign loaded.
type fairServer struct {
	t *testing.T
	s *server
	h http.Handler
}

func newFairServer(t *testing.T, st Store, cfg Config) *fairServer {
	t.Helper()
	if cfg.MaxInFlightPerClient == 0 {
		// Every in-process client has one address; the per-address
		// limit is tested through the real server (cmd/server).
		cfg.MaxInFlightPerClient = 1 << 20
	}
	s := newServer(Deps{Store: st, Config: cfg})
	if err := rules.LoadCampaign(t.Context(), s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	return &fairServer{t: t, s: s, h: s.routes()}
}

// player creates a player and returns its bearer token.
func (f *fairServer) player(name string) string {
	f.t.Helper()
	token, hash := game.NewToken()
	if _, err := f.s.store.CreatePlayer(f.t.Context(), name, game.RolePlayer, hash); err != nil {
		f.t.Fatal(err)
	}
	return token
}

func (f *fairServer) do(method, path, token, body string) *httptest.ResponseRecorder {
	rq := httptest.NewRequest(method, path, strings.NewReader(body))
	rq.Header.Set("Content-Type", "application/json")
	if token != "" {
		rq.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, rq)
	return w
}

// designOf returns a campaign level's starting design as JSON, with edit applied.
func designOf(t *testing.T, slug string, edit func(map[string]any)) string {
	t.Helper()
	l, err := challenges.CampaignLevel(slug)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(l.StartingDesign)
	var d map[string]any
	_ = json.Unmarshal(b, &d)
	if edit != nil {
		edit(d)
	}
	b, _ = json.Marshal(d)
	return string(b)
}

// passingFirstRequest is first-request's starting design with a second replica, which
// passes.
func passingFirstRequest(t *testing.T) string {
	return designOf(t, "first-request", func(d map[string]any) {
		app := d["components"].([]any)[0].(map[string]any)
		params, _ := app["params"].(map[string]any)
		if params == nil {
			params = map[string]any{}
			app["params"] = params
		}
		params["replicas"] = 2
	})
}

// A flood of hints from many players does not hold up another player's submissions:
// hints have workers of their own, so not one of the victim's submissions queues, and all
// of them succeed while the hints run.
func TestHintFloodDoesNotDelaySubmissions(t *testing.T) {
	f := newFairServer(t, memstore.New(), Config{SimWorkers: 2, SimQueue: 4})
	victim := f.player("victim")
	hintBody := `{"design": ` + designOf(t, "lose-a-node", nil) + `}`
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 8 {
		token := f.player(fmt.Sprintf("attacker-%d", i))
		for range 2 { // two loops per attacker: the second finds the first in flight
			wg.Go(func() {
				for ctx.Err() == nil {
					w := f.do("POST", "/v1/challenges/lose-a-node/hint", token, hintBody)
					mu.Lock()
					statuses[w.Code]++
					mu.Unlock()
				}
			})
		}
	}
	// The flood is on: hint workers busy and hints queued or refused.
	waitFor(t, func() bool {
		return testutil.ToFloat64(f.s.metrics.SimWaits.WithLabelValues(scheduler.KindHint)) > 0 ||
			testutil.ToFloat64(f.s.metrics.Rejections) > 0
	})
	sub := `{"design": ` + passingFirstRequest(t) + `}`
	hintsRunning := 0.0 // the most jobs running (all hints) between two victim submissions
	for i := range 10 {
		w := f.do("POST", "/v1/challenges/first-request/submissions", victim, sub)
		if w.Code != http.StatusCreated {
			t.Errorf("victim submission %d: %d %s", i, w.Code, w.Body)
		}
		hintsRunning = max(hintsRunning, testutil.ToFloat64(f.s.metrics.Running))
	}
	stop()
	wg.Wait()
	if got := testutil.ToFloat64(f.s.metrics.SimWaits.WithLabelValues(scheduler.KindSubmission)); got != 0 {
		t.Errorf("%g victim submissions queued for a worker; want none", got)
	}
	if hintsRunning < 1 {
		t.Errorf("no hint was running when the victim finished; the flood did not overlap")
	}
	if statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("hint statuses %v: an attacker's second hint in flight was never refused with 429", statuses)
	}
	for code := range statuses {
		if code >= 500 && code != http.StatusServiceUnavailable {
			t.Errorf("hint statuses %v include a %d", statuses, code)
		}
	}
}

// Reading a level never simulates: concurrent cold reads of a stored level that is not
// cached share one decode, and no simulation runs.
func TestColdReadsShareOneLoad(t *testing.T) {
	st := memstore.New()
	heavy, err := challenges.CampaignLevel("black-friday")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	b, _ := json.Marshal(heavy)
	_ = json.Unmarshal(b, &doc)
	doc["slug"], doc["title"] = "heavy-copy", "A heavy copy"
	def, _ := json.Marshal(doc)
	l, err := challenges.Parse(def)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := rules.LevelRecord(l, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateLevel(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	f := newFairServer(t, st, Config{SimWorkers: 2})
	const readers = 16
	start := make(chan struct{})
	var wg sync.WaitGroup
	codes := make([]int, readers)
	for i := range readers {
		wg.Go(func() {
			<-start
			codes[i] = f.do("GET", "/v1/challenges/heavy-copy", "", "").Code
		})
	}
	close(start)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("reader %d: %d", i, c)
		}
	}
	var got challengeResponse
	if err := json.Unmarshal(f.do("GET", "/v1/challenges/heavy-copy", "", "").Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.WorstCaseCost != l.WorstCaseCost() || got.WorstCaseCost <= 0 {
		t.Errorf("worst_case_cost = %d, want %d, kept with the version when it was stored", got.WorstCaseCost, l.WorstCaseCost())
	}
	if got := testutil.ToFloat64(f.s.metrics.levelLoads); got != 1 {
		t.Errorf("%g level loads for %d cold reads of one version; want exactly 1", got, readers)
	}
	if got := testutil.CollectAndCount(f.s.metrics.Simulations); got != 0 {
		t.Errorf("%d simulation series after reads only; a read path simulated", got)
	}
}

// replacingStore replaces a level's content just before a submission to it is stored: an
// author's change landing while the player's design was being scored.
type replacingStore struct {
	Store
	replacement game.Level
	once        sync.Once
}

func (r *replacingStore) CreateSubmission(ctx context.Context, sub game.Submission, key, hash string) (game.SubmissionReceipt, error) {
	var err error
	r.once.Do(func() { _, _, err = r.Store.PutLevel(ctx, r.replacement) })
	if err != nil {
		return game.SubmissionReceipt{}, err
	}
	return r.Store.CreateSubmission(ctx, sub, key, hash)
}

// A level replaced while a submission to it is simulated: the submission is stored
// against the content it was scored on, so re-running the stored design on the stored
// level version gives the stored verdict.
func TestLevelReplacedMidSubmission(t *testing.T) {
	base, err := challenges.CampaignLevel("first-request")
	if err != nil {
		t.Fatal(err)
	}
	version := func(slug string, budget float64) game.Level {
		var doc map[string]any
		b, _ := json.Marshal(base)
		_ = json.Unmarshal(b, &doc)
		doc["slug"], doc["title"], doc["budget_per_hour"] = slug, "Authored", budget
		delete(doc, "starting_fails") // another budget, another way to fail
		def, _ := json.Marshal(doc)
		l, err := challenges.Parse(def)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rules.LevelRecord(l, false, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	mem := memstore.New()
	if _, err := mem.CreateLevel(t.Context(), version("authored", 100)); err != nil {
		t.Fatal(err)
	}
	// The replacement's budget is far tighter: the same design scores differently on it.
	st := &replacingStore{Store: mem, replacement: version("authored", 0.001)}
	f := newFairServer(t, st, Config{SimWorkers: 1})
	token := f.player("ada")
	w := f.do("POST", "/v1/challenges/authored/submissions", token, `{"design": `+passingFirstRequest(t)+`}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("submission: %d %s", w.Code, w.Body)
	}
	var resp submitResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	stored, err := mem.Submission(t.Context(), resp.Submission.ID)
	if err != nil {
		t.Fatal(err)
	}
	lv, err := mem.Level(t.Context(), stored.Slug, stored.Version)
	if err != nil {
		t.Fatal(err)
	}
	l, err := challenges.Decode(lv.Definition)
	if err != nil {
		t.Fatal(err)
	}
	d, err := challenges.ParseDesign(stored.Design)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := l.Evaluate(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Passed != stored.Passed || challenges.Score(ev) != stored.Score {
		t.Errorf("stored under v%d: passed %v score %d; re-running the stored content: passed %v score %d",
			stored.Version, stored.Passed, stored.Score, ev.Passed, challenges.Score(ev))
	}
	if cur, _ := mem.Level(t.Context(), "authored", 0); cur.Version == stored.Version {
		t.Errorf("the replacement took the scored version's number (v%d); a stored version must never change", cur.Version)
	}
}

// Every run is paid from the player's budget before it starts; an empty budget is 429
// with Retry-After, and it refills with the server's clock.
func TestSimulationBudget(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l, _ := challenges.CampaignLevel("first-request")
	cost, err := l.RunCost(l.StartingDesign)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(Deps{Store: memstore.New(), Now: clock,
		Config: Config{SimBudgetBurst: 3 * cost, SimBudgetPerSecond: cost}})
	if err := rules.LoadCampaign(t.Context(), s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	f := &fairServer{t: t, s: s, h: s.routes()}
	token := f.player("ada")
	body := `{"level": "first-request", "design": ` + designOf(t, "first-request", nil) + `}`
	for i := range 3 {
		if w := f.do("POST", "/v1/simulations", token, body); w.Code != http.StatusOK {
			t.Fatalf("run %d within the budget: %d %s", i, w.Code, w.Body)
		}
	}
	w := f.do("POST", "/v1/simulations", token, body)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("run past the budget: %d Retry-After %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	// Another player's budget is their own.
	if w := f.do("POST", "/v1/simulations", f.player("bob"), body); w.Code != http.StatusOK {
		t.Errorf("another player: %d", w.Code)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if w := f.do("POST", "/v1/simulations", token, body); w.Code != http.StatusOK {
		t.Errorf("after a second's refill: %d %s", w.Code, w.Body)
	}
}

// An upload whose wave period is shorter than a tick (5e-324 made every metric NaN) is a
// 422 naming the field; nothing is stored.
func TestUploadRefusesSubTickPeriod(t *testing.T) {
	f := newFairServer(t, memstore.New(), Config{AdminToken: "root"})
	l, _ := challenges.CampaignLevel("first-request")
	var doc map[string]any
	b, _ := json.Marshal(l)
	_ = json.Unmarshal(b, &doc)
	doc["slug"] = "nan-wave"
	doc["run"].(map[string]any)["traffic"] = map[string]any{"kind": "wave", "rps": 300, "amplitude_rps": 100, "period_sec": 5e-324}
	body, _ := json.Marshal(doc)
	w := f.do("POST", "/v1/challenges", "root", string(body))
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `"run.traffic.period_sec"`) {
		t.Errorf("upload: %d %s, want 422 naming run.traffic.period_sec", w.Code, w.Body)
	}
	if _, err := f.s.store.Level(t.Context(), "nan-wave", 0); game.ErrorCode(err) != game.ENOTFOUND {
		t.Errorf("the refused level was stored: %v", err)
	}
}
