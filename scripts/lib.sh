# Shared by the load, fault and scale scripts: build the binaries, make a
# fresh database, start and stop a server. Source it; do not run it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGBASE="${PGBASE:-postgres://postgres@127.0.0.1:5432}"
WORK="${WORK:-$(mktemp -d /tmp/bp-scripts.XXXXXX)}"
SERVER_PIDS=()

build() {
	(cd "$ROOT" && go build -o "$WORK/server" ./cmd/server && go build -o "$WORK/loadgen" ./cmd/loadgen)
}

# fresh_db NAME: drops and creates database NAME on $PGBASE; prints its URL.
fresh_db() {
	psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
	echo "$PGBASE/$1?sslmode=disable"
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server DBURL [ENV=VALUE...]: starts a server on a free port, waits
# until it is ready; sets SERVER_URL and SERVER_PID.
start_server() {
	local db="$1"; shift
	local port; port=$(free_port)
	env HOST=127.0.0.1 PORT="$port" DATABASE_URL="$db" LOG_LEVEL="${LOG_LEVEL:-warn}" \
		RATE_LIMIT_IP=0 RATE_LIMIT_PLAYER=0 RATE_LIMIT_SIM=0 MAX_INFLIGHT_PER_CLIENT=1000000 "$@" \
		"$WORK/server" >>"$WORK/server-$port.log" 2>&1 &
	SERVER_PID=$!
	SERVER_PIDS+=("$SERVER_PID")
	SERVER_URL="http://127.0.0.1:$port"
	# Up to a minute: the first start on a database seeded behind the server's back (the
	# scale run's 20,000 players) catches up before it is ready, 15-20 s on 2 cores.
	for _ in $(seq 1 600); do
		if curl -fsS "$SERVER_URL/readyz" >/dev/null 2>&1; then return 0; fi
		kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server-$port.log"; return 1; }
		sleep 0.1
	done
	echo "server did not become ready"; cat "$WORK/server-$port.log"; return 1
}

# stop_server PID: SIGTERM and wait.
stop_server() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

cleanup() {
	for pid in "${SERVER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${SERVER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

machine() {
	echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(psql -tA "$PGBASE/postgres" -c 'SHOW server_version'), $(go version | cut -d' ' -f3)"
}

# cpu_ms PID...: user+system CPU milliseconds the processes have used so far
# (0 for a process that is gone).
cpu_ms() {
	local hz; hz=$(getconf CLK_TCK)
	local total=0 pid t
	for pid in "$@"; do
		t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)
		total=$((total + t))
	done
	echo $((total * 1000 / hz))
}

# backend_pids DBNAME: the PostgreSQL backends connected to a database.
backend_pids() {
	psql -tA "$PGBASE/postgres" -c "SELECT pid FROM pg_stat_activity WHERE datname = '$1' AND pid <> pg_backend_pid()" | xargs
}
