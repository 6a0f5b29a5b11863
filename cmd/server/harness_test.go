package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"backpressure/internal/pgtest"
)

// testServer is a server started through run, as in production.
type testServer struct {
	t          testing.TB
	base       string
	env        map[string]string
	logs       *logBuffer
	adminToken string
	stop       context.CancelFunc
	done       chan error
	client     *http.Client
	// pid is the process of a server started by startServerProcess;
	// killed says the test killed it (it cannot exit cleanly).
	pid    int
	killed atomic.Bool
}

// testEnv is the environment of a test server on a fresh database: a free
// loopback port, generous limits (tests that check limits lower them).
func testEnv(t testing.TB) map[string]string {
	return map[string]string{
		"HOST":              "127.0.0.1",
		"PORT":              "0",
		"DATABASE_URL":      pgtest.NewDatabase(t),
		"ADMIN_TOKEN":       randomToken(),
		"LOG_LEVEL":         "debug",
		"RATE_LIMIT_IP":     "0",
		"RATE_LIMIT_PLAYER": "0",
		"RATE_LIMIT_SIM":    "0",
		"SHUTDOWN_TIMEOUT":  "20s",
	}
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// startServer runs the server with env and waits until it listens. It is
// stopped (and must stop cleanly) when the test ends.
func startServer(t testing.TB, env map[string]string) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{
		t:          t,
		env:        env,
		logs:       newLogBuffer(),
		adminToken: env["ADMIN_TOKEN"],
		stop:       cancel,
		done:       make(chan error, 1),
		client:     &http.Client{Timeout: 60 * time.Second},
	}
	getenv := func(k string) string { return env[k] }
	go func() { s.done <- run(ctx, []string{"server"}, getenv, io.Discard, s.logs) }()
	select {
	case addr := <-s.logs.listening:
		s.base = "http://" + addr
	case err := <-s.done:
		cancel()
		t.Fatalf("server did not start: %v\nlogs:\n%s", err, s.logs)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("server did not start within 60s; logs:\n%s", s.logs)
	}
	t.Cleanup(func() {
		if err := s.shutdown(); err != nil {
			t.Errorf("run returned %v", err)
		}
		s.checkLogs()
	})
	return s
}

// shutdown cancels run's context and waits for it to return (once).
func (s *testServer) shutdown() error {
	s.stop()
	select {
	case err, ok := <-s.done:
		if !ok {
			return nil
		}
		close(s.done)
		return err
	case <-time.After(60 * time.Second):
		return fmt.Errorf("run did not return within 60s of cancellation")
	}
}

// checkLogs asserts that no secret reached the log: no player token and not
// the admin token, whatever the test did.
func (s *testServer) checkLogs() {
	logs := s.logs.String()
	if s.adminToken != "" && strings.Contains(logs, s.adminToken) {
		s.t.Errorf("the admin token appears in the logs")
	}
	if strings.Contains(logs, "bp_") {
		for _, line := range strings.Split(logs, "\n") {
			if strings.Contains(line, "bp_") {
				s.t.Errorf("a player token may appear in the logs: %s", line)
			}
		}
	}
}

// db opens the server's database, for checks behind the API's back.
func (s *testServer) db(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), s.env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.WithoutCancel(t.Context())) })
	return conn
}

func (s *testServer) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := s.db(t).QueryRow(t.Context(), "SELECT count(*) FROM "+pgx.Identifier{table}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// req is one request of a test.
type req struct {
	method, path string
	body         any // []byte or string: sent as is; else encoded as JSON
	token        string
	header       map[string]string
}

// response is what came back, already checked against the OpenAPI document.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// problem is a decoded problem+json body.
type problem struct {
	Type   string `json:"type"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`
	Errors []struct {
		Field  string `json:"field"`
		Reason string `json:"reason"`
	} `json:"errors"`
}

func (r *response) problem(t *testing.T) problem {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json; body %s", ct, r.body)
	}
	var p problem
	r.decode(t, &p)
	if p.Status != r.status {
		t.Errorf("problem status %d, response status %d", p.Status, r.status)
	}
	return p
}

// fields lists a problem's invalid fields.
func (p problem) fields() []string {
	var out []string
	for _, e := range p.Errors {
		out = append(out, e.Field)
	}
	return out
}

// do sends a request and validates the response against the OpenAPI
// document: its status must be documented for the operation and its body
// must match the documented schema.
func (s *testServer) do(t *testing.T, rq req) *response {
	t.Helper()
	resp := s.send(t, rq)
	openAPI(t, s).check(t, rq.method, rq.path, resp)
	return resp
}

// send is do without the OpenAPI check.
func (s *testServer) send(t *testing.T, rq req) *response {
	t.Helper()
	var body io.Reader
	switch b := rq.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	httpReq, err := http.NewRequestWithContext(t.Context(), rq.method, s.base+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	if rq.token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+rq.token)
	}
	for k, v := range rq.header {
		if v == "" {
			httpReq.Header.Del(k)
			continue
		}
		httpReq.Header.Set(k, v)
	}
	httpResp, err := s.client.Do(httpReq)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer httpResp.Body.Close()
	raw, err := io.ReadAll(httpResp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", rq.method, rq.path, err)
	}
	return &response{status: httpResp.StatusCode, header: httpResp.Header, body: raw}
}

// must sends a request and fails the test unless the status is want.
func (s *testServer) must(t *testing.T, want int, rq req, v any) *response {
	t.Helper()
	resp := s.do(t, rq)
	if resp.status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", rq.method, rq.path, resp.status, want, resp.body)
	}
	if v != nil {
		resp.decode(t, v)
	}
	return resp
}

// logBuffer collects the server's log and announces the address it
// listens on.
type logBuffer struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	partial   []byte
	listening chan string
	announced bool
}

func newLogBuffer() *logBuffer { return &logBuffer{listening: make(chan string, 1)} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		line := b.partial[:i]
		b.partial = b.partial[i+1:]
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if !b.announced && json.Unmarshal(line, &rec) == nil && rec.Msg == "listening" {
			b.announced = true
			b.listening <- rec.Addr
		}
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records returns the log lines whose msg is msg, decoded.
func (b *logBuffer) records(msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}
