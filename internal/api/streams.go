package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"backpressure/internal/game"
	"backpressure/internal/live"
)

// Live follows what the store announces as it commits (internal/live's
// Broker, fed in process by the in-memory store or by LISTEN/NOTIFY).
type Live interface {
	Subscribe(topic string, buffer int) (*live.Subscription, error)
}

// streamRetry is the reconnection delay a stream asks browsers for.
const streamRetry = 2 * time.Second

// handleBoardStream streams the changes of a level version's board
// (?version=, default current) as Server-Sent Events: a "snapshot" (the
// top page, with the number of the latest change) unless the client
// resumes with Last-Event-ID, then one "change" per improvement, in order,
// each with its exact rank. See docs/api.md "Live standings".
func (s *server) handleBoardStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	slug := chi.URLParam(r, "slug")
	version, err := queryInt(r, "version", 0, 0, maxVersion)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	l, err := s.store.Level(ctx, slug, version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	resume, err := lastEventID(r, l.Version)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, done, ok := s.subscribe(w, r, game.BoardTopic(l.Slug, l.Version))
	if !ok {
		return
	}
	defer done()

	st := &sseStream{server: s, w: w, rc: http.NewResponseController(w), slug: l.Slug, version: l.Version,
		idPrefix: strconv.Itoa(l.Version) + "-"}
	if err := st.open(); err != nil {
		return
	}
	// Subscribed first, read from the store second: nothing committed in
	// between is missed, and notices already covered are skipped by Seq.
	if resume >= 0 {
		err = st.catchUp(ctx, resume)
	} else {
		err = st.snapshot(ctx)
	}
	if err != nil {
		st.fail(ctx, err)
		return
	}
	st.pump(ctx, sub, st.catchUp)
}

// pump sends the notices of sub as "change" events, in order, until the
// client leaves, falls behind or the server shuts down; after a gap (or a
// notice without its data, or a resync signal) refill brings the client up
// to date from the store. The notices already waiting behind one go out in
// the same write (changes): a crowd's batch costs a client one flush.
func (st *sseStream) pump(ctx context.Context, sub *live.Subscription, refill func(ctx context.Context, after int64) error) {
	heartbeat := time.NewTicker(st.server.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	var err error
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-sub.C:
			if !ok {
				return // shutting down, or dropped: the client reconnects with Last-Event-ID
			}
			if ok, err = st.changes(ctx, n, sub, refill); err == nil && !ok {
				return
			}
		case <-sub.Resync:
			err = refill(ctx, st.last)
		case <-heartbeat.C:
			err = st.comment("heartbeat")
		}
		if err != nil {
			st.fail(ctx, err)
			return
		}
	}
}

// changes sends n and the notices already waiting behind it, up to
// maxCoalesced, in one write, and after a gap (or a notice too large to
// carry its change) refills from the store. It reports false if sub closed
// meanwhile.
func (st *sseStream) changes(ctx context.Context, n game.Notice, sub *live.Subscription, refill func(ctx context.Context, after int64) error) (bool, error) {
	var frames bytes.Buffer
	last := st.last
	send := func() error {
		if frames.Len() == 0 {
			return nil
		}
		if err := st.send(frames.Bytes()); err != nil {
			return err
		}
		st.last = last
		return nil
	}
more:
	for range maxCoalesced {
		if n.Seq > last {
			if n.Seq != last+1 || n.Data == nil || bytes.ContainsAny(n.Data, "\r\n") {
				if err := send(); err != nil {
					return true, err
				}
				return true, refill(ctx, st.last)
			}
			st.frame(&frames, "change", n.Seq, n.Data)
			last = n.Seq
		}
		var ok bool
		select {
		case n, ok = <-sub.C:
			if !ok {
				return false, send()
			}
		default:
			break more
		}
	}
	return true, send()
}

// maxCoalesced bounds the changes one write carries.
const maxCoalesced = 256

// lastEventID reads where a client resumes: the Last-Event-ID header (sent
// by browsers when they reconnect) or else ?last_event_id=. It returns -1
// for no resumption, and also for an id of another version of the level
// (the client then gets the current board afresh).
func lastEventID(r *http.Request, version int) (int64, error) {
	field, id := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if id == "" {
		field, id = "last_event_id", r.URL.Query().Get("last_event_id")
	}
	if id == "" {
		return -1, nil
	}
	v, seq, ok := strings.Cut(id, "-")
	vn, verr := strconv.Atoi(v)
	n, serr := strconv.ParseInt(seq, 10, 64)
	// Only the canonical form this stream sends: "03-0" or "+3-0" would
	// otherwise read as version 3.
	canonical := verr == nil && serr == nil && strconv.Itoa(vn) == v && strconv.FormatInt(n, 10) == seq
	if !ok || len(id) > 40 || !canonical || vn < 1 || n < 0 {
		return 0, badRequest("the event id to resume from is malformed",
			game.FieldError{Field: field, Reason: `must be an id this stream sent ("<version>-<seq>")`})
	}
	if vn != version {
		return -1, nil
	}
	return n, nil
}

// sseStream writes one client's event stream (a board's or an event's).
type sseStream struct {
	server   *server
	w        http.ResponseWriter
	rc       *http.ResponseController
	slug     string
	version  int
	idPrefix string // before the number in event ids
	last     int64  // the latest change the client has
}

func (st *sseStream) open() error {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies: do not buffer
	st.w.WriteHeader(http.StatusOK)
	return st.send([]byte("retry: " + strconv.Itoa(int(streamRetry/time.Millisecond)) + "\n\n"))
}

// send writes b and flushes it, within the stream write timeout.
func (st *sseStream) send(b []byte) error {
	if err := st.rc.SetWriteDeadline(time.Now().Add(st.server.cfg.StreamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if _, err := st.w.Write(b); err != nil {
		return err
	}
	return st.rc.Flush()
}

func (st *sseStream) write(event string, seq int64, data []byte) error {
	var b bytes.Buffer
	st.frame(&b, event, seq, data)
	if err := st.send(b.Bytes()); err != nil {
		return err
	}
	st.last = seq
	return nil
}

// frame appends one event of the stream to b.
func (st *sseStream) frame(b *bytes.Buffer, event string, seq int64, data []byte) {
	fmt.Fprintf(b, "event: %s\nid: %s%d\ndata: ", event, st.idPrefix, seq)
	b.Write(data)
	b.WriteString("\n\n")
}

func (st *sseStream) comment(text string) error { return st.send([]byte(": " + text + "\n\n")) }

// snapshot sends the board's top page, which says the latest change.
func (st *sseStream) snapshot(ctx context.Context) error {
	page, err := st.server.store.Board(ctx, game.BoardQuery{Slug: st.slug, Version: st.version, Limit: game.MaxBoardLimit})
	if err != nil {
		return err
	}
	data, err := json.Marshal(page)
	if err != nil {
		return err
	}
	return st.write("snapshot", page.Seq, data)
}

// catchUp sends the changes after seq from the store, or a snapshot when
// they are no longer all kept.
func (st *sseStream) catchUp(ctx context.Context, seq int64) error {
	st.last = seq
	for {
		changes, ok, err := st.server.store.BoardChanges(ctx, st.slug, st.version, st.last, 0)
		if err != nil {
			return err
		}
		if !ok {
			return st.snapshot(ctx)
		}
		for _, c := range changes {
			data, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if err := st.write("change", c.Seq, data); err != nil {
				return err
			}
		}
		if len(changes) < game.ChangeRetention {
			return nil
		}
	}
}

// fail ends a stream that could not go on; the client reconnects and
// resumes.
func (st *sseStream) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	st.server.logger(ctx).DebugContext(ctx, "live stream ended", "slug", st.slug, "err", err)
}

// handleEventStream streams an event's standings: a "standings" snapshot
// (one page, as GET /v1/events/{id}/standings with the stream's ?limit= and
// ?around=me, with the number of the latest change: O(page) whatever the
// field) unless the client resumes with Last-Event-ID at the latest
// change, then a "change"
// per attempt (the entrant's standing after it, rank exact) and one of
// kind "final" when the final standings are frozen. An event keeps no log
// of its changes: a client that missed any gets a new snapshot.
func (s *server) handleEventStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The query is read before the event is looked up: a malformed
	// parameter is the same 400 whether or not the event exists.
	resume := int64(-1)
	field, id := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if id == "" {
		field, id = "last_event_id", r.URL.Query().Get("last_event_id")
	}
	if id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 || len(id) > 20 {
			s.writeError(w, r, badRequest("the event id to resume from is malformed",
				game.FieldError{Field: field, Reason: "must be an id this stream sent (a number)"}))
			return
		}
		resume = n
	}
	q, err := eventStandingsQuery(r)
	if err == nil && q.Cursor != "" {
		err = badRequest("a query parameter is malformed",
			game.FieldError{Field: "cursor", Reason: "a stream starts from the first page, or the page around=me"})
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.pathEvent(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, done, ok := s.subscribe(w, r, game.EventTopic(e.ID))
	if !ok {
		return
	}
	defer done()
	st := &sseStream{server: s, w: w, rc: http.NewResponseController(w)}
	send := func(board game.EventBoard, after int64) error {
		if board.Seq == after {
			st.last = after
			return nil
		}
		data, err := json.Marshal(board)
		if err != nil {
			return err
		}
		return st.write("standings", board.Seq, data)
	}
	page := func(ctx context.Context) (game.EventBoard, error) {
		board, err := s.store.EventStandingsPage(ctx, e.ID, q)
		if q.AroundPlayer != nil && game.ErrorCode(err) == game.ENOTFOUND {
			// Not in the standings yet: the top, until they are.
			board, err = s.store.EventStandingsPage(ctx, e.ID, game.EventStandingsQuery{Limit: q.Limit})
		}
		return board, err
	}
	snapshot := func(ctx context.Context, after int64) error {
		board, err := page(ctx)
		if err != nil {
			return err
		}
		return send(board, after)
	}
	// The standings are read before the stream opens: a client that has
	// the stream's headers has its starting point, so a change committed
	// after that arrives as a change, never folded into the first snapshot.
	board, err := page(ctx)
	if oerr := st.open(); oerr != nil {
		return
	}
	if err == nil {
		err = send(board, resume)
	}
	if err != nil {
		st.fail(ctx, err)
		return
	}
	st.pump(ctx, sub, snapshot)
}

// subscribe takes one of the client's stream places and subscribes to
// topic's notices, or writes why not (503 without live streams or while
// shutting down, 429 past the stream limits). done counts a stream dropped
// for falling behind (whether the stream noticed, a closed channel, or was
// stuck writing to the client when it happened), then closes the
// subscription and gives the place back.
func (s *server) subscribe(w http.ResponseWriter, r *http.Request, topic string) (sub *live.Subscription, done func(), ok bool) {
	if s.live == nil {
		s.writeError(w, r, errorf(game.EUNAVAILABLE, "live streams are not available on this server"))
		return nil, nil, false
	}
	release, err := s.streams.acquire(clientGroup(r))
	if err != nil {
		s.writeError(w, r, err)
		return nil, nil, false
	}
	sub, err = s.live.Subscribe(topic, s.cfg.StreamBuffer)
	if err != nil {
		release()
		s.writeError(w, r, errorf(game.EUNAVAILABLE, "the server is shutting down; reconnect"))
		return nil, nil, false
	}
	return sub, func() {
		if errors.Is(sub.Err(), live.ErrSlow) {
			s.streams.dropped.Inc()
			ctx := r.Context()
			s.logger(ctx).InfoContext(ctx, "live stream dropped: the client fell behind", "topic", topic)
		}
		sub.Close()
		release()
	}, true
}
