package pgstore

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/game"
)

// An event's final runs as a finisher computes them (event_final_runs,
// migration 000008), so that a finisher that dies mid-way leaves its work
// for the next one. They are a cache of deterministic computations, never
// the results: FinishEvent still writes every result in one transaction.

// EventFinalRuns returns the final runs stored for an unfinished event, by
// player; each names the design (SubmissionID) it ran.
func (s *Store) EventFinalRuns(ctx context.Context, id uuid.UUID) ([]game.EventResult, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT player_id, submission_id, passed, score, result FROM event_final_runs
		WHERE event_id = $1 ORDER BY player_id`, id)
	if err != nil {
		return nil, translate("event final runs", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (game.EventResult, error) {
		var r game.EventResult
		var result []byte
		err := row.Scan(&r.PlayerID, &r.SubmissionID, &r.Passed, &r.Score, &result)
		r.Result = result
		return r, err
	})
	if err != nil {
		return nil, translate("event final runs", err)
	}
	if out == nil {
		out = []game.EventResult{}
	}
	return out, nil
}

// SaveEventFinalRuns stores final runs of an unfinished event, in one
// statement; a player's stored run is replaced only by a run of another
// design. Nothing is stored once the event is finished.
func (s *Store) SaveEventFinalRuns(ctx context.Context, id uuid.UUID, runs []game.EventResult) error {
	if len(runs) == 0 {
		return nil
	}
	players := make([]uuid.UUID, len(runs))
	subs := make([]uuid.UUID, len(runs))
	passed := make([]bool, len(runs))
	scores := make([]int64, len(runs))
	results := make([]string, len(runs))
	for i, r := range runs {
		if r.Score < 0 {
			return game.Errorf(game.EINVALID, "invalid final run")
		}
		players[i], subs[i], passed[i], scores[i], results[i] = r.PlayerID, r.SubmissionID, r.Passed, r.Score, string(r.Result)
	}
	err := s.retry(ctx, func() error {
		_, err := s.pool.Exec(ctx, `
			INSERT INTO event_final_runs (event_id, player_id, submission_id, passed, score, result)
			SELECT $1, r.player_id, r.submission_id, r.passed, r.score, r.result::json
			FROM unnest($2::uuid[], $3::uuid[], $4::bool[], $5::int8[], $6::text[])
				AS r (player_id, submission_id, passed, score, result)
			WHERE EXISTS (SELECT 1 FROM events WHERE id = $1 AND finished_at IS NULL)
			ON CONFLICT (event_id, player_id) DO UPDATE
				SET submission_id = EXCLUDED.submission_id, passed = EXCLUDED.passed,
					score = EXCLUDED.score, result = EXCLUDED.result
				WHERE event_final_runs.submission_id <> EXCLUDED.submission_id`,
			id, players, subs, passed, scores, results)
		return err
	})
	return translate("save event final runs", err)
}
