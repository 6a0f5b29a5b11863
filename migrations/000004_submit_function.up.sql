-- A submission's whole write -- idempotency claim, level check, submission
-- row, level-board best, rank buckets, global board, rank, receipt -- as one
-- statement: bp_submit. The logic and the lock order are exactly those
-- described in 000001 and internal/store/pgstore/doc.go (idempotency row,
-- level row FOR SHARE, level-board entry, level-board buckets in ascending
-- key order, the global board's advisory lock shared, global entry, global
-- buckets in ascending key order); moving it into the database makes it one
-- round trip instead of about twenty, with no BEGIN/COMMIT around it.
--
-- The functions are VOLATILE, so under READ COMMITTED every statement in
-- them takes a fresh snapshot: a bucket is locked, then looked up again in a
-- newer snapshot, as the Go code did.
--
-- Errors are raised with Backpressure's own SQLSTATEs, which roll back the
-- whole statement (the claimed idempotency key included):
--   BP404 level version not found, BP409 idempotency key used for another
--   request, BP412 the level version is not the one the caller scored
--   against (its content changed, or it stopped being current).

-- bp_lock_bucket row-locks the bucket holding key (ns, at, pid) on a board,
-- re-finding it in a fresh snapshot until the locked one is still the
-- holder (a concurrent split may have moved the key to a newer bucket,
-- always further along in key order).
CREATE FUNCTION bp_lock_bucket(p_board bigint, p_ns bigint, p_at timestamptz, p_pid uuid,
	OUT o_id bigint, OUT o_sentinel boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_again bigint;
BEGIN
	FOR i IN 1..1000 LOOP
		SELECT b.id, b.lo_neg_score = -9223372036854775808 INTO o_id, o_sentinel
		FROM board_buckets b
		WHERE b.board_id = p_board AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1
		FOR UPDATE;
		SELECT b.id INTO v_again
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

-- bp_move_key records in a board's buckets that an entry moved from the old
-- key (p_has_old false: a new entry) to the new one; the entry row is
-- already written. A bucket past p_bucket_size entries splits at its
-- median; a non-sentinel bucket left empty is deleted.
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
	v_half bigint;
	v_ns bigint;
	v_at timestamptz;
	v_pid uuid;
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
	UPDATE board_buckets b SET n = b.n + 1 WHERE b.id = v_new.o_id RETURNING b.n INTO v_n;
	IF p_has_old THEN
		UPDATE board_buckets b SET n = b.n - 1 WHERE b.id = v_old.o_id RETURNING b.n INTO v_m;
		IF v_m = 0 AND NOT v_old.o_sentinel THEN
			-- Its range joins its predecessor's, whose count does not change.
			DELETE FROM board_buckets b WHERE b.id = v_old.o_id;
		END IF;
	END IF;
	IF v_n > p_bucket_size THEN
		v_half := v_n / 2;
		SELECT e.neg_score, e.achieved_at, e.player_id INTO v_ns, v_at, v_pid
		FROM board_entries e, board_buckets b
		WHERE b.id = v_new.o_id AND e.board_id = p_board
		  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		OFFSET v_half LIMIT 1;
		INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
		VALUES (p_board, v_ns, v_at, v_pid, v_n - v_half);
		UPDATE board_buckets b SET n = v_half WHERE b.id = v_new.o_id;
	END IF;
END
$$;

-- bp_rank is 1 + the number of entries before the key on a board, from the
-- buckets (one statement, one snapshot).
CREATE FUNCTION bp_rank(p_board bigint, p_ns bigint, p_at timestamptz, p_pid uuid)
RETURNS bigint
-- plpgsql, not sql: a non-inlined SQL function is planned on every call,
-- a plpgsql one once per session.
LANGUAGE plpgsql STABLE AS $$
BEGIN
	RETURN (
		WITH bk AS (
			SELECT b.lo_neg_score, b.lo_achieved_at, b.lo_player_id FROM board_buckets b
			WHERE b.board_id = p_board
			  AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
			ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
			LIMIT 1)
		SELECT 1 + (SELECT coalesce(sum(b.n), 0) FROM board_buckets b, bk
		            WHERE b.board_id = p_board
		              AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) < (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id))
		         + (SELECT count(*) FROM board_entries e, bk
		            WHERE e.board_id = p_board
		              AND (e.neg_score, e.achieved_at, e.player_id) >= (bk.lo_neg_score, bk.lo_achieved_at, bk.lo_player_id)
		              AND (e.neg_score, e.achieved_at, e.player_id) < (p_ns, p_at, p_pid)));
END
$$;

-- bp_add_to_global adds p_delta to the player's global total, reached at
-- p_at with submission p_sub; with p_retime (and delta 0) it recomputes when
-- the unchanged total was reached: the latest of the player's current-version
-- bests.
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
	LOOP
		SELECT e.score, e.achieved_at INTO v_score, v_at FROM board_entries e
		WHERE e.board_id = 0 AND e.player_id = p_player FOR UPDATE;
		IF FOUND THEN
			IF p_delta = 0 AND p_retime THEN
				SELECT c.achieved_at, c.submission_id INTO v_new_at, v_new_sub
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
END
$$;

-- bp_submit stores one scored submission and returns its receipt. With a
-- key already claimed by the same request it writes nothing and returns the
-- first receipt with o_replayed set to the stored submission's id.
-- p_expect_hash (unless '') is the content hash the caller scored against;
-- with p_expect_current the version must still be current.
CREATE FUNCTION bp_submit(
	p_id uuid, p_player uuid, p_slug text, p_version integer,
	p_expect_hash text, p_expect_current boolean,
	p_design json, p_result json, p_passed boolean, p_score bigint, p_at timestamptz,
	p_key text, p_request_hash text, p_bucket_size bigint,
	OUT o_replayed uuid, OUT o_improved boolean, OUT o_rank bigint)
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
	v_ns bigint;
	v_at timestamptz;
BEGIN
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
			INTO v_stored_hash, o_replayed, o_improved, o_rank
			FROM submission_requests r WHERE r.player_id = p_player AND r.idempotency_key = p_key;
			IF v_stored_hash <> p_request_hash THEN
				RAISE EXCEPTION 'idempotency key was already used for a different request' USING ERRCODE = 'BP409';
			END IF;
			RETURN;
		END IF;
	END IF;

	-- FOR SHARE: a level write must not replace or supersede this version
	-- while submissions to it are being written.
	SELECT l.board_id, l.is_current, l.content_hash INTO v_board, v_current, v_hash
	FROM levels l WHERE l.slug = p_slug AND l.version = p_version FOR SHARE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'level not found' USING ERRCODE = 'BP404';
	END IF;
	IF (p_expect_hash <> '' AND p_expect_hash <> v_hash) OR (p_expect_current AND NOT v_current) THEN
		RAISE EXCEPTION 'level % version % changed while the design was scored', p_slug, p_version USING ERRCODE = 'BP412';
	END IF;

	INSERT INTO submissions (id, player_id, slug, version, design, result, passed, score, created_at)
	VALUES (p_id, p_player, p_slug, p_version, p_design, p_result, p_passed, p_score, p_at);

	IF p_passed THEN
		LOOP
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
				EXIT;
			END IF;
			INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
			VALUES (v_board, p_player, p_score, p_at, p_id) ON CONFLICT (board_id, player_id) DO NOTHING;
			GET DIAGNOSTICS v_rows = ROW_COUNT;
			IF v_rows = 1 THEN
				PERFORM bp_move_key(v_board, false, NULL, NULL, NULL, -p_score, p_at, p_player, p_bucket_size);
				o_improved := true;
				EXIT;
			END IF;
			-- A concurrent transaction of the same player inserted the
			-- entry first (and has committed): read it again, locking it.
		END LOOP;
		IF o_improved AND v_current THEN
			v_delta := p_score;
			IF v_had THEN
				v_delta := p_score - v_old_score;
			END IF;
			-- An equal score reached earlier replaced the best: the total
			-- is the same, but when it was reached may have changed.
			PERFORM bp_add_to_global(p_player, v_delta, v_had AND v_delta = 0, p_at, p_id, p_bucket_size);
		END IF;
		SELECT e.neg_score, e.achieved_at INTO v_ns, v_at FROM board_entries e
		WHERE e.board_id = v_board AND e.player_id = p_player;
		o_rank := bp_rank(v_board, v_ns, v_at, p_player);
	END IF;

	IF p_key <> '' THEN
		UPDATE submission_requests r SET improved = o_improved, rank = o_rank
		WHERE r.player_id = p_player AND r.idempotency_key = p_key;
	END IF;
END
$$;

-- Board reads. The first page of a board and the page around a player are
-- each one query; as plpgsql functions their plans are cached per
-- PostgreSQL backend, which PgBouncer keeps across transactions, so
-- planning the queries (most of their cost) is paid once per backend even
-- when the replicas cannot use prepared statements (transaction pooling).
-- p_slug '' with p_version 0 is the global board.

-- bp_board resolves (slug, version 0 = current) to a board.
CREATE FUNCTION bp_board(p_slug text, p_version integer, OUT o_board bigint, OUT o_version integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
	IF p_slug = '' THEN
		o_board := 0;
		o_version := 0;
		RETURN;
	END IF;
	SELECT l.board_id, l.version INTO o_board, o_version FROM levels l
	WHERE l.slug = p_slug AND (l.version = p_version OR (p_version = 0 AND l.is_current));
END
$$;

-- bp_top_page: the board's version and total, and its first p_limit
-- entries in board order (no entry row for an empty board: the entry
-- columns are NULL); no row if the board does not exist.
CREATE FUNCTION bp_top_page(p_slug text, p_version integer, p_limit bigint)
RETURNS TABLE (o_version integer, o_total bigint, o_player uuid, o_name text, o_score bigint,
	o_achieved_at timestamptz, o_submission uuid)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_version integer;
	v_total bigint;
BEGIN
	SELECT b.o_board, b.o_version INTO v_board, v_version FROM bp_board(p_slug, p_version) b;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	RETURN QUERY
		SELECT v_version, v_total, e.player_id, p.name, e.score, e.achieved_at, e.submission_id
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT p_limit;
	IF NOT FOUND THEN
		RETURN QUERY SELECT v_version, v_total, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid;
	END IF;
END
$$;

-- bp_around_page: part 0 is one row (version, total, the player's rank,
-- NULL if they are not on the board); part 1 the p_after entries from the
-- player on, part 2 the p_before entries before them. No row if the board
-- does not exist.
CREATE FUNCTION bp_around_page(p_slug text, p_version integer, p_player uuid, p_after bigint, p_before bigint)
RETURNS TABLE (o_part integer, o_version integer, o_total bigint, o_rank bigint, o_player uuid, o_name text,
	o_score bigint, o_achieved_at timestamptz, o_submission uuid)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_version integer;
	v_total bigint;
	v_ns bigint;
	v_at timestamptz;
BEGIN
	SELECT b.o_board, b.o_version INTO v_board, v_version FROM bp_board(p_slug, p_version) b;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	SELECT e.neg_score, e.achieved_at INTO v_ns, v_at FROM board_entries e
	WHERE e.board_id = v_board AND e.player_id = p_player;
	IF NOT FOUND THEN
		RETURN QUERY SELECT 0, v_version, v_total, NULL::bigint, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid;
		RETURN;
	END IF;
	RETURN QUERY SELECT 0, v_version, v_total, bp_rank(v_board, v_ns, v_at, p_player),
		NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid;
	RETURN QUERY
		SELECT 1, 0, 0::bigint, 0::bigint, e.player_id, p.name, e.score, e.achieved_at, e.submission_id
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board AND (e.neg_score, e.achieved_at, e.player_id) >= (v_ns, v_at, p_player)
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT p_after;
	RETURN QUERY
		SELECT 2, 0, 0::bigint, 0::bigint, e.player_id, p.name, e.score, e.achieved_at, e.submission_id
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board AND (e.neg_score, e.achieved_at, e.player_id) < (v_ns, v_at, p_player)
		ORDER BY e.neg_score DESC, e.achieved_at DESC, e.player_id DESC
		LIMIT p_before;
END
$$;
