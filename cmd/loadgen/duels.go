package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// cmdDuels measures how soon duels are settled when a burst of duels asks to be settled at
// once, through a running server: pairs of fresh players (spread over -addresses loopback
// addresses, 127.0.4.x) each open a duel on the level, accept it and put in the first
// design; then every pair's second design is sent at once, and -delay later the second
// designs of other players' duels (the victims, each pair on an address of its own,
// 127.0.5.x). A duel is settled when the answer to its second design, or its first
// player's list of duels, says it has ended; its settle latency runs from its second
// design being sent. Refusals (429, 503) are retried after
// their Retry-After, as a client does.
//
//	loadgen duels -url U [-level black-friday] [-duels 150] [-addresses 16] [-victims 10] [-delay 300ms] [-within 5s]
func cmdDuels(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("duels", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	level := fs.String("level", "black-friday", "level of every duel")
	burst := fs.Int("duels", 150, "duels in the burst")
	addresses := fs.Int("addresses", 16, "loopback addresses the burst's players share")
	victims := fs.Int("victims", 10, "other players' duels, each pair on its own address")
	delay := fs.Duration("delay", 300*time.Millisecond, "how long after the burst the victims' second designs are sent")
	within := fs.Duration("within", 5*time.Second, "the bound every victim's settle latency is checked against")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base := strings.TrimRight(*url, "/")
	var tag [3]byte
	_, _ = rand.Read(tag[:])
	prefix := "du" + hex.EncodeToString(tag[:])
	startDesign, err := startingDesign(ctx, base, *level)
	if err != nil {
		return err
	}
	designBody, _ := json.Marshal(map[string]any{"design": startDesign})

	// do sends one request, retrying refusals after their Retry-After for up to a minute.
	do := func(c *http.Client, method, path, token string, body []byte) (int, []byte, error) {
		deadline := time.Now().Add(time.Minute)
		for {
			status, h, out, err := send(ctx, c, method, base+path, token, body, "")
			if err != nil || (status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable) || time.Now().After(deadline) {
				return status, out, err
			}
			time.Sleep(retryAfter(h))
		}
	}
	type pair struct {
		c            *http.Client
		tokA, tokB   string
		duel         string
		sent, ended  time.Time
		secondStatus int
		state        string
	}
	prepare := func(c *http.Client, name string) (*pair, error) {
		tokA, _, err := registerPlayer(ctx, c, base, name+"-a")
		if err != nil {
			return nil, err
		}
		tokB, idB, err := registerPlayer(ctx, c, base, name+"-b")
		if err != nil {
			return nil, err
		}
		body, _ := json.Marshal(map[string]any{"level": *level, "opponent": idB})
		status, out, err := do(c, "POST", "/v1/duels", tokA, body)
		if err != nil || status != http.StatusCreated {
			return nil, fmt.Errorf("challenge: %d %v %s", status, err, out)
		}
		var d struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &d); err != nil || d.ID == "" {
			return nil, fmt.Errorf("challenge: no id in %s", out)
		}
		if status, out, err := do(c, "POST", "/v1/duels/"+d.ID+"/accept", tokB, nil); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("accept: %d %v %s", status, err, out)
		}
		if status, out, err := do(c, "POST", "/v1/duels/"+d.ID+"/design", tokA, designBody); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("first design: %d %v %s", status, err, out)
		}
		return &pair{c: c, tokA: tokA, tokB: tokB, duel: d.ID}, nil
	}
	prepareAll := func(n int, kind string, addr func(i int) string) ([]*pair, error) {
		ps := make([]*pair, n)
		clients := map[string]*http.Client{}
		for i := range ps {
			a := addr(i)
			if clients[a] == nil {
				clients[a] = loopbackClient(a)
			}
			p, err := prepare(clients[a], fmt.Sprintf("%s-%s-%d", prefix, kind, i))
			if err != nil {
				return nil, fmt.Errorf("%s duel %d: %w", kind, i, err)
			}
			ps[i] = p
		}
		return ps, nil
	}
	prepStart := time.Now()
	burstPairs, err := prepareAll(*burst, "burst", func(i int) string { return fmt.Sprintf("127.0.4.%d", i%*addresses+1) })
	if err != nil {
		return err
	}
	victimPairs, err := prepareAll(*victims, "victim", func(i int) string { return fmt.Sprintf("127.0.5.%d", i+1) })
	if err != nil {
		return err
	}
	fmt.Printf("prepared %d burst duels on %d addresses and %d victims' duels on %s in %.1f s\n",
		*burst, *addresses, *victims, *level, time.Since(prepStart).Seconds())

	// settle sends a pair's second design, then, unless its answer shows the duel ended,
	// watches the duel every poll until it has: its settle latency is measured to the
	// answer or to the look that finds it ended (so within poll of the moment). The first
	// side's list of duels is watched: it has only this duel, without its runs' timelines.
	ended := func(state string) bool {
		return state != "" && state != "active" && state != "challenged" && state != "matching"
	}
	settle := func(p *pair, poll time.Duration) {
		p.sent = time.Now()
		var out []byte
		p.secondStatus, out, _ = do(p.c, "POST", "/v1/duels/"+p.duel+"/design", p.tokB, designBody)
		var d struct {
			State string `json:"state"`
		}
		if json.Unmarshal(out, &d) == nil && ended(d.State) {
			p.ended, p.state = time.Now(), d.State
			return
		}
		for time.Since(p.sent) < 2*time.Minute && ctx.Err() == nil {
			time.Sleep(poll)
			status, out, err := do(p.c, "GET", "/v1/duels?limit=1", p.tokA, nil)
			var list struct {
				Duels []struct {
					ID    string `json:"id"`
					State string `json:"state"`
				} `json:"duels"`
			}
			if err != nil || status != http.StatusOK || json.Unmarshal(out, &list) != nil || len(list.Duels) == 0 {
				continue
			}
			if d := list.Duels[0]; d.ID == p.duel && ended(d.State) {
				p.ended, p.state = time.Now(), d.State
				return
			}
		}
	}
	var wg sync.WaitGroup
	for _, p := range burstPairs {
		wg.Go(func() { settle(p, time.Second) })
	}
	time.Sleep(*delay)
	for _, p := range victimPairs {
		wg.Go(func() { settle(p, 100*time.Millisecond) })
	}
	wg.Wait()

	summarize := func(name string, ps []*pair) (late int) {
		var ds []time.Duration
		statuses, states := map[int]int{}, map[string]int{}
		for _, p := range ps {
			statuses[p.secondStatus]++
			if p.ended.IsZero() {
				states["not ended"]++
				late++
				continue
			}
			states[p.state]++
			d := p.ended.Sub(p.sent)
			ds = append(ds, d)
			if d > *within {
				late++
			}
		}
		slices.Sort(ds)
		q := func(f float64) float64 {
			if len(ds) == 0 {
				return 0
			}
			return ds[min(len(ds)-1, int(float64(len(ds))*f))].Seconds()
		}
		fmt.Printf("%-8s n=%d settled p50 %.2f s p99 %.2f s max %.2f s; over %v: %d; second design statuses %v; states %v\n",
			name, len(ps), q(0.5), q(0.99), q(1), *within, late, statuses, states)
		return late
	}
	summarize("burst", burstPairs)
	if late := summarize("victims", victimPairs); late > 0 {
		return fmt.Errorf("%d of %d victims' duels not settled within %v", late, len(victimPairs), *within)
	}
	return nil
}
