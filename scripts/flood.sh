#!/usr/bin/env bash
# A victim's submissions alone and under a hint flood, through a real server
# with its production limits (rate limits, per-address in-flight limit,
# simulation budget: the defaults), the attackers and the victims each on
# their own loopback address (see `loadgen flood`).
#
#   scripts/flood.sh                       # 16 attackers x 2, ignoring Retry-After, 3 runs
#   RUNS=5 ATTACKERS=32 scripts/flood.sh
#   FLOOD_ARGS=-respect-retry-after scripts/flood.sh
#   HEAVIEST=1 scripts/flood.sh            # hints on the heaviest level the cost bound lets through
#
# Extra settings for the server go in SERVER_ENV (e.g. SERVER_ENV="SIM_WORKERS=4").
source "$(dirname "$0")/lib.sh"
RUNS="${RUNS:-3}" ATTACKERS="${ATTACKERS:-16}"
build
machine
db=$(fresh_db bp_flood)
# start_server lifts the limits for load runs; the flood keeps the defaults.
admin=$(openssl rand -hex 24)
start_server "$db" RATE_LIMIT_IP=600 RATE_LIMIT_PLAYER=300 RATE_LIMIT_SIM=60 MAX_INFLIGHT_PER_CLIENT=16 ADMIN_TOKEN="$admin" ${SERVER_ENV:-}
heaviest=()
[ "${HEAVIEST:-0}" = 1 ] && heaviest=(-heaviest-with-admin-token "$admin")
"$WORK/loadgen" flood -url "$SERVER_URL" -attackers "$ATTACKERS" -runs "$RUNS" "${heaviest[@]}" ${FLOOD_ARGS:-}
curl -fsS "$SERVER_URL/metrics" | grep -E '^backpressure_(rate_limited_total|simulation_waits_total|simulations_total\{kind="hint")' || true
stop_server "$SERVER_PID"
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_flood WITH (FORCE)" >/dev/null
