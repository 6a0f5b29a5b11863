#!/usr/bin/env bash
# End-to-end test of the web client: builds and starts the server on a free loopback port
# (in-memory store: DATABASE_URL is unset), then drives Debian's Chromium headless with
# playwright-core through node's test runner. Screenshots land in artifacts/e2e/ (kept out
# of git), with the server's log. Exits non-zero when anything fails.
#
#   bash e2e/run.sh                       # what CI runs
#   E2E_BASE_URL=http://127.0.0.1:8080 bash e2e/run.sh   # against a server already running
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

pid=""
tmp=$(mktemp -d)
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

base=${E2E_BASE_URL:-}
if [ -z "$base" ]; then
	echo "== e2e: building the server"
	go build -o "$tmp/bp-server" ./cmd/server
	port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
	env -u DATABASE_URL HOST=127.0.0.1 PORT="$port" LOG_FORMAT=text "$tmp/bp-server" >"$art/server.log" 2>&1 &
	pid=$!
	base="http://127.0.0.1:$port"
	healthy() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$base/healthz"; }
	for _ in $(seq 1 100); do
		if healthy; then break; fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "the server exited:"
			cat "$art/server.log"
			exit 1
		fi
		sleep 0.1
	done
	if ! healthy; then
		echo "the server did not become healthy:"
		cat "$art/server.log"
		exit 1
	fi
fi

echo "== e2e: playing in Chromium against $base"
cd e2e
BASE_URL="$base" ARTIFACTS="$art" CHROMIUM="$chromium" node --test --test-concurrency=1 --test-reporter=spec ./*.test.js
