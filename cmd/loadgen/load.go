package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// client is one HTTP client shared by all simulated players, with a
// per-request deadline: a request that takes longer counts as a hang.
type client struct {
	base     string
	http     *http.Client
	deadline time.Duration
	stats    *stats
}

type result struct {
	status int // 0: no response (network error or deadline)
	header http.Header
	body   []byte
	err    error
}

// send makes one request and reads its whole answer.
func (c *client) send(ctx context.Context, method, path, token string, body any, header map[string]string) (result, time.Duration, bool) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return result{err: err}, 0, false
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(ctx, c.deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return result{err: err}, 0, false
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	var r result
	if err != nil {
		r.err = err
	} else {
		r.status, r.header = resp.StatusCode, resp.Header
		r.body, r.err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if r.err != nil {
			r.status = 0
		}
	}
	return r, time.Since(start), r.status == 0 && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// do makes one request and records what it got.
func (c *client) do(ctx context.Context, route, method, path, token string, body any, header map[string]string) result {
	r, d, hang := c.send(ctx, method, path, token, body, header)
	return c.record(ctx, route, r, d, hang)
}

// doRepeatable makes a request that has no side effects (a dry run) and,
// when its answer is cut (the replica serving it died mid-answer: a dry
// run's answer is streamed, so a load balancer cannot replace it), makes
// it once more, as a client would. Only a second cut is no answer.
func (c *client) doRepeatable(ctx context.Context, route, method, path, token string, body any) result {
	r, d, hang := c.send(ctx, method, path, token, body, nil)
	if r.status == 0 && !hang && ctx.Err() == nil {
		c.stats.mu.Lock()
		c.stats.cutRepeated++
		c.stats.mu.Unlock()
		var again time.Duration
		r, again, hang = c.send(ctx, method, path, token, body, nil)
		d += again // the client waited for both
	}
	return c.record(ctx, route, r, d, hang)
}

// record counts a request's answer, unless the run's end cut it.
func (c *client) record(parent context.Context, route string, r result, d time.Duration, hang bool) result {
	if r.status == 0 && parent.Err() != nil {
		return r // the run ended, not the request: not a measurement
	}
	c.stats.record(route, r.status, d, hang)
	if r.status == 0 {
		c.stats.noteUnanswered(route, d, r.err)
	}
	if (r.status == 503 || r.status == 429) && r.header.Get("Retry-After") == "" {
		c.stats.mu.Lock()
		c.stats.noRetryAfter++
		c.stats.mu.Unlock()
	}
	return r
}

// stats collects latencies and statuses per route.
type stats struct {
	mu     sync.Mutex
	lat    map[string][]time.Duration
	status map[string]map[int]int
	hangs  int
	maxLat time.Duration
	// noRetryAfter counts 503 and 429 answers without Retry-After.
	noRetryAfter int
	// unanswered describes the first requests that got no answer, so that a
	// fault run that fails on one says which request it was and why.
	unanswered []string
	// cutRepeated counts side-effect-free requests whose answer was cut and
	// that were made again.
	cutRepeated int
	started     time.Time
}

// maxUnanswered bounds the unanswered requests a report describes.
const maxUnanswered = 5

func (s *stats) noteUnanswered(route string, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.unanswered) < maxUnanswered {
		s.unanswered = append(s.unanswered, fmt.Sprintf("%s at %.3f s, after %.1f ms: %v",
			route, time.Since(s.started).Seconds()-d.Seconds(), ms(d), err))
	}
}

func newStats() *stats {
	return &stats{lat: map[string][]time.Duration{}, status: map[string]map[int]int{}, started: time.Now()}
}

func (s *stats) record(route string, status int, d time.Duration, hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lat[route] = append(s.lat[route], d)
	if s.status[route] == nil {
		s.status[route] = map[int]int{}
	}
	s.status[route][status]++
	if hang {
		s.hangs++
	}
	s.maxLat = max(s.maxLat, d)
}

// outcome is what the client learned about one Idempotency-Key.
type outcome struct {
	Player   string `json:"player"`
	Key      string `json:"key"`
	Status   int    `json:"status"` // final status; 0 = unknown (no answer)
	ID       string `json:"id"`     // acknowledged submission ID
	Replays  int    `json:"replays"`
	Mismatch bool   `json:"mismatch"` // a replay answered another ID
}

type loadConfig struct {
	url, db, slug, jsonOut, tag string
	players                     int
	duration, deadline          time.Duration
	rate, retry, dryRun         float64
	serverPID                   int
	expectNo5xx, check          bool
	expectNoUnknownStored       bool
	checkRanks                  bool
	reads                       bool
	think                       time.Duration
}

func cmdRun(ctx context.Context, args []string) error {
	var cfg loadConfig
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "server base URL")
	fs.StringVar(&cfg.db, "db", "", "the server's database URL: check it after the run")
	fs.StringVar(&cfg.slug, "level", "first-request", "level to play")
	fs.IntVar(&cfg.players, "players", 50, "concurrent players")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long to play")
	fs.Float64Var(&cfg.rate, "rate", 0, "submissions per second over all players (0: as fast as the server answers)")
	fs.Float64Var(&cfg.retry, "retry", 0.1, "fraction of submissions retried with the same Idempotency-Key")
	fs.Float64Var(&cfg.dryRun, "dry-run", 0.1, "fraction of rounds that dry-run the design first")
	fs.DurationVar(&cfg.deadline, "deadline", 10*time.Second, "per-request deadline; longer is a hang")
	fs.DurationVar(&cfg.think, "think", 0, "pause between a player's rounds")
	fs.BoolVar(&cfg.reads, "reads", true, "read the boards after each submission")
	fs.IntVar(&cfg.serverPID, "server-pid", 0, "sample this process's RSS (memory flatness)")
	fs.StringVar(&cfg.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&cfg.tag, "tag", "", "player name prefix (default random)")
	fs.BoolVar(&cfg.expectNo5xx, "expect-no-5xx", false, "fail if any 5xx is seen")
	fs.BoolVar(&cfg.check, "check", true, "check the database after the run (needs -db)")
	fs.BoolVar(&cfg.checkRanks, "check-ranks", true, "compare the API's ranks with the rows after the run (needs the server up)")
	fs.BoolVar(&cfg.expectNoUnknownStored, "expect-no-unknown-stored", false,
		"fail if a submission whose request got no answer was stored (graceful shutdown must answer what it commits)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.tag == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		cfg.tag = "lg" + hex.EncodeToString(b[:])
	}
	rep, outs, err := load(ctx, cfg)
	if err != nil {
		return err
	}
	var problems []string
	if cfg.db != "" && cfg.check {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		rankURL := cfg.url
		if !cfg.checkRanks {
			rankURL = ""
		}
		c, err := checkDB(cctx, cfg.db, rankURL, outs)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		rep.Check = c
		problems = append(problems, c.Problems...)
		if cfg.expectNoUnknownStored && c.UnknownStored > 0 {
			problems = append(problems, fmt.Sprintf("%d submissions were stored but their requests got no answer", c.UnknownStored))
		}
	}
	if cfg.expectNo5xx && rep.Status5xx > 0 {
		problems = append(problems, fmt.Sprintf("%d responses were 5xx", rep.Status5xx))
	}
	if rep.NoRetryAfter > 0 {
		problems = append(problems, fmt.Sprintf("%d 503/429 answers had no Retry-After", rep.NoRetryAfter))
	}
	if rep.Hangs > 0 {
		problems = append(problems, fmt.Sprintf("%d requests hung past the %v deadline", rep.Hangs, cfg.deadline))
	}
	rep.print(os.Stdout)
	if cfg.jsonOut != "" {
		raw, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.jsonOut, raw, 0o644); err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("FAILED:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Println("OK")
	return nil
}

// design is the tutorial's design with r app replicas: replicas 1-4 give
// different verdicts and scores.
func design(r int) map[string]any {
	return map[string]any{
		"components": []any{
			map[string]any{"id": "app", "type": "app_service", "params": map[string]any{"replicas": r}},
			map[string]any{"id": "db", "type": "database"},
		},
		"edges": []any{map[string]any{"from": "app", "to": "db"}},
	}
}

func newKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retryAfter reads Retry-After (seconds), capped.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 200 * time.Millisecond
	}
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n <= 0 {
		return 200 * time.Millisecond
	}
	return min(time.Duration(n)*time.Second, 2*time.Second)
}

func load(ctx context.Context, cfg loadConfig) (*report, []outcome, error) {
	st := newStats()
	tr := &http.Transport{MaxIdleConns: cfg.players * 2, MaxIdleConnsPerHost: cfg.players * 2, IdleConnTimeout: 30 * time.Second}
	c := &client{base: strings.TrimRight(cfg.url, "/"), http: &http.Client{Transport: tr}, deadline: cfg.deadline, stats: st}
	if r := c.do(ctx, "healthz", "GET", "/healthz", "", nil, nil); r.status != 200 {
		return nil, nil, fmt.Errorf("server at %s is not healthy: %d %v", cfg.url, r.status, r.err)
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.duration)
	defer cancel()

	// Pacing: with -rate, every submission first takes a ticket.
	var tickets chan struct{}
	if cfg.rate > 0 {
		tickets = make(chan struct{}, cfg.players)
		go func() {
			interval := time.Duration(float64(time.Second) / cfg.rate)
			next := time.Now()
			for runCtx.Err() == nil {
				next = next.Add(interval)
				time.Sleep(time.Until(next))
				select {
				case tickets <- struct{}{}:
				default: // every player is busy: the server is behind; the ticket is lost
				}
			}
		}()
	}
	mem := startMemSampler(runCtx, cfg.serverPID, c)

	var mu sync.Mutex
	var outs []outcome
	var acked atomic.Int64
	var wg sync.WaitGroup
	for i := range cfg.players {
		wg.Go(func() {
			rng := mrand.New(mrand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			o := play(runCtx, ctx, c, cfg, i, rng, tickets, &acked)
			mu.Lock()
			outs = append(outs, o...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(st.started)
	rep := st.report(elapsed, acked.Load())
	rep.Players, rep.Rate, rep.Tag = cfg.players, cfg.rate, cfg.tag
	rep.Memory = mem()
	for _, o := range outs {
		switch {
		case o.Status == 0:
			rep.Unknown++
		case o.Mismatch:
			rep.ReplayMismatches++
		}
	}
	return rep, outs, nil
}

// play is one player: register, read the levels, then rounds of (maybe a
// dry run), a submission with a fresh Idempotency-Key (maybe retried with
// the same key), and board reads, until runCtx ends. Retries of an answer
// that never came, or came as 429/503, use the same key and finish even
// after runCtx ends (up to the deadline): a player who pressed submit
// wants to know.
func play(runCtx, ctx context.Context, c *client, cfg loadConfig, i int, rng *mrand.Rand, tickets chan struct{}, acked *atomic.Int64) []outcome {
	name := fmt.Sprintf("%s-%d", cfg.tag, i)
	var reg struct {
		Player struct {
			ID string `json:"id"`
		} `json:"player"`
		Token string `json:"token"`
	}
	for attempt := 0; ; attempt++ {
		r := c.do(runCtx, "POST /v1/players", "POST", "/v1/players", "", map[string]any{"name": name}, nil)
		if r.status == 201 && json.Unmarshal(r.body, &reg) == nil {
			break
		}
		if runCtx.Err() != nil || attempt > 20 {
			return nil
		}
		time.Sleep(retryAfter(r.header))
	}
	tok := reg.Token
	c.do(runCtx, "GET /v1/challenges", "GET", "/v1/challenges", tok, nil, nil)
	c.do(runCtx, "GET /v1/challenges/{slug}", "GET", "/v1/challenges/"+cfg.slug, tok, nil, nil)
	submitPath := "/v1/challenges/" + cfg.slug + "/submissions"
	var outs []outcome
	for runCtx.Err() == nil {
		d := design(1 + rng.IntN(4))
		if rng.Float64() < cfg.dryRun {
			c.doRepeatable(runCtx, "POST /v1/simulations", "POST", "/v1/simulations", tok,
				map[string]any{"level": cfg.slug, "design": d, "max_points": 50})
		}
		if tickets != nil {
			select {
			case <-tickets:
			case <-runCtx.Done():
				return outs
			}
		}
		o := outcome{Player: reg.Player.ID, Key: newKey()}
		hdr := map[string]string{"Idempotency-Key": o.Key}
		body := map[string]any{"design": d}
		passed := false
		// Submit until there is a definite answer; transient failures
		// (no answer, 429, 503) retry with the same key.
		finalCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*cfg.deadline)
		for attempt := 0; attempt < 6; attempt++ {
			r := c.do(finalCtx, "POST submissions", "POST", submitPath, tok, body, hdr)
			o.Status = r.status
			if r.status == 201 {
				var sr struct {
					Submission struct {
						ID     string `json:"id"`
						Passed bool   `json:"passed"`
					} `json:"submission"`
					Replayed bool `json:"replayed"`
				}
				_ = json.Unmarshal(r.body, &sr)
				passed = sr.Submission.Passed
				if o.ID != "" && o.ID != sr.Submission.ID {
					o.Mismatch = true
				}
				o.ID = sr.Submission.ID
				if sr.Replayed {
					o.Replays++
				}
				break
			}
			if r.status != 0 && r.status != 429 && r.status != 503 && r.status != 502 && r.status != 504 {
				break // a definite refusal
			}
			if finalCtx.Err() != nil {
				break
			}
			time.Sleep(retryAfter(r.header))
		}
		if o.Status == 201 {
			acked.Add(1)
			if rng.Float64() < cfg.retry {
				// The player presses submit again: same key, same answer.
				r := c.do(finalCtx, "POST submissions (retry)", "POST", submitPath, tok, body, hdr)
				if r.status == 201 {
					var sr struct {
						Submission struct {
							ID string `json:"id"`
						} `json:"submission"`
						Replayed bool `json:"replayed"`
					}
					_ = json.Unmarshal(r.body, &sr)
					if sr.Submission.ID != o.ID || !sr.Replayed {
						o.Mismatch = true
					}
					o.Replays++
				}
			}
		}
		cancel()
		outs = append(outs, o)
		if !cfg.reads {
			continue
		}
		c.do(runCtx, "GET leaderboard", "GET", "/v1/challenges/"+cfg.slug+"/leaderboard?limit=20", tok, nil, nil)
		if passed && rng.IntN(2) == 0 {
			c.do(runCtx, "GET leaderboard around=me", "GET", "/v1/challenges/"+cfg.slug+"/leaderboard?around=me&limit=11", tok, nil, nil)
		}
		if rng.IntN(4) == 0 {
			c.do(runCtx, "GET global leaderboard", "GET", "/v1/leaderboard?limit=20", tok, nil, nil)
		}
		if cfg.think > 0 {
			time.Sleep(cfg.think)
		}
	}
	return outs
}

// report is what a run measured.
type report struct {
	Tag              string                 `json:"tag"`
	Players          int                    `json:"players"`
	Rate             float64                `json:"target_rate"`
	Seconds          float64                `json:"seconds"`
	Requests         int                    `json:"requests"`
	RPS              float64                `json:"requests_per_second"`
	Acked            int64                  `json:"acknowledged_submissions"`
	SubmitsPerSecond float64                `json:"submissions_per_second"`
	Status5xx        int                    `json:"status_5xx"`
	Status503        int                    `json:"status_503"`
	Status429        int                    `json:"status_429"`
	NoAnswer         int                    `json:"no_answer"`
	Unanswered       []string               `json:"unanswered,omitempty"`
	CutRepeated      int                    `json:"cut_and_repeated"`
	Hangs            int                    `json:"hangs"`
	NoRetryAfter     int                    `json:"busy_without_retry_after"`
	MaxLatencyMS     float64                `json:"max_latency_ms"`
	Unknown          int                    `json:"unknown_outcomes"`
	ReplayMismatches int                    `json:"replay_mismatches"`
	Routes           map[string]routeReport `json:"routes"`
	Memory           *memReport             `json:"memory,omitempty"`
	Check            *checkReport           `json:"check,omitempty"`
}

type routeReport struct {
	N      int            `json:"n"`
	P50MS  float64        `json:"p50_ms"`
	P99MS  float64        `json:"p99_ms"`
	MaxMS  float64        `json:"max_ms"`
	Status map[string]int `json:"status"`
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (s *stats) report(elapsed time.Duration, acked int64) *report {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := &report{Seconds: elapsed.Seconds(), Routes: map[string]routeReport{}, Acked: acked, Hangs: s.hangs, MaxLatencyMS: ms(s.maxLat), NoRetryAfter: s.noRetryAfter,
		Unanswered: slices.Clone(s.unanswered), CutRepeated: s.cutRepeated}
	for route, ds := range s.lat {
		slices.Sort(ds)
		rr := routeReport{N: len(ds), P50MS: ms(ds[len(ds)/2]), P99MS: ms(ds[min(len(ds)-1, len(ds)*99/100)]), MaxMS: ms(ds[len(ds)-1]), Status: map[string]int{}}
		for code, n := range s.status[route] {
			rr.Status[strconv.Itoa(code)] = n
			switch {
			case code == 0:
				rep.NoAnswer += n
			case code >= 500:
				rep.Status5xx += n
			}
			if code == 503 {
				rep.Status503 += n
			}
			if code == 429 {
				rep.Status429 += n
			}
		}
		rep.Requests += len(ds)
		rep.Routes[route] = rr
	}
	rep.RPS = float64(rep.Requests) / elapsed.Seconds()
	rep.SubmitsPerSecond = float64(acked) / elapsed.Seconds()
	return rep
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "players %d, %.1fs, %d requests (%.0f/s), %d submissions acknowledged (%.1f/s)\n",
		r.Players, r.Seconds, r.Requests, r.RPS, r.Acked, r.SubmitsPerSecond)
	fmt.Fprintf(w, "5xx %d (503 %d), 429 %d, busy without Retry-After %d, no answer %d, hangs %d, max latency %.1f ms, unknown outcomes %d, replay mismatches %d\n",
		r.Status5xx, r.Status503, r.Status429, r.NoRetryAfter, r.NoAnswer, r.Hangs, r.MaxLatencyMS, r.Unknown, r.ReplayMismatches)
	if r.CutRepeated > 0 {
		fmt.Fprintf(w, "dry runs cut mid-answer and made again: %d\n", r.CutRepeated)
	}
	for _, u := range r.Unanswered {
		fmt.Fprintf(w, "  no answer: %s\n", u)
	}
	routes := make([]string, 0, len(r.Routes))
	for k := range r.Routes {
		routes = append(routes, k)
	}
	sort.Strings(routes)
	fmt.Fprintf(w, "%-30s %7s %9s %9s %9s  %s\n", "route", "n", "p50 ms", "p99 ms", "max ms", "statuses")
	for _, k := range routes {
		rr := r.Routes[k]
		fmt.Fprintf(w, "%-30s %7d %9.2f %9.2f %9.2f  %v\n", k, rr.N, rr.P50MS, rr.P99MS, rr.MaxMS, rr.Status)
	}
	if r.Memory != nil {
		fmt.Fprintf(w, "server memory (%s): first %.1f MiB, at a quarter %.1f MiB, max %.1f MiB, last %.1f MiB over %d samples\n",
			r.Memory.Source, r.Memory.FirstMiB, r.Memory.QuarterMiB, r.Memory.MaxMiB, r.Memory.LastMiB, r.Memory.Samples)
	}
	if r.Check != nil {
		r.Check.print(w)
	}
}

type memReport struct {
	Source   string  `json:"source"`
	FirstMiB float64 `json:"first_mib"`
	// QuarterMiB is the sample a quarter into the run, once warmed up:
	// flat memory means LastMiB stays near it.
	QuarterMiB float64 `json:"quarter_mib"`
	MaxMiB     float64 `json:"max_mib"`
	LastMiB    float64 `json:"last_mib"`
	Samples    int     `json:"samples"`
}

// startMemSampler samples the server's resident memory every second: from
// /proc/PID/status with -server-pid, else from its /metrics.
func startMemSampler(ctx context.Context, pid int, c *client) func() *memReport {
	var mu sync.Mutex
	var vals []float64
	source := "/metrics process_resident_memory_bytes"
	if pid > 0 {
		source = fmt.Sprintf("/proc/%d VmRSS", pid)
	}
	sample := func() {
		var v float64
		if pid > 0 {
			f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
			if err != nil {
				return
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
					kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
					v = kb / 1024
				}
			}
			f.Close()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/metrics", nil)
			resp, err := c.http.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if rest, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
					b, _ := strconv.ParseFloat(rest, 64)
					v = b / (1 << 20)
				}
			}
		}
		if v > 0 {
			mu.Lock()
			vals = append(vals, v)
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		sample()
		for {
			select {
			case <-ctx.Done():
				sample()
				return
			case <-t.C:
				sample()
			}
		}
	}()
	return func() *memReport {
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(vals) == 0 {
			return nil
		}
		return &memReport{Source: source, FirstMiB: vals[0], QuarterMiB: vals[len(vals)/4], MaxMiB: slices.Max(vals), LastMiB: vals[len(vals)-1], Samples: len(vals)}
	}
}
