package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// eventAudience is what reads an event while its crowd submits: standings
// readers, each reading a page every readEvery (in turn the first page and
// the page around the reader, who is one of the players), and stream
// watchers, each holding the event's stream open from its own loopback
// address group (the server caps streams per address).
type eventAudience struct {
	Readers        int            `json:"standings_readers"`
	Reads          int64          `json:"standings_reads"`
	ReadStatus     map[string]int `json:"standings_statuses"`
	ReadP50MS      float64        `json:"standings_p50_ms"`
	ReadP99MS      float64        `json:"standings_p99_ms"`
	Watchers       int            `json:"stream_watchers"`
	WatchersOpened int64          `json:"stream_watchers_opened"`
	Messages       int64          `json:"stream_messages"` // snapshots and changes, all watchers
	Snapshots      int64          `json:"stream_snapshots"`

	mu  sync.Mutex
	lat []time.Duration
}

// watch starts the audience of event id on base until ctx ends; tokens are
// the readers' (players') tokens. wait returns once every reader and
// watcher has stopped.
func watchEvent(ctx context.Context, base, id string, tokens []string, readers, watchers, perAddress int, readEvery time.Duration) (a *eventAudience, wait func()) {
	a = &eventAudience{Readers: readers, Watchers: watchers, ReadStatus: map[string]int{}}
	var wg sync.WaitGroup
	var reads atomic.Int64
	for r := range readers {
		token := tokens[r%len(tokens)]
		wg.Go(func() {
			hc := &http.Client{Timeout: 10 * time.Second}
			t := time.NewTicker(readEvery)
			defer t.Stop()
			for i := 0; ctx.Err() == nil; i++ {
				path := "/v1/events/" + id + "/standings?limit=25"
				if i%2 == 1 {
					path += "&around=me"
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				start := time.Now()
				resp, err := hc.Do(req)
				status := "no answer"
				if err == nil {
					_, _ = bufio.NewReader(resp.Body).WriteTo(discard{})
					resp.Body.Close()
					status = fmt.Sprint(resp.StatusCode)
				}
				if ctx.Err() != nil {
					return
				}
				reads.Add(1)
				a.mu.Lock()
				a.ReadStatus[status]++
				if status == "200" {
					a.lat = append(a.lat, time.Since(start))
				}
				a.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-t.C:
				}
			}
		})
	}
	var opened, messages, snapshots atomic.Int64
	for w := range watchers {
		wg.Go(func() {
			local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+w/perAddress/250), byte(1+w/perAddress%250))}
			hc := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: local}).DialContext}}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events/"+id+"/stream", nil)
			resp, err := hc.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return
			}
			opened.Add(1)
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<16), 1<<22)
			for sc.Scan() {
				line := sc.Bytes()
				switch {
				case bytes.HasPrefix(line, []byte("event: standings")):
					snapshots.Add(1)
				case bytes.HasPrefix(line, []byte("data: ")):
					messages.Add(1)
				}
			}
		})
	}
	return a, func() {
		wg.Wait()
		a.Reads, a.WatchersOpened, a.Messages, a.Snapshots = reads.Load(), opened.Load(), messages.Load(), snapshots.Load()
		if len(a.lat) > 0 {
			slices.Sort(a.lat)
			a.ReadP50MS, a.ReadP99MS = ms(a.lat[len(a.lat)/2]), ms(a.lat[min(len(a.lat)-1, len(a.lat)*99/100)])
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// String is the audience's line in the run's report.
func (a *eventAudience) String() string {
	return fmt.Sprintf("audience: %d standings readers, %d reads (statuses %v), p50 %.1f ms, p99 %.1f ms; %d of %d stream watchers opened, %d messages (%d snapshots)",
		a.Readers, a.Reads, a.ReadStatus, a.ReadP50MS, a.ReadP99MS, a.WatchersOpened, a.Watchers, a.Messages, a.Snapshots)
}
