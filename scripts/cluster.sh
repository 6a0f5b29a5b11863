#!/usr/bin/env bash
# The production topology on loopback, without Docker: HAProxy
# (/usr/sbin/haproxy, deploy/haproxy.cfg) in front of three server
# replicas, PgBouncer in transaction mode (/usr/sbin/pgbouncer,
# deploy/pgbouncer.ini) in front of a private PostgreSQL cluster (initdb in
# a temporary directory). Every process has its own loopback port, all
# state lives in $WORK, and everything is stopped on exit.
#
#   scripts/cluster.sh up        # start it, print the URLs, wait for Ctrl-C
#   scripts/cluster.sh fault     # the fault run (see RELIABILITY.md)
#   scripts/cluster.sh scale     # throughput with 1, 2 and 3 replicas (BENCHMARKS.md)
#   scripts/cluster.sh costs     # CPU, rows and WAL per submission and per board read
#   scripts/cluster.sh event     # an event's last-minute crowd through HAProxy (see scripts/event.sh)
#
#   DURATION=8s FAULT_AT=2 PLAYERS=8 scripts/cluster.sh fault   # the CI version
#   PLAYERS=30000 READERS=8 WATCHERS=100 scripts/cluster.sh event
#
# Needs root (PostgreSQL and PgBouncer then run as the postgres user) or to
# be run as the postgres user.
source "$(dirname "$0")/lib.sh"
MODE="${1:-up}"
EVENT_PLAYERS="${PLAYERS:-10000}" # the event run's crowd; the other runs' players default to 32
PLAYERS="${PLAYERS:-32}" DURATION="${DURATION:-20s}" FAULT_AT="${FAULT_AT:-5}" ROUNDS="${ROUNDS:-2}"
PGBIN="${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)}"
HAPROXY="${HAPROXY:-/usr/sbin/haproxy}" PGBOUNCER="${PGBOUNCER:-/usr/sbin/pgbouncer}"
fail=0

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc | xargs printf '%.2f'; }

PG_PORT=$(free_port) BOUNCER_PORT=$(free_port) LB_PORT=$(free_port)
REPLICA_PORTS=("$(free_port)" "$(free_port)" "$(free_port)")
REPLICA_PIDS=(0 0 0)
PGDIR="$WORK/pgdata"
DIRECT_DB="postgres://postgres@127.0.0.1:$PG_PORT/backpressure?sslmode=disable"
POOLED_DB="postgres://postgres@127.0.0.1:$BOUNCER_PORT/backpressure?sslmode=disable"
LB_URL="http://127.0.0.1:$LB_PORT"
ADMIN_SOCKET="$WORK/haproxy.sock"
ADMIN_TOKEN="$(head -c 32 /dev/urandom | base64 | tr -d '/+=' | head -c 40)" # schedules the event run's event
BOUNCER_PID=0 HAPROXY_PID=0

pg_start() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR" -w -l "$WORK/postgresql.log" -o "-p $PG_PORT -k $PGDIR -c listen_addresses=127.0.0.1" start >/dev/null; }
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$PGDIR" -m fast -w stop >/dev/null; }

start_postgres() {
	mkdir -p "$PGDIR"
	[ "$(id -u)" = 0 ] && chown postgres "$WORK" "$PGDIR"
	as_pg "$PGBIN/initdb" -D "$PGDIR" -U postgres --auth=trust -E UTF8 >/dev/null
	pg_start
	psql -q "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -c "CREATE DATABASE backpressure" >/dev/null
}

start_pgbouncer() {
	if [ ! -f "$WORK/pgbouncer.ini" ]; then
		sed -e "s|^backpressure = .*|backpressure = host=127.0.0.1 port=$PG_PORT dbname=backpressure|" \
			-e "s|^listen_addr = .*|listen_addr = 127.0.0.1|" -e "s|^listen_port = .*|listen_port = $BOUNCER_PORT|" \
			-e "s|^auth_file = .*|auth_file = $ROOT/deploy/userlist.txt|" \
			"$ROOT/deploy/pgbouncer.ini" >"$WORK/pgbouncer.ini"
		printf 'logfile = %s\npidfile = %s\n' "$WORK/pgbouncer.log" "$WORK/pgbouncer.pid" >>"$WORK/pgbouncer.ini"
		[ "$(id -u)" = 0 ] && chown postgres "$WORK/pgbouncer.ini"
	fi
	# Daemonised, so that its pid (in the pidfile) is PgBouncer's own.
	as_pg "$PGBOUNCER" -d -q "$WORK/pgbouncer.ini"
	for _ in $(seq 1 50); do
		if [ -s "$WORK/pgbouncer.pid" ] && psql -tA "$POOLED_DB" -c 'SELECT 1' >/dev/null 2>&1; then
			BOUNCER_PID=$(cat "$WORK/pgbouncer.pid")
			return 0
		fi
		sleep 0.1
	done
	echo "PgBouncer did not start"; cat "$WORK/pgbouncer.log"; return 1
}

start_haproxy() {
	BP_LB_BIND="127.0.0.1:$LB_PORT" BP_ADMIN_SOCKET="$ADMIN_SOCKET" BP_ERRORS="$ROOT/deploy/errors" \
		BP_SERVER1="127.0.0.1:${REPLICA_PORTS[0]}" BP_SERVER2="127.0.0.1:${REPLICA_PORTS[1]}" BP_SERVER3="127.0.0.1:${REPLICA_PORTS[2]}" \
		"$HAPROXY" -db -f "$ROOT/deploy/haproxy.cfg" >>"$WORK/haproxy.log" 2>&1 &
	HAPROXY_PID=$!
	for _ in $(seq 1 50); do [ -S "$ADMIN_SOCKET" ] && return 0; sleep 0.1; done
	echo "HAProxy did not start"; cat "$WORK/haproxy.log"; return 1
}

# start_replica I [BINARY]: replica I (0-2) on its own port, through PgBouncer. The load
# generator is one address, so the per-address limits that protect players from each other
# are lifted, as in lib.sh.
start_replica() {
	local i="$1" bin="${2:-$WORK/server}" port="${REPLICA_PORTS[$1]}"
	env HOST=127.0.0.1 PORT="$port" DATABASE_URL="$POOLED_DB" DATABASE_DIRECT_URL="$DIRECT_DB" \
		DATABASE_QUERY_MODE=cache_describe TRUSTED_PROXIES=127.0.0.1/32 SHUTDOWN_TIMEOUT=20s \
		LOG_LEVEL="${LOG_LEVEL:-warn}" RATE_LIMIT_IP=0 RATE_LIMIT_PLAYER=0 RATE_LIMIT_SIM=0 \
		MAX_INFLIGHT_PER_CLIENT=1000000 ADMIN_TOKEN="$ADMIN_TOKEN" ${REPLICA_ENV:-} \
		"$bin" >>"$WORK/replica-$i.log" 2>&1 &
	REPLICA_PIDS[$i]=$!
	for _ in $(seq 1 1200); do # up to a minute, as lib.sh's start_server
		curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
		kill -0 "${REPLICA_PIDS[$i]}" 2>/dev/null || { cat "$WORK/replica-$i.log"; return 1; }
		sleep 0.05
	done
	echo "replica $i did not become ready"; cat "$WORK/replica-$i.log"; return 1
}

haproxy_cmd() { echo "$1" | socat stdio "unix-connect:$ADMIN_SOCKET"; }

# replicas_up: how many replicas HAProxy has UP (in service).
replicas_up() { haproxy_cmd "show stat" | awk -F, '$1 == "replicas" && $2 ~ /^s[0-9]/ && $18 == "UP"' | wc -l; }

# wait_full_service WANT: until HAProxy has WANT replicas UP and a board
# read through it answers 200; prints nothing, returns 1 after 60 s.
wait_full_service() {
	for _ in $(seq 1 600); do
		if [ "$(replicas_up)" -ge "$1" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -m 2 "$LB_URL/v1/leaderboard")" = 200 ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

cluster_cleanup() {
	for pid in "${REPLICA_PIDS[@]}"; do [ "$pid" != 0 ] && kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${REPLICA_PIDS[@]}"; do [ "$pid" != 0 ] && wait "$pid" 2>/dev/null || true; done
	[ "$HAPROXY_PID" != 0 ] && kill -TERM "$HAPROXY_PID" 2>/dev/null || true
	[ "$BOUNCER_PID" != 0 ] && stop_pid "$BOUNCER_PID"
	wait 2>/dev/null || true
	[ -f "$PGDIR/postmaster.pid" ] && pg_stop 2>/dev/null || true
}
trap cluster_cleanup EXIT

start_cluster() {
	build
	machine
	start_postgres
	start_pgbouncer
	# The first replica migrates (directly) and loads the campaign; the
	# others then find nothing to do.
	for i in 0 1 2; do start_replica "$i"; done
	start_haproxy
	wait_full_service 3 || { echo "the cluster did not come up"; exit 1; }
	echo "cluster: HAProxy $LB_URL -> replicas ${REPLICA_PORTS[*]} -> PgBouncer :$BOUNCER_PORT (transaction mode) -> PostgreSQL :$PG_PORT; state in $WORK"
}

# load_report JSON: one line of what the run's clients saw.
load_report() {
	python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
other = r["status_5xx"] - r["status_503"]
print(f'{r["acknowledged_submissions"]} acknowledged ({r["submissions_per_second"]:.0f}/s); client-visible: '
      f'503 {r["status_503"]}, 429 {r["status_429"]}, other 5xx {other}, no answer {r["no_answer"]}, '
      f'busy without Retry-After {r["busy_without_retry_after"]}, hangs {r["hangs"]}, gave up {r["unknown_outcomes"]}, '
      f'dry runs cut mid-answer and made again {r.get("cut_and_repeated", 0)}')
for u in r.get("unanswered") or []:
    print(f'   no answer: {u}')
bad = other + r["no_answer"] + r["busy_without_retry_after"] + r["hangs"] + r["unknown_outcomes"] + r["replay_mismatches"]
sys.exit(1 if bad else 0)
PY
}

# fault NAME COMMAND...: a load run through HAProxy with COMMAND run at
# FAULT_AT seconds; COMMAND leaves the cluster recovering, and the time
# from the fault to full service (3 replicas UP, a read answered) is
# reported. The run ends with its database check.
fault() {
	local name="$1"; shift
	echo "== $name at ${FAULT_AT}s of a ${DURATION} run, $PLAYERS players through HAProxy"
	"$WORK/loadgen" run -url "$LB_URL" -db "$DIRECT_DB" -players "$PLAYERS" -duration "$DURATION" -deadline 10s \
		-json "$WORK/fault-$name.json" >"$WORK/fault-$name.out" 2>&1 &
	local lg=$!
	sleep "$FAULT_AT"
	local t0; t0=$(now)
	"$@"
	if wait_full_service 3; then
		echo "   full service $(since "$t0") s after the fault"
	else
		echo "   FAIL: no full service 60 s after the fault"; fail=1
	fi
	wait "$lg" || true
	sed -n '/database check/,$p' "$WORK/fault-$name.out" | grep -v '^  ok:' | sed 's/^/   /'
	grep -q '^OK$' "$WORK/fault-$name.out" || { echo "   FAIL: see $WORK/fault-$name.out"; fail=1; }
	local seen
	if seen=$(load_report "$WORK/fault-$name.json"); then
		echo "   $seen"
	else
		echo "   $seen"
		echo "   FAIL: a client saw an error other than 503/429 with Retry-After, or gave up"; fail=1
	fi
}

kill_replica() {
	kill -KILL "${REPLICA_PIDS[1]}"
	wait "${REPLICA_PIDS[1]}" 2>/dev/null || true
	echo "   SIGKILL to replica 2; restarted after ${RESTART_AFTER:-2} s (as an orchestrator would)"
	sleep "${RESTART_AFTER:-2}"
	start_replica 1
}

# stop_pid PID: SIGTERM a process that is not this shell's child and wait
# until it is gone.
stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
}

restart_pgbouncer() {
	stop_pid "$BOUNCER_PID"
	echo "   PgBouncer stopped (SIGTERM: immediate shutdown, every client connection cut) and started again"
	start_pgbouncer
}

restart_postgres() {
	pg_stop
	echo "   PostgreSQL stopped (fast: every backend cut) and started again"
	pg_start
}

# roll_replicas: replica by replica, drain it in HAProxy (no new requests;
# the in-flight ones finish), SIGTERM it (it waits for what it still
# serves), start the new build on the same port, put it back in service.
roll_replicas() {
	cp "$WORK/server" "$WORK/server-next"
	for i in 0 1 2; do
		haproxy_cmd "set server replicas/s$((i + 1)) state drain" >/dev/null
		for _ in $(seq 1 100); do
			[ "$(haproxy_cmd "show stat" | awk -F, -v s="s$((i + 1))" '$1 == "replicas" && $2 == s {print $5}')" = 0 ] && break
			sleep 0.05
		done
		kill -TERM "${REPLICA_PIDS[$i]}"
		wait "${REPLICA_PIDS[$i]}" 2>/dev/null || true
		start_replica "$i" "$WORK/server-next"
		haproxy_cmd "set server replicas/s$((i + 1)) state ready" >/dev/null
		wait_full_service 3 || true
	done
	echo "   rolled 3 replicas to the new build, one at a time (drain, SIGTERM, start, ready)"
}

mode_fault() {
	start_cluster
	fault "replica-sigkill" kill_replica
	fault "pgbouncer-restart" restart_pgbouncer
	fault "postgresql-restart" restart_postgres
	fault "rolling-deploy" roll_replicas
	echo "== database invariants after all four"
	"$WORK/loadgen" check -db "$DIRECT_DB" | grep -v '^  ok:' | sed 's/^/   /' || fail=1
	if [ "$fail" != 0 ]; then echo "CLUSTER FAULT RUN FAILED (state in $WORK)"; exit 1; fi
	echo "CLUSTER FAULT RUN OK"
}

# set_replicas N: replicas 1..N in service, the others in maintenance.
set_replicas() {
	for i in 1 2 3; do
		if [ "$i" -le "$1" ]; then haproxy_cmd "set server replicas/s$i state ready" >/dev/null
		else haproxy_cmd "set server replicas/s$i state maint" >/dev/null; fi
	done
	sleep 1
}

mode_scale() {
	start_cluster
	local results="$WORK/scale.tsv"
	printf 'replicas\tround\tsubmissions_per_s\tsubmit_p50_ms\tsubmit_p99_ms\tboard_p99_ms\n' >"$results"
	for round in $(seq 1 "$ROUNDS"); do
		for n in 1 2 3; do
			set_replicas "$n"
			"$WORK/loadgen" run -url "$LB_URL" -db "$DIRECT_DB" -players "${SCALE_PLAYERS:-64}" -duration "$DURATION" \
				-json "$WORK/scale-$n-$round.json" >"$WORK/scale-$n-$round.out" 2>&1 || { cat "$WORK/scale-$n-$round.out"; fail=1; }
			python3 - "$WORK/scale-$n-$round.json" "$n" "$round" >>"$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); s = r["routes"]["POST submissions"]; b = r["routes"]["GET leaderboard"]
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{r["submissions_per_second"]:.1f}\t{s["p50_ms"]}\t{s["p99_ms"]}\t{b["p99_ms"]}')
PY
			tail -n1 "$results"
		done
	done
	python3 - "$results" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
print("medians: replicas, submissions/s, submit p50 / p99 ms, top-20 board p99 ms")
for n in ("1", "2", "3"):
    rs = [r for r in rows if r["replicas"] == n]
    m = lambda k: statistics.median(float(r[k]) for r in rs)
    print(f"  {n}  {m('submissions_per_s'):7.1f}  {m('submit_p50_ms'):7.1f} / {m('submit_p99_ms'):7.1f}  {m('board_p99_ms'):7.1f}")
PY
	[ "$fail" = 0 ] || exit 1
}

# sql Q: one value from the private cluster.
sql() { psql -tA "postgres://postgres@127.0.0.1:$PG_PORT/backpressure" -c "$1"; }

# costs: one replica behind HAProxy, alone on the private PostgreSQL: per
# submission and per board read, the CPU of the replica, PgBouncer,
# PostgreSQL (every process) and HAProxy, and PostgreSQL's commits, row
# writes and WAL (pg_stat_database, pg_stat_wal, pg_current_wal_lsn), with
# the replica through PgBouncer and directly, in both query modes.
mode_costs() {
	start_cluster
	set_replicas 1
	local stat_sql="SELECT xact_commit, tup_inserted + tup_updated + tup_deleted, (SELECT wal_records FROM pg_stat_wal), (SELECT wal_fpi FROM pg_stat_wal), pg_current_wal_lsn() - '0/0'::pg_lsn FROM pg_stat_database WHERE datname = 'backpressure'"
	measure() { # NAME COMMAND... (the command prints a count of operations on its last line)
		local name="$1"; shift
		sql "CHECKPOINT" >/dev/null
		local before; before=$(sql "$stat_sql")
		local r0 b0 h0 p0; r0=$(cpu_ms "${REPLICA_PIDS[0]}"); b0=$(cpu_ms "$BOUNCER_PID"); h0=$(cpu_ms "$HAPROXY_PID")
		p0=$(pg_cpu_ms)
		local ops; ops=$("$@" | tail -n1)
		local r1 b1 h1 p1; r1=$(cpu_ms "${REPLICA_PIDS[0]}"); b1=$(cpu_ms "$BOUNCER_PID"); h1=$(cpu_ms "$HAPROXY_PID")
		p1=$(pg_cpu_ms)
		local after; after=$(sql "$stat_sql")
		python3 - "$name" "$ops" "$((r1 - r0))" "$((b1 - b0))" "$((h1 - h0))" "$((p1 - p0))" "$before" "$after" <<'PY'
import sys
name, ops = sys.argv[1], int(sys.argv[2])
replica, bouncer, haproxy, pg = (int(x) for x in sys.argv[3:7])
b = [int(x) for x in sys.argv[7].split("|")]; a = [int(x) for x in sys.argv[8].split("|")]
d = [y - x for x, y in zip(b, a)]
print(f"{name}: {ops} in all; per operation: replica {replica/ops:.3f} CPU-ms, PostgreSQL {pg/ops:.3f}, "
      f"PgBouncer {bouncer/ops:.3f}, HAProxy {haproxy/ops:.3f}; commits {d[0]/ops:.2f}, rows written {d[1]/ops:.1f}, "
      f"WAL records {d[2]/ops:.1f}, full-page images {d[3]/ops:.2f}, WAL bytes {d[4]/ops:.0f}")
PY
	}
	submissions() {
		"$WORK/loadgen" run -url "$LB_URL" -db "$DIRECT_DB" -players 32 -duration "$DURATION" -retry 0 -dry-run 0 \
			-reads=false -check=false -json "$WORK/costs-submit.json" >/dev/null
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["acknowledged_submissions"])' "$WORK/costs-submit.json"
	}
	board_reads() {
		"$WORK/loadgen" reads -url "$LB_URL" -path "/v1/challenges/first-request/leaderboard?limit=20" -players 32 -duration "$DURATION"
	}
	# The deployment (through PgBouncer, no named prepared statements)
	# against direct connections with and without them, alternately.
	local configs=("pgbouncer cache_describe $POOLED_DB" "direct cache_describe $DIRECT_DB" "direct cache_statement $DIRECT_DB")
	for round in $(seq 1 "$ROUNDS"); do
		for c in "${configs[@]}"; do
			read -r via mode url <<<"$c"
			kill -TERM "${REPLICA_PIDS[0]}"; wait "${REPLICA_PIDS[0]}" 2>/dev/null || true
			REPLICA_ENV="DATABASE_URL=$url DATABASE_QUERY_MODE=$mode" start_replica 0
			wait_full_service 1 || true
			measure "round $round, $via, $mode: scored submission (no board reads, retries or dry runs)" submissions
			measure "round $round, $via, $mode: top-20 board read" board_reads
		done
	done
}

# pg_cpu_ms: CPU of every process of the private PostgreSQL cluster.
pg_cpu_ms() {
	local master; master=$(head -n1 "$PGDIR/postmaster.pid")
	# shellcheck disable=SC2046
	cpu_ms "$master" $(pgrep -P "$master" | xargs)
}

# event: the crowd of scripts/event.sh (PLAYERS, default 10,000, each
# submitting once in the last WINDOW of an event; READERS standings readers
# and WATCHERS stream watchers) through HAProxy to the three replicas, then
# the finish and the same database check, on the direct connection: no
# acknowledged attempt lost, every entrant once in the final standings.
mode_event() {
	start_cluster
	echo "== $EVENT_PLAYERS players submitting in the last ${WINDOW:-60s} of an event through HAProxy (3 replicas, PgBouncer), ${READERS:-0} standings readers, ${WATCHERS:-0} stream watchers; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	local out="$WORK/event.out"
	"$WORK/loadgen" event -url "$LB_URL" -db "$DIRECT_DB" -admin-token "$ADMIN_TOKEN" -players "$EVENT_PLAYERS" \
		-window "${WINDOW:-60s}" -readers "${READERS:-0}" -watchers "${WATCHERS:-0}" -read-every "${READ_EVERY:-250ms}" \
		-json "$WORK/event.json" >"$out" 2>&1 &
	local lg=$! before="" after=""
	# CPU of every process from the players' registration to the window's
	# end: the event's attempts with their readers and watchers.
	cpu_each() { echo "$(cpu_ms "${REPLICA_PIDS[@]}") $(pg_cpu_ms) $(cpu_ms "$BOUNCER_PID") $(cpu_ms "$HAPROXY_PID") $(cpu_ms "$lg")"; }
	while kill -0 "$lg" 2>/dev/null; do
		if [ -z "$before" ] && grep -q 'players registered' "$out"; then before=$(cpu_each); fi
		if [ -n "$before" ] && grep -q '^window ' "$out"; then after=$(cpu_each); break; fi
		sleep 0.2
	done
	wait "$lg" || fail=1
	cat "$out"
	if [ -n "$after" ] && [ -s "$WORK/event.json" ]; then
		python3 - "$WORK/event.json" "$before" "$after" <<'PY'
import json, sys
acked = json.load(open(sys.argv[1]))["acknowledged_submissions"]
d = [int(a) - int(b) for a, b in zip(sys.argv[3].split(), sys.argv[2].split())]
names = ("replicas", "PostgreSQL", "PgBouncer", "HAProxy", "load generator")
print(f"CPU per acknowledged attempt over the window (with its readers and watchers): {sum(d) / max(acked, 1):.2f} ms: "
      + ", ".join(f"{n} {x / max(acked, 1):.2f}" for n, x in zip(names, d)))
PY
	fi
	for i in 0 1 2; do
		echo "refusals at replica $((i + 1)): $(curl -fsS "http://127.0.0.1:${REPLICA_PORTS[$i]}/metrics" | grep -E '^backpressure_(http_shed_total|sim_pool_rejections_total|rate_limited_total)' | awk '$2 > 0 {printf "%s %s; ", $1, $2}')"
	done
	echo "HAProxy: $(haproxy_cmd "show stat" | awk -F, '$1 == "replicas" && $2 ~ /^s[0-9]/ {printf "%s %s requests, %s 5xx; ", $2, $49, $44}')"
	if [ "$fail" != 0 ]; then echo "CLUSTER EVENT RUN FAILED (state in $WORK)"; exit 1; fi
	echo "CLUSTER EVENT RUN OK"
}

case "$MODE" in
up)
	start_cluster
	echo "players connect to $LB_URL; replicas log to $WORK/replica-*.log. Ctrl-C stops everything."
	wait "$HAPROXY_PID"
	;;
fault) mode_fault ;;
scale) mode_scale ;;
costs) mode_costs ;;
event) mode_event ;;
*) echo "usage: $0 [up|fault|scale|costs|event]"; exit 2 ;;
esac
