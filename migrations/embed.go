// Package migrations holds Backpressure's PostgreSQL schema as golang-migrate
// SQL files (NNNNNN_name.up.sql / .down.sql) embedded into the binary, so the
// server migrates itself at start-up (see pgstore.Migrate). Files here are
// append-only once released: fix a released migration with a new one.
package migrations

import "embed"

// FS holds every migration file at its root, for golang-migrate's iofs source.
//
//go:embed *.sql
var FS embed.FS
