#!/usr/bin/env bash
# A replica's readiness on a database whose players' name keys are of an older rule: gives
# a fresh database PLAYERS players keyed by their plain names (one INSERT), starts a
# replica, and times it to /readyz and to its log line "rekeyed player names" (the
# background rekey, 2,000 players a statement), then counts the keys left old.
#
#   scripts/rekey.sh                 # 1,000,000 players
#   PLAYERS=20000 scripts/rekey.sh
source "$(dirname "$0")/lib.sh"
PLAYERS="${PLAYERS:-1000000}"
build
machine
db=$(fresh_db bp_rekey)
start_server "$db"
first=$SERVER_PID
psql -q "$db" -c "INSERT INTO players (id, name, name_key, role, token_hash, created_at)
  SELECT md5('rk' || i)::uuid, 'p' || i, 'p' || i, 'player', sha256(convert_to('rk' || i, 'UTF8')), now()
  FROM generate_series(1, $PLAYERS) i"
stop_server "$first"
rm -f "$WORK"/server-*.log
started=$(date +%s%N)
LOG_LEVEL=info start_server "$db"
echo "replica ready in $(( ($(date +%s%N) - started) / 1000000 )) ms on $PLAYERS players with old name keys"
for _ in $(seq 1 1200); do
	grep -q "rekeyed player names" "$WORK"/server-*.log && break
	sleep 0.5
done
echo "rekeyed $(grep -ho '"rekeyed":[0-9]*' "$WORK"/server-*.log | head -1 | cut -d: -f2) players by $(( ($(date +%s%N) - started) / 1000000 )) ms after the start"
old=$(psql -tA "$db" -c "SELECT count(*) FROM players WHERE name_key NOT LIKE 's3:%' OR name_lower_key IS NULL")
echo "old keys left: $old"
cleanup
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS bp_rekey WITH (FORCE)" >/dev/null
[ "$old" = 0 ]
