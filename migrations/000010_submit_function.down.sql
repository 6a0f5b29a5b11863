-- The submission's write goes back to the store's Go transaction.
DROP FUNCTION bp_submit(uuid, uuid, text, integer, text, boolean, json, json, boolean, bigint, timestamptz,
	text, text, bigint, text, text, text, text, integer, bigint, bigint);
DROP FUNCTION bp_record_change(bigint, integer, uuid, uuid, bigint, timestamptz, boolean, bigint, timestamptz,
	text, text, text, text, integer, bigint, bigint);
DROP FUNCTION bp_json_text(text);
DROP FUNCTION bp_add_to_global(uuid, bigint, boolean, timestamptz, uuid, bigint);
DROP FUNCTION bp_leave_global(bigint, uuid, bigint);
DROP FUNCTION bp_uncount_key(bigint, bigint, timestamptz, uuid);
DROP FUNCTION bp_move_key(bigint, boolean, bigint, timestamptz, uuid, bigint, timestamptz, uuid, bigint);
DROP FUNCTION bp_split_bucket(bigint, bigint, bigint);
-- bp_lock_bucket stays: the season boards' trigger (000008) uses it.
