package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cmdStreams measures live standings: -clients streams open on -url (from
// many loopback addresses, 8 per address, the server's default limit),
// -submissions first passes of new players stored through -submit-url
// (another replica, or the same), and for each the delay from the
// submission's acknowledgement to the last client receiving its change.
// It reports the delays' quantiles and the stream server's memory with and
// without the streams.
func cmdStreams(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("streams", flag.ContinueOnError)
	streamURL := fs.String("url", "http://127.0.0.1:8080", "the replica the clients stream from")
	submitURL := fs.String("submit-url", "", "the replica submissions go through (default -url)")
	slug := fs.String("level", "first-request", "level whose board is streamed")
	clients := fs.Int("clients", 1000, "concurrent stream clients")
	perAddress := fs.Int("per-address", 8, "clients per loopback source address")
	subs := fs.Int("submissions", 100, "submissions, one at a time")
	gap := fs.Duration("gap", 50*time.Millisecond, "pause between submissions")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *submitURL == "" {
		*submitURL = *streamURL
	}
	before, err := serverMemory(ctx, *streamURL)
	if err != nil {
		return err
	}

	// Every client records when it received each submission's change.
	type arrival struct {
		sub string
		at  time.Time
	}
	arrivals := make(chan arrival, *clients**subs)
	var opened, wg sync.WaitGroup
	streamCtx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var openErr error
	var errMu sync.Mutex
	for i := range *clients {
		opened.Add(1)
		wg.Go(func() {
			local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1 + i / *perAddress / 250), byte(1 + i / *perAddress % 250))}
			tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext}
			req, _ := http.NewRequestWithContext(streamCtx, "GET", *streamURL+"/v1/challenges/"+*slug+"/leaderboard/stream", nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(resp.Body)
				err = fmt.Errorf("stream %d: %s %s", i, resp.Status, body)
			}
			if err != nil {
				errMu.Lock()
				openErr = err
				errMu.Unlock()
				opened.Done()
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<16), 1<<22)
			first := true
			for sc.Scan() {
				line := sc.Bytes()
				if !bytes.HasPrefix(line, []byte("data: ")) {
					continue
				}
				if first { // the snapshot
					first = false
					opened.Done()
					continue
				}
				now := time.Now()
				var c struct {
					SubmissionID string `json:"submission_id"`
				}
				if json.Unmarshal(line[6:], &c) == nil {
					arrivals <- arrival{c.SubmissionID, now}
				}
			}
		})
	}
	opened.Wait()
	if openErr != nil {
		return openErr
	}
	time.Sleep(2 * time.Second) // let the server settle before measuring it
	during, err := serverMemory(ctx, *streamURL)
	if err != nil {
		return err
	}

	c := &http.Client{Timeout: 30 * time.Second}
	acked := map[string]time.Time{}
	tag := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	for i := range *subs {
		token, err := newStreamPlayer(ctx, c, *submitURL, fmt.Sprintf("st%s%d", tag, i))
		if err != nil {
			return err
		}
		id, err := submitFirstPass(ctx, c, *submitURL, *slug, token)
		if err != nil {
			return err
		}
		acked[id] = time.Now()
		time.Sleep(*gap)
	}
	// Collect until every client has every change, or 30 s.
	last := map[string]time.Time{}
	count := map[string]int{}
	want := *clients * *subs
	deadline := time.After(30 * time.Second)
	for got := 0; got < want; got++ {
		select {
		case a := <-arrivals:
			count[a.sub]++
			if a.at.After(last[a.sub]) {
				last[a.sub] = a.at
			}
		case <-deadline:
			got = want
		}
	}
	stopStreams()
	wg.Wait()

	var delays []float64
	missing := 0
	for id, at := range acked {
		if count[id] < *clients {
			missing += *clients - count[id]
		}
		if t, ok := last[id]; ok {
			delays = append(delays, float64(t.Sub(at).Microseconds())/1000)
		}
	}
	slices.Sort(delays)
	q := func(p float64) float64 {
		if len(delays) == 0 {
			return 0
		}
		return delays[min(len(delays)-1, int(p*float64(len(delays))))]
	}
	rep := map[string]any{
		"clients": *clients, "submissions": *subs, "missing_deliveries": missing,
		"last_client_delay_ms": map[string]float64{"p50": q(0.5), "p99": q(0.99), "max": q(1)},
		"server_before":        before, "server_with_streams": during,
		"rss_per_stream_kib": (during["process_resident_memory_bytes"] - before["process_resident_memory_bytes"]) / float64(*clients) / 1024,
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(out))
	if *jsonOut != "" {
		if err := os.WriteFile(*jsonOut, out, 0o644); err != nil {
			return err
		}
	}
	if missing > 0 {
		return fmt.Errorf("%d deliveries missing", missing)
	}
	return nil
}

// serverMemory reads the server's memory and goroutines from /metrics.
func serverMemory(ctx context.Context, base string) (map[string]float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		for _, name := range []string{"process_resident_memory_bytes", "go_memstats_heap_inuse_bytes", "go_goroutines", "backpressure_streams_open"} {
			if rest, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				out[name], _ = strconv.ParseFloat(rest, 64)
			}
		}
	}
	return out, sc.Err()
}

func newStreamPlayer(ctx context.Context, c *http.Client, base, name string) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	if err := postJSON(ctx, c, base+"/v1/players", "", map[string]any{"name": name}, &out); err != nil {
		return "", err
	}
	return out.Token, nil
}

// submitFirstPass submits a design that passes the tutorial level.
func submitFirstPass(ctx context.Context, c *http.Client, base, slug, token string) (string, error) {
	design := map[string]any{
		"components": []any{
			map[string]any{"id": "app", "type": "app_service", "params": map[string]any{"replicas": 2}},
			map[string]any{"id": "db", "type": "database"},
		},
		"edges": []any{map[string]any{"from": "app", "to": "db"}},
	}
	var out struct {
		Submission struct {
			ID string `json:"id"`
		} `json:"submission"`
		Improved bool `json:"improved"`
	}
	if err := postJSON(ctx, c, base+"/v1/challenges/"+slug+"/submissions", token, map[string]any{"design": design}, &out); err != nil {
		return "", err
	}
	if !out.Improved {
		return "", fmt.Errorf("submission %s did not pass", out.Submission.ID)
	}
	return out.Submission.ID, nil
}

func postJSON(ctx context.Context, c *http.Client, url, token string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %s %s", url, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}
