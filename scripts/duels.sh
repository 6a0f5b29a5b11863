#!/usr/bin/env bash
# A burst of duels asking to be settled at once, and other players' duels sent just after
# it, through a real server with its production limits (the defaults, as scripts/flood.sh
# keeps them): 150 duels between fresh players on the heaviest level from 16 addresses,
# then 10 other pairs' second designs 0.3 s later; every one of theirs must be settled
# within 5 s (see `loadgen duels`). Prints the settle latency p50/p99/max of both.
#
#   scripts/duels.sh
#   DUELS_ARGS="-duels 20 -victims 4" scripts/duels.sh     # the CI version
#
# Extra settings for the server go in SERVER_ENV (e.g. SERVER_ENV="SIM_WORKERS=4").
source "$(dirname "$0")/lib.sh"
build
machine
db=$(fresh_db bp_duels)
start_server "$db" RATE_LIMIT_IP=600 RATE_LIMIT_PLAYER=300 RATE_LIMIT_SIM=60 MAX_INFLIGHT_PER_CLIENT=16 ${SERVER_ENV:-}
"$WORK/loadgen" duels -url "$SERVER_URL" ${DUELS_ARGS:-}
curl -fsS "$SERVER_URL/metrics" | grep -E '^backpressure_(simulations_total|simulation_waits_total|rate_limited_total)' || true
stop_server "$SERVER_PID"
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_duels WITH (FORCE)" >/dev/null
