package main

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"backpressure/internal/live"
	"backpressure/internal/rules"
	"backpressure/internal/store/memstore"
	"backpressure/internal/store/pgstore"
)

// startLive returns the broker of the live streams, fed by the in-memory
// store directly or, with PostgreSQL, by a listener on a connection of its
// own (DATABASE_DIRECT_URL, else DATABASE_URL: LISTEN needs a session that
// a pooler does not hand to anyone else). stop ends the listener and waits
// for it.
func startLive(ctx context.Context, cfg config, store serverStore, logger *slog.Logger) (broker *live.Broker, stop func()) {
	broker = live.NewBroker()
	if ms, ok := store.(*memstore.Store); ok {
		ms.Notify = broker.Publish
		return broker, func() {}
	}
	url := cfg.DatabaseDirectURL
	if url == "" {
		url = cfg.DatabaseURL
	}
	connect := func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := live.Listen(ctx, broker, pgstore.NoticeChannel, connect, logger); err != nil {
			logger.ErrorContext(ctx, "live listener stopped", "err", err)
		}
	}()
	return broker, func() {
		cancel()
		<-done
	}
}

// startEvents arranges for events to be finished at their end, and duels
// settled at their deadlines: with PostgreSQL by river jobs (see jobs.go,
// duels.go), with the in-memory store by a check every interval. stop ends
// it.
func startEvents(ctx context.Context, cfg config, store serverStore, svc *rules.Service, logger *slog.Logger) (stop func(), err error) {
	if _, ok := store.(*memstore.Store); !ok {
		url := cfg.DatabaseDirectURL
		if url == "" {
			url = cfg.DatabaseURL
		}
		return startEventJobs(ctx, url, cfg.EventFinishTimeout, svc, logger)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.EventFinisher().Run(ctx, cfg.EventCheckInterval)
	}()
	duelsDone := make(chan struct{})
	go func() {
		defer close(duelsDone)
		svc.DuelReferee().Run(ctx, cfg.EventCheckInterval)
	}()
	return func() {
		cancel()
		<-done
		<-duelsDone
	}, nil
}
