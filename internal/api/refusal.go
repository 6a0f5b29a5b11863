package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"backpressure/internal/game"
)

// Refusals that cost the server little. A client refused by a rate limit, an in-flight
// limit, its simulation budget or a full simulation queue is told Retry-After; a flood
// that ignores it comes straight back, and answering thousands of refusals a second takes
// CPU from everyone else (measured: a victim's submission p99 went from 35 ms to 392 ms
// under 16 addresses' flood of hints, every flood request refused, 6,000 a second). So a
// refusal is held before it is written, for as long as the client is about to be told to
// wait (at most Config.RefusalHold): a client that honours Retry-After loses nothing,
// since it would wait that long anyway, and one that does not gets its next refusal no
// sooner: from one address, at most MaxInFlightPerClient refusals per hold. A held refusal
// is a parked goroutine and its connection, not CPU.
//
// The refusal is held outside the in-flight places: a limit inside holdRefusals that
// refuses (writeError with ERATELIMIT or the busy code) only records the refusal, its
// handlers return (releasing the in-flight place, the simulation slot, the database
// connection), and holdRefusals waits and then writes it. So held refusals never take a
// place from anyone else. At most heldPerInFlight × MaxInFlight are held at once (more are
// written at once), which bounds the memory a flood from many addresses can tie up. The
// per-address in-flight limit itself (limitPerClient) refuses at once: holding its
// refusals would need the very places it is out of.
type refusalHolds struct {
	slots chan struct{}
	max   time.Duration
}

// heldPerInFlight: held refusals allowed per in-flight place (each a goroutine, a
// connection's buffers and a timer: some tens of KiB).
const heldPerInFlight = 4

func newRefusalHolds(maxHold time.Duration, maxHeld int) *refusalHolds {
	return &refusalHolds{slots: make(chan struct{}, max(maxHeld, 1)), max: maxHold}
}

// hold waits for the Retry-After already set on w (retryAfter if none; at most h.max),
// unless r's client goes away first or every hold is taken.
func (h *refusalHolds) hold(w http.ResponseWriter, r *http.Request) {
	secs, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if err != nil || secs <= 0 {
		secs = retryAfter
	}
	select {
	case h.slots <- struct{}{}:
	default:
		return
	}
	defer func() { <-h.slots }()
	t := time.NewTimer(min(time.Duration(secs)*time.Second, h.max))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// refusal is where a limit inside holdRefusals leaves its refusal.
type refusal struct{ err error }

type refusalKey struct{}

// holdRefusals holds and then writes the refusals of the limits and handlers inside it.
func (s *server) holdRefusals(next http.Handler) http.Handler {
	if s.holds == nil || s.holds.max <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref := &refusal{}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), refusalKey{}, ref)))
		if ref.err != nil {
			s.holds.hold(w, r)
			s.writeError(w, r, ref.err)
		}
	})
}

// deferRefusal records err for holdRefusals if it is a refusal and r is inside it.
func deferRefusal(r *http.Request, code string, err error) bool {
	if code != game.ERATELIMIT && code != eBusy {
		return false
	}
	ref, ok := r.Context().Value(refusalKey{}).(*refusal)
	if !ok || ref.err != nil {
		return false
	}
	ref.err = err
	return true
}
