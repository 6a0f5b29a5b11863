#!/usr/bin/env bash
# Leaderboards at scale, through the API on loopback: seeds SCALE_PLAYERS
# players on the tutorial's board and the global board directly in
# database bp_scale (COPY and bulk SQL, then pgstore.RebuildRanks), starts
# two server replicas on it and measures the board routes one request at a
# time, then checks that a new best written through one replica is in the
# next read on both.
#
#   scripts/scale.sh                          # 1,000,000 players, 300 requests per figure
#   SCALE_PLAYERS=20000 N=50 scripts/scale.sh # the CI version (targets reported, not enforced)
#   ENFORCE=1 scripts/scale.sh                # fail when a p99 misses its target
#   REUSE_DB=1 SEED_ONLY=1 scripts/scale.sh   # seed bp_scale and keep it (1M: a few minutes)
#   REUSE_DB=1 scripts/scale.sh               # the reads alone, on bp_scale as seeded
#
# With REUSE_DB=1 the database is kept, and a run finds it seeded when its tutorial board
# holds SCALE_PLAYERS entries (each run's new bests leave the count as it is); otherwise
# it seeds it afresh. KEEP_DB=1 keeps a freshly seeded database too.
source "$(dirname "$0")/lib.sh"
SCALE_PLAYERS="${SCALE_PLAYERS:-1000000}" N="${N:-300}" REUSE_DB="${REUSE_DB:-0}" SEED_ONLY="${SEED_ONLY:-0}"
KEEP_DB="${KEEP_DB:-$REUSE_DB}"
build
machine
db="$PGBASE/bp_scale?sslmode=disable"
seeded() {
	[ "$(psql -tA "$db" -c "SELECT count(*) FROM board_entries WHERE board_id =
		(SELECT board_id FROM levels WHERE slug = 'first-request' AND is_current)" 2>/dev/null)" = "$SCALE_PLAYERS" ]
}
if [ "$REUSE_DB" = 1 ] && seeded; then
	start_server "$db"
	echo "bp_scale already holds $SCALE_PLAYERS players: not seeding"
else
	db=$(fresh_db bp_scale)
	start_server "$db"
	"$WORK/loadgen" seed -db "$db" -players "$SCALE_PLAYERS"
fi
first="$SERVER_URL"
if [ "$SEED_ONLY" = 1 ]; then
	exit 0
fi
start_server "$db"
second="$SERVER_URL"
flags=()
[ "${ENFORCE:-0}" = 1 ] && flags+=(-enforce-targets)
"$WORK/loadgen" scale -url "$first,$second" -db "$db" -players "$SCALE_PLAYERS" -n "$N" "${flags[@]}" -json "$WORK/scale.json"
if [ "${EXPLAIN:-0}" = 1 ]; then
	bash "$ROOT/scripts/explain.sh" "$db"
fi
cleanup
[ "$KEEP_DB" = 1 ] || psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_scale WITH (FORCE)" >/dev/null
