DROP FUNCTION IF EXISTS bp_around_page(text, integer, uuid, bigint, bigint);
DROP FUNCTION IF EXISTS bp_top_page(text, integer, bigint);
DROP FUNCTION IF EXISTS bp_board(text, integer);
DROP FUNCTION IF EXISTS bp_rank(bigint, bigint, timestamptz, uuid);
