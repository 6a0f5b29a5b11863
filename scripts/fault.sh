#!/usr/bin/env bash
# Fault runs: load against a server while PostgreSQL is stopped and
# restarted, while the server gets SIGTERM, and while it gets SIGKILL; each
# ends with the database consistency check.
#
#   scripts/fault.sh [pg|sigterm|sigkill|all]        (default all)
#   DURATION=6s FAULT_AT=2 DOWN=2 scripts/fault.sh   # the CI version
#
# The PostgreSQL scenario stops a private cluster (initdb in a temporary
# directory, port $FAULT_PG_PORT), never the machine's shared one, so it is
# safe while other tests run. It needs root (to run PostgreSQL as postgres)
# or to be run as the postgres user.
source "$(dirname "$0")/lib.sh"
SCENARIO="${1:-all}"
DURATION="${DURATION:-20s}" FAULT_AT="${FAULT_AT:-6}" DOWN="${DOWN:-5}" PLAYERS="${PLAYERS:-32}"
DEADLINE="${DEADLINE:-5s}"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)}"
FAULT_PG_PORT="${FAULT_PG_PORT:-55439}"
build
machine
fail=0

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

private_pg() {
	PGDIR="$WORK/pgdata"
	mkdir -p "$PGDIR"
	[ "$(id -u)" = 0 ] && chown postgres "$WORK" "$PGDIR"
	as_pg "$PGBIN/initdb" -D "$PGDIR" -U postgres --auth=trust -E UTF8 >/dev/null
	pg_start
	PRIV_DB="postgres://postgres@127.0.0.1:$FAULT_PG_PORT/postgres?sslmode=disable"
}
pg_start() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR" -w -l "$PGDIR/log" -o "-p $FAULT_PG_PORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null; }
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR" -m fast -w stop >/dev/null; }

scenario_pg() {
	echo "== PostgreSQL stopped at ${FAULT_AT}s for ${DOWN}s during a ${DURATION} load run"
	private_pg
	trap 'cleanup; pg_stop 2>/dev/null || true' EXIT
	start_server "$PRIV_DB"
	"$WORK/loadgen" run -url "$SERVER_URL" -db "$PRIV_DB" -players "$PLAYERS" -duration "$DURATION" -check-ranks=false \
		-deadline "$DEADLINE" -server-pid "$SERVER_PID" -json "$WORK/fault-pg.json" >"$WORK/fault-pg.out" 2>&1 &
	local lg=$!
	sleep "$FAULT_AT"
	local t0; t0=$(date +%s.%N)
	pg_stop
	echo "   stopped PostgreSQL"
	# While it is down, a request that needs it must fail fast with 503.
	local code time
	read -r code time < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -m 10 "$SERVER_URL/v1/leaderboard")
	echo "   leaderboard while down: $code in ${time}s; readyz: $(curl -s -o /dev/null -w '%{http_code}' -m 10 "$SERVER_URL/readyz")"
	if [ "$code" != 503 ]; then echo "   FAIL: want 503 while PostgreSQL is down"; fail=1; fi
	sleep "$DOWN"
	pg_start
	echo "   started PostgreSQL after $(echo "$(date +%s.%N) - $t0" | bc) s"
	wait "$lg" || true
	cat "$WORK/fault-pg.out"
	grep -q '^OK$' "$WORK/fault-pg.out" || fail=1
	# Recovery by itself: the same server, no restart, serves cleanly.
	for _ in $(seq 1 50); do curl -fsS "$SERVER_URL/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	echo "   after recovery:"
	"$WORK/loadgen" run -url "$SERVER_URL" -db "$PRIV_DB" -players 4 -duration 2s -expect-no-5xx -check=false | sed 's/^/   /' || fail=1
	# And nothing acknowledged was lost: the whole database checks out.
	"$WORK/loadgen" check -db "$PRIV_DB" | sed 's/^/   /' || fail=1
	stop_server "$SERVER_PID"
	pg_stop
	trap cleanup EXIT
}

scenario_signal() {
	local sig="$1"
	echo "== SIG$sig to the server at ${FAULT_AT}s of a ${DURATION} load run"
	local db; db=$(fresh_db "bp_fault_$(echo "$sig" | tr A-Z a-z)")
	start_server "$db" SHUTDOWN_TIMEOUT=20s
	local flags=(-check-ranks=false)
	[ "$sig" = TERM ] && flags+=(-expect-no-unknown-stored)
	"$WORK/loadgen" run -url "$SERVER_URL" -db "$db" -players "$PLAYERS" -duration "$DURATION" -deadline "$DEADLINE" \
		"${flags[@]}" -json "$WORK/fault-$sig.json" >"$WORK/fault-$sig.out" 2>&1 &
	local lg=$!
	sleep "$FAULT_AT"
	kill -"$sig" "$SERVER_PID"
	local rc=0
	wait "$SERVER_PID" || rc=$?
	echo "   server exited with status $rc"
	if [ "$sig" = TERM ] && [ "$rc" != 0 ]; then echo "   FAIL: SIGTERM must drain and exit 0"; fail=1; fi
	wait "$lg" || true
	# The run's own check: acknowledged = stored, refused = absent, and
	# for SIGTERM, nothing stored without its answer.
	sed -n '1,2p;/database check/,$p' "$WORK/fault-$sig.out" | sed 's/^/   /'
	grep -q '^OK$' "$WORK/fault-$sig.out" || fail=1
	# A restarted server on the same database serves cleanly.
	start_server "$db"
	"$WORK/loadgen" run -url "$SERVER_URL" -db "$db" -players 4 -duration 2s -expect-no-5xx | tail -n1 | sed 's/^/   after restart: /' || fail=1
	stop_server "$SERVER_PID"
	psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_fault_$(echo "$sig" | tr A-Z a-z) WITH (FORCE)" >/dev/null
}

case "$SCENARIO" in
pg) scenario_pg ;;
sigterm) scenario_signal TERM ;;
sigkill) scenario_signal KILL ;;
all) scenario_pg; scenario_signal TERM; scenario_signal KILL ;;
*) echo "usage: $0 [pg|sigterm|sigkill|all]"; exit 2 ;;
esac
if [ "$fail" != 0 ]; then echo "FAULT RUN FAILED"; exit 1; fi
echo "FAULT RUN OK"
