// Command loadgen drives a running Backpressure server the way players do
// and then checks, behind the API's back, that the database holds exactly
// what the server acknowledged. It is a thin driver over net/http (no load
// library: the player script is stateful, which rate-only tools are not).
//
//	loadgen run   -url U -db D [-players N] [-duration T] [-rate R] ...
//	loadgen check -db D            database invariants only (after a crash)
//	loadgen seed  -db D -players N board seeding for the scale run
//	loadgen scale -url U[,U2] -db D  leaderboard latency through the API
//	loadgen median FILE...         medians of several -json reports
//	loadgen reads -url U -path P   board reads only, closed loop (cost per read)
//	loadgen streams -url U [-submit-url U2] [-clients N]  live standings delay and memory
//	loadgen flood -url U [-attackers N]   a victim's submissions alone and under a hint flood
//	loadgen duels -url U [-duels N]       how soon other players' duels settle after a burst of duels
//	loadgen event -url U[,U2] -db D -admin-token T [-players N] [-window W]  last-minute event crowd, then its finish
//	loadgen eventlist -url U [-readers N] [-duration T]  event list page sizes, then readers paging through it
//
// It must never be pointed at a production database: seed writes rows.
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
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: loadgen run|check|seed|scale|median|reads|streams|flood|duels|event|eventlist [flags]")
	}
	switch args[0] {
	case "run":
		return cmdRun(ctx, args[1:])
	case "check":
		return cmdCheck(ctx, args[1:])
	case "seed":
		return cmdSeed(ctx, args[1:])
	case "scale":
		return cmdScale(ctx, args[1:])
	case "median":
		return cmdMedian(args[1:])
	case "reads":
		return cmdReads(ctx, args[1:])
	case "streams":
		return cmdStreams(ctx, args[1:])
	case "flood":
		return cmdFlood(ctx, args[1:])
	case "duels":
		return cmdDuels(ctx, args[1:])
	case "event":
		return cmdEvent(ctx, args[1:])
	case "eventlist":
		return cmdEventList(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q", args[0])
}
