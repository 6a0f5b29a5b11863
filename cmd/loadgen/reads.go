package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// cmdReads sends GET PATH from N concurrent clients for the duration, each
// as soon as its last answer came, and prints the answers per second and,
// on its last line, the number of 200 answers (the scripts divide CPU by
// it). Any other status fails the run.
func cmdReads(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("reads", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "server base URL")
	path := fs.String("path", "/v1/leaderboard?limit=20", "what to read")
	players := fs.Int("players", 32, "concurrent readers")
	duration := fs.Duration("duration", 10*time.Second, "how long to read")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tr := &http.Transport{MaxIdleConns: *players, MaxIdleConnsPerHost: *players}
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	runCtx, cancel := context.WithTimeout(ctx, *duration)
	defer cancel()
	var ok, bad atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	url := strings.TrimRight(*base, "/") + *path
	for range *players {
		wg.Go(func() {
			for runCtx.Err() == nil {
				req, _ := http.NewRequestWithContext(runCtx, http.MethodGet, url, nil)
				resp, err := hc.Do(req)
				if err != nil {
					if !errors.Is(runCtx.Err(), context.DeadlineExceeded) {
						bad.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok.Add(1)
				} else {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "%d readers, %.1fs: %d reads answered 200 (%.0f/s), %d failed\n",
		*players, elapsed.Seconds(), ok.Load(), float64(ok.Load())/elapsed.Seconds(), bad.Load())
	if bad.Load() > 0 {
		return fmt.Errorf("FAILED: %d reads did not answer 200", bad.Load())
	}
	fmt.Fprintln(stdout, ok.Load())
	return nil
}
