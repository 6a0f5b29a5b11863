// Package api is Backpressure's HTTP transport: the route tree, handlers,
// middleware (request ids, logs, metrics, authentication, rate limits, CORS,
// admission), problem+json errors and the OpenAPI document.
//
// It decodes requests, calls the game's rules (internal/rules: submissions,
// events, duels, levels) or, for dry runs, hints and level uploads, the
// simulation scheduler the rules share (internal/scheduler) and
// internal/challenges, reads the store for what it shows, and encodes the
// answers. It holds no rule of the game beyond who may do what, and no
// scheduler, level cache or background job of its own. It must never keep
// state that replicas could disagree on (a per-process rank or score cache),
// log a token or a request body, or let an error that is not a *game.Error
// reach a client as anything but "internal".
//
// Every route is in routes.go; every error leaves through writeError
// (errors.go), which maps error codes to HTTP statuses in one table; every
// JSON body enters through decode (decode.go, on
// internal/strictjson).
package api
