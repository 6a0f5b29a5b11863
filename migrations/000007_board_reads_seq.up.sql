-- The board reads of 000004 also return the board's latest change number
-- (boards.last_seq, 000005), read in the same snapshot as the page, so a
-- live stream can resume from exactly the page a client was shown.

DROP FUNCTION bp_top_page(text, integer, bigint);
DROP FUNCTION bp_around_page(text, integer, uuid, bigint, bigint);

CREATE FUNCTION bp_top_page(p_slug text, p_version integer, p_limit bigint)
RETURNS TABLE (o_version integer, o_total bigint, o_player uuid, o_name text, o_score bigint,
	o_achieved_at timestamptz, o_submission uuid, o_seq bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_version integer;
	v_total bigint;
	v_seq bigint;
BEGIN
	SELECT b.o_board, b.o_version INTO v_board, v_version FROM bp_board(p_slug, p_version) b;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	SELECT coalesce((SELECT b.last_seq FROM boards b WHERE b.id = v_board), 0) INTO v_seq;
	RETURN QUERY
		SELECT v_version, v_total, e.player_id, p.name, e.score, e.achieved_at, e.submission_id, v_seq
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT p_limit;
	IF NOT FOUND THEN
		RETURN QUERY SELECT v_version, v_total, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, v_seq;
	END IF;
END
$$;

-- bp_around_page: as in 000004, and the change number in part 0's rows.
CREATE FUNCTION bp_around_page(p_slug text, p_version integer, p_player uuid, p_after bigint, p_before bigint)
RETURNS TABLE (o_part integer, o_version integer, o_total bigint, o_rank bigint, o_player uuid, o_name text,
	o_score bigint, o_achieved_at timestamptz, o_submission uuid, o_seq bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_version integer;
	v_total bigint;
	v_ns bigint;
	v_at timestamptz;
	v_seq bigint;
BEGIN
	SELECT b.o_board, b.o_version INTO v_board, v_version FROM bp_board(p_slug, p_version) b;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	SELECT coalesce((SELECT b.last_seq FROM boards b WHERE b.id = v_board), 0) INTO v_seq;
	SELECT e.neg_score, e.achieved_at INTO v_ns, v_at FROM board_entries e
	WHERE e.board_id = v_board AND e.player_id = p_player;
	IF NOT FOUND THEN
		RETURN QUERY SELECT 0, v_version, v_total, NULL::bigint, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, v_seq;
		RETURN;
	END IF;
	RETURN QUERY SELECT 0, v_version, v_total, bp_rank(v_board, v_ns, v_at, p_player),
		NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, v_seq;
	RETURN QUERY
		SELECT 1, 0, 0::bigint, 0::bigint, e.player_id, p.name, e.score, e.achieved_at, e.submission_id, 0::bigint
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board AND (e.neg_score, e.achieved_at, e.player_id) >= (v_ns, v_at, p_player)
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT p_after;
	RETURN QUERY
		SELECT 2, 0, 0::bigint, 0::bigint, e.player_id, p.name, e.score, e.achieved_at, e.submission_id, 0::bigint
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board AND (e.neg_score, e.achieved_at, e.player_id) < (v_ns, v_at, p_player)
		ORDER BY e.neg_score DESC, e.achieved_at DESC, e.player_id DESC
		LIMIT p_before;
END
$$;
