DROP INDEX IF EXISTS event_results_player;
DROP TABLE IF EXISTS event_final_runs;
DROP FUNCTION IF EXISTS bp_season_around_page(text, uuid, bigint, bigint);
DROP FUNCTION IF EXISTS bp_season_top_page(text, bigint);
DROP TRIGGER IF EXISTS submissions_season ON submissions;
DROP FUNCTION IF EXISTS bp_season_submission();
DROP FUNCTION IF EXISTS bp_move_key(bigint, uuid, bigint, timestamptz, bigint, timestamptz);
DROP FUNCTION IF EXISTS bp_lock_bucket(bigint, bigint, timestamptz, uuid);
DROP FUNCTION IF EXISTS bp_season_now();
DROP TABLE IF EXISTS season_bests;
-- The season boards go with their seasons.
CREATE TEMPORARY TABLE season_boards ON COMMIT DROP AS SELECT board_id FROM seasons;
DROP TABLE IF EXISTS seasons;
DELETE FROM board_buckets WHERE board_id IN (SELECT board_id FROM season_boards);
DELETE FROM board_entries WHERE board_id IN (SELECT board_id FROM season_boards);
DELETE FROM boards WHERE id IN (SELECT board_id FROM season_boards);
ALTER TABLE boards DROP CONSTRAINT boards_kind;
ALTER TABLE boards ADD CONSTRAINT boards_check CHECK ((id = 0) = (slug IS NULL AND version IS NULL));
