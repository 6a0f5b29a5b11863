-- Seasons: the operator's reset schedule cuts time into seasons, each with a
-- board of its own (see internal/game/season.go for the rules).
--
-- A season's board is a board like any other (boards, board_entries,
-- board_buckets, ranked by bp_rank), with no level: per player, the sum over
-- levels (by slug, any version) of their best passing score submitted
-- during the season. It is kept by the database itself: a deferred
-- constraint trigger on submissions runs as each submitting transaction
-- commits, so the Go write path never sees it, and decides the season by
-- the database's clock at that moment (bp_season_now). Past seasons are
-- final: the trigger only ever writes to the season containing its clock,
-- and holds that season's advisory lock (shared) until commit; the first
-- read of a season after its end takes the lock exclusively and marks the
-- season final (pgstore/seasons.go), which waits out any transaction that
-- chose the season just before it ended. After that nothing can change its
-- board: its final ranks are its board.
--
-- Locks: the trigger runs last in its transaction (deferred), after every
-- lock the write took, and takes, in this order: the season's advisory lock
-- (shared), the player's per-level season best (upsert), their season
-- entry, the season board's buckets in ascending key order, exactly as the
-- Go writers do on level boards. Nothing else locks season rows in another
-- order, so it adds no deadlock.

-- A board is the global board (0), a level version's, or a season's (no
-- slug, no version).
ALTER TABLE boards DROP CONSTRAINT boards_check;
ALTER TABLE boards ADD CONSTRAINT boards_kind CHECK (
	(id = 0 AND slug IS NULL AND version IS NULL) OR (id <> 0 AND (slug IS NULL) = (version IS NULL)));

CREATE TABLE seasons (
	id        text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9-]{1,40}$'),
	name      text NOT NULL,
	starts_at timestamptz NOT NULL,
	ends_at   timestamptz NOT NULL CHECK (ends_at > starts_at),
	board_id  bigint NOT NULL UNIQUE REFERENCES boards (id),
	-- Set by the first read after the end, under the season's advisory
	-- lock held exclusively: from then on its board never changes.
	final     boolean NOT NULL DEFAULT false,
	-- Seasons never overlap, so the season of an instant is unique.
	EXCLUDE USING gist (tstzrange(starts_at, ends_at) WITH &&)
);
CREATE INDEX seasons_ends ON seasons (ends_at);

-- Each player's best passing score per level (slug) during a season.
CREATE TABLE season_bests (
	season_id     text NOT NULL REFERENCES seasons (id),
	player_id     uuid NOT NULL REFERENCES players (id),
	slug          text NOT NULL,
	score         bigint NOT NULL CHECK (score >= 0),
	achieved_at   timestamptz NOT NULL,
	submission_id uuid NOT NULL REFERENCES submissions (id),
	PRIMARY KEY (season_id, player_id, slug)
);

-- The one clock that decides seasons: the database's. The setting
-- backpressure.season_now, if set (tests, per database), stands in for it.
CREATE FUNCTION bp_season_now() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v text := current_setting('backpressure.season_now', true);
BEGIN
	IF v IS NULL OR v = '' THEN
		RETURN clock_timestamp();
	END IF;
	RETURN v::timestamptz;
END
$$;

-- bp_lock_bucket row-locks the bucket holding a key and returns it; as
-- pgstore's lockBucketOf: located, locked, located again in a fresh
-- snapshot (a concurrent split may have moved the key to a later bucket).
CREATE FUNCTION bp_lock_bucket(p_board bigint, p_ns bigint, p_at timestamptz, p_pid uuid,
	OUT o_id bigint, OUT o_sentinel boolean)
LANGUAGE plpgsql AS $$
DECLARE
	v_id bigint;
BEGIN
	FOR i IN 1..1000 LOOP
		SELECT b.id, b.lo_neg_score = -9223372036854775808 INTO o_id, o_sentinel FROM board_buckets b
		WHERE b.board_id = p_board AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1 FOR UPDATE;
		SELECT b.id INTO v_id FROM board_buckets b
		WHERE b.board_id = p_board AND (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id) <= (p_ns, p_at, p_pid)
		ORDER BY b.lo_neg_score DESC, b.lo_achieved_at DESC, b.lo_player_id DESC
		LIMIT 1;
		IF v_id = o_id THEN
			RETURN;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'bucket of board % keeps moving', p_board;
END
$$;

-- bp_move_key records in a board's buckets that a player's entry moved
-- from the old key (p_old_ns NULL: a new entry) to the new one; the entry
-- row is already written. As pgstore's moveKey: buckets locked in
-- ascending key order, an empty bucket deleted, one past the bucket size
-- (backpressure.bucket_size, default 1024) split at its median.
CREATE FUNCTION bp_move_key(p_board bigint, p_pid uuid, p_old_ns bigint, p_old_at timestamptz,
	p_new_ns bigint, p_new_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	v_new bigint;
	v_old bigint;
	v_old_sentinel boolean;
	v_sentinel boolean;
	v_n bigint;
	v_m bigint;
	v_size bigint := coalesce(nullif(current_setting('backpressure.bucket_size', true), '')::bigint, 1024);
	v_half bigint;
	v_ns bigint;
	v_at timestamptz;
	v_p uuid;
BEGIN
	IF p_old_ns IS NULL THEN
		SELECT o_id INTO v_new FROM bp_lock_bucket(p_board, p_new_ns, p_new_at, p_pid);
	ELSIF (p_new_ns, p_new_at) < (p_old_ns, p_old_at) THEN
		SELECT o_id INTO v_new FROM bp_lock_bucket(p_board, p_new_ns, p_new_at, p_pid);
		SELECT o_id, o_sentinel INTO v_old, v_old_sentinel FROM bp_lock_bucket(p_board, p_old_ns, p_old_at, p_pid);
	ELSE
		SELECT o_id, o_sentinel INTO v_old, v_old_sentinel FROM bp_lock_bucket(p_board, p_old_ns, p_old_at, p_pid);
		SELECT o_id INTO v_new FROM bp_lock_bucket(p_board, p_new_ns, p_new_at, p_pid);
	END IF;
	IF p_old_ns IS NOT NULL AND v_old = v_new THEN
		RETURN;
	END IF;
	UPDATE board_buckets SET n = n + 1 WHERE id = v_new RETURNING n INTO v_n;
	IF p_old_ns IS NOT NULL THEN
		UPDATE board_buckets SET n = n - 1 WHERE id = v_old RETURNING n INTO v_m;
		IF v_m = 0 AND NOT v_old_sentinel THEN
			-- Its range joins its predecessor's, whose count does not change.
			DELETE FROM board_buckets WHERE id = v_old;
		END IF;
	END IF;
	IF v_n > v_size THEN
		v_half := v_n / 2;
		SELECT e.neg_score, e.achieved_at, e.player_id INTO v_ns, v_at, v_p
		FROM board_entries e, board_buckets b
		WHERE b.id = v_new AND e.board_id = p_board
		  AND (e.neg_score, e.achieved_at, e.player_id) >= (b.lo_neg_score, b.lo_achieved_at, b.lo_player_id)
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		OFFSET v_half LIMIT 1;
		INSERT INTO board_buckets (board_id, lo_neg_score, lo_achieved_at, lo_player_id, n)
		VALUES (p_board, v_ns, v_at, v_p, v_n - v_half);
		UPDATE board_buckets SET n = v_half WHERE id = v_new;
	END IF;
END
$$;

-- bp_season_submission counts a passing submission in the season that
-- contains the database's clock as its transaction commits.
CREATE FUNCTION bp_season_submission() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	v_season text;
	v_board bigint;
	v_ends timestamptz;
	v_final boolean;
	v_total bigint;
	v_at timestamptz;
	v_sub uuid;
	v_old_score bigint;
	v_old_at timestamptz;
	v_old_sub uuid;
	v_now timestamptz;
BEGIN
	FOR i IN 1..3 LOOP
		v_now := bp_season_now();
		SELECT s.id, s.board_id, s.ends_at INTO v_season, v_board, v_ends FROM seasons s
		WHERE s.ends_at > v_now AND s.starts_at <= v_now
		ORDER BY s.ends_at LIMIT 1;
		IF v_season IS NULL THEN
			RETURN NULL; -- no season stored for now: it counts in none
		END IF;
		PERFORM pg_advisory_xact_lock_shared(1112539144, v_board::int4); -- 0x42500008
		-- A season marked final waited for every holder of this lock;
		-- one that got it after must find the season over and go on to
		-- the next.
		SELECT s.final INTO v_final FROM seasons s WHERE s.id = v_season;
		EXIT WHEN NOT v_final AND bp_season_now() < v_ends;
		v_season := NULL;
	END LOOP;
	IF v_season IS NULL THEN
		RETURN NULL;
	END IF;

	-- The player's best on this level in the season: higher, or the same
	-- reached earlier (game.BoardKey.Beats).
	INSERT INTO season_bests AS b (season_id, player_id, slug, score, achieved_at, submission_id)
	VALUES (v_season, NEW.player_id, NEW.slug, NEW.score, NEW.created_at, NEW.id)
	ON CONFLICT (season_id, player_id, slug) DO UPDATE
		SET score = EXCLUDED.score, achieved_at = EXCLUDED.achieved_at, submission_id = EXCLUDED.submission_id
		WHERE EXCLUDED.score > b.score OR (EXCLUDED.score = b.score AND EXCLUDED.achieved_at < b.achieved_at);
	IF NOT FOUND THEN
		RETURN NULL; -- not better than their season best on this level
	END IF;

	LOOP
		-- Lock the player's season entry first, then sum their bests in
		-- a fresh snapshot: a concurrent submission of theirs on another
		-- level has committed by then, or waits for this one.
		SELECT e.score, e.achieved_at, e.submission_id INTO v_old_score, v_old_at, v_old_sub FROM board_entries e
		WHERE e.board_id = v_board AND e.player_id = NEW.player_id FOR UPDATE;
		SELECT sum(b.score), max(b.achieved_at) INTO v_total, v_at FROM season_bests b
		WHERE b.season_id = v_season AND b.player_id = NEW.player_id;
		SELECT b.submission_id INTO v_sub FROM season_bests b
		WHERE b.season_id = v_season AND b.player_id = NEW.player_id AND b.achieved_at = v_at
		ORDER BY b.submission_id DESC LIMIT 1;
		IF v_old_score IS NOT NULL THEN
			IF v_old_score = v_total AND v_old_at = v_at AND v_old_sub = v_sub THEN
				RETURN NULL;
			END IF;
			UPDATE board_entries SET score = v_total, achieved_at = v_at, submission_id = v_sub
			WHERE board_id = v_board AND player_id = NEW.player_id;
			IF v_old_score <> v_total OR v_old_at <> v_at THEN
				PERFORM bp_move_key(v_board, NEW.player_id, -v_old_score, v_old_at, -v_total, v_at);
			END IF;
			RETURN NULL;
		END IF;
		INSERT INTO board_entries (board_id, player_id, score, achieved_at, submission_id)
		VALUES (v_board, NEW.player_id, v_total, v_at, v_sub)
		ON CONFLICT (board_id, player_id) DO NOTHING;
		IF FOUND THEN
			PERFORM bp_move_key(v_board, NEW.player_id, NULL, NULL, -v_total, v_at);
			RETURN NULL;
		END IF;
		-- A concurrent first submission of theirs in this season made
		-- the entry and has committed: lock it and sum again.
	END LOOP;
END
$$;

CREATE CONSTRAINT TRIGGER submissions_season AFTER INSERT ON submissions
	DEFERRABLE INITIALLY DEFERRED
	FOR EACH ROW WHEN (NEW.passed) EXECUTE FUNCTION bp_season_submission();

-- Season board reads, as bp_top_page and bp_around_page (000007) with the
-- board found by season id; version and seq are 0 (no versions, no change
-- stream). No row if the season does not exist.
CREATE FUNCTION bp_season_top_page(p_season text, p_limit bigint)
RETURNS TABLE (o_version integer, o_total bigint, o_player uuid, o_name text, o_score bigint,
	o_achieved_at timestamptz, o_submission uuid, o_seq bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_total bigint;
BEGIN
	SELECT s.board_id INTO v_board FROM seasons s WHERE s.id = p_season;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	RETURN QUERY
		SELECT 0, v_total, e.player_id, p.name, e.score, e.achieved_at, e.submission_id, 0::bigint
		FROM board_entries e JOIN players p ON p.id = e.player_id
		WHERE e.board_id = v_board
		ORDER BY e.neg_score, e.achieved_at, e.player_id
		LIMIT p_limit;
	IF NOT FOUND THEN
		RETURN QUERY SELECT 0, v_total, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, 0::bigint;
	END IF;
END
$$;

CREATE FUNCTION bp_season_around_page(p_season text, p_player uuid, p_after bigint, p_before bigint)
RETURNS TABLE (o_part integer, o_version integer, o_total bigint, o_rank bigint, o_player uuid, o_name text,
	o_score bigint, o_achieved_at timestamptz, o_submission uuid, o_seq bigint)
LANGUAGE plpgsql STABLE AS $$
DECLARE
	v_board bigint;
	v_total bigint;
	v_ns bigint;
	v_at timestamptz;
BEGIN
	SELECT s.board_id INTO v_board FROM seasons s WHERE s.id = p_season;
	IF v_board IS NULL THEN
		RETURN;
	END IF;
	SELECT coalesce(sum(k.n), 0)::bigint INTO v_total FROM board_buckets k WHERE k.board_id = v_board;
	SELECT e.neg_score, e.achieved_at INTO v_ns, v_at FROM board_entries e
	WHERE e.board_id = v_board AND e.player_id = p_player;
	IF NOT FOUND THEN
		RETURN QUERY SELECT 0, 0, v_total, NULL::bigint, NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, 0::bigint;
		RETURN;
	END IF;
	RETURN QUERY SELECT 0, 0, v_total, bp_rank(v_board, v_ns, v_at, p_player),
		NULL::uuid, NULL::text, NULL::bigint, NULL::timestamptz, NULL::uuid, 0::bigint;
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

-- An event's final runs as they are computed, before the results are
-- frozen: a finisher that dies mid-way leaves them, and the next one runs
-- only the entrants still missing (the runs are deterministic, so the
-- results are the same as from one uninterrupted finish). Each run names
-- the design it ran; a stored run counts only for that design.
CREATE TABLE event_final_runs (
	event_id      uuid NOT NULL REFERENCES events (id),
	player_id     uuid NOT NULL REFERENCES players (id),
	submission_id uuid NOT NULL REFERENCES event_submissions (id),
	passed        boolean NOT NULL,
	score         bigint NOT NULL CHECK (score >= 0),
	result        json NOT NULL,
	PRIMARY KEY (event_id, player_id)
);
-- A player's event results, for their page.
CREATE INDEX event_results_player ON event_results (player_id);
