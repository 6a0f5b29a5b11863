#!/usr/bin/env bash
# Leaderboards at scale, through the API on loopback: seeds SCALE_PLAYERS
# players on the tutorial's board and the global board directly in a fresh
# database (bulk SQL, then pgstore.RebuildRanks), starts two server
# replicas on it and measures the board routes one request at a time, then
# checks that a new best written through one replica is in the next read on
# both.
#
#   scripts/scale.sh                          # 1,000,000 players, 300 requests per figure
#   SCALE_PLAYERS=20000 N=50 scripts/scale.sh # the CI version (targets reported, not enforced)
#   ENFORCE=1 scripts/scale.sh                # fail when a p99 misses its target
source "$(dirname "$0")/lib.sh"
SCALE_PLAYERS="${SCALE_PLAYERS:-1000000}" N="${N:-300}" KEEP_DB="${KEEP_DB:-0}"
build
machine
db=$(fresh_db bp_scale)
start_server "$db"
first="$SERVER_URL"
"$WORK/loadgen" seed -db "$db" -players "$SCALE_PLAYERS"
# The seeded players carry name keys of an older rule: the second replica rekeys them in
# the background and must be ready without waiting for it.
started=$(date +%s%N)
start_server "$db"
echo "second replica ready in $(( ($(date +%s%N) - started) / 1000000 )) ms on $SCALE_PLAYERS players with old name keys"
second="$SERVER_URL"
flags=()
[ "${ENFORCE:-0}" = 1 ] && flags+=(-enforce-targets)
"$WORK/loadgen" scale -url "$first,$second" -db "$db" -players "$SCALE_PLAYERS" -n "$N" "${flags[@]}" -json "$WORK/scale.json"
if [ "${EXPLAIN:-0}" = 1 ]; then
	bash "$ROOT/scripts/explain.sh" "$db"
fi
cleanup
[ "$KEEP_DB" = 1 ] || psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_scale WITH (FORCE)" >/dev/null
