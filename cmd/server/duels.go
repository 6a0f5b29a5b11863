package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"backpressure/internal/rules"
)

// Settling duels with PostgreSQL: one river job per duel deadline (accept_by,
// then submit_by), unique by duel and deadline, worked by whichever replica
// fetches it. The store ends a duel once whoever settles it, so a job that
// runs twice (a rescued job, two deadlines) changes nothing the second time.

// settleDuelArgs is the job: settle one duel at one of its deadlines.
type settleDuelArgs struct {
	DuelID uuid.UUID `json:"duel_id"`
	At     time.Time `json:"at"`
}

func (settleDuelArgs) Kind() string { return "settle_duel" }

type settleDuelWorker struct {
	river.WorkerDefaults[settleDuelArgs]
	referee *rules.DuelReferee
	log     *slog.Logger
	timeout time.Duration
}

func (w *settleDuelWorker) Timeout(*river.Job[settleDuelArgs]) time.Duration { return w.timeout }

func (w *settleDuelWorker) Work(ctx context.Context, job *river.Job[settleDuelArgs]) error {
	done, err := w.referee.Settle(ctx, job.Args.DuelID)
	return deadlineDone(ctx, w.log, done, err, "duel settled", "duel_id", job.Args.DuelID.String(), "attempt", job.Attempt)
}

// riverDuelScheduler enqueues settle jobs.
type riverDuelScheduler struct{ client *river.Client[pgx.Tx] }

func (s riverDuelScheduler) ScheduleDuel(ctx context.Context, id uuid.UUID, at time.Time) error {
	_, err := s.client.Insert(ctx, settleDuelArgs{DuelID: id, At: at.UTC()}, &river.InsertOpts{
		ScheduledAt: at,
		UniqueOpts:  river.UniqueOpts{ByArgs: true},
	})
	return err
}

// addDuelWorker registers the settle worker on workers.
func addDuelWorker(workers *river.Workers, referee *rules.DuelReferee, logger *slog.Logger, timeout time.Duration) {
	river.AddWorker(workers, &settleDuelWorker{referee: referee, log: logger, timeout: timeout})
}

// scheduleOpenDuels (re)schedules the deadline of every open duel, which
// unique jobs make harmless, and returns the scheduler of new deadlines.
func scheduleOpenDuels(ctx context.Context, client *river.Client[pgx.Tx], referee *rules.DuelReferee, logger *slog.Logger) riverDuelScheduler {
	sched := riverDuelScheduler{client}
	duels, err := referee.Open(ctx)
	if err == nil {
		for _, d := range duels {
			if err = sched.ScheduleDuel(ctx, d.ID, d.Deadline()); err != nil {
				break
			}
		}
	}
	if err != nil {
		logger.ErrorContext(ctx, "scheduling open duels", "err", err)
	}
	return sched
}
