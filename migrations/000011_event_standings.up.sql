-- Event standings counted like the boards (000001's design note): an
-- attempt's rank, a page of the standings and the page around an entrant
-- cost O(buckets + bucket size) whatever the field, instead of a count of
-- every entrant under the event's lock.
--
-- An entrant's position is (rank_ns, rank_at, player_id) ascending:
-- rank_ns = -best passing score and rank_at = when it was reached, or, for
-- an entrant whose attempts all failed, rank_ns = 1 and rank_at = the Unix
-- epoch (after every passing entrant, by player id): game.StandingKey.
-- Both are NULL until the entrant's first attempt: an entrant who only
-- joined is in no index, no bucket and no standings.
--
-- event_buckets is the one-level counted B-tree over that key, per event,
-- with a sentinel bucket per event whose lo sorts before every key.
ALTER TABLE event_entrants ADD COLUMN rank_ns bigint, ADD COLUMN rank_at timestamptz;
UPDATE event_entrants SET rank_ns = CASE WHEN best_score IS NULL THEN 1 ELSE -best_score END,
	rank_at = coalesce(best_at, '1970-01-01T00:00:00Z')
WHERE attempts > 0;
CREATE INDEX event_entrants_rank ON event_entrants (event_id, rank_ns, rank_at, player_id) WHERE rank_ns IS NOT NULL;

-- Every event is bounded: those scheduled without a cap get the default
-- (game.DefaultMaxEntrants).
UPDATE events SET max_entrants = 100000 WHERE max_entrants = 0;

-- ranked: the entrants in the standings (with at least one attempt),
-- counted with the numbering of each change.
ALTER TABLE events ADD COLUMN ranked integer NOT NULL DEFAULT 0;
UPDATE events e SET ranked = (SELECT count(*) FROM event_entrants n WHERE n.event_id = e.id AND n.rank_ns IS NOT NULL);

-- Lists by phase read O(page): the finished by start, the unfinished by
-- start (live and finishing ones are the unfinished that started).
CREATE INDEX events_finished_starts ON events (starts_at, id) WHERE finished_at IS NOT NULL;
CREATE INDEX events_unfinished_starts ON events (starts_at, id) WHERE finished_at IS NULL;

CREATE TABLE event_buckets (
	id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	event_id     uuid NOT NULL REFERENCES events (id),
	lo_ns        bigint NOT NULL,
	lo_at        timestamptz NOT NULL,
	lo_player_id uuid NOT NULL,
	n            bigint NOT NULL CHECK (n >= 0),
	UNIQUE (event_id, lo_ns, lo_at, lo_player_id)
) WITH (fillfactor = 50);

-- Buckets of the events already there: 512 entrants each, then the
-- sentinels (the first bucket of each event is made the sentinel).
WITH o AS (
	SELECT event_id, rank_ns, rank_at, player_id,
		row_number() OVER (PARTITION BY event_id ORDER BY rank_ns, rank_at, player_id) - 1 AS rn,
		count(*) OVER (PARTITION BY event_id) AS total
	FROM event_entrants WHERE rank_ns IS NOT NULL)
INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
SELECT event_id,
	CASE WHEN rn = 0 THEN -9223372036854775808 ELSE rank_ns END,
	CASE WHEN rn = 0 THEN '1970-01-01T00:00:00Z'::timestamptz ELSE rank_at END,
	CASE WHEN rn = 0 THEN '00000000-0000-0000-0000-000000000000'::uuid ELSE player_id END,
	least(512, total - rn)
FROM o WHERE rn % 512 = 0;
INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
SELECT id, -9223372036854775808, '1970-01-01T00:00:00Z', '00000000-0000-0000-0000-000000000000', 0 FROM events
ON CONFLICT DO NOTHING;

-- bp_event_rank is 1 + the number of entrants before the key in an
-- event's live standings, from the buckets (one snapshot).
CREATE FUNCTION bp_event_rank(p_event uuid, p_ns bigint, p_at timestamptz, p_pid uuid)
RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN (
		WITH bk AS (
			SELECT b.lo_ns, b.lo_at, b.lo_player_id FROM event_buckets b
			WHERE b.event_id = p_event AND (b.lo_ns, b.lo_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
			ORDER BY b.lo_ns DESC, b.lo_at DESC, b.lo_player_id DESC
			LIMIT 1)
		SELECT 1 + (SELECT coalesce(sum(b.n), 0) FROM event_buckets b, bk
		            WHERE b.event_id = p_event
		              AND (b.lo_ns, b.lo_at, b.lo_player_id) < (bk.lo_ns, bk.lo_at, bk.lo_player_id))
		         + (SELECT count(*) FROM event_entrants e, bk
		            WHERE e.event_id = p_event AND e.rank_ns IS NOT NULL
		              AND (e.rank_ns, e.rank_at, e.player_id) >= (bk.lo_ns, bk.lo_at, bk.lo_player_id)
		              AND (e.rank_ns, e.rank_at, e.player_id) < (p_ns, p_at, p_pid)));
END
$$;

-- bp_event_lock_bucket row-locks the bucket holding the key, as
-- bp_lock_bucket does for boards (a concurrent split may move the key to a
-- newer bucket: look again until the locked one still holds it).
CREATE FUNCTION bp_event_lock_bucket(p_event uuid, p_ns bigint, p_at timestamptz, p_pid uuid,
	OUT o_id bigint, OUT o_sentinel boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_again bigint;
BEGIN
	FOR i IN 1..1000 LOOP
		SELECT b.id, b.lo_ns = -9223372036854775808 INTO STRICT o_id, o_sentinel
		FROM event_buckets b
		WHERE b.event_id = p_event AND (b.lo_ns, b.lo_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_ns DESC, b.lo_at DESC, b.lo_player_id DESC
		LIMIT 1
		FOR UPDATE;
		SELECT b.id INTO STRICT v_again
		FROM event_buckets b
		WHERE b.event_id = p_event AND (b.lo_ns, b.lo_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_ns DESC, b.lo_at DESC, b.lo_player_id DESC
		LIMIT 1;
		IF v_again = o_id THEN
			RETURN;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'bucket of event % keeps moving', p_event;
END
$$;

-- bp_event_move_key records in an event's buckets that an entrant moved
-- from the old key (p_has_old false: a newcomer) to the new one, already
-- written; as bp_move_key does for boards (lock both buckets in ascending
-- key order, split past p_bucket_size at the median, delete a non-sentinel
-- bucket left empty).
CREATE FUNCTION bp_event_move_key(p_event uuid, p_has_old boolean, p_old_ns bigint, p_old_at timestamptz,
	p_new_ns bigint, p_new_at timestamptz, p_pid uuid, p_bucket_size bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_new record;
	v_old record;
	v_n bigint;
	v_m bigint;
	v_half bigint;
	v_ns bigint;
	v_at timestamptz;
	v_pid uuid;
BEGIN
	IF NOT p_has_old THEN
		v_new := bp_event_lock_bucket(p_event, p_new_ns, p_new_at, p_pid);
	ELSIF (p_new_ns, p_new_at) < (p_old_ns, p_old_at) THEN
		v_new := bp_event_lock_bucket(p_event, p_new_ns, p_new_at, p_pid);
		v_old := bp_event_lock_bucket(p_event, p_old_ns, p_old_at, p_pid);
	ELSE
		v_old := bp_event_lock_bucket(p_event, p_old_ns, p_old_at, p_pid);
		v_new := bp_event_lock_bucket(p_event, p_new_ns, p_new_at, p_pid);
	END IF;
	IF p_has_old THEN
		IF v_old.o_id = v_new.o_id THEN
			RETURN;
		END IF;
	END IF;
	UPDATE event_buckets b SET n = b.n + 1 WHERE b.id = v_new.o_id RETURNING b.n INTO STRICT v_n;
	IF p_has_old THEN
		UPDATE event_buckets b SET n = b.n - 1 WHERE b.id = v_old.o_id RETURNING b.n INTO STRICT v_m;
		IF v_m = 0 AND NOT v_old.o_sentinel THEN
			DELETE FROM event_buckets b WHERE b.id = v_old.o_id;
		END IF;
	END IF;
	IF v_n > p_bucket_size THEN
		-- The bucket's entrants are exactly the first v_n from its lo on:
		-- n counts every committed one in its range, plus this one.
		v_half := v_n / 2;
		SELECT e.rank_ns, e.rank_at, e.player_id INTO STRICT v_ns, v_at, v_pid
		FROM event_entrants e, event_buckets b
		WHERE b.id = v_new.o_id AND e.event_id = p_event AND e.rank_ns IS NOT NULL
		  AND (e.rank_ns, e.rank_at, e.player_id) >= (b.lo_ns, b.lo_at, b.lo_player_id)
		ORDER BY e.rank_ns, e.rank_at, e.player_id
		OFFSET v_half LIMIT 1;
		INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
		VALUES (p_event, v_ns, v_at, v_pid, v_n - v_half);
		UPDATE event_buckets b SET n = v_half WHERE b.id = v_new.o_id;
	END IF;
END
$$;

-- bp_json_time is the JSON of t exactly as Go's encoding/json writes a UTC
-- time.Time (RFC 3339, trailing zeros of the fraction dropped).
CREATE FUNCTION bp_json_time(t timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT '"' || rtrim(rtrim(to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '0'), '.') || 'Z"'
$$;

-- bp_event_submit stores one attempt at an event, as one statement (its own
-- transaction), and returns the attempts used, the entrant's live rank and
-- the change's number. Its refusals, raised with these SQLSTATEs, roll
-- everything back:
--   BP404 no such event;            BPNST the event has not started (p_at);
--   BPEND it ended, or is finished; BPNJN join first (join_required);
--   BPLIM the attempt limit is used; BPFUL the cap on entrants is reached.
--
-- Locks, in this order: the event row FOR KEY SHARE (no finish while an
-- attempt is in flight, and none after it: the finish takes FOR UPDATE),
-- the entrant's row (the attempt limit and the best are the entrant's
-- own), the buckets in ascending key order, and last the event row's
-- update: it numbers the change, counts a newcomer to the standings and,
-- for an attempt that joined, checks the cap, and is held to commit. That
-- last part is serialised per event and does O(1) writes and one rank from
-- the buckets; nothing under any lock reads the whole field.
CREATE FUNCTION bp_event_submit(p_id uuid, p_event uuid, p_player uuid, p_design json, p_result json,
	p_passed boolean, p_score bigint, p_at timestamptz, p_bucket_size bigint,
	p_channel text, p_max_payload integer,
	OUT o_attempts integer, OUT o_rank bigint, OUT o_seq bigint)
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
	v_total bigint;
	v_entrants integer;
	v_name text;
	v_topic text := '"event:' || p_event || '"';
	v_payload text;
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
		IF v_e.max_entrants > 0 AND (SELECT e.entrants FROM events e WHERE e.id = p_event) >= v_e.max_entrants THEN
			-- Spare the work: the count is checked again, exactly, last.
			RAISE EXCEPTION 'the event is full (% entrants)', v_e.max_entrants USING ERRCODE = 'BPFUL';
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
	v_had := v_n.rank_ns IS NOT NULL;
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

	-- Last, held to commit: the change's number, so changes are numbered
	-- one at a time in commit order and the rank below sees exactly the
	-- changes numbered before.
	UPDATE events e SET seq = e.seq + 1, ranked = e.ranked + (NOT v_had)::int, entrants = e.entrants + v_joined::int
	WHERE e.id = p_event
	RETURNING e.seq, e.ranked, e.entrants INTO STRICT o_seq, v_total, v_entrants;
	IF v_joined AND v_e.max_entrants > 0 AND v_entrants > v_e.max_entrants THEN
		RAISE EXCEPTION 'the event is full (% entrants)', v_e.max_entrants USING ERRCODE = 'BPFUL';
	END IF;
	o_rank := bp_event_rank(p_event, v_ns, v_at, p_player);
	SELECT p.name INTO STRICT v_name FROM players p WHERE p.id = p_player;
	-- game.Notice's JSON of game.EventChange, byte for byte.
	v_payload := '{"topic":' || v_topic || ',"seq":' || o_seq || ',"data":{"seq":' || o_seq
		|| ',"event_id":"' || p_event || '","kind":"attempt","standing":{"rank":' || o_rank
		|| ',"player_id":"' || p_player || '","player_name":' || bp_json_text(v_name)
		|| ',"score":' || coalesce(v_best_score, 0) || ',"passed":' || (v_best_score IS NOT NULL)
		|| ',"attempts":' || o_attempts
		|| ',"submission_id":' || coalesce('"' || v_best_sub || '"', 'null')
		|| ',"achieved_at":' || coalesce(bp_json_time(v_best_at), 'null')
		|| '},"total":' || v_total || '}}';
	IF octet_length(v_payload) > p_max_payload THEN
		v_payload := '{"topic":' || v_topic || ',"seq":' || o_seq || ',"data":null}';
	END IF;
	PERFORM pg_notify(p_channel, v_payload);
END
$$;
