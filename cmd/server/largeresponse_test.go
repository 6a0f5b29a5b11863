package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// longLevel uploads the largest built-in level (six components in its
// reference design) stretched to the longest run a level may have (3000
// ticks), and returns its slug and that design.
func longLevel(t *testing.T, s *testServer, author player) (string, json.RawMessage) {
	t.Helper()
	var c challenge
	s.must(t, 200, req{method: "GET", path: "/v1/challenges/black-friday"}, &c)
	doc := c.Definition
	doc["slug"], doc["title"] = "long-run", "Long run"
	run := doc["run"].(map[string]any)
	run["tick_ms"] = 100
	run["duration_sec"] = 300
	s.must(t, 201, req{method: "POST", path: "/v1/challenges", token: author.token, body: doc}, nil)
	d, err := os.ReadFile(filepath.Join("..", "..", "internal", "challenges", "testdata", "solutions", "black-friday.json"))
	if err != nil {
		t.Fatal(err)
	}
	return "long-run", d
}

type simulationOut struct {
	Result struct {
		Ticks []json.RawMessage `json:"ticks"`
	} `json:"result"`
	Every      int `json:"every"`
	TotalTicks int `json:"total_ticks"`
}

// TestLargeSimulationResponses: a dry run is downsampled to 1000 ticks unless
// max_points asks for more; asked for every tick, it streams; and a client
// that asks for every tick and never reads does not hold the server's copy
// past WRITE_TIMEOUT.
func TestLargeSimulationResponses(t *testing.T) {
	t.Parallel()
	s := startServer(t, testEnv(t))
	slug, d := longLevel(t, s, s.newAuthor(t, "long"))

	var out simulationOut
	s.must(t, 200, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": slug, "design": d}}, &out)
	if len(out.Result.Ticks) > 1000 || out.Every != 3 || out.TotalTicks != 3000 {
		t.Errorf("default: %d ticks, every %d of %d; want at most 1000, every 3 of 3000", len(out.Result.Ticks), out.Every, out.TotalTicks)
	}
	full := s.must(t, 200, req{method: "POST", path: "/v1/simulations", body: map[string]any{"level": slug, "design": d, "max_points": 100000}}, &out)
	if len(out.Result.Ticks) != 3000 || out.Every != 1 {
		t.Errorf("max_points=100000: %d ticks, every %d", len(out.Result.Ticks), out.Every)
	}
	t.Logf("a whole timeline is %d bytes", len(full.body))

	// A client that never reads, with a small receive window so that the
	// response cannot hide in kernel buffers, on a server whose clients
	// have 1 s to take a response.
	env := testEnv(t)
	env["WRITE_TIMEOUT"] = "1s"
	s = startServer(t, env)
	slug, d = longLevel(t, s, s.newAuthor(t, "long"))
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		_ = c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	conn, err := dialer.DialContext(context.Background(), "tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"level": %q, "design": %s, "max_points": 100000}`, slug, d)
	fmt.Fprintf(conn, "POST /v1/simulations HTTP/1.1\r\nHost: x\r\nX-Request-Id: never-reads\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_, _ = bufio.NewReader(conn).Peek(1) // the response has started
	started := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for {
		done := false
		for _, rec := range s.logs.records("request") {
			done = done || rec["request_id"] == "never-reads"
		}
		if done {
			t.Logf("the handler of a client that never reads returned %s after its response started", time.Since(started).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the handler of a client that never reads was still writing 30 s later (WRITE_TIMEOUT=1s)")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
