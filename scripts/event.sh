#!/usr/bin/env bash
# Event load run: PLAYERS players each submit once in the last WINDOW of an
# event (which ends with it), against one server on loopback with
# PostgreSQL; then the event's finish, and a check in the database that no
# acknowledged submission is lost and the final standings hold every
# entrant once. Prints acknowledged submissions per second and p99.
#
#   scripts/event.sh                              # 10,000 players, 60 s
#   PLAYERS=300 WINDOW=8s scripts/event.sh        # the CI version
#   REPLICAS=2 scripts/event.sh                   # two replicas, one database
#
# Extra server settings go through the environment, e.g. SIM_WORKERS=2.
source "$(dirname "$0")/lib.sh"
PLAYERS="${PLAYERS:-10000}" WINDOW="${WINDOW:-60s}" REPLICAS="${REPLICAS:-1}"
build
machine
db=$(fresh_db bp_event)
admin=$(head -c 32 /dev/urandom | base64 | tr -d '/+=' | head -c 40)
urls=()
for _ in $(seq 1 "$REPLICAS"); do
	start_server "$db" ADMIN_TOKEN="$admin" ${SERVER_ENV:-}
	urls+=("$SERVER_URL")
done
echo "== $PLAYERS players submitting in the last $WINDOW of an event, $REPLICAS replica(s)"
"$WORK/loadgen" event -url "$(IFS=,; echo "${urls[*]}")" -db "$db" -admin-token "$admin" \
	-players "$PLAYERS" -window "$WINDOW" -json "$WORK/event.json"
for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid"; done
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_event WITH (FORCE)" >/dev/null
