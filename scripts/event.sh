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
#   READERS=8 WATCHERS=100 scripts/event.sh       # with standings readers and stream watchers
#
# READERS each read a standings page every READ_EVERY (default 250ms), in
# turn the first page and their own (around=me); WATCHERS hold the event's
# stream open; both on the last replica, during the window.
#
# Extra server settings go through the environment, e.g. SIM_WORKERS=2.
source "$(dirname "$0")/lib.sh"
PLAYERS="${PLAYERS:-10000}" WINDOW="${WINDOW:-60s}" REPLICAS="${REPLICAS:-1}"
READERS="${READERS:-0}" WATCHERS="${WATCHERS:-0}" READ_EVERY="${READ_EVERY:-250ms}"
build
machine
dbname="bp_event_$$" # per run: runs in parallel do not share it
db=$(fresh_db "$dbname")
admin=$(head -c 32 /dev/urandom | base64 | tr -d '/+=' | head -c 40)
urls=()
for _ in $(seq 1 "$REPLICAS"); do
	start_server "$db" ADMIN_TOKEN="$admin" ${SERVER_ENV:-}
	urls+=("$SERVER_URL")
done
echo "== $PLAYERS players submitting in the last $WINDOW of an event, $REPLICAS replica(s), $READERS standings readers, $WATCHERS stream watchers; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/loadgen" event -url "$(IFS=,; echo "${urls[*]}")" -db "$db" -admin-token "$admin" \
	-players "$PLAYERS" -window "$WINDOW" -readers "$READERS" -watchers "$WATCHERS" -read-every "$READ_EVERY" \
	-json "$WORK/event.json"
# Where each replica said no: its shed and refusal counters.
for url in "${urls[@]}"; do
	echo "refusals at $url: $(curl -fsS "$url/metrics" | grep -E '^backpressure_(http_shed_total|sim_pool_rejections_total|rate_limited_total)' | awk '$2 > 0 {printf "%s %s; ", $1, $2}')"
	[ -n "${METRICS_OUT:-}" ] && curl -fsS "$url/metrics" >>"$METRICS_OUT"
done
for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid"; done
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null
