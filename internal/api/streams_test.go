package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/live"
	"backpressure/internal/store/memstore"
)

// streamFixture is a server on the in-memory store with its broker, and a
// level with one player on its board.
type streamFixture struct {
	srv    *server
	http   *httptest.Server
	broker *live.Broker
	store  *memstore.Store
}

func newStreamFixture(t *testing.T, cfg Config) *streamFixture {
	t.Helper()
	st := memstore.New()
	b := live.NewBroker()
	st.Notify = b.Publish
	ctx := context.Background()
	if _, _, err := st.PutLevel(ctx, game.Level{Slug: "lvl", Title: "L", Difficulty: "easy",
		Definition: json.RawMessage(`{}`), ContentHash: "h", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	srv := newServer(Deps{Store: st, Live: b, Config: cfg})
	hs := httptest.NewServer(srv.routes())
	t.Cleanup(func() {
		b.Close() // as run does at shutdown: streams end
		hs.Close()
	})
	return &streamFixture{srv: srv, http: hs, broker: b, store: st}
}

// submit stores a passing submission of a new player with score.
func (f *streamFixture) submit(t *testing.T, name string, score int64) game.SubmissionReceipt {
	t.Helper()
	ctx := context.Background()
	_, hash := game.NewToken()
	p, err := f.store.CreatePlayer(ctx, name, game.RolePlayer, hash)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.CreateSubmission(ctx, game.Submission{ID: uuid.Must(uuid.NewV7()), PlayerID: p.ID, Slug: "lvl",
		Version: 1, Design: json.RawMessage(`{}`), Passed: true, Score: score, CreatedAt: time.Now()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

type event struct{ name, id, data string }

// openStream starts a stream and returns its events (heartbeats as
// events named ":") and the response.
func (f *streamFixture) openStream(t *testing.T, query string, header map[string]string) (<-chan event, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/v1/challenges/lvl/leaderboard/stream"+query, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := f.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan event, 1024)
	go func() {
		defer close(events)
		readEvents(resp.Body, events)
	}()
	return events, resp
}

// readEvents parses a text/event-stream.
func readEvents(r io.Reader, out chan<- event) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	var e event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e.name != "" {
				out <- e
			}
			e = event{}
		case strings.HasPrefix(line, ": "):
			out <- event{name: ":", data: line[2:]}
		case strings.HasPrefix(line, "event: "):
			e.name = line[7:]
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			e.data = line[6:]
		}
	}
}

func next(t *testing.T, events <-chan event, skipHeartbeats bool) event {
	t.Helper()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if e.name == ":" && skipHeartbeats {
				continue
			}
			return e
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30 s")
		}
	}
}

func TestBoardStreamSnapshotChangesHeartbeat(t *testing.T) {
	f := newStreamFixture(t, Config{StreamHeartbeat: 20 * time.Millisecond})
	first := f.submit(t, "ada", 100)
	events, resp := f.openStream(t, "", nil)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	snap := next(t, events, true)
	var page game.BoardPage
	if err := json.Unmarshal([]byte(snap.data), &page); err != nil || snap.name != "snapshot" || snap.id != "1-1" ||
		len(page.Entries) != 1 || page.Entries[0].SubmissionID != first.Submission.ID {
		t.Fatalf("first event %+v (%v), want the snapshot at 1-1 with ada", snap, err)
	}
	second := f.submit(t, "bob", 200)
	ch := next(t, events, true)
	var c game.BoardChange
	if err := json.Unmarshal([]byte(ch.data), &c); err != nil || ch.name != "change" || ch.id != "1-2" ||
		c.SubmissionID != second.Submission.ID || c.Rank != 1 || c.PreviousRank != 0 || c.Total != 2 {
		t.Fatalf("second event %+v (%v), want bob's change 1-2 at rank 1", ch, err)
	}
	if hb := next(t, events, false); hb.name != ":" || hb.data != "heartbeat" {
		t.Errorf("then %+v, want a heartbeat", hb)
	}
}

func TestBoardStreamResume(t *testing.T) {
	f := newStreamFixture(t, Config{})
	for i := range 3 {
		f.submit(t, fmt.Sprintf("p%d", i), int64(100*(i+1)))
	}
	tests := []struct {
		name   string
		query  string
		header map[string]string
		want   []string // event name@id
	}{
		{"no id: snapshot", "", nil, []string{"snapshot@1-3"}},
		{"header", "", map[string]string{"Last-Event-ID": "1-1"}, []string{"change@1-2", "change@1-3"}},
		{"query", "?last_event_id=1-2", nil, []string{"change@1-3"}},
		{"header wins", "?last_event_id=1-0", map[string]string{"Last-Event-ID": "1-2"}, []string{"change@1-3"}},
		{"up to date", "", map[string]string{"Last-Event-ID": "1-3"}, nil},
		{"ahead of the board", "", map[string]string{"Last-Event-ID": "1-99"}, []string{"snapshot@1-3"}},
		{"another version", "", map[string]string{"Last-Event-ID": "7-2"}, []string{"snapshot@1-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, resp := f.openStream(t, tt.query, tt.header)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			var got []string
			for range tt.want {
				e := next(t, events, true)
				got = append(got, e.name+"@"+e.id)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("events %v, want %v", got, tt.want)
			}
		})
	}
	// What is stored next arrives after the catch-up, once.
	events, _ := f.openStream(t, "", map[string]string{"Last-Event-ID": "1-2"})
	if e := next(t, events, true); e.id != "1-3" {
		t.Fatalf("first %+v", e)
	}
	f.submit(t, "late", 50)
	if e := next(t, events, true); e.id != "1-4" || e.name != "change" {
		t.Errorf("then %+v, want change 1-4", e)
	}
}

func TestBoardStreamRefusals(t *testing.T) {
	f := newStreamFixture(t, Config{MaxStreamsPerAddress: 2, MaxStreams: 3})
	get := func(path string, header map[string]string) *http.Response {
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	for _, tt := range []struct {
		path   string
		header map[string]string
		status int
	}{
		{"/v1/challenges/nope/leaderboard/stream", nil, 404},
		{"/v1/challenges/lvl/leaderboard/stream?version=2", nil, 404},
		{"/v1/challenges/lvl/leaderboard/stream?version=x", nil, 400},
		{"/v1/challenges/lvl/leaderboard/stream", map[string]string{"Last-Event-ID": "soon"}, 400},
		{"/v1/challenges/lvl/leaderboard/stream?last_event_id=1-", nil, 400},
	} {
		if resp := get(tt.path, tt.header); resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s %v: %d %s, want %d problem+json", tt.path, tt.header, resp.StatusCode, resp.Header.Get("Content-Type"), tt.status)
		}
	}

	// Two streams from this address; the third is refused until one ends.
	var streams []*http.Response
	for range 2 {
		events, resp := f.openStream(t, "", nil)
		next(t, events, true)
		streams = append(streams, resp)
	}
	resp := get("/v1/challenges/lvl/leaderboard/stream", nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("third stream from one address: %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	streams[0].Body.Close()
	waitUntil(t, "the closed stream's slot to be released", func() bool { return f.srv.streams.openCount() == 1 })
	events, _ := f.openStream(t, "", nil)
	next(t, events, true)

	// Another address takes the last slot; then the server is full.
	if _, err := f.srv.streams.acquire("192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	f.srv.streams.mu.Lock()
	f.srv.streams.perClient = 10
	f.srv.streams.mu.Unlock()
	if resp := get("/v1/challenges/lvl/leaderboard/stream", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("stream beyond the server's limit: %d, want 503", resp.StatusCode)
	}
}

// A client that stops reading is dropped: the broker ends its
// subscription when its buffer fills, the stuck write times out, and its
// slot is released; memory does not grow with what it did not read.
func TestBoardStreamDropsSlowClient(t *testing.T) {
	f := newStreamFixture(t, Config{StreamBuffer: 8, StreamWriteTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", f.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/challenges/lvl/leaderboard/stream HTTP/1.1\r\nHost: x\r\n\r\n")
	// Read the headers and the snapshot, then nothing more.
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			break
		}
	}
	waitUntil(t, "the stream to subscribe", func() bool { n, _ := f.broker.Stats(); return n == 1 })
	// Far more than the socket buffers and the subscription's buffer hold.
	data := json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
	topic := game.BoardTopic("lvl", 1)
	for seq := int64(1); ; seq++ {
		f.broker.Publish(game.Notice{Topic: topic, Seq: seq, Data: data})
		if _, dropped := f.broker.Stats(); dropped == 1 {
			break
		}
		if seq > 100_000 {
			t.Fatal("the slow client was never dropped")
		}
		if seq%8 == 0 {
			time.Sleep(time.Millisecond) // let the stream write what the socket takes
		}
	}
	waitUntil(t, "the slow stream to end", func() bool { return f.srv.streams.openCount() == 0 })
	if n, _ := f.broker.Stats(); n != 0 {
		t.Errorf("%d subscriptions left", n)
	}
	if got := counterValue(t, f, "backpressure_streams_dropped_total"); got != 1 {
		t.Errorf("backpressure_streams_dropped_total = %v, want 1", got)
	}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func counterValue(t *testing.T, f *streamFixture, name string) float64 {
	t.Helper()
	mfs, err := f.srv.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}

// FuzzLastEventID: any resume id is either refused as malformed or read as
// a position on the stream's board, never a panic.
func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"", "1-0", "3-17", "7-2", "-", "1-", "-5", "1--1", "99999999999999999999-1", "1-9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		r := httptest.NewRequest("GET", "/v1/challenges/lvl/leaderboard/stream", nil)
		r.Header.Set("Last-Event-ID", id)
		if r.Header.Get("Last-Event-ID") != id {
			t.Skip() // not a header value
		}
		seq, err := lastEventID(r, 3)
		switch {
		case err != nil:
			if game.ErrorCode(err) != eBadRequest {
				t.Errorf("%q: %v", id, err)
			}
		case id == "":
			if seq != -1 {
				t.Errorf("no id: %d", seq)
			}
		case seq < -1:
			t.Errorf("%q: seq %d", id, seq)
		case seq >= 0 && !strings.HasPrefix(id, "3-"):
			t.Errorf("%q resumes another version at %d", id, seq)
		}
	})
}

// countingWriter counts the writes a stream makes.
type countingWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.writes++
	return w.ResponseRecorder.Write(b)
}

// The changes waiting behind one go out in one write, in order; a gap sends
// what came before it and then refills from the change before the gap.
func TestStreamCoalescesWaitingChanges(t *testing.T) {
	b := live.NewBroker()
	sub, err := b.Subscribe("event:x", 64)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 5; seq++ {
		b.Publish(game.Notice{Topic: "event:x", Seq: seq, Data: []byte(fmt.Sprintf(`{"seq":%d}`, seq))})
	}
	b.Publish(game.Notice{Topic: "event:x", Seq: 7, Data: []byte(`{"seq":7}`)})
	w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
	st := &sseStream{server: &server{cfg: Config{}.WithDefaults()}, w: w, rc: http.NewResponseController(w)}
	refilled := int64(-1)
	ok, err := st.changes(t.Context(), <-sub.C, sub, func(_ context.Context, after int64) error {
		refilled = after
		return nil
	})
	if !ok || err != nil {
		t.Fatalf("changes: %v, %v", ok, err)
	}
	want := ""
	for seq := 1; seq <= 5; seq++ {
		want += fmt.Sprintf("event: change\nid: %d\ndata: {\"seq\":%d}\n\n", seq, seq)
	}
	if got := w.Body.String(); got != want || w.writes != 1 {
		t.Errorf("%d writes of\n%s\nwant 1 of\n%s", w.writes, got, want)
	}
	if refilled != 5 || st.last != 5 {
		t.Errorf("refilled after %d with the client at %d, want both 5", refilled, st.last)
	}
}
