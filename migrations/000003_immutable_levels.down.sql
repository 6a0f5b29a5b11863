ALTER TABLE levels DROP COLUMN IF EXISTS worst_case_cost;
ALTER TABLE board_entries DROP COLUMN IF EXISTS left_global;
DROP TABLE IF EXISTS global_drains;
DROP TRIGGER IF EXISTS levels_immutable ON levels;
DROP FUNCTION IF EXISTS levels_immutable();
