-- An event's attempts commit side by side; their changes are numbered and
-- announced after commit, in batches (pgstore's announcer).
--
-- An attempt (bp_event_attempt) holds, to its commit, only what is its own
-- or shared by a few: the event row FOR KEY SHARE (the finish waits for
-- it), the entrant's row, one of the event's 16 counter shards and the rank
-- buckets its key leaves and enters. Nothing serialises the attempts of one
-- event as a whole, so they commit in groups (one WAL flush for many).
--
-- The change's number, its live rank and its NOTIFY come later, from
-- bp_event_announce: one transaction per batch, under the event row's
-- FOR NO KEY UPDATE (one announcer at a time per event, attempts still
-- running), in a REPEATABLE READ snapshot, numbering every committed attempt
-- not yet numbered in commit-independent order (created_at, id). Every rank
-- it sends is exact in that snapshot: the standings after every change it
-- has numbered, and no other.

-- seq: the change's number, NULL until announced. Attempts stored before
-- this migration were announced as they committed: they read 0.
ALTER TABLE event_submissions ADD COLUMN seq bigint DEFAULT 0;
ALTER TABLE event_submissions ALTER COLUMN seq DROP DEFAULT;
CREATE INDEX event_submissions_unannounced ON event_submissions (event_id, created_at, id) WHERE seq IS NULL;

-- The event's counts, in 16 shards (a player's shard is the last byte of
-- their id, mod 16), added to the counts on the event row (those made
-- before this migration). Every event has all 16 rows from its creation:
-- the cap's exactness below relies on no shard row being added later.
CREATE TABLE event_counts (
	event_id uuid NOT NULL REFERENCES events (id),
	shard    smallint NOT NULL CHECK (shard BETWEEN 0 AND 15),
	entrants integer NOT NULL DEFAULT 0,
	ranked   integer NOT NULL DEFAULT 0,
	PRIMARY KEY (event_id, shard)
);
INSERT INTO event_counts (event_id, shard) SELECT e.id, s FROM events e, generate_series(0, 15) s;

-- bp_event_counts is an event's entrants and ranked entrants: the event
-- row's base plus its shards, in the caller's snapshot.
CREATE FUNCTION bp_event_counts(p_event uuid, OUT o_entrants integer, OUT o_ranked integer)
LANGUAGE sql STABLE AS $$
	SELECT e.entrants + coalesce(sum(c.entrants), 0)::integer, e.ranked + coalesce(sum(c.ranked), 0)::integer
	FROM events e LEFT JOIN event_counts c ON c.event_id = e.id
	WHERE e.id = p_event
	GROUP BY e.entrants, e.ranked
$$;

-- bp_event_count adds a player's joining (p_joined 1) and first place in
-- the standings (p_ranked 1) to the event's counts, refusing a joining
-- past p_max entrants (0: no cap) with BPFUL.
--
-- The cap is exact without one lock for all: a shard's row is held by its
-- writer until commit, so at most 16 increments are uncommitted at once.
-- Far from the cap (committed count + 64 below it) a joiner increments its
-- own shard and checks that the count it then sees, plus 15 others that
-- may be in flight, stays within the cap; a joiner nearer the cap locks all
-- 16 shards in order first (no increment is then in flight) and counts
-- exactly. A far joiner whose check fails (the count rose by 64 since it
-- looked) is refused as busy (BPBSY), to be retried: its next try is near.
CREATE FUNCTION bp_event_count(p_event uuid, p_player uuid, p_joined integer, p_ranked integer, p_max integer)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_shard smallint := get_byte(uuid_send(p_player), 15) % 16;
	v_entrants integer;
BEGIN
	IF p_joined = 0 OR p_max <= 0 THEN
		IF p_joined <> 0 OR p_ranked <> 0 THEN
			UPDATE event_counts c SET entrants = c.entrants + p_joined, ranked = c.ranked + p_ranked
			WHERE c.event_id = p_event AND c.shard = v_shard;
		END IF;
		RETURN;
	END IF;
	SELECT o_entrants INTO STRICT v_entrants FROM bp_event_counts(p_event);
	IF v_entrants + 64 >= p_max THEN
		PERFORM 1 FROM event_counts c WHERE c.event_id = p_event ORDER BY c.shard FOR UPDATE;
		SELECT o_entrants INTO STRICT v_entrants FROM bp_event_counts(p_event);
		IF v_entrants >= p_max THEN
			RAISE EXCEPTION 'the event is full (% entrants)', p_max USING ERRCODE = 'BPFUL';
		END IF;
		UPDATE event_counts c SET entrants = c.entrants + 1, ranked = c.ranked + p_ranked
		WHERE c.event_id = p_event AND c.shard = v_shard;
		RETURN;
	END IF;
	UPDATE event_counts c SET entrants = c.entrants + 1, ranked = c.ranked + p_ranked
	WHERE c.event_id = p_event AND c.shard = v_shard;
	SELECT o_entrants INTO STRICT v_entrants FROM bp_event_counts(p_event);
	IF v_entrants + 15 > p_max THEN
		RAISE EXCEPTION 'the event is filling up: try again' USING ERRCODE = 'BPBSY';
	END IF;
END
$$;

-- bp_event_attempt stores one attempt at an event, as one statement (its
-- own transaction), and returns the attempts used. Its refusals, raised
-- with these SQLSTATEs, roll everything back:
--   BP404 no such event;            BPNST the event has not started (p_at);
--   BPEND it ended, or is finished; BPNJN join first (join_required);
--   BPLIM the attempt limit is used; BPFUL the cap on entrants is reached;
--   BPBSY the event is filling up too fast to count exactly: try again.
--
-- Locks, in this order: the event row FOR KEY SHARE (no finish while an
-- attempt is in flight, and none after it: the finish takes FOR UPDATE),
-- the entrant's row (the attempt limit and the best are the entrant's
-- own), the entrant's counter shard (or, near the cap, all 16 in order),
-- and the buckets in ascending key order. Its change is announced after
-- commit (bp_event_announce).
CREATE FUNCTION bp_event_attempt(p_id uuid, p_event uuid, p_player uuid, p_design json, p_result json,
	p_passed boolean, p_score bigint, p_at timestamptz, p_bucket_size bigint,
	OUT o_attempts integer)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_e record;
	v_n record;
	v_rows int;
	v_joined boolean := false;
	v_found boolean;
	v_had boolean;
	v_best_score bigint;
	v_best_at timestamptz;
	v_best_sub uuid;
	v_ns bigint;
	v_at timestamptz;
BEGIN
	SELECT e.starts_at, e.ends_at, e.finished_at, e.attempt_limit, e.join_required, e.max_entrants INTO v_e
	FROM events e WHERE e.id = p_event FOR KEY SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'event not found' USING ERRCODE = 'BP404';
	END IF;
	IF p_at < v_e.starts_at THEN
		RAISE EXCEPTION 'the event has not started' USING ERRCODE = 'BPNST';
	END IF;
	IF v_e.finished_at IS NOT NULL OR p_at >= v_e.ends_at THEN
		RAISE EXCEPTION 'the event has ended' USING ERRCODE = 'BPEND';
	END IF;
	FOR i IN 1..2 LOOP
		SELECT n.attempts, n.best_score, n.best_at, n.best_submission_id, n.rank_ns, n.rank_at INTO v_n
		FROM event_entrants n WHERE n.event_id = p_event AND n.player_id = p_player FOR UPDATE;
		v_found := FOUND;
		EXIT WHEN v_found OR i = 2;
		IF v_e.join_required THEN
			RAISE EXCEPTION 'join the event before submitting' USING ERRCODE = 'BPNJN';
		END IF;
		-- The first attempt joins (unless a concurrent one of the same
		-- player just did: then read its row, locking it).
		INSERT INTO event_entrants (event_id, player_id, joined_at) VALUES (p_event, p_player, p_at)
		ON CONFLICT DO NOTHING;
		GET DIAGNOSTICS v_rows = ROW_COUNT;
		v_joined := v_rows = 1;
	END LOOP;
	IF NOT v_found THEN
		RAISE EXCEPTION 'entrant % of event % keeps disappearing', p_player, p_event;
	END IF;
	IF v_e.attempt_limit > 0 AND v_n.attempts >= v_e.attempt_limit THEN
		RAISE EXCEPTION 'you have used all % attempts', v_e.attempt_limit USING ERRCODE = 'BPLIM';
	END IF;
	v_had := v_n.rank_ns IS NOT NULL;
	PERFORM bp_event_count(p_event, p_player, v_joined::int, (NOT v_had)::int, v_e.max_entrants);
	INSERT INTO event_submissions (id, event_id, player_id, design, result, passed, score, created_at)
	VALUES (p_id, p_event, p_player, p_design, p_result, p_passed, p_score, p_at);

	-- The best: a higher passing score, or the same reached earlier.
	v_best_score := v_n.best_score;
	v_best_at := v_n.best_at;
	v_best_sub := v_n.best_submission_id;
	IF p_passed AND (v_best_score IS NULL OR p_score > v_best_score OR (p_score = v_best_score AND p_at < v_best_at)) THEN
		v_best_score := p_score;
		v_best_at := p_at;
		v_best_sub := p_id;
	END IF;
	v_ns := CASE WHEN v_best_score IS NULL THEN 1 ELSE -v_best_score END;
	v_at := coalesce(v_best_at, '1970-01-01T00:00:00Z');
	UPDATE event_entrants n SET attempts = n.attempts + 1, last_submission_id = p_id,
		best_submission_id = v_best_sub, best_score = v_best_score, best_at = v_best_at,
		rank_ns = v_ns, rank_at = v_at
	WHERE n.event_id = p_event AND n.player_id = p_player
	RETURNING n.attempts INTO STRICT o_attempts;
	IF NOT v_had OR v_n.rank_ns <> v_ns OR v_n.rank_at <> v_at THEN
		PERFORM bp_event_move_key(p_event, v_had, v_n.rank_ns, v_n.rank_at, v_ns, v_at, p_player, p_bucket_size);
	END IF;
END
$$;

-- bp_event_announce numbers an event's committed attempts not yet numbered
-- (at most p_limit, oldest first), each change the entrant's standing as
-- the standings now are, and sends each with NOTIFY; it returns how many.
-- Run it in a REPEATABLE READ transaction: one snapshot for what it numbers
-- and the ranks it sends. A finished event has nothing left to number (the
-- finish numbers what remains, under its lock).
CREATE FUNCTION bp_event_announce(p_event uuid, p_limit integer, p_channel text, p_max_payload integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_seq bigint;
	v_count integer := 0;
	v_total integer;
	v_s record;
	v_topic text := '"event:' || p_event || '"';
	v_payload text;
BEGIN
	SELECT e.seq INTO v_seq FROM events e WHERE e.id = p_event FOR NO KEY UPDATE;
	IF NOT FOUND THEN
		RETURN 0;
	END IF;
	SELECT o_ranked INTO STRICT v_total FROM bp_event_counts(p_event);
	FOR v_s IN
		WITH pending AS (
			SELECT s.id, s.player_id, s.created_at FROM event_submissions s
			WHERE s.event_id = p_event AND s.seq IS NULL
			ORDER BY s.created_at, s.id LIMIT p_limit)
		SELECT pending.id, n.player_id, n.attempts, n.best_score, n.best_at, n.best_submission_id,
			n.rank_ns, n.rank_at, p.name
		FROM pending
		JOIN event_entrants n ON n.event_id = p_event AND n.player_id = pending.player_id
		JOIN players p ON p.id = pending.player_id
		ORDER BY pending.created_at, pending.id
	LOOP
		v_seq := v_seq + 1;
		v_count := v_count + 1;
		UPDATE event_submissions s SET seq = v_seq WHERE s.id = v_s.id;
		-- game.Notice's JSON of game.EventChange, byte for byte.
		v_payload := '{"topic":' || v_topic || ',"seq":' || v_seq || ',"data":{"seq":' || v_seq
			|| ',"event_id":"' || p_event || '","kind":"attempt","standing":{"rank":'
			|| bp_event_rank(p_event, v_s.rank_ns, v_s.rank_at, v_s.player_id)
			|| ',"player_id":"' || v_s.player_id || '","player_name":' || bp_json_text(v_s.name)
			|| ',"score":' || coalesce(v_s.best_score, 0) || ',"passed":' || (v_s.best_score IS NOT NULL)
			|| ',"attempts":' || v_s.attempts
			|| ',"submission_id":' || coalesce('"' || v_s.best_submission_id || '"', 'null')
			|| ',"achieved_at":' || coalesce(bp_json_time(v_s.best_at), 'null')
			|| '},"total":' || v_total || '}}';
		IF octet_length(v_payload) > p_max_payload THEN
			v_payload := '{"topic":' || v_topic || ',"seq":' || v_seq || ',"data":null}';
		END IF;
		PERFORM pg_notify(p_channel, v_payload);
	END LOOP;
	IF v_count > 0 THEN
		UPDATE events e SET seq = v_seq WHERE e.id = p_event;
	END IF;
	RETURN v_count;
END
$$;

DROP FUNCTION bp_event_submit(uuid, uuid, uuid, json, json, boolean, bigint, timestamptz, bigint, text, integer);
