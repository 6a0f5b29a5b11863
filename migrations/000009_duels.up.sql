-- Duels: two players on one level version. player_a challenged player_b
-- (or asked to be matched first: player_b is NULL while matching). Each
-- side's design stays hidden until the duel ends; the result (both runs,
-- the surprise chaos drawn from seed, the rating changes) is written once,
-- in the transaction that moves the duel to its final state. seq numbers
-- the duel's changes under its row lock; each is announced with NOTIFY
-- backpressure_notices for live streams.
CREATE TABLE duels (
	id             uuid PRIMARY KEY,
	slug           text NOT NULL,
	version        integer NOT NULL,
	state          text NOT NULL CHECK (state IN ('challenged', 'matching', 'active', 'finished', 'declined', 'expired', 'forfeited')),
	seed           bigint NOT NULL,
	player_a       uuid NOT NULL REFERENCES players (id),
	player_b       uuid REFERENCES players (id) CHECK (player_b <> player_a),
	design_a       json,
	design_b       json,
	submitted_a_at timestamptz,
	submitted_b_at timestamptz,
	match_rating   double precision NOT NULL DEFAULT 0,
	created_at     timestamptz NOT NULL,
	accept_by      timestamptz NOT NULL,
	submit_by      timestamptz,
	ended_at       timestamptz,
	result         json,
	seq            bigint NOT NULL DEFAULT 0,
	FOREIGN KEY (slug, version) REFERENCES levels (slug, version),
	CHECK ((state = 'matching') = (player_b IS NULL) OR state = 'expired')
);
-- One open duel (challenged or active) per pair and level.
CREATE UNIQUE INDEX duels_pair_open ON duels (least(player_a, player_b), greatest(player_a, player_b), slug)
	WHERE state IN ('challenged', 'active');
CREATE INDEX duels_by_a ON duels (player_a, created_at);
CREATE INDEX duels_by_b ON duels (player_b, created_at);
-- The matching queue of a level version.
CREATE INDEX duels_matching ON duels (slug, version, created_at) WHERE state = 'matching';
-- What the referee looks for.
CREATE INDEX duels_open ON duels (created_at) WHERE ended_at IS NULL;

-- Ratings: Glicko-2, one row per player who has duelled (a missing row is
-- the default 1500 ± 350).
CREATE TABLE ratings (
	player_id  uuid PRIMARY KEY REFERENCES players (id),
	rating     double precision NOT NULL,
	deviation  double precision NOT NULL CHECK (deviation > 0),
	volatility double precision NOT NULL CHECK (volatility > 0),
	duels      integer NOT NULL DEFAULT 0,
	wins       integer NOT NULL DEFAULT 0,
	losses     integer NOT NULL DEFAULT 0,
	draws      integer NOT NULL DEFAULT 0
);
CREATE INDEX ratings_board ON ratings (rating DESC, player_id) WHERE duels > 0;
