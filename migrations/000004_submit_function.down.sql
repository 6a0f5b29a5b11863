DROP FUNCTION IF EXISTS bp_around_page(text, integer, uuid, bigint, bigint);
DROP FUNCTION IF EXISTS bp_top_page(text, integer, bigint);
DROP FUNCTION IF EXISTS bp_board(text, integer);
DROP FUNCTION IF EXISTS bp_submit(uuid, uuid, text, integer, text, boolean, json, json, boolean, bigint, timestamptz, text, text, bigint);
DROP FUNCTION IF EXISTS bp_add_to_global(uuid, bigint, boolean, timestamptz, uuid, bigint);
DROP FUNCTION IF EXISTS bp_rank(bigint, bigint, timestamptz, uuid);
DROP FUNCTION IF EXISTS bp_move_key(bigint, boolean, bigint, timestamptz, uuid, bigint, timestamptz, uuid, bigint);
DROP FUNCTION IF EXISTS bp_lock_bucket(bigint, bigint, timestamptz, uuid);
