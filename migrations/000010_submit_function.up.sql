-- A submission's whole write as one statement: bp_submit. It does in the
-- database, in the same order and under the same locks, what the store's Go
-- transaction did in about fifteen round trips: the idempotency claim (or
-- the replay of a claimed key), the level row FOR SHARE and the check of
-- the version the caller scored against, the submission row (and whatever
-- triggers on it), the player's best on the level version's board and its
-- rank buckets, the taking of the player's best on an old version being
-- drained off the global board (global_drains, left_global), the global
-- board and its buckets, the numbered board change with its exact rank, its
-- log row and its NOTIFY, and the receipt kept for retries.
--
-- Lock order, as in internal/store/pgstore/doc.go: idempotency row, level
-- row (FOR SHARE), level-board entry, level-board buckets in ascending key
-- order, the global board's advisory lock (shared), global entry, global
-- buckets in ascending key order, and last the board row whose last_seq
-- numbers the change (held to commit).
--
-- Every function here is VOLATILE: under READ COMMITTED each statement in
-- it takes a fresh snapshot, as each statement of the Go transaction did (a
-- bucket is locked and then looked up again in a newer snapshot; the rank
-- read after the board row's lock sees every change numbered before).
--
-- Called as one statement outside any explicit transaction, bp_submit is its
-- own transaction: it commits, durably, when the statement returns, or not
-- at all. Its refusals are raised with Backpressure's own SQLSTATEs, which
-- roll back everything (the claimed idempotency key included):
--   BP404 the level version does not exist;
--   BP409 the idempotency key was used for a different request;
--   BP412 the version the caller scored against stopped being current or
--         has other content.

-- bp_lock_bucket row-locks the bucket holding the key (ns, at, pid) on a
-- board, looking it up again in a fresh snapshot until the locked one is
-- still the holder (a concurrent split may have moved the key to a newer
-- bucket, always further along in key order). The season boards (000008)
-- lock buckets the same way and made it first; this replaces it with the
-- same function.
CREATE OR REPLACE FUNCTION bp_lock_bucket(p_board bigint, p_ns bigint, p_at timestamptz, p_pid uuid,
	OUT o_id bigint, OUT o_sentinel boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_again bigint;
BEGIN
	FOR i IN 1..1000 LOOP
		SELECT b.id, b.lo_neg_score = -9223372036854775808 INTO STRICT o_id, o_sentinel
		FROM board_buckets b
		WHERE b.board_id = p_board AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1
		FOR UPDATE;
		SELECT b.id INTO STRICT v_again
		FROM board_buckets b
		WHERE b.board_id = p_board AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1;
		IF v_again = o_id THEN
			RETURN;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'bucket of board % keeps moving', p_board;
END
$$;

-- bp_split_bucket splits a locked bucket holding p_n entries at its median.
-- The bucket's entries are exactly the first p_n from its lo on, since n
-- counts every committed entry in its range (plus this transaction's own).
CREATE FUNCTION bp_split_bucket(p_board bigint, p_id bigint, p_n bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_half bigint := p_n / 2;
	v_ns bigint;
	v_at timestamptz;
	v_pid uuid;
BEGIN
	SELECT e.neg_score, e.achieved_at, e.player_id INTO STRICT v_ns, v_at, v_pid
	FROM board_entries e, board_buckets b
	WHERE b.id = p_id AND e.board_id = p_board
	  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
	ORDER BY e.neg_score, e.achieved_at, e.player_id
	OFFSET v_half LIMIT 1;
	INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
	VALUES (p_board, v_ns, v_at, v_pid, p_n - v_half);
	UPDATE board_buckets b SET n = v_half WHERE b.id = p_id;
END
$$;

-- bp_move_key records in a board's buckets that an entry moved from the old
-- key (p_has_old false: a new entry) to the new one; the entry row is
-- already written. Both buckets are locked in ascending key order. A bucket
-- past p_bucket_size entries splits at its median; a bucket other than the
-- sentinel left empty is deleted (its range joins its predecessor's, whose
-- count does not change).
CREATE FUNCTION bp_move_key(p_board bigint, p_has_old boolean,
	p_old_ns bigint, p_old_at timestamptz, p_old_pid uuid,
	p_new_ns bigint, p_new_at timestamptz, p_new_pid uuid, p_bucket_size bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_new record;
	v_old record;
	v_n bigint;
	v_m bigint;
BEGIN
	IF NOT p_has_old THEN
		v_new := bp_lock_bucket(p_board, p_new_ns, p_new_at, p_new_pid);
	ELSIF (p_new_ns, p_new_at, p_new_pid) < (p_old_ns, p_old_at, p_old_pid) THEN
		v_new := bp_lock_bucket(p_board, p_new_ns, p_new_at, p_new_pid);
		v_old := bp_lock_bucket(p_board, p_old_ns, p_old_at, p_old_pid);
	ELSE
		v_old := bp_lock_bucket(p_board, p_old_ns, p_old_at, p_old_pid);
		v_new := bp_lock_bucket(p_board, p_new_ns, p_new_at, p_new_pid);
	END IF;
	IF p_has_old THEN
		IF v_old.o_id = v_new.o_id THEN
			RETURN;
		END IF;
	END IF;
	UPDATE board_buckets b SET n = b.n + 1 WHERE b.id = v_new.o_id RETURNING b.n INTO STRICT v_n;
	IF p_has_old THEN
		UPDATE board_buckets b SET n = b.n - 1 WHERE b.id = v_old.o_id RETURNING b.n INTO STRICT v_m;
		IF v_m = 0 AND NOT v_old.o_sentinel THEN
			DELETE FROM board_buckets b WHERE b.id = v_old.o_id;
		END IF;
	END IF;
	IF v_n > p_bucket_size THEN
		PERFORM bp_split_bucket(p_board, v_new.o_id, v_n);
	END IF;
END
$$;

-- bp_uncount_key records in a board's buckets that the entry with the key
-- was deleted; the entry row is already deleted.
CREATE FUNCTION bp_uncount_key(p_board bigint, p_ns bigint, p_at timestamptz, p_pid uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_b record;
	v_m bigint;
BEGIN
	v_b := bp_lock_bucket(p_board, p_ns, p_at, p_pid);
	UPDATE board_buckets b SET n = b.n - 1 WHERE b.id = v_b.o_id RETURNING b.n INTO STRICT v_m;
	IF v_m = 0 AND NOT v_b.o_sentinel THEN
		DELETE FROM board_buckets b WHERE b.id = v_b.o_id;
	END IF;
END
$$;

-- bp_leave_global takes the player's best on p_old_board (a version no
-- longer current, listed in global_drains) off their global total, unless
-- it already left: the total drops by that best and is re-timed to the
-- latest of their remaining current-version bests, or the player leaves the
-- global board if they have none. The entry on the old board is then marked
-- left_global. Lock order: the old-board entry, the global advisory lock,
-- the global entry, the global buckets.
CREATE FUNCTION bp_leave_global(p_old_board bigint, p_player uuid, p_bucket_size bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_old_best bigint;
	v_left boolean;
	v_score bigint;
	v_at timestamptz;
	v_latest_at timestamptz;
	v_latest_sub uuid;
BEGIN
	SELECT e.score, e.left_global INTO v_old_best, v_left FROM board_entries e
	WHERE e.board_id = p_old_board AND e.player_id = p_player FOR UPDATE;
	IF NOT FOUND OR v_left THEN
		RETURN;
	END IF;
	PERFORM pg_advisory_xact_lock_shared(1112539138, 0); -- lockGlobal in pgstore
	SELECT e.score, e.achieved_at INTO v_score, v_at FROM board_entries e
	WHERE e.board_id = 0 AND e.player_id = p_player FOR UPDATE;
	IF FOUND THEN
		SELECT c.achieved_at, c.submission_id INTO v_latest_at, v_latest_sub
		FROM board_entries c JOIN levels l ON l.board_id = c.board_id AND l.is_current
		WHERE c.player_id = p_player
		ORDER BY c.achieved_at DESC, c.submission_id DESC LIMIT 1;
		IF NOT FOUND THEN
			DELETE FROM board_entries e WHERE e.board_id = 0 AND e.player_id = p_player;
			PERFORM bp_uncount_key(0, -v_score, v_at, p_player);
		ELSE
			UPDATE board_entries e SET score = v_score - v_old_best, achieved_at = v_latest_at, submission_id = v_latest_sub
			WHERE e.board_id = 0 AND e.player_id = p_player;
			PERFORM bp_move_key(0, true, -v_score, v_at, p_player,
				-(v_score - v_old_best), v_latest_at, p_player, p_bucket_size);
		END IF;
	END IF;
	-- (Not on the global board cannot happen while the bookkeeping holds.)
	UPDATE board_entries e SET left_global = true WHERE e.board_id = p_old_board AND e.player_id = p_player;
END
$$;

-- bp_add_to_global adds p_delta to the player's global total, reached at
-- p_at with submission p_sub. With p_retime (and delta 0: an equal score
-- reached earlier replaced a level best) it instead sets when the unchanged
-- total was reached to the latest of the player's current-version bests.
CREATE FUNCTION bp_add_to_global(p_player uuid, p_delta bigint, p_retime boolean, p_at timestamptz,
	p_sub uuid, p_bucket_size bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_score bigint;
	v_at timestamptz;
	v_new_at timestamptz;
	v_new_sub uuid;
	v_rows int;
BEGIN
	PERFORM pg_advisory_xact_lock_shared(1112539138, 0); -- lockGlobal in pgstore
	FOR i IN 1..1000 LOOP
		SELECT e.score, e.achieved_at INTO v_score, v_at FROM board_entries e
		WHERE e.board_id = 0 AND e.player_id = p_player FOR UPDATE;
		IF FOUND THEN
			IF p_delta = 0 AND p_retime THEN
				SELECT c.achieved_at, c.submission_id INTO STRICT v_new_at, v_new_sub
				FROM board_entries c JOIN levels l ON l.board_id = c.board_id AND l.is_current
				WHERE c.player_id = p_player
				ORDER BY c.achieved_at DESC, c.submission_id DESC LIMIT 1;
				IF v_new_at = v_at THEN
					RETURN;
				END IF;
				UPDATE board_entries e SET achieved_at = v_new_at, submission_id = v_new_sub
				WHERE e.board_id = 0 AND e.player_id = p_player;
				PERFORM bp_move_key(0, true, -v_score, v_at, p_player, -v_score, v_new_at, p_player, p_bucket_size);
				RETURN;
			END IF;
			IF p_delta = 0 THEN
				RETURN; -- same total, reached earlier
			END IF;
			UPDATE board_entries e SET score = v_score + p_delta, achieved_at = p_at, submission_id = p_sub
			WHERE e.board_id = 0 AND e.player_id = p_player;
			PERFORM bp_move_key(0, true, -v_score, v_at, p_player, -(v_score + p_delta), p_at, p_player, p_bucket_size);
			RETURN;
		END IF;
		INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
		VALUES (0, p_player, p_delta, p_at, p_sub) ON CONFLICT (board_id, player_id) DO NOTHING;
		GET DIAGNOSTICS v_rows = ROW_COUNT;
		IF v_rows = 1 THEN
			PERFORM bp_move_key(0, false, NULL, NULL, NULL, -p_delta, p_at, p_player, p_bucket_size);
			RETURN;
		END IF;
		-- A concurrent transaction of the same player inserted it first
		-- (and committed): read it again, now locking it.
	END LOOP;
	RAISE EXCEPTION 'global entry of player % keeps appearing and disappearing', p_player;
END
$$;

-- bp_json_text is the JSON string of t exactly as Go's encoding/json writes
-- it (json.Marshal escapes <, > and &, and U+2028 and U+2029, which
-- PostgreSQL's to_json leaves as they are; both escape the same control
-- characters the same way), so a notice built here is byte for byte the one
-- game.BoardChange.Notice would give.
CREATE FUNCTION bp_json_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
	SELECT replace(replace(replace(replace(replace(to_json(t)::text,
		'&', '\u0026'), '<', '\u003c'), '>', '\u003e'), U&'\2028', '\u2028'), U&'\2029', '\u2029')
$$;

-- bp_record_change numbers the player's move on a level board (from the
-- previous best, p_has_prev false for a newcomer, to the new one, already
-- written), logs it with its exact rank, announces it on p_channel and
-- returns the rank. It takes the board row's lock, held until commit, so it
-- must be the transaction's last write to boards: changes are numbered one
-- at a time in commit order, and the ranks read after the lock see exactly
-- the changes numbered before. The notice is game.Notice's JSON of
-- game.BoardChange; p_topic, p_slug and p_at come JSON-encoded from the
-- caller. A notice longer than p_max_payload bytes goes without its data;
-- one change in p_prune_every deletes the board's changes older than the
-- last p_retention.
CREATE FUNCTION bp_record_change(p_board bigint, p_version integer, p_player uuid, p_sub uuid,
	p_score bigint, p_at timestamptz, p_has_prev boolean, p_prev_score bigint, p_prev_at timestamptz,
	p_channel text, p_topic text, p_slug text, p_at_json text,
	p_max_payload integer, p_prune_every bigint, p_retention bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_seq bigint;
	v_name text;
	v_total bigint;
	v_rank bigint;
	v_prev bigint := 0;
	v_payload text;
BEGIN
	UPDATE boards b SET last_seq = b.last_seq + 1 WHERE b.id = p_board RETURNING b.last_seq INTO STRICT v_seq;
	SELECT (SELECT p.name FROM players p WHERE p.id = p_player),
		coalesce((SELECT sum(k.n) FROM board_buckets k WHERE k.board_id = p_board), 0)
	INTO v_name, v_total;
	v_rank := bp_rank(p_board, -p_score, p_at, p_player);
	IF p_has_prev THEN
		-- The new key is before the old one: subtract it.
		v_prev := bp_rank(p_board, -p_prev_score, p_prev_at, p_player) - 1;
	END IF;
	v_payload := '{"topic":' || p_topic || ',"seq":' || v_seq || ',"data":{"seq":' || v_seq
		|| ',"slug":' || p_slug || ',"version":' || p_version
		|| ',"player_id":"' || p_player || '","player_name":' || bp_json_text(v_name)
		|| ',"score":' || p_score || ',"rank":' || v_rank || ',"previous_rank":' || v_prev
		|| ',"achieved_at":' || p_at_json || ',"submission_id":"' || p_sub || '","total":' || v_total || '}}';
	IF octet_length(v_payload) > p_max_payload THEN
		v_payload := '{"topic":' || p_topic || ',"seq":' || v_seq || ',"data":null}';
	END IF;
	INSERT INTO board_changes (board_id, seq, player_id, score, rank, previous_rank, total, achieved_at, submission_id)
	VALUES (p_board, v_seq, p_player, p_score, v_rank, v_prev, v_total, p_at, p_sub);
	PERFORM pg_notify(p_channel, v_payload);
	IF v_seq % p_prune_every = 0 THEN
		DELETE FROM board_changes c WHERE c.board_id = p_board AND c.seq <= v_seq - p_retention;
	END IF;
	RETURN v_rank;
END
$$;

-- bp_submit stores one scored submission and returns its receipt (improved,
-- rank: 0 unless it passed). With a key already claimed by the same request
-- it writes nothing and returns the first receipt with o_replayed set and
-- the stored submission in the o_sub_* columns (NULL otherwise).
-- p_expect_current says the caller scored against a cached level: then the
-- version must still be current with content p_expect_hash.
CREATE FUNCTION bp_submit(
	p_id uuid, p_player uuid, p_slug text, p_version integer,
	p_expect_hash text, p_expect_current boolean,
	p_design json, p_result json, p_passed boolean, p_score bigint, p_at timestamptz,
	p_key text, p_request_hash text, p_bucket_size bigint,
	p_channel text, p_topic text, p_slug_json text, p_at_json text,
	p_max_payload integer, p_prune_every bigint, p_retention bigint,
	OUT o_replayed boolean, OUT o_improved boolean, OUT o_rank bigint,
	OUT o_sub_id uuid, OUT o_sub_slug text, OUT o_sub_version integer, OUT o_sub_design json,
	OUT o_sub_result json, OUT o_sub_passed boolean, OUT o_sub_score bigint, OUT o_sub_created_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_rows int;
	v_stored_hash text;
	v_board bigint;
	v_current boolean;
	v_hash text;
	v_old_score bigint;
	v_old_at timestamptz;
	v_had boolean := false;
	v_delta bigint;
	v_done boolean := false;
	v_drained bigint;
BEGIN
	o_replayed := false;
	o_improved := false;
	o_rank := 0;
	IF p_key <> '' THEN
		-- Claim the key first: a concurrent retry blocks here until this
		-- statement's transaction ends, then replays its receipt.
		INSERT INTO submission_requests (player_id, idempotency_key, request_hash, submission_id, created_at)
		VALUES (p_player, p_key, p_request_hash, p_id, p_at) ON CONFLICT DO NOTHING;
		GET DIAGNOSTICS v_rows = ROW_COUNT;
		IF v_rows = 0 THEN
			SELECT r.request_hash, r.submission_id, r.improved, r.rank
			INTO STRICT v_stored_hash, o_sub_id, o_improved, o_rank
			FROM submission_requests r WHERE r.player_id = p_player AND r.idempotency_key = p_key;
			IF v_stored_hash <> p_request_hash THEN
				RAISE EXCEPTION 'idempotency key was already used for a different request' USING ERRCODE = 'BP409';
			END IF;
			SELECT s.slug, s.version, s.design, s.result, s.passed, s.score, s.created_at
			INTO STRICT o_sub_slug, o_sub_version, o_sub_design, o_sub_result, o_sub_passed, o_sub_score, o_sub_created_at
			FROM submissions s WHERE s.id = o_sub_id;
			o_replayed := true;
			RETURN;
		END IF;
	END IF;

	-- FOR SHARE: a new version must not supersede this one while
	-- submissions to it are being written.
	SELECT l.board_id, l.is_current, l.content_hash INTO v_board, v_current, v_hash
	FROM levels l WHERE l.slug = p_slug AND l.version = p_version FOR SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'level not found' USING ERRCODE = 'BP404';
	END IF;
	IF p_expect_current AND (NOT v_current OR v_hash <> p_expect_hash) THEN
		RAISE EXCEPTION 'level % version % changed while the design was scored', p_slug, p_version USING ERRCODE = 'BP412';
	END IF;

	INSERT INTO submissions (id, player_id, slug, version, design, result, passed, score, created_at)
	VALUES (p_id, p_player, p_slug, p_version, p_design, p_result, p_passed, p_score, p_at);

	IF p_passed THEN
		IF NOT v_current AND EXISTS (SELECT 1 FROM global_drains d WHERE d.board_id = v_board) THEN
			-- An old version still being taken off the global board: this
			-- player's best there leaves it first, so that the improvement
			-- below never reaches the global board.
			PERFORM bp_leave_global(v_board, p_player, p_bucket_size);
		END IF;
		-- The player's best on the level version's board.
		FOR i IN 1..1000 LOOP
			SELECT e.score, e.achieved_at INTO v_old_score, v_old_at FROM board_entries e
			WHERE e.board_id = v_board AND e.player_id = p_player FOR UPDATE;
			IF FOUND THEN
				v_had := true;
				IF p_score > v_old_score OR (p_score = v_old_score AND p_at < v_old_at) THEN
					UPDATE board_entries e SET score = p_score, achieved_at = p_at, submission_id = p_id
					WHERE e.board_id = v_board AND e.player_id = p_player;
					PERFORM bp_move_key(v_board, true, -v_old_score, v_old_at, p_player, -p_score, p_at, p_player, p_bucket_size);
					o_improved := true;
				END IF;
				v_done := true;
				EXIT;
			END IF;
			-- A first entry on a version that is not current never counts
			-- on the global board.
			INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id, left_global)
			VALUES (v_board, p_player, p_score, p_at, p_id, NOT v_current) ON CONFLICT (board_id, player_id) DO NOTHING;
			GET DIAGNOSTICS v_rows = ROW_COUNT;
			IF v_rows = 1 THEN
				PERFORM bp_move_key(v_board, false, NULL, NULL, NULL, -p_score, p_at, p_player, p_bucket_size);
				o_improved := true;
				v_done := true;
				EXIT;
			END IF;
			-- A concurrent transaction of the same player inserted the
			-- entry first (and has committed): read it again, locking it.
		END LOOP;
		IF NOT v_done THEN
			RAISE EXCEPTION 'board entry of player % keeps appearing and disappearing', p_player;
		END IF;
		IF o_improved AND v_current THEN
			-- A total never counts two versions of one level: the
			-- player's bests on versions still being drained leave the
			-- global board before this one joins it.
			FOR v_drained IN
				SELECT d.board_id FROM global_drains d
				JOIN levels l ON l.board_id = d.board_id AND l.slug = p_slug
				JOIN board_entries e ON e.board_id = d.board_id AND e.player_id = p_player AND NOT e.left_global
				ORDER BY d.board_id
			LOOP
				PERFORM bp_leave_global(v_drained, p_player, p_bucket_size);
			END LOOP;
			v_delta := p_score;
			IF v_had THEN
				v_delta := p_score - v_old_score;
			END IF;
			-- An equal score reached earlier replaced the best: the total
			-- is the same, but when it was reached may have changed.
			PERFORM bp_add_to_global(p_player, v_delta, v_had AND v_delta = 0, p_at, p_id, p_bucket_size);
		END IF;
		IF o_improved THEN
			-- Last: it holds the board's change counter until commit.
			o_rank := bp_record_change(v_board, p_version, p_player, p_id, p_score, p_at,
				v_had, v_old_score, v_old_at, p_channel, p_topic, p_slug_json, p_at_json,
				p_max_payload, p_prune_every, p_retention);
		ELSE
			-- Not better: the rank of the best this statement holds locked.
			o_rank := bp_rank(v_board, -v_old_score, v_old_at, p_player);
		END IF;
	END IF;

	IF p_key <> '' THEN
		UPDATE submission_requests r SET improved = o_improved, rank = o_rank
		WHERE r.player_id = p_player AND r.idempotency_key = p_key;
	END IF;
END
$$;
