package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// cmdFlood measures what a hint flood does to another player's submissions, through a
// running server: victims submit one at a time (each its own player on its own loopback
// address), first alone and then while attackers (each its own player on its own
// loopback address, 127.0.2.x) ask for hints on the heaviest level in a loop, several at
// a time, without pausing on 429 or 503 unless told to. Runs alternate the two phases,
// with fresh victims each time (so that no victim reaches its own rate limits), and the
// medians over the runs are printed at the end.
//
//	loadgen flood -url U [-attackers 16] [-loops 2] [-victims 4] [-submissions 50] [-runs 3] [-heaviest-with-admin-token T]
func cmdFlood(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("flood", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	attackers := fs.Int("attackers", 16, "attacking players, each on its own loopback address")
	loops := fs.Int("loops", 2, "hint requests each attacker keeps going at once")
	victims := fs.Int("victims", 4, "victim players per phase, one after the other, each on its own address")
	perVictim := fs.Int("submissions", 50, "submissions per victim")
	runs := fs.Int("runs", 3, "alone/flooded pairs")
	hintLevel := fs.String("hint-level", "black-friday", "level the attackers ask hints for")
	level := fs.String("level", "first-request", "level the victims submit to")
	respect := fs.Bool("respect-retry-after", false, "attackers pause for Retry-After on 429 and 503")
	adminToken := fs.String("heaviest-with-admin-token", "", "the server's ADMIN_TOKEN: attackers ask hints on the heaviest variant of -hint-level that the cost bound lets through, uploaded by a new author")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base := strings.TrimRight(*url, "/")
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	prefix := "fl" + hex.EncodeToString(tag[:])
	clientFrom := loopbackClient
	post := func(ctx context.Context, c *http.Client, path, token string, body []byte, key string) (int, http.Header, []byte, error) {
		return send(ctx, c, "POST", base+path, token, body, key)
	}
	register := func(c *http.Client, name string) (string, error) {
		tok, _, err := registerPlayer(ctx, c, base, name)
		return tok, err
	}
	if *adminToken != "" {
		heavy, err := uploadHeaviestLevel(ctx, loopbackClient("127.0.3.1"), base, *adminToken, *hintLevel, prefix+"-author")
		if err != nil {
			return err
		}
		*hintLevel = heavy
	}
	hintDesign, err := startingDesign(ctx, base, *hintLevel)
	if err != nil {
		return err
	}
	hintBody, _ := json.Marshal(map[string]any{"design": hintDesign})
	submitBody, _ := json.Marshal(map[string]any{"design": design(2)})

	type attacker struct {
		c     *http.Client
		token string
	}
	atk := make([]attacker, *attackers)
	for i := range atk {
		c := clientFrom(fmt.Sprintf("127.0.2.%d", i+1))
		tok, err := register(c, fmt.Sprintf("%s-attacker-%d", prefix, i))
		if err != nil {
			return err
		}
		atk[i] = attacker{c, tok}
	}
	nextVictim := 0
	victimPhase := func() ([]time.Duration, map[int]int, error) {
		var ds []time.Duration
		codes := map[int]int{}
		for range *victims {
			nextVictim++
			c := clientFrom(fmt.Sprintf("127.0.1.%d", nextVictim))
			tok, err := register(c, fmt.Sprintf("%s-victim-%d", prefix, nextVictim))
			if err != nil {
				return nil, nil, err
			}
			for range *perVictim {
				begin := time.Now()
				status, _, _, err := post(ctx, c, "/v1/challenges/"+*level+"/submissions", tok, submitBody, newKey())
				if err != nil {
					return nil, nil, fmt.Errorf("victim submission: %w", err)
				}
				ds = append(ds, time.Since(begin))
				codes[status]++
			}
			c.CloseIdleConnections()
		}
		slices.Sort(ds)
		return ds, codes, nil
	}
	q := func(ds []time.Duration, p float64) float64 {
		return float64(ds[min(len(ds)-1, int(float64(len(ds))*p))].Microseconds()) / 1000
	}
	var alone50, alone99, flood50, flood99, floodRate []float64
	for run := 1; run <= *runs; run++ {
		ds, codes, err := victimPhase()
		if err != nil {
			return err
		}
		alone50, alone99 = append(alone50, q(ds, 0.5)), append(alone99, q(ds, 0.99))
		fmt.Printf("run %d, victim alone:    n=%d p50 %7.2f ms p99 %7.2f ms max %7.2f ms statuses %v\n",
			run, len(ds), q(ds, 0.5), q(ds, 0.99), q(ds, 1), codes)

		fctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var mu sync.Mutex
		hintCodes := map[int]int{}
		var hints atomic.Int64
		for _, a := range atk {
			for range *loops {
				wg.Go(func() {
					for fctx.Err() == nil {
						status, h, _, err := post(fctx, a.c, "/v1/challenges/"+*hintLevel+"/hint", a.token, hintBody, "")
						if err != nil {
							continue
						}
						hints.Add(1)
						mu.Lock()
						hintCodes[status]++
						mu.Unlock()
						if *respect && (status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) {
							select {
							case <-time.After(retryAfter(h)):
							case <-fctx.Done():
							}
						}
					}
				})
			}
		}
		time.Sleep(time.Second)
		h0, t0 := hints.Load(), time.Now()
		ds, codes, err = victimPhase()
		rate := float64(hints.Load()-h0) / time.Since(t0).Seconds()
		stop()
		wg.Wait()
		if err != nil {
			return err
		}
		flood50, flood99, floodRate = append(flood50, q(ds, 0.5)), append(flood99, q(ds, 0.99)), append(floodRate, rate)
		fmt.Printf("run %d, victim flooded:  n=%d p50 %7.2f ms p99 %7.2f ms max %7.2f ms statuses %v; attackers %.0f hint requests/s, statuses %v\n",
			run, len(ds), q(ds, 0.5), q(ds, 0.99), q(ds, 1), codes, rate, hintCodes)
	}
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[len(s)/2]
	}
	how := "without pausing"
	if *respect {
		how = "honouring Retry-After"
	}
	fmt.Printf("medians of %d runs: alone p50 %.2f ms p99 %.2f ms; flooded (%d attackers x %d, %s, %.0f hint requests/s) p50 %.2f ms p99 %.2f ms; p99 flooded/alone %.2fx\n",
		*runs, med(alone50), med(alone99), *attackers, *loops, how, med(floodRate), med(flood50), med(flood99), med(flood99)/med(alone99))
	return nil
}

// startingDesign reads a level's starting design from the API.
func startingDesign(ctx context.Context, base, slug string) (json.RawMessage, error) {
	rq, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/challenges/"+slug, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(rq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var c struct {
		Definition struct {
			StartingDesign json.RawMessage `json:"starting_design"`
		} `json:"definition"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Definition.StartingDesign) == 0 {
		return nil, fmt.Errorf("level %s: no starting design (%d, %v)", slug, resp.StatusCode, err)
	}
	return c.Definition.StartingDesign, nil
}

// loopbackClient is an HTTP client whose connections come from addr: Linux answers every
// 127.0.0.0/8 address locally, so each simulated client has an address of its own.
func loopbackClient(addr string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}}
}

// send makes one request with a JSON body (none if body is nil) and reads the whole answer.
func send(ctx context.Context, c *http.Client, method, url, token string, body []byte, key string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	rq, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		rq.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		rq.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		rq.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(rq)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, out, err
}

// registerPlayer makes a player named name and returns its token and id.
func registerPlayer(ctx context.Context, c *http.Client, base, name string) (token, id string, err error) {
	status, _, body, err := send(ctx, c, "POST", base+"/v1/players", "", []byte(`{"name":"`+name+`"}`), "")
	if err != nil || status != http.StatusCreated {
		return "", "", fmt.Errorf("register %s: %d %v %s", name, status, err, body)
	}
	var p struct {
		Token  string `json:"token"`
		Player struct {
			ID string `json:"id"`
		} `json:"player"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Token == "" || p.Player.ID == "" {
		return "", "", fmt.Errorf("register %s: no token or id in %s", name, body)
	}
	return p.Token, p.Player.ID, nil
}
