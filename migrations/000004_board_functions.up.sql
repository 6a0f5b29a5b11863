-- Board reads as plpgsql functions: the rank of a key, the first page of a
-- board and the page around a player, each one statement. Their plans are
-- cached per PostgreSQL backend, which PgBouncer keeps across transactions,
-- so planning (most of a read's cost) is paid once per backend even when the
-- replicas cannot use prepared statements (transaction pooling).

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
