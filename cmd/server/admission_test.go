package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// trickler is a client that sends a request's headers and then its body one
// byte at a time, slowly: the attack that used to hold the in-flight places.
type trickler struct {
	conn   net.Conn
	status chan int // the status the server answered with, 0 if none
}

// startTrickler opens a connection from the client address forwardedFor
// (as a trusted proxy would report it) and starts trickling a body of
// length bytes, one byte every gap.
func startTrickler(t *testing.T, s *testServer, forwardedFor, path string, length int, gap time.Duration) *trickler {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	tr := &trickler{conn: conn, status: make(chan int, 1)}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nX-Forwarded-For: %s\r\n\r\n",
		path, length, forwardedFor)
	go func() {
		for i := 0; i < length; i++ {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(gap)
		}
	}()
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			tr.status <- 0
			return
		}
		resp.Body.Close()
		tr.status <- resp.StatusCode
	}()
	t.Cleanup(func() { conn.Close() })
	return tr
}

// TestSlowBodiesDoNotTakeTheServer: 150 clients, each from its own address,
// trickle request bodies (one byte every 500 ms) while a victim reads
// leaderboards and submits designs. The trickling clients wait for their
// bodies outside the in-flight limit, so the victim never sees a 503, and
// each of them is cut off with 408 at the body deadline.
func TestSlowBodiesDoNotTakeTheServer(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["MAX_INFLIGHT"] = "32"
	env["BODY_TIMEOUT"] = "4s"
	env["TRUSTED_PROXIES"] = "127.0.0.1/32"
	s := startServer(t, env)
	victim := s.newPlayer(t, "victim")
	victimAddr := map[string]string{"X-Forwarded-For": "203.0.113.7"}

	const attackers = 150
	var tricklers []*trickler
	for i := range attackers {
		addr := fmt.Sprintf("198.51.%d.%d", 100+i/250, 1+i%250)
		tricklers = append(tricklers, startTrickler(t, s, addr, "/v1/simulations", 100, 500*time.Millisecond))
	}
	time.Sleep(500 * time.Millisecond) // every trickler is past its headers

	var mu sync.Mutex
	statuses := map[int]int{}
	var slowest time.Duration
	var wg sync.WaitGroup
	// Ten at a time: within the victim's own per-address limit.
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 3 {
				rq := req{method: "GET", path: boardPath(tutorial, nil), header: victimAddr}
				if i == 0 {
					rq = req{method: "POST", path: "/v1/challenges/" + tutorial + "/submissions", token: victim.token,
						body: map[string]any{"design": design(2)}, header: victimAddr}
				}
				start := time.Now()
				r := s.send(t, rq)
				mu.Lock()
				statuses[r.status]++
				slowest = max(slowest, time.Since(start))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("victim during the attack: %v, slowest %s", statuses, slowest)
	if statuses[200] != 20 || statuses[201] != 10 {
		t.Errorf("the victim's requests during the attack: %v, want 20 × 200 and 10 × 201", statuses)
	}

	cut := map[int]int{}
	for _, tr := range tricklers {
		select {
		case st := <-tr.status:
			cut[st]++
		case <-time.After(30 * time.Second):
			cut[-1]++
		}
	}
	if cut[http.StatusRequestTimeout] != attackers {
		t.Errorf("the slow clients were answered %v, want %d × 408", cut, attackers)
	}
}

// TestOneAddressCannotTakeTheServer: one address opening 60 slow requests
// gets MAX_INFLIGHT_PER_CLIENT of them read and the rest refused at once
// with 429; another address is served throughout.
func TestOneAddressCannotTakeTheServer(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	env["MAX_INFLIGHT_PER_CLIENT"] = "8"
	env["BODY_TIMEOUT"] = "3s"
	env["TRUSTED_PROXIES"] = "127.0.0.1/32"
	s := startServer(t, env)
	var tricklers []*trickler
	for range 60 {
		tricklers = append(tricklers, startTrickler(t, s, "198.51.100.1", "/v1/simulations", 100, 300*time.Millisecond))
	}
	time.Sleep(500 * time.Millisecond)
	for range 10 {
		r := s.send(t, req{method: "GET", path: "/v1/challenges", header: map[string]string{"X-Forwarded-For": "203.0.113.9"}})
		if r.status != 200 {
			t.Fatalf("another address during the attack: %d %s", r.status, r.body)
		}
	}
	got := map[int]int{}
	for _, tr := range tricklers {
		select {
		case st := <-tr.status:
			got[st]++
		case <-time.After(30 * time.Second):
			got[-1]++
		}
	}
	if got[http.StatusTooManyRequests] != 52 || got[http.StatusRequestTimeout] != 8 {
		t.Errorf("one address's 60 slow requests were answered %v, want 52 × 429 and 8 × 408", got)
	}
	// A body declared larger than the limit is refused before any of it is read.
	r := s.send(t, req{method: "POST", path: "/v1/simulations", body: strings.Repeat(" ", 2<<20)})
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body: %d", r.status)
	}
}
