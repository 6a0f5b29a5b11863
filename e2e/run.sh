#!/usr/bin/env bash
# End-to-end test of the web client: builds the server and starts two replicas of it on free
# loopback ports, both on one PostgreSQL database created for the run (and dropped at exit),
# then drives Debian's Chromium headless with playwright-core through node's test runner
# (every e2e/*.test.js, one file at a time). Most tests play against replica A; the events
# test watches a page served by replica B while a player submits through A. Screenshots land
# in artifacts/e2e/ (kept out of git), with the servers' logs. Exits non-zero when anything
# fails.
#
#   bash e2e/run.sh                       # what CI runs (needs PostgreSQL, below)
#   E2E_PG=postgres://postgres@db:5432 bash e2e/run.sh   # PostgreSQL elsewhere
#   E2E_TESTS=events.test.js bash e2e/run.sh             # one file only
#   E2E_BASE_URL=http://127.0.0.1:8080 E2E_BASE_URL_B=http://127.0.0.1:8081 \
#   E2E_ADMIN_TOKEN=… bash e2e/run.sh      # against replicas already running
#
# PostgreSQL: E2E_PG (default postgres://postgres@127.0.0.1:5432) must let its user create
# databases; createdb and dropdb (PostgreSQL's client tools) must be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
art="$root/artifacts/e2e"
rm -rf "$art"
mkdir -p "$art"

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
	echo "== e2e: installing chromium from Debian's packages"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
	chromium=/usr/bin/chromium
fi

echo "== e2e: npm ci"
(cd e2e && npm ci --no-audit --no-fund --loglevel=error)

pids=()
db=""
pg=${E2E_PG:-postgres://postgres@127.0.0.1:5432}
tmp=$(mktemp -d)
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ -n "$db" ]; then dropdb --force --if-exists --maintenance-db="$pg/postgres" "$db" || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# start_replica NAME starts one server on the run's database and waits until it is healthy;
# it sets $url.
start_replica() {
	local name=$1 port
	port=$(free_port)
	HOST=127.0.0.1 PORT="$port" LOG_FORMAT=text DATABASE_URL="$dburl" ADMIN_TOKEN="$admin" \
		"$tmp/bp-server" >"$art/server-$name.log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	url="http://127.0.0.1:$port"
	healthy() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$url/healthz"; }
	for _ in $(seq 1 300); do
		if healthy; then return 0; fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "replica $name exited:"
			cat "$art/server-$name.log"
			exit 1
		fi
		sleep 0.1
	done
	echo "replica $name did not become healthy:"
	cat "$art/server-$name.log"
	exit 1
}

base=${E2E_BASE_URL:-}
base_b=${E2E_BASE_URL_B:-$base}
admin=${E2E_ADMIN_TOKEN:-}
if [ -z "$base" ]; then
	echo "== e2e: building the server"
	if ! pg_isready -q -d "$pg/postgres"; then
		echo "the e2e needs PostgreSQL at ${pg#*@} (set E2E_PG to another postgres://user@host:port)"
		exit 1
	fi
	go build -o "$tmp/bp-server" ./cmd/server
	db="bp_e2e_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
	echo "== e2e: database $db on ${pg#*@}"
	createdb --maintenance-db="$pg/postgres" "$db"
	dburl="$pg/$db?sslmode=disable"
	admin=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
	start_replica a
	base=$url
	start_replica b
	base_b=$url
fi

echo "== e2e: playing in Chromium against $base (replica A) and $base_b (replica B)"
cd e2e
BASE_URL="$base" BASE_URL_B="$base_b" ADMIN_TOKEN="$admin" ARTIFACTS="$art" CHROMIUM="$chromium" \
	node --test --test-concurrency=1 --test-reporter=spec ${E2E_TESTS:-./*.test.js}
