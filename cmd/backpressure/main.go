// Command backpressure is the command line for level authors and players: it validates
// level files, prints a level's briefing and writes its starting design to a file, runs a
// design on a level and prints the verdict with a chart, and prints the fix hint for a
// failing design.
//
//	backpressure validate LEVEL_FILE...
//	backpressure run  --level SLUG|FILE --design FILE
//	backpressure hint --level SLUG|FILE --design FILE
//	backpressure levels
//	backpressure level SLUG|FILE
//	backpressure init  SLUG|FILE [DESIGN_FILE]
//	backpressure duel challenge|match|accept|decline|submit|show|list ...
//	backpressure ratings
//
// Every command takes --json to print the machine-readable result instead. Exit codes:
// 0 the level is valid / the design passes, 1 the design fails, 2 invalid input (a bad
// level, design or command line), 3 anything else.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	code := exitCode(err)
	if err != nil && code != exitFail && err.Error() != "" {
		fmt.Fprintln(os.Stderr, "backpressure:", err)
	}
	os.Exit(code)
}
