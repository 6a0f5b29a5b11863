-- Live standings. Every improvement of a best on a level board is numbered
-- per board (boards.last_seq, taken under the board row's lock as the last
-- write of the submission's transaction, so numbers follow commit order
-- without gaps) and logged in board_changes with the exact rank it gave, so
-- that a stream that reconnects gets what it missed. The transaction also
-- sends NOTIFY backpressure_notices with the change; PostgreSQL delivers it
-- at commit, to every replica's listener, and never for a rollback.
-- Only the latest changes of each board are kept (at least
-- game.ChangeRetention); older ones are pruned as new ones arrive.
ALTER TABLE boards ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE board_changes (
	board_id      bigint NOT NULL REFERENCES boards (id),
	seq           bigint NOT NULL CHECK (seq >= 1),
	player_id     uuid NOT NULL REFERENCES players (id),
	score         bigint NOT NULL,
	rank          bigint NOT NULL,
	previous_rank bigint NOT NULL,
	total         bigint NOT NULL,
	achieved_at   timestamptz NOT NULL,
	submission_id uuid NOT NULL REFERENCES submissions (id),
	PRIMARY KEY (board_id, seq)
);
