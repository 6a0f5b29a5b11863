#!/usr/bin/env bash
# Old build against new, alternately, under the same closed-loop load:
# builds the server at OLD (a checkout, default /work/main) and this tree's,
# then for ROUNDS rounds runs one load run against each (old first in odd
# rounds, new first in even ones), each on a fresh database, and reports per
# run the acknowledged submissions per second and the CPU milliseconds per
# submission of the server, its PostgreSQL backends and the load generator;
# then the medians and the new/old ratios.
#
#   scripts/ab.sh                               # OLD=/work/main, 3 rounds of 15 s, 64 players
#   OLD=../other ROUNDS=5 DURATION=20s scripts/ab.sh
#
# Extra settings for the new server go in NEW_ENV (e.g. NEW_ENV="DATABASE_MAX_CONNS=8"), extra
# loadgen flags in LOADGEN_FLAGS (e.g. LOADGEN_FLAGS="-deadline 60s" on a busy machine).
source "$(dirname "$0")/lib.sh"
OLD="${OLD:-/work/main}" ROUNDS="${ROUNDS:-3}" DURATION="${DURATION:-15s}" PLAYERS="${PLAYERS:-64}"
build
(cd "$OLD" && go build -o "$WORK/server-old" ./cmd/server)
cp "$WORK/server" "$WORK/server-new"
machine
results="$WORK/ab.tsv"
printf 'build\tround\tsubmissions_per_s\tserver_ms\tpg_ms\tloadgen_ms\tsubmit_p99_ms\n' >"$results"
one() { # BUILD ROUND
	local build="$1" round="$2" name="bp_ab_$1_$2"
	local db; db=$(fresh_db "$name")
	cp "$WORK/server-$build" "$WORK/server"
	local extra=()
	[ "$build" = new ] && extra=(${NEW_ENV:-})
	start_server "$db" "${extra[@]}"
	local pids; pids=$(backend_pids "$name")
	local s0 p0; s0=$(cpu_ms "$SERVER_PID"); p0=$(cpu_ms $pids)
	local out="$WORK/ab-$build-$round"
	( "$WORK/loadgen" run -url "$SERVER_URL" -db "$db" -players "$PLAYERS" -duration "$DURATION" \
		-check-ranks=true -json "$out.json" ${LOADGEN_FLAGS:-} >"$out.out" 2>&1; times >"$out.times" )
	pids=$(backend_pids "$name")
	local s1 p1; s1=$(cpu_ms "$SERVER_PID"); p1=$(cpu_ms $pids)
	stop_server "$SERVER_PID"
	grep -q '^OK$' "$out.out" || { echo "run $build $round FAILED:"; cat "$out.out"; exit 1; }
	# times: the second line is the children's user and system time (e.g. 0m3.120s 0m0.410s).
	local lg; lg=$(sed -n 2p "$out.times" | awk '{split($1,a,"m"); split($2,b,"m"); printf "%d", (a[1]*60+a[2]+b[1]*60+b[2])*1000}')
	python3 - "$out.json" "$build" "$round" "$((s1 - s0))" "$((p1 - p0))" "$lg" >>"$results" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
acked = rep["acknowledged_submissions"]
srv, pg, lg = (int(x) for x in sys.argv[4:7])
p99 = rep["routes"]["POST submissions"]["p99_ms"]
print(f"{sys.argv[2]}\t{sys.argv[3]}\t{rep['submissions_per_second']:.1f}\t{srv/acked:.3f}\t{pg/acked:.3f}\t{lg/acked:.3f}\t{p99}")
PY
	tail -n1 "$results"
	psql -q "$PGBASE/postgres" -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
}
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then one old "$round"; one new "$round"; else one new "$round"; one old "$round"; fi
done
python3 - "$results" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
med = {}
for b in ("old", "new"):
    rs = [r for r in rows if r["build"] == b]
    med[b] = {k: statistics.median(float(r[k]) for r in rs) for k in rows[0] if k not in ("build", "round")}
print("medians over %d rounds" % (len(rows) // 2))
print("%-22s %10s %10s %8s" % ("figure", "old", "new", "new/old"))
for k in med["old"]:
    print("%-22s %10.3f %10.3f %8.2f" % (k, med["old"][k], med["new"][k], med["new"][k] / med["old"][k]))
for b in ("old", "new"):
    m = med[b]
    print("%s: %.0f submissions per CPU-second of server + PostgreSQL (%.2f ms each); %.0f counting the load generator" % (
        b, 1000 / (m["server_ms"] + m["pg_ms"]), m["server_ms"] + m["pg_ms"], 1000 / (m["server_ms"] + m["pg_ms"] + m["loadgen_ms"])))
o, n = med["old"], med["new"]
print("per core (server + PostgreSQL CPU per submission), new/old: %.2fx" % ((o["server_ms"] + o["pg_ms"]) / (n["server_ms"] + n["pg_ms"])))
PY
