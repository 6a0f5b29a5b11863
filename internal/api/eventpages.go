package api

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"backpressure/internal/game"
	"backpressure/internal/rules"
)

// eventStandingsQuery reads limit, cursor and around from the query
// string, as boardQuery does for boards. Malformed parameters are 400s
// naming the parameter.
func eventStandingsQuery(r *http.Request) (game.EventStandingsQuery, error) {
	var fields []game.FieldError
	query := r.URL.Query()
	q := game.EventStandingsQuery{Cursor: query.Get("cursor")}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultStandingsLimit, game.MaxStandingsLimit); err != nil {
		fields = append(fields, game.ErrorFields(err)...)
	}
	around, aroundFields, err := aroundMe(r, q.Cursor, "in any event's standings")
	if err != nil {
		return q, err
	}
	q.AroundPlayer = around
	fields = append(fields, aroundFields...)
	if q.Cursor != "" {
		if c, err := game.ParseEventCursor(q.Cursor); err == nil && !c.Final {
			if fe := checkCursor(q.Cursor); fe != nil {
				fields = append(fields, *fe)
			}
		}
	}
	if len(fields) > 0 {
		return q, badRequest("a query parameter is malformed", fields...)
	}
	if _, _, err := q.Normalize(); err != nil {
		return q, badRequest("a query parameter is malformed", game.ErrorFields(err)...)
	}
	return q, nil
}

// queryLimit reads ?limit= in [1, max]; absent, it is def.
func queryLimit(r *http.Request, def, max int) (int, error) {
	return queryInt(r, "limit", def, 1, max)
}

// handleEventStandings serves one page of an event's standings, exact, in
// one snapshot: O(page) whatever the field.
func (s *server) handleEventStandings(w http.ResponseWriter, r *http.Request) {
	id, err := pathUUID(r, "id", "event")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q, err := eventStandingsQuery(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	board, err := s.store.EventStandingsPage(r.Context(), id, q)
	if err != nil {
		if q.AroundPlayer != nil && game.ErrorCode(err) == game.ENOTFOUND {
			if _, eerr := s.store.Event(r.Context(), id); eerr == nil {
				err = errorf(game.ENOTFOUND, "you are not in this event's standings yet: submit a design first")
			}
		}
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, board)
}

// handleEvents lists the events by pages, by start time: ?phase= one of
// upcoming, live, finishing, finished; ?limit= 1..100 (20); ?cursor= a
// page's next. A list never carries hidden chaos or resilience (GET
// /v1/events/{id} has what the reader may see of them).
func (s *server) handleEvents(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	q := game.EventListQuery{Phase: query.Get("phase"), Cursor: query.Get("cursor"), Now: s.now()}
	var err error
	if q.Limit, err = queryLimit(r, game.DefaultEventListLimit, game.MaxEventListLimit); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, _, err := q.Normalize(); err != nil {
		s.writeError(w, r, badRequest("a query parameter is malformed", game.ErrorFields(err)...))
		return
	}
	list, err := s.store.EventList(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	viewer, signedIn := playerFrom(r.Context())
	out := struct {
		Events []rules.EventView `json:"events"`
		Next   string            `json:"next"`
	}{Events: make([]rules.EventView, 0, len(list.Events)), Next: list.Next}
	for _, e := range list.Events {
		out.Events = append(out.Events, s.rules.EventView(e, viewer, signedIn))
	}
	writeJSON(w, r, http.StatusOK, out)
}

// maxEventRetrySpread bounds the spread of the Retry-After of a busy
// answer to an event attempt, in seconds.
const maxEventRetrySpread = 10

// eventRetryAfter is the Retry-After, in seconds, of a busy answer to an
// attempt at an event that ends at end, where the refusing limit asked for
// asked seconds: drawn (pick(n) in [0, n)) from asked..max(asked,
// maxEventRetrySpread), so that a crowd refused together comes back spread
// out, and never past the last whole second before the end (a retry after
// it is refused anyway). 1 when less than two seconds are left.
func eventRetryAfter(now, end time.Time, asked int, pick func(n int) int) int {
	left := int(end.Sub(now)/time.Second) - 1
	if left <= 1 {
		return 1
	}
	lo := min(max(asked, 1), left)
	hi := min(max(asked, maxEventRetrySpread), left)
	return lo + pick(hi-lo+1)
}

// eventEnds are the ends of the events that attempts were admitted to
// (they never change), at most maxEventEnds of them.
type eventEnds struct {
	mu sync.Mutex
	m  map[uuid.UUID]time.Time
}

const maxEventEnds = 4096

func (e *eventEnds) get(id uuid.UUID) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	end, ok := e.m[id]
	return end, ok
}

func (e *eventEnds) put(id uuid.UUID, end time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) >= maxEventEnds {
		clear(e.m)
	}
	e.m[id] = end
}

// attemptMark marks a request that is an attempt at event id.
type attemptMark struct {
	ends *eventEnds
	id   uuid.UUID
}

type attemptKey struct{}

// eventAttempts returns the middleware that lets writeError spread the
// Retry-After of every busy answer to an event attempt
// (spreadRetryAfter), wherever it is refused: mark goes before every limit
// and marks the attempts (POST /v1/events/{id}/submissions, read from the
// path: it runs before routing); learn goes on the route, after admission,
// and learns the event's end, so a flood of unknown ids costs no lookup.
func (s *server) eventAttempts() (mark, learn func(http.Handler) http.Handler) {
	ends := &eventEnds{m: map[uuid.UUID]time.Time{}}
	mark = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rest, ok := strings.CutPrefix(r.URL.Path, "/v1/events/")
			if raw, ok2 := strings.CutSuffix(rest, "/submissions"); ok && ok2 && r.Method == http.MethodPost {
				if id, err := uuid.Parse(raw); err == nil {
					r = r.WithContext(context.WithValue(r.Context(), attemptKey{}, attemptMark{ends, id}))
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	learn = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if m, ok := r.Context().Value(attemptKey{}).(attemptMark); ok {
				if _, known := m.ends.get(m.id); !known {
					if e, err := s.store.Event(r.Context(), m.id); err == nil {
						m.ends.put(m.id, e.EndsAt)
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	return mark, learn
}

// spreadRetryAfter sets the Retry-After of a busy answer (status) to an
// attempt at an event whose end is known (eventAttempts).
func (s *server) spreadRetryAfter(w http.ResponseWriter, r *http.Request, status int) {
	if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
		return
	}
	m, ok := r.Context().Value(attemptKey{}).(attemptMark)
	if !ok {
		return
	}
	end, ok := m.ends.get(m.id)
	if !ok {
		return
	}
	asked, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if err != nil {
		asked = retryAfter
	}
	w.Header().Set("Retry-After", strconv.Itoa(eventRetryAfter(s.now(), end, asked, rand.IntN)))
}
