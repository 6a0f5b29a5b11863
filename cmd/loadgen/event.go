package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The event run: N players join one event and each submits once, at a
// moment spread evenly over the last -window of the event (which ends when
// the window does), the way a crowd submits at the last minute. Each
// submission is sent at its moment whatever the server is doing (open
// loop); one refused as busy (429, 503) is sent again after Retry-After
// until the event ends. Then it waits for the final standings and checks
// in the database that every acknowledged submission is stored (none
// lost) and that the final standings hold every entrant, once.

type eventReport struct {
	Players          int            `json:"players"`
	WindowSeconds    float64        `json:"window_seconds"`
	Acked            int64          `json:"acknowledged_submissions"`
	AckedPerSecond   float64        `json:"acknowledged_per_second"`
	P50MS            float64        `json:"submit_p50_ms"`
	P99MS            float64        `json:"submit_p99_ms"`
	MaxMS            float64        `json:"submit_max_ms"`
	Status           map[string]int `json:"statuses"` // every answer, retries included
	Busy             int64          `json:"busy_answers"`
	Ended            int64          `json:"refused_as_ended"`
	NoAnswer         int64          `json:"no_answer"`
	Lost             int            `json:"lost"`
	Entrants         int            `json:"entrants"`
	Results          int            `json:"final_results"`
	FinishSeconds    float64        `json:"finish_seconds"`
	StandingsTotal   int            `json:"standings_total"`
	DuplicateResults int            `json:"duplicate_results"`
	Audience         *eventAudience `json:"audience,omitempty"`
}

func cmdEvent(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("event", flag.ContinueOnError)
	urls := fs.String("url", "http://127.0.0.1:8080", "server base URLs, comma-separated (players are dealt to them in turn)")
	db := fs.String("db", "", "the server's database URL, for the check")
	players := fs.Int("players", 10_000, "players, each submitting once")
	window := fs.Duration("window", 60*time.Second, "the last part of the event in which every player submits; the event ends with it")
	level := fs.String("level", "first-request", "the event's level")
	admin := fs.String("admin-token", os.Getenv("ADMIN_TOKEN"), "the server's ADMIN_TOKEN (schedules the event)")
	deadline := fs.Duration("deadline", 30*time.Second, "per-request deadline")
	finishWait := fs.Duration("finish-wait", 15*time.Minute, "how long to wait for the final standings")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	readers := fs.Int("readers", 0, "standings readers during the window (each one of the players)")
	readEvery := fs.Duration("read-every", 250*time.Millisecond, "each reader's pause between reads")
	watchers := fs.Int("watchers", 0, "event stream watchers during the window")
	perAddress := fs.Int("per-address", 8, "stream watchers per loopback source address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *db == "" || *admin == "" {
		return fmt.Errorf("event: -db and -admin-token (or ADMIN_TOKEN) are required")
	}
	bases := strings.Split(*urls, ",")
	st := newStats()
	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 30 * time.Second}
	clients := make([]*client, len(bases))
	for i, b := range bases {
		clients[i] = &client{base: strings.TrimRight(b, "/"), http: &http.Client{Transport: tr}, deadline: *deadline, stats: st}
	}

	// Players first, 64 at a time.
	tag := "ev" + newKey()[:6]
	tokens := make([]string, *players)
	ids := make([]string, *players)
	var next atomic.Int64
	var wg sync.WaitGroup
	var regErr atomic.Value
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= *players || ctx.Err() != nil {
					return
				}
				c := clients[i%len(clients)]
				var reg struct {
					Player struct {
						ID string `json:"id"`
					} `json:"player"`
					Token string `json:"token"`
				}
				for attempt := 0; ; attempt++ {
					r := c.do(ctx, "POST /v1/players", "POST", "/v1/players", "", map[string]any{"name": fmt.Sprintf("%s-%d", tag, i)}, nil)
					if r.status == 201 && json.Unmarshal(r.body, &reg) == nil {
						break
					}
					if attempt > 20 {
						regErr.Store(fmt.Errorf("registering player %d: %d %v %s", i, r.status, r.err, r.body))
						return
					}
					time.Sleep(retryAfter(r.header))
				}
				tokens[i], ids[i] = reg.Token, reg.Player.ID
			}
		})
	}
	wg.Wait()
	if err, _ := regErr.Load().(error); err != nil {
		return err
	}
	fmt.Printf("%d players registered\n", *players)

	// The event: it starts now (+ a moment to schedule it) and ends with
	// the window.
	start := time.Now().Add(2 * time.Second).UTC()
	end := start.Add(*window)
	r := clients[0].do(ctx, "POST /v1/events", "POST", "/v1/events", *admin, map[string]any{
		"level": *level, "title": "Last-minute crowd", "starts_at": start, "ends_at": end,
		"hidden_chaos": []any{map[string]any{"kind": "traffic_spike", "at_sec": 30, "duration_sec": 40, "params": map[string]any{"multiplier": 3}}},
		"resilience":   map[string]any{"error_ceiling": 0.05, "recovery_deadline_sec": 30},
	}, nil)
	var ev struct {
		ID string `json:"id"`
	}
	if r.status != 201 || json.Unmarshal(r.body, &ev) != nil {
		return fmt.Errorf("scheduling the event: %d %v %s", r.status, r.err, r.body)
	}
	time.Sleep(time.Until(start))
	var audience *eventAudience
	stopAudience := func() {}
	if *readers > 0 || *watchers > 0 {
		audienceCtx, cancel := context.WithDeadline(ctx, end)
		var wait func()
		audience, wait = watchEvent(audienceCtx, clients[len(clients)-1].base, ev.ID, tokens[:max(1, min(*readers, *players))],
			*readers, *watchers, *perAddress, *readEvery)
		stopAudience = func() { cancel(); wait() }
	}

	// Every player submits once, at start + i*window/N.
	var acked, busy, ended, noAnswer atomic.Int64
	ackedIDs := make([]string, *players)
	lat := make([]time.Duration, 0, *players)
	var latMu sync.Mutex
	step := *window / time.Duration(*players)
	for i := range *players {
		wg.Go(func() {
			time.Sleep(time.Until(start.Add(time.Duration(i) * step)))
			c := clients[i%len(clients)]
			path := "/v1/events/" + ev.ID + "/submissions"
			body := map[string]any{"design": design(1 + i%4)}
			first := time.Now()
			for time.Now().Before(end) && ctx.Err() == nil {
				r := c.do(ctx, "POST event submissions", "POST", path, tokens[i], body, nil)
				switch {
				case r.status == 201:
					var out struct {
						ID string `json:"id"`
					}
					if json.Unmarshal(r.body, &out) == nil && out.ID != "" {
						acked.Add(1)
						ackedIDs[i] = out.ID
						latMu.Lock()
						lat = append(lat, time.Since(first))
						latMu.Unlock()
					}
					return
				case r.status == 429 || r.status == 503:
					busy.Add(1)
					time.Sleep(retryAfter(r.header))
				case r.status == 409 && strings.Contains(string(r.body), "event_ended"):
					ended.Add(1)
					return
				case r.status == 0:
					// No answer: it may or may not be stored, so it is not
					// sent again (it is not acknowledged either way).
					noAnswer.Add(1)
					return
				default:
					fmt.Fprintf(os.Stderr, "player %d: %d %s\n", i, r.status, r.body)
					return
				}
			}
		})
	}
	wg.Wait()
	stopAudience()
	rep := eventReport{Players: *players, WindowSeconds: window.Seconds(), Acked: acked.Load(), Busy: busy.Load(),
		Ended: ended.Load(), NoAnswer: noAnswer.Load(), Status: map[string]int{}}
	rep.AckedPerSecond = float64(rep.Acked) / window.Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		rep.P50MS, rep.P99MS, rep.MaxMS = ms(lat[len(lat)/2]), ms(lat[min(len(lat)-1, len(lat)*99/100)]), ms(lat[len(lat)-1])
	}
	st.mu.Lock()
	for code, n := range st.status["POST event submissions"] {
		rep.Status[fmt.Sprint(code)] = n
	}
	st.mu.Unlock()
	fmt.Printf("window %.0fs: %d of %d acknowledged (%.1f/s), submit p50 %.1f ms, p99 %.1f ms, max %.1f ms (from first send to the acknowledgement, retries included); busy answers %d, refused as ended %d, no answer %d; statuses %v\n",
		rep.WindowSeconds, rep.Acked, rep.Players, rep.AckedPerSecond, rep.P50MS, rep.P99MS, rep.MaxMS, rep.Busy, rep.Ended, rep.NoAnswer, rep.Status)
	if audience != nil {
		rep.Audience = audience
		fmt.Println(audience)
	}

	// The finish, then the check behind the API's back.
	finishStart := time.Now()
	for {
		r := clients[0].do(ctx, "GET /v1/events/{id}", "GET", "/v1/events/"+ev.ID, "", nil, nil)
		var got struct {
			Phase string `json:"phase"`
		}
		if r.status == 200 && json.Unmarshal(r.body, &got) == nil && got.Phase == "finished" {
			break
		}
		if time.Since(finishStart) > *finishWait || ctx.Err() != nil {
			return fmt.Errorf("the event was not finished within %s", *finishWait)
		}
		time.Sleep(time.Second)
	}
	rep.FinishSeconds = time.Since(end).Seconds()
	r = clients[len(clients)-1].do(ctx, "GET standings", "GET", "/v1/events/"+ev.ID+"/standings", "", nil, nil)
	var standings struct {
		Total int `json:"total"`
	}
	_ = json.Unmarshal(r.body, &standings)
	rep.StandingsTotal = standings.Total

	conn, err := pgx.Connect(ctx, *db)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var want []string
	for _, id := range ackedIDs {
		if id != "" {
			want = append(want, id)
		}
	}
	var stored int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM event_submissions WHERE event_id = $1 AND id = ANY($2::uuid[])`, ev.ID, want).Scan(&stored); err != nil {
		return err
	}
	rep.Lost = len(want) - stored
	if err := conn.QueryRow(ctx, `
		SELECT (SELECT o_entrants FROM bp_event_counts($1)),
			(SELECT count(*) FROM event_results WHERE event_id = $1),
			(SELECT count(*) - count(DISTINCT player_id) FROM event_results WHERE event_id = $1)`, ev.ID).
		Scan(&rep.Entrants, &rep.Results, &rep.DuplicateResults); err != nil {
		return err
	}
	fmt.Printf("finished %.1fs after the end: %d entrants, %d final results (%d duplicate), standings total %d; lost %d of %d acknowledged\n",
		rep.FinishSeconds, rep.Entrants, rep.Results, rep.DuplicateResults, rep.StandingsTotal, rep.Lost, len(want))
	if *jsonOut != "" {
		raw, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(*jsonOut, raw, 0o644); err != nil {
			return err
		}
	}
	var problems []string
	if rep.Lost != 0 {
		problems = append(problems, fmt.Sprintf("%d acknowledged submissions are not stored", rep.Lost))
	}
	// An entrant is a player with a stored attempt: every acknowledged
	// one, and perhaps some whose answer never came.
	if rep.Entrants < int(rep.Acked) || rep.Entrants > int(rep.Acked+rep.NoAnswer) || rep.Results != rep.Entrants || rep.StandingsTotal != rep.Entrants || rep.DuplicateResults != 0 {
		problems = append(problems, fmt.Sprintf("standings do not hold every entrant once: %d acknowledged, %d entrants, %d results, %d in the standings, %d duplicates",
			rep.Acked, rep.Entrants, rep.Results, rep.StandingsTotal, rep.DuplicateResults))
	}
	if len(problems) > 0 {
		return fmt.Errorf("FAILED:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Println("OK")
	return nil
}
