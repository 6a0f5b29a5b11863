#!/usr/bin/env bash
# Load run: N players for T seconds against one server on loopback with
# PostgreSQL, then a database consistency check. Repeats RUNS times and
# prints medians.
#
#   scripts/load.sh                       # closed loop, 64 players, 20 s, 3 runs
#   RATE=240 scripts/load.sh              # paced at 240 submissions/s
#   PLAYERS=8 DURATION=3s RUNS=1 scripts/load.sh   # the CI version
#
# Extra server settings go through the environment, e.g. SIM_WORKERS=2.
source "$(dirname "$0")/lib.sh"
PLAYERS="${PLAYERS:-64}" DURATION="${DURATION:-20s}" RUNS="${RUNS:-3}" RATE="${RATE:-0}"
build
machine
reports=()
for i in $(seq 1 "$RUNS"); do
	db=$(fresh_db "bp_load_$i")
	start_server "$db"
	echo "== run $i: $PLAYERS players, $DURATION, rate $RATE against $SERVER_URL"
	"$WORK/loadgen" run -url "$SERVER_URL" -db "$db" -players "$PLAYERS" -duration "$DURATION" -rate "$RATE" \
		-server-pid "$SERVER_PID" -json "$WORK/load-$i.json" ${LOADGEN_FLAGS:-}
	reports+=("$WORK/load-$i.json")
	stop_server "$SERVER_PID"
	psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_load_$i WITH (FORCE)" >/dev/null
done
"$WORK/loadgen" median "${reports[@]}"
