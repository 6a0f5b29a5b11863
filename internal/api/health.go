package api

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"backpressure/internal/game"
)

type statusResponse struct {
	Status string `json:"status"`
}

// handleHealthz says the process is alive; it touches nothing else.
func (s *server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, statusResponse{Status: "ok"})
}

// readyTimeout bounds the readiness probe's database ping.
const readyTimeout = 2 * time.Second

// handleReadyz says the server can serve: its store answers.
func (s *server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	if err := s.store.Ping(ctx); err != nil {
		s.logger(ctx).WarnContext(ctx, "not ready", "err", err)
		s.writeError(w, r, errorf(game.EUNAVAILABLE, "the database is unreachable"))
		return
	}
	writeJSON(w, r, http.StatusOK, statusResponse{Status: "ready"})
}

func (s *server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, errorf(game.ENOTFOUND, "no such route: %s %s", r.Method, r.URL.Path))
}

func (s *server) handleMethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	// chi passes the allowed methods only to its own default handler.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if s.mux != nil && s.mux.Match(chi.NewRouteContext(), m, r.URL.Path) {
			w.Header().Add("Allow", m)
		}
	}
	s.writeError(w, r, errorf(eMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
}

// openAPIDocument is the OpenAPI 3.1 description of every route.
//
//go:embed openapi.json
var openAPIDocument []byte

func (s *server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIDocument)
}
