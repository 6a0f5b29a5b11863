package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// handleDuelStream streams a duel's state as Server-Sent Events: one
// "duel" event (data: the duel as GET /v1/duels/{id} shows it, id: its
// seq) now, unless the client resumes with Last-Event-ID at the duel's
// latest change (an id ahead of it gets the duel now, like no id), and
// one more at every change, until the duel has ended
// (the stream then closes). Changes come through the store's
// announcements (LISTEN/NOTIFY with PostgreSQL), so a change made on any
// replica reaches every stream. Only the duel's players may follow a
// pending duel.
func (s *server) handleDuelStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d, err := s.pathDuel(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	viewer, signedIn := playerFrom(ctx)
	if !rules.CanSeeDuel(d, viewer, signedIn) {
		s.writeError(w, r, errorf(game.EDUELPRIVATE, "a duel is seen by its players only until it has ended"))
		return
	}
	resume, err := duelLastEventID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	sub, done, ok := s.subscribe(w, r, game.DuelTopic(d.ID))
	if !ok {
		return
	}
	defer done()
	st := &sseStream{server: s, w: w, rc: http.NewResponseController(w)}
	if err := st.open(); err != nil {
		return
	}
	st.last = resume
	// Subscribed first, read second: no change is missed, and notices of
	// changes already sent are skipped by seq.
	ended, err := s.sendDuel(ctx, st, d.ID)
	if err != nil || ended {
		st.fail(ctx, err)
		return
	}
	heartbeat := time.NewTicker(s.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-sub.C:
			if !ok {
				return
			}
			if n.Seq <= st.last {
				continue
			}
			ended, err = s.sendDuel(ctx, st, d.ID)
		case <-sub.Resync:
			ended, err = s.sendDuel(ctx, st, d.ID)
		case <-heartbeat.C:
			err = st.comment("heartbeat")
		}
		if err != nil || ended {
			st.fail(ctx, err)
			return
		}
	}
}

// sendDuel reads the duel and sends it if the client has not seen its
// latest change; ended reports that it has ended (nothing more will come).
func (s *server) sendDuel(ctx context.Context, st *sseStream, id [16]byte) (ended bool, err error) {
	d, err := s.store.Duel(ctx, id)
	if err != nil {
		return false, err
	}
	if st.last > d.Seq {
		// An id ahead of the duel's latest change is none this duel sent:
		// the stream starts again from the duel as it is, as a board
		// stream sends a snapshot.
		st.last = -1
	}
	if d.Seq > st.last {
		v, err := s.rules.ShowDuel(ctx, d, nil)
		if err != nil {
			return false, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return false, err
		}
		if err := st.write("duel", d.Seq, data); err != nil {
			return false, err
		}
	}
	return game.DuelEnded(d.State), nil
}

// duelLastEventID reads where a duel stream resumes: the Last-Event-ID
// header or else ?last_event_id=, a seq this stream sent; -1 for none.
func duelLastEventID(r *http.Request) (int64, error) {
	field, id := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if id == "" {
		field, id = "last_event_id", r.URL.Query().Get("last_event_id")
	}
	if id == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 0 || len(id) > 20 || strconv.FormatInt(n, 10) != id {
		return 0, badRequest("the event id to resume from is malformed",
			game.FieldError{Field: field, Reason: "must be an id this stream sent (a number)"})
	}
	return n, nil
}
