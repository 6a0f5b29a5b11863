-- Back to 000011: attempts numbered and announced in their own
-- transaction (bp_event_submit), the counts on the event row.
UPDATE events e SET
	entrants = e.entrants + coalesce((SELECT sum(c.entrants) FROM event_counts c WHERE c.event_id = e.id), 0),
	ranked = e.ranked + coalesce((SELECT sum(c.ranked) FROM event_counts c WHERE c.event_id = e.id), 0);
DROP FUNCTION bp_event_announce(uuid, integer, text, integer);
DROP FUNCTION bp_event_attempt(uuid, uuid, uuid, json, json, boolean, bigint, timestamptz, bigint);
DROP FUNCTION bp_event_count(uuid, uuid, integer, integer, integer);
DROP FUNCTION bp_event_counts(uuid);
DROP TABLE event_counts;
DROP INDEX event_submissions_unannounced;
UPDATE event_submissions SET seq = 0 WHERE seq IS NULL;
ALTER TABLE event_submissions DROP COLUMN seq;

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
