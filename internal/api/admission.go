package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"backpressure/internal/game"
)

// Admission. The in-flight limit protects the handlers, so nothing a client
// controls may run inside it: a client that sends its body one byte every
// two seconds would otherwise hold a slot for as long as it likes, and a
// hundred such clients would shut everyone else out. So a request passes,
// in order:
//
//  1. the per-client limit: at most MaxInFlightPerClient requests of one
//     client address at once, counted from the first byte of the body, so
//     that one address cannot take the whole server (429 beyond it);
//  2. the per-address rate limit (429), whose refusals, like those of every
//     limit after it, are held for their Retry-After outside the in-flight
//     places (refusal.go);
//  3. the body phase: the whole body is read, at most MaxBodyBytes (413) and
//     within BodyTimeout (408), before anything else happens;
//  4. only then the in-flight limit (503 beyond it) and the handler, under
//     HandlerTimeout; the response is written under WriteTimeout.
//
// The client address is the TCP peer, or the address a trusted proxy puts
// in X-Forwarded-For (TrustedProxies): see clientIPMiddleware.

// perClient counts the requests in progress by client address.
type perClient struct {
	mu    sync.Mutex
	limit int
	n     map[string]int
}

func (p *perClient) acquire(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[addr] >= p.limit {
		return false
	}
	p.n[addr]++
	return true
}

func (p *perClient) release(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[addr]--; p.n[addr] <= 0 {
		delete(p.n, addr)
	}
}

// limitPerClient refuses a client's request beyond MaxInFlightPerClient of
// its own in progress with 429 and Retry-After.
func (s *server) limitPerClient(next http.Handler) http.Handler {
	counts := &perClient{limit: s.cfg.MaxInFlightPerClient, n: map[string]int{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := clientGroup(r)
		if !counts.acquire(addr) {
			s.metrics.RateLimited.WithLabelValues("client_in_flight").Inc()
			s.writeError(w, r, errorf(game.ERATELIMIT,
				"too many requests in progress from your address (at most %d at once); retry after the time in Retry-After", s.cfg.MaxInFlightPerClient))
			return
		}
		defer counts.release(addr)
		next.ServeHTTP(w, r)
	})
}

// readBodyFirst reads the whole request body within BodyTimeout and
// MaxBodyBytes, and hands the handlers a body already in memory.
func (s *server) readBodyFirst(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > s.cfg.MaxBodyBytes {
			w.Header().Set("Connection", "close")
			s.writeError(w, r, errorf(eTooLarge, "the body is larger than %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			s.writeError(w, r, errorf(eTooLarge, "the body is larger than %d bytes", tooLarge.Limit))
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.metrics.RateLimited.WithLabelValues("body_timeout").Inc()
			w.Header().Set("Connection", "close")
			s.writeError(w, r, errorf(eRequestTimeout, "the body did not arrive within %s", s.cfg.BodyTimeout))
			return
		case err != nil:
			// The client went away mid-body: nobody reads the answer.
			s.writeError(w, r, errorf(eBadRequest, "the body could not be read"))
			return
		}
		// No deadline while the handler runs: the server notices a client
		// that goes away by reading the connection in the background.
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// limitHandlerTime bounds the handler by HandlerTimeout through its
// context (not http.TimeoutHandler, which would buffer every response).
func (s *server) limitHandlerTime(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.HandlerTimeout)
		defer cancel()
		// The response must be written within WriteTimeout of the
		// handler's own deadline; a streamed response restarts the clock
		// when it starts writing (startWriting).
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.HandlerTimeout + s.cfg.WriteTimeout))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// startWriting sets the response's write deadline: from now, the client has
// WriteTimeout to take the whole response, after which the connection is
// closed and what was buffered for it is released.
func (s *server) startWriting(w http.ResponseWriter) {
	if s.cfg.WriteTimeout > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	}
}
