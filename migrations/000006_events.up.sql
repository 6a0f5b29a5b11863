-- Events: a scheduled competition on one level version, with a hidden
-- chaos schedule that nobody sees until the final standings are frozen
-- (finished_at). Entrants' designs during the event are event_submissions
-- (they do not count on the level's own board); their final runs, against
-- the level with the hidden chaos, are event_results, written once, in the
-- transaction that sets finished_at.
CREATE TABLE events (
	id            uuid PRIMARY KEY,
	slug          text NOT NULL,
	version       integer NOT NULL,
	title         text NOT NULL,
	briefing      text NOT NULL,
	starts_at     timestamptz NOT NULL,
	ends_at       timestamptz NOT NULL CHECK (ends_at > starts_at),
	attempt_limit integer NOT NULL CHECK (attempt_limit >= 0),
	join_required boolean NOT NULL,
	max_entrants  integer NOT NULL CHECK (max_entrants >= 0),
	final         text NOT NULL CHECK (final IN ('best', 'last')),
	hidden_chaos  json NOT NULL,
	hidden_resilience json,
	created_by    uuid REFERENCES players (id),
	created_at    timestamptz NOT NULL,
	finished_at   timestamptz,
	entrants      integer NOT NULL DEFAULT 0,
	-- The number of the event's latest change (an attempt, the finish),
	-- taken under the event row's lock, so in commit order; each change is
	-- announced with NOTIFY backpressure_notices for live streams.
	seq           bigint NOT NULL DEFAULT 0,
	FOREIGN KEY (slug, version) REFERENCES levels (slug, version)
);
CREATE INDEX events_starts ON events (starts_at, id);
-- Unfinished events by end: what the finisher looks for.
CREATE INDEX events_unfinished ON events (ends_at) WHERE finished_at IS NULL;

CREATE TABLE event_submissions (
	id         uuid PRIMARY KEY,
	event_id   uuid NOT NULL REFERENCES events (id),
	player_id  uuid NOT NULL REFERENCES players (id),
	design     json NOT NULL,
	result     json,
	passed     boolean NOT NULL,
	score      bigint NOT NULL CHECK (score >= 0),
	created_at timestamptz NOT NULL
);
CREATE INDEX event_submissions_event ON event_submissions (event_id, player_id);

CREATE TABLE event_entrants (
	event_id           uuid NOT NULL REFERENCES events (id),
	player_id          uuid NOT NULL REFERENCES players (id),
	joined_at          timestamptz NOT NULL,
	attempts           integer NOT NULL DEFAULT 0,
	best_submission_id uuid REFERENCES event_submissions (id),
	best_score         bigint,
	best_at            timestamptz,
	last_submission_id uuid REFERENCES event_submissions (id),
	PRIMARY KEY (event_id, player_id)
);

CREATE TABLE event_results (
	event_id      uuid NOT NULL REFERENCES events (id),
	player_id     uuid NOT NULL REFERENCES players (id),
	rank          bigint NOT NULL CHECK (rank >= 1),
	submission_id uuid NOT NULL REFERENCES event_submissions (id),
	passed        boolean NOT NULL,
	score         bigint NOT NULL CHECK (score >= 0),
	result        json NOT NULL,
	PRIMARY KEY (event_id, player_id),
	UNIQUE (event_id, rank)
);
