// Package web holds Backpressure's browser client: static files (plain ES
// modules, CSS and vendored libraries) embedded in the binary. The server
// mounts FS() at "/"; the client talks only to the public API under /v1.
package web

import (
	"embed"
	"io/fs"
)

// Files is the client as embedded; its root holds the directory dist.
//
//go:embed dist
var Files embed.FS

// FS returns the client rooted at dist: index.html is at its top.
func FS() fs.FS {
	sub, err := fs.Sub(Files, "dist")
	if err != nil {
		panic(err) // dist is embedded above; this cannot fail
	}
	return sub
}
