package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"backpressure/internal/challenges"
	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/store/memstore"
)

// TestMeasureHintFlood measures a victim's submissions alone and then under a flood of
// hints from BP_ATTACKERS players (default 16), each asking for hints in a loop, two at a
// time, for RELIABILITY.md. It uses the HTTP API only. It runs only with BP_MEASURE=1:
//
//	BP_MEASURE=1 go test -run TestMeasureHintFlood -v ./internal/api/
func TestMeasureHintFlood(t *testing.T) {
	if os.Getenv("BP_MEASURE") != "1" {
		t.Skip("set BP_MEASURE=1 to measure a victim's submissions under a hint flood")
	}
	attackers := 16
	if n := os.Getenv("BP_ATTACKERS"); n != "" {
		fmt.Sscan(n, &attackers)
	}
	s := newServer(Deps{Store: memstore.New(), Config: Config{}})
	if err := rules.LoadCampaign(t.Context(), s.store, s.log, time.Now()); err != nil {
		t.Fatal(err)
	}
	h := s.routes()
	token := func(name string) string {
		tok, hash := game.NewToken()
		if _, err := s.store.CreatePlayer(t.Context(), name, game.RolePlayer, hash); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	// Each player sends from an address of its own, as on the internet: the per-address
	// limits then bound each attacker and never the victim.
	do := func(path, addr, tok, body string) int {
		rq := httptest.NewRequest("POST", path, strings.NewReader(body))
		rq.RemoteAddr = addr
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, rq)
		return w.Code
	}
	start := passingFirstRequest(t)
	hard, _ := challenges.CampaignLevel("black-friday")
	hintBody := `{"design": ` + string(mustJSONBytes(t, hard.StartingDesign)) + `}`
	// A new victim for each phase: 200 submissions use much of one player's simulation
	// budget, and a victim refused by its own budget would measure nothing.
	victimRun := func(name string, n int) ([]time.Duration, map[int]int) {
		victim := token(name)
		var ds []time.Duration
		codes := map[int]int{}
		for range n {
			begin := time.Now()
			codes[do("/v1/challenges/first-request/submissions", "198.51.100.1:4000", victim, `{"design": `+start+`}`)]++
			ds = append(ds, time.Since(begin))
		}
		slices.Sort(ds)
		if codes[http.StatusCreated] != n {
			t.Errorf("%s: statuses %v, want all %d submissions 201", name, codes, n)
		}
		return ds, codes
	}
	report := func(name string, ds []time.Duration, codes map[int]int) {
		t.Logf("%-60s n=%d p50 %8v p99 %8v max %8v statuses %v", name, len(ds), ds[len(ds)/2].Round(time.Microsecond),
			ds[len(ds)*99/100].Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond), codes)
	}
	alone, codes := victimRun("victim-alone", 200)
	report("victim alone", alone, codes)

	for _, respect := range []bool{false, true} {
		ctx, stop := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		var mu sync.Mutex
		hintCodes := map[int]int{}
		for i := range attackers {
			tok := token(fmt.Sprintf("attacker-%v-%d", respect, i))
			addr := fmt.Sprintf("203.0.113.%d:4000", i+1)
			for range 2 {
				wg.Go(func() {
					for ctx.Err() == nil {
						c := do("/v1/challenges/black-friday/hint", addr, tok, hintBody)
						mu.Lock()
						hintCodes[c]++
						mu.Unlock()
						if respect && (c == http.StatusTooManyRequests || c == http.StatusServiceUnavailable) {
							time.Sleep(time.Second) // Retry-After
						}
					}
				})
			}
		}
		time.Sleep(time.Second)
		flooded, codes := victimRun(fmt.Sprintf("victim-%v", respect), 200)
		stop()
		wg.Wait()
		how := "looping without pause"
		if respect {
			how = "honouring Retry-After"
		}
		report(fmt.Sprintf("victim, %d attackers %s", attackers, how), flooded, codes)
		t.Logf("attackers' hint statuses %v", hintCodes)
	}
}

func mustJSONBytes(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
