#!/usr/bin/env bash
# Live standings across replicas: two servers on one fresh database; CLIENTS
# clients stream the tutorial's board from the second (8 to a loopback
# address, the server's limit) while SUBMISSIONS new players' first passes
# are stored through the first, one every GAP. Prints the delay from each
# acknowledgement until the last client has the change (p50, p99, max), the
# deliveries missing and the streaming replica's memory with and without the
# streams; fails if a delivery is missing.
#
#   scripts/streams.sh                            # 1,000 clients, 100 submissions
#   CLIENTS=40 SUBMISSIONS=5 scripts/streams.sh   # a smoke test
#
# Extra server settings go through the environment, e.g. SERVER_ENV="MAX_STREAMS=2000".
source "$(dirname "$0")/lib.sh"
CLIENTS="${CLIENTS:-1000}" SUBMISSIONS="${SUBMISSIONS:-100}" GAP="${GAP:-50ms}"
build
machine
dbname="bp_streams_$$" # per run: runs in parallel do not share it
db=$(fresh_db "$dbname")
start_server "$db" ${SERVER_ENV:-}
submit="$SERVER_URL"
start_server "$db" ${SERVER_ENV:-}
stream="$SERVER_URL"
echo "== $CLIENTS stream clients on $stream, $SUBMISSIONS first passes through $submit $GAP apart; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/loadgen" streams -url "$stream" -submit-url "$submit" -clients "$CLIENTS" -submissions "$SUBMISSIONS" -gap "$GAP" \
	-json "$WORK/streams.json"
for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid"; done
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null
