package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERM sends the process a real SIGTERM while the server has, at
// once: submissions whose bodies are still arriving, a client trickling a
// body that will never finish, and idle keep-alive connections. The
// submissions complete and are stored; at SHUTDOWN_TIMEOUT the slow and
// idle connections are cut; run returns nil; every acknowledged submission
// is in the database.
//
// Not parallel: the signal goes to the whole test process, and parallel
// tests only run once every sequential test has finished.
func TestSIGTERM(t *testing.T) {
	env := testEnv(t)
	env["SHUTDOWN_TIMEOUT"] = "2s"
	env["BODY_TIMEOUT"] = "60s" // the slow client is cut by the shutdown, not by its own deadline
	s := startServer(t, env)
	p := s.newPlayer(t, "steady")

	// Submissions mid-body.
	const inFlight = 4
	type result struct {
		status int
		id     string
		err    error
	}
	results := make(chan result, inFlight)
	var finish []func()
	for i := range inFlight {
		body, _ := json.Marshal(map[string]any{"design": design(2 + i%2)})
		pr, pw := io.Pipe()
		rq, _ := http.NewRequest("POST", s.base+"/v1/challenges/"+tutorial+"/submissions", pr)
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Authorization", "Bearer "+p.token)
		rq.ContentLength = int64(len(body))
		go func() {
			resp, err := http.DefaultClient.Do(rq)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			var out submitResult
			raw, _ := io.ReadAll(resp.Body)
			_ = json.Unmarshal(raw, &out)
			results <- result{status: resp.StatusCode, id: out.Submission.ID}
		}()
		go func() { _, _ = pw.Write(body[:5]) }()
		finish = append(finish, func() { _, _ = pw.Write(body[5:]); pw.Close() })
	}
	// A body that never finishes, and idle keep-alive connections.
	slow := startTrickler(t, s, "", "/v1/simulations", 10000, 200*time.Millisecond)
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("idle connection's first request: %v", err)
		}
		resp.Body.Close()
		idle = append(idle, c)
		defer c.Close()
	}
	time.Sleep(300 * time.Millisecond) // every request is in its body

	start := time.Now()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(s.logs.String(), "shutting down") {
		if time.Since(start) > 10*time.Second {
			t.Fatal("SIGTERM did not start the shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, f := range finish {
		f()
	}
	var acknowledged []string
	for range inFlight {
		r := <-results
		if r.err != nil || r.status != http.StatusCreated {
			t.Errorf("in-flight submission: %d %v", r.status, r.err)
			continue
		}
		acknowledged = append(acknowledged, r.id)
	}
	select {
	case err := <-s.done:
		close(s.done) // shutdown() in the cleanup sees it closed
		if err != nil {
			t.Fatalf("run returned %v after SIGTERM, want nil", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not return after SIGTERM")
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("shutdown took %s with SHUTDOWN_TIMEOUT=2s", elapsed)
	}
	if st := <-slow.status; st != 0 {
		t.Errorf("the slow client was answered %d; want its connection cut", st)
	}
	for _, c := range idle {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("an idle connection is still open: %d %v", n, err)
		}
	}
	db := s.db(t)
	for _, id := range acknowledged {
		var n int
		if err := db.QueryRow(t.Context(), `SELECT count(*) FROM submissions WHERE id = $1`, id).Scan(&n); err != nil || n != 1 {
			t.Errorf("acknowledged submission %s: %d rows, %v", id, n, err)
		}
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Error(`no "stopped" in the log`)
	}
}
