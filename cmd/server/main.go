// Command server is Backpressure's game server: the HTTP/JSON API of
// internal/api over PostgreSQL (or, without DATABASE_URL, an in-memory
// store). Configuration comes from the environment; see docs/api.md.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if err := run(context.Background(), os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
}
