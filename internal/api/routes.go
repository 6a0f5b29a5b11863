package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/cors"

	"backpressure/internal/game"
)

// routes is the whole route tree. Paths under /v1 are the public contract
// (documented in openapi.json; a test keeps the two in step).
func (s *server) routes() *chi.Mux {
	r := chi.NewRouter()
	s.mux = r
	r.Use(s.observe)
	r.Use(s.clientIPMiddleware(), noteClient)
	if len(s.cfg.CORSOrigins) > 0 {
		r.Use(cors.Handler(cors.Options{
			AllowedOrigins: s.cfg.CORSOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodOptions},
			AllowedHeaders: []string{"Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"},
			ExposedHeaders: []string{"Location", "Retry-After", "X-Request-Id", "Idempotent-Replayed",
				"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"},
			MaxAge: 600,
		}))
	}
	r.Use(compressLarge)
	r.NotFound(s.handleNotFound)
	r.MethodNotAllowed(s.handleMethodNotAllowed)

	r.Get("/healthz", s.handleHealthz)
	r.Get("/readyz", s.handleReadyz)
	r.Method(http.MethodGet, "/metrics", s.metrics.handler())
	r.Get("/openapi.json", s.handleOpenAPI)

	// Live streams stay open for as long as their clients watch: they are
	// capped by their own limits (streamSlots), not by MaxInFlight, which
	// is for requests that end.
	r.Group(func(r chi.Router) {
		r.Use(s.rateLimit("address", s.cfg.RateLimitIP, keyByAddress))
		r.Use(s.authenticate)
		r.Get("/v1/challenges/{slug}/leaderboard/stream", s.handleBoardStream)
		r.Get("/v1/events/{id}/stream", s.handleEventStream)
		r.Get("/v1/duels/{id}/stream", s.handleDuelStream)
	})

	r.Route("/v1", func(r chi.Router) {
		r.NotFound(s.handleNotFound)
		r.MethodNotAllowed(s.handleMethodNotAllowed)
		// Admission (admission.go): per client, then the address's rate,
		// then the body, then the scarce in-flight places. Refusals from
		// the address's rate on are held for their Retry-After outside the
		// in-flight places (refusal.go).
		markAttempts, learnAttempts := s.eventAttempts()
		r.Use(markAttempts, s.limitPerClient, s.holdRefusals, s.rateLimit("address", s.cfg.RateLimitIP, keyByAddress),
			s.readBodyFirst, s.limitInFlight, s.limitHandlerTime)
		r.Use(s.authenticate)
		r.Use(s.rateLimit("player", s.cfg.RateLimitPlayer, keyByPlayer))
		simLimit := s.rateLimit("simulation", s.cfg.RateLimitSim, keyByPlayerOrAddress)
		authors := s.requireRole(game.RoleAuthor)

		r.Post("/players", s.handleCreatePlayer)
		r.With(s.requirePlayer).Get("/players/me", s.handleMe)
		r.Get("/players", s.handlePlayerByName)
		r.Get("/players/{id}", s.handlePlayer)
		r.With(s.requireRole(game.RoleAdmin)).Put("/players/{id}/role", s.handleSetRole)

		r.Get("/challenges", s.handleChallenges)
		r.With(authors).Post("/challenges", s.handleCreateChallenge)
		r.With(authors).Post("/challenges/check", s.handleCheckChallenge)
		r.Get("/challenges/{slug}", s.handleChallenge)
		r.With(authors).Put("/challenges/{slug}", s.handlePutChallenge)
		r.With(simLimit).Post("/challenges/{slug}/hint", s.handleHint)
		r.With(s.requirePlayer, simLimit).Post("/challenges/{slug}/submissions", s.handleSubmit)
		r.Get("/challenges/{slug}/leaderboard", s.handleLevelBoard)

		// Events.
		r.Get("/events", s.handleEvents)
		r.With(authors).Post("/events", s.handleCreateEvent)
		r.Get("/events/{id}", s.handleEvent)
		r.With(s.requirePlayer).Post("/events/{id}/join", s.handleJoinEvent)
		r.With(learnAttempts, s.requirePlayer, simLimit).Post("/events/{id}/submissions", s.handleEventSubmit)
		r.Get("/events/{id}/standings", s.handleEventStandings)
		r.Get("/events/{id}/results/{player_id}", s.handleEventResult)

		// Duels and ratings.
		r.With(s.requirePlayer).Post("/duels", s.handleCreateDuel)
		r.With(s.requirePlayer).Get("/duels", s.handleMyDuels)
		r.Get("/duels/{id}", s.handleDuel)
		r.With(s.requirePlayer).Post("/duels/{id}/accept", s.handleDuelAnswer(s.rules.AcceptDuel))
		r.With(s.requirePlayer).Post("/duels/{id}/decline", s.handleDuelAnswer(s.rules.DeclineDuel))
		r.With(s.requirePlayer, simLimit).Post("/duels/{id}/design", s.handleDuelDesign)
		r.Get("/ratings", s.handleRatings)

		r.With(simLimit).Post("/simulations", s.handleSimulate)
		r.Get("/submissions/{id}", s.handleSubmission)
		r.Get("/leaderboard", s.handleGlobalBoard)

		// Seasons.
		r.Get("/seasons", s.handleSeasons)
		r.Get("/seasons/{id}", s.handleSeason)
		r.Get("/seasons/{id}/leaderboard", s.handleSeasonBoard)
	})

	if s.web != nil {
		// The web client: static files for GET at /, everything else 404.
		files := http.FileServerFS(s.web)
		r.Get("/*", files.ServeHTTP)
	}
	return r
}
