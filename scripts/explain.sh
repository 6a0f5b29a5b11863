#!/usr/bin/env bash
# EXPLAIN (ANALYZE, BUFFERS) of the exact queries the server runs for each
# leaderboard route: starts a server whose database sessions load
# auto_explain (logging every statement's plan to the PostgreSQL log), makes
# one request of each kind, and prints the plans from the log.
#
#   scripts/explain.sh DBURL   (a database seeded by scripts/scale.sh with KEEP_DB=1)
source "$(dirname "$0")/lib.sh"
db="$1"
PGLOG="${PGLOG:-$(ls -t /var/log/postgresql/postgresql-*-main.log | head -n1)}"
[ -x "$WORK/server" ] || build
app="bp_explain_$$"
opts="-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c auto_explain.log_timing=on -c application_name=$app"
# PGOPTIONS reaches every session the server's driver opens.
start_server "$db" PGOPTIONS="$opts"
token_of() { python3 -c 'import sys,hashlib,base64; print("bp_"+base64.urlsafe_b64encode(hashlib.sha256(("scale-"+sys.argv[1]).encode()).digest()).decode().rstrip("="))' "$1"; }
tok=$(token_of 123457)
request() { # NAME PATH [TOKEN]
	local before; before=$(wc -l <"$PGLOG")
	curl -fsS -o /dev/null ${3:+-H "Authorization: Bearer $3"} "$SERVER_URL$2"
	sleep 0.5
	echo "### $1: GET $2"
	echo '```'
	tail -n +"$((before + 1))" "$PGLOG" | grep -v 'BEGIN\|COMMIT\|statement: \|SET TRANSACTION' | sed -E 's/^[0-9-]+ [0-9:.]+ UTC \[[0-9]+\] [a-z_]+@[a-z_]+ //'
	echo '```'
}
request "top-100 page, level board" "/v1/challenges/first-request/leaderboard?limit=100"
request "top-100 page, global board" "/v1/leaderboard?limit=100"
request "exact rank of a player (level)" "/v1/challenges/first-request/leaderboard?around=me&limit=1" "$tok"
request "100 around a player (level)" "/v1/challenges/first-request/leaderboard?around=me&limit=100" "$tok"
request "100 around a player (global)" "/v1/leaderboard?around=me&limit=100" "$tok"
