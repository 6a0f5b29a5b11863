// Package challenges is the built-in campaign as data: one JSON file per level, named
// NN-slug.json so that the campaign's order is the files' order, and the JSON Schema of
// the level format (level.schema.json) for authors' editors. It holds no code: parsing,
// validation and evaluation live in backpressure/internal/challenges, which embeds these
// files through this package (//go:embed cannot reach outside its own directory).
//
// Reference solutions are deliberately not here: they live under
// internal/challenges/testdata, which is never embedded or served.
package challenges

import "embed"

// Levels holds the campaign's level files at its root.
//
//go:embed [0-9][0-9]-*.json
var Levels embed.FS

// Schema is the JSON Schema of a level file (generated; see internal/challenges).
//
//go:embed level.schema.json
var Schema []byte
