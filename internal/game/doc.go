// Package game holds Backpressure's domain: players, levels, submissions,
// leaderboards and the application error type that every layer speaks.
//
// It is the centre of the dependency graph: it imports only the standard
// library and github.com/google/uuid, and must never import a store, the HTTP
// layer, the simulator or a database driver. Stores (internal/store/...)
// implement persistence of these types; the HTTP layer maps Error codes to
// status codes in one table.
package game
