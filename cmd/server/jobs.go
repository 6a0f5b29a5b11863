package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"backpressure/internal/game"
	"backpressure/internal/rules"
	"backpressure/internal/scheduler"
)

// Finishing events with PostgreSQL: one river job per event, scheduled at
// its end and unique by event, worked by whichever replica fetches it,
// within EVENT_FINISH_TIMEOUT. A replica killed while working it leaves the
// job running until river rescues it (twice the timeout after it started)
// and another replica works it again; the store writes the results once
// whatever happens, so a second run changes nothing.
const (
	// riverMigrateLock serialises replicas running river's migrations at
	// start (golang-migrate's own lock covers the app's).
	riverMigrateLock = 0x62707276 // "bprv"
)

// finishEventArgs is the job: finish one event.
type finishEventArgs struct {
	EventID uuid.UUID `json:"event_id"`
}

func (finishEventArgs) Kind() string { return "finish_event" }

type finishEventWorker struct {
	river.WorkerDefaults[finishEventArgs]
	finisher *rules.EventFinisher
	log      *slog.Logger
	timeout  time.Duration
}

func (w *finishEventWorker) Timeout(*river.Job[finishEventArgs]) time.Duration { return w.timeout }

func (w *finishEventWorker) Work(ctx context.Context, job *river.Job[finishEventArgs]) error {
	done, err := w.finisher.Finish(ctx, job.Args.EventID)
	return deadlineDone(ctx, w.log, done, err, "event finished", "event_id", job.Args.EventID.String(), "attempt", job.Attempt)
}

// deadlineDone ends a job that acts at a deadline (an event's end, a duel's):
// snoozed when the deadline has not passed by this replica's clock (one ahead
// of ours scheduled it early), logged with what when it did the work, and
// failed (to be retried by river) on any other error.
func deadlineDone(ctx context.Context, log *slog.Logger, done bool, err error, what string, attrs ...any) error {
	var notEnded *rules.NotEndedError
	if errors.As(err, &notEnded) {
		return river.JobSnooze(notEnded.Wait)
	}
	if game.ErrorCode(err) == scheduler.EBUSY {
		// The workers are taken: try again in a second rather than at river's
		// backoff, so that a duel or an event is settled within seconds.
		return river.JobSnooze(time.Second)
	}
	if err != nil {
		return err
	}
	if done {
		log.InfoContext(ctx, what, attrs...)
	}
	return nil
}

// riverScheduler enqueues finish jobs.
type riverScheduler struct{ client *river.Client[pgx.Tx] }

func (s riverScheduler) ScheduleFinish(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := s.client.Insert(ctx, finishEventArgs{EventID: id}, &river.InsertOpts{
		ScheduledAt: at,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	})
	return err
}

// startEventJobs migrates river's tables (on the direct connection, like
// LISTEN: river listens too), starts its client on this replica and
// (re)schedules every unfinished event, which unique jobs make harmless.
// svc schedules new events' finishes and duels' deadlines with it. stop drains the client.
func startEventJobs(ctx context.Context, url string, timeout time.Duration, svc *rules.Service, logger *slog.Logger) (stop func(), err error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("event jobs: %w", err)
	}
	if err := migrateRiver(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	finisher := svc.EventFinisher()
	workers := river.NewWorkers()
	river.AddWorker(workers, &finishEventWorker{finisher: finisher, log: logger, timeout: timeout})
	referee := svc.DuelReferee()
	addDuelWorker(workers, referee, logger, timeout)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		ID:                   workerID(),
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}},
		Workers:              workers,
		Logger:               logger.With("component", "river"),
		JobTimeout:           timeout,
		RescueStuckJobsAfter: 2 * timeout,
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("event jobs: %w", err)
	}
	if err := client.Start(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("event jobs: start: %w", err)
	}
	sched := riverScheduler{client}
	svc.ScheduleWith(sched, scheduleOpenDuels(ctx, client, referee, logger))
	events, err := finisher.Unfinished(ctx)
	if err == nil {
		for _, e := range events {
			if err = sched.ScheduleFinish(ctx, e.ID, e.EndsAt); err != nil {
				break
			}
		}
	}
	if err != nil {
		logger.ErrorContext(ctx, "scheduling unfinished events", "err", err)
	}
	return func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			logger.WarnContext(stopCtx, "stopping event jobs", "err", err)
		}
		pool.Close()
	}, nil
}

// workerID names this replica's river client as river_job.attempted_by
// shows it: host, process id and start time, so an operator (or a test)
// can tell which replica holds a job.
func workerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "replica"
	}
	return fmt.Sprintf("%s-pid%d-%d", host, os.Getpid(), time.Now().Unix())
}

func migrateRiver(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, riverMigrateLock); err != nil {
		return fmt.Errorf("river migrations: lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, riverMigrateLock)
	}()
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}
