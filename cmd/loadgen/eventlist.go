package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// eventListPaths are the first pages a reader of GET /v1/events can ask
// for: the default page and the largest, unfiltered and by each phase.
func eventListPaths() []string {
	paths := []string{"/v1/events", "/v1/events?limit=100"}
	for _, phase := range []string{"upcoming", "live", "finishing", "finished"} {
		paths = append(paths, "/v1/events?phase="+phase, "/v1/events?limit=100&phase="+phase)
	}
	return paths
}

// cmdEventList reads the event list as its readers do: first the size of
// every first page (eventListPaths), then N concurrent readers for the
// duration, each paging through the whole list by its cursor (limit=100,
// each phase in turn) and starting again at the end. It prints the
// largest page in bytes and the pages read; a page that is not a 200, or
// larger than -max-page bytes, fails the run.
func cmdEventList(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("eventlist", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	readers := fs.Int("readers", 8, "concurrent readers")
	duration := fs.Duration("duration", 10*time.Second, "how long the readers page")
	maxPage := fs.Int("max-page", 100_000, "the largest page allowed, in bytes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *readers}, Timeout: 10 * time.Second}
	root := strings.TrimRight(*base, "/")
	var largest atomic.Int64
	var largestPath atomic.Value
	read := func(ctx context.Context, path string) (next string, events int, err error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, root+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return "", 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return "", 0, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		for n := int64(len(body)); ; {
			old := largest.Load()
			if n <= old {
				break
			}
			if largest.CompareAndSwap(old, n) {
				largestPath.Store(path)
				break
			}
		}
		var page struct {
			Events []json.RawMessage `json:"events"`
			Next   string            `json:"next"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return "", 0, fmt.Errorf("GET %s: %w", path, err)
		}
		return page.Next, len(page.Events), nil
	}

	for _, path := range eventListPaths() {
		_, n, err := read(ctx, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "GET %s: %d events\n", path, n)
	}
	fmt.Fprintf(stdout, "largest first page: %d bytes (%s)\n", largest.Load(), largestPath.Load())

	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var pages, events atomic.Int64
	var failure atomic.Value
	var wg sync.WaitGroup
	phases := []string{"", "upcoming", "live", "finishing", "finished"}
	for r := range *readers {
		wg.Go(func() {
			for i := r; runCtx.Err() == nil; i++ {
				cursor := ""
				for runCtx.Err() == nil {
					path := "/v1/events?limit=100"
					if phase := phases[i%len(phases)]; phase != "" {
						path += "&phase=" + phase
					}
					if cursor != "" {
						path += "&cursor=" + url.QueryEscape(cursor)
					}
					next, n, err := read(runCtx, path)
					if err != nil {
						if runCtx.Err() == nil {
							failure.Store(err)
							cancel()
						}
						return
					}
					pages.Add(1)
					events.Add(int64(n))
					if next == "" {
						break
					}
					cursor = next
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failure.Load().(error); err != nil {
		return fmt.Errorf("FAILED: %w", err)
	}
	fmt.Fprintf(stdout, "%d readers, %s: %d pages of limit=100 (%d events); largest page %d bytes (%s)\n",
		*readers, *duration, pages.Load(), events.Load(), largest.Load(), largestPath.Load())
	if largest.Load() > int64(*maxPage) {
		return fmt.Errorf("FAILED: a page of %d bytes, more than %d", largest.Load(), *maxPage)
	}
	return nil
}
