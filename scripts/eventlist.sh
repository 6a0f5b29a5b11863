#!/usr/bin/env bash
# The event list at scale: EVENTS events (default 20,000: a third upcoming,
# a third live, a third finished, each with 100 hidden chaos events that no
# list may carry) seeded in SQL, then one server started on them. It reads
# the first page of GET /v1/events (the default and limit=100, unfiltered
# and by each phase) and prints the largest in bytes (it must be under
# 100 KB), then READERS (8) page through the whole list for DURATION (10s)
# and it prints the server's memory (VmRSS, VmHWM) before and after: the
# growth must be under 64 MiB.
#
#   scripts/eventlist.sh
#   EVENTS=2000 DURATION=3s scripts/eventlist.sh   # the CI version
source "$(dirname "$0")/lib.sh"
EVENTS="${EVENTS:-20000}" READERS="${READERS:-8}" DURATION="${DURATION:-10s}"
MAX_GROWTH_KB=$((64 * 1024))
build
machine
dbname="bp_eventlist_$$"
db=$(fresh_db "$dbname")
# Migrated and the campaign loaded by a first start; the events go in behind
# its back, and the replica measured starts on them.
start_server "$db"
stop_server "$SERVER_PID"
SERVER_PIDS=()
psql -q -v ON_ERROR_STOP=1 "$db" -v events="$EVENTS" <<'SQL'
CREATE TEMP TABLE seeded AS
SELECT gen_random_uuid() AS id, i,
	CASE i % 3 WHEN 0 THEN 'upcoming' WHEN 1 THEN 'live' ELSE 'finished' END AS phase
FROM generate_series(1, :events) i;
INSERT INTO events (id, slug, version, title, briefing, starts_at, ends_at, attempt_limit, join_required,
	max_entrants, final, hidden_chaos, hidden_resilience, created_at, finished_at)
SELECT s.id, l.slug, l.version, 'Seeded event ' || s.i,
	repeat('Hold the line while the traffic triples and a replica falls over. ', 4),
	CASE s.phase WHEN 'upcoming' THEN now() + make_interval(mins => s.i) ELSE now() - make_interval(mins => s.i + 120) END,
	CASE s.phase WHEN 'finished' THEN now() - make_interval(mins => s.i + 60) ELSE now() + make_interval(mins => s.i + 1440) END,
	0, false, 100000, 'best',
	(SELECT json_agg(json_build_object('kind', 'traffic_spike', 'at_sec', k, 'duration_sec', 5,
		'params', json_build_object('multiplier', 3))) FROM generate_series(1, 100) k),
	'{"error_ceiling": 0.05, "recovery_deadline_sec": 30}'::json,
	now() - interval '1 day',
	CASE s.phase WHEN 'finished' THEN now() - make_interval(mins => s.i + 59) END
FROM seeded s,
	(SELECT slug, version FROM levels WHERE slug = 'first-request' ORDER BY version DESC LIMIT 1) l;
INSERT INTO event_buckets (event_id, lo_ns, lo_at, lo_player_id, n)
SELECT id, -9223372036854775808, '1970-01-01T00:00:00Z', '00000000-0000-0000-0000-000000000000', 0 FROM seeded;
INSERT INTO event_counts (event_id, shard) SELECT id, g FROM seeded, generate_series(0, 15) g;
ANALYZE events;
SQL
echo "== $EVENTS events seeded ($(psql -tA "$db" -c "SELECT pg_size_pretty(pg_total_relation_size('events'))") in the events table); load average $(cut -d' ' -f1-3 /proc/loadavg)"
start_server "$db"
memory() { awk '/^VmRSS|^VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$SERVER_PID/status"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }
echo "server memory when ready: $(memory)"
before=$(rss_kb)
fail=0
"$WORK/loadgen" eventlist -url "$SERVER_URL" -readers "$READERS" -duration "$DURATION" || fail=1
echo "server memory after:  $(memory)"
after=$(rss_kb)
echo "RSS growth from ready: $(((after - before) / 1024)) MiB ($((after - before)) kB) after the first pages and $READERS readers for $DURATION; load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ $((after - before)) -lt "$MAX_GROWTH_KB" ] || { echo "FAILED: the server grew by 64 MiB or more"; fail=1; }
stop_server "$SERVER_PID"
psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null
[ "$fail" = 0 ] || exit 1
echo "EVENT LIST RUN OK"
