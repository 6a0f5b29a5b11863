// Package api is Backpressure's HTTP transport: the route tree, handlers,
// middleware (request ids, logs, metrics, authentication, rate limits, CORS),
// the simulation worker pool, problem+json errors and the OpenAPI document.
//
// It turns HTTP into calls on internal/challenges (levels, evaluation,
// scoring, hints) and on a Store (persistence), and their answers back into
// JSON. It owns no business rule of its own beyond who may do what: scores
// are computed by challenges, ranks are read from the store, so every replica
// answers alike. It must never keep state that replicas could disagree on
// (a per-process rank or score cache), log a token or a request body, or let
// an error that is not a *game.Error reach a client as anything but
// "internal".
//
// Every route is in routes.go; every error leaves through writeError
// (errors.go), which maps error codes to HTTP statuses in one table; every
// JSON body enters through decode (decode.go).
package api
