#!/usr/bin/env bash
# Old builds against new, alternately, under the same closed-loop load:
# builds the server at each old checkout (OLD, default /work/main, or
# several in OLDS) and this tree's, then for ROUNDS rounds runs one load run
# against each build, the order rotating from round to round (two builds:
# old first in odd rounds, new first in even ones), each on a fresh
# database, and reports per run the acknowledged submissions per second and
# the CPU milliseconds per submission of the server, its PostgreSQL
# backends and the load generator; then the medians and the ratios of the
# new build to each old one.
#
#   scripts/ab.sh                               # OLD=/work/main, 3 rounds of 15 s, 64 players
#   OLD=../other ROUNDS=5 DURATION=20s scripts/ab.sh
#   OLDS="/tmp/old-a /tmp/old-b" ROUNDS=5 scripts/ab.sh   # builds named by their directories
#   OLD=none scripts/ab.sh                      # this tree alone (scripts/benchmarks.sh)
#
# Extra settings for the new server go in NEW_ENV (e.g. NEW_ENV="DATABASE_MAX_CONNS=8"), extra
# loadgen flags in LOADGEN_FLAGS (e.g. LOADGEN_FLAGS="-deadline 60s" on a busy machine).
source "$(dirname "$0")/lib.sh"
OLD="${OLD:-/work/main}" ROUNDS="${ROUNDS:-3}" DURATION="${DURATION:-15s}" PLAYERS="${PLAYERS:-64}"
OLDS="${OLDS:-$OLD}"
build
BUILDS=()
for dir in $OLDS; do
	[ "$dir" = none ] && continue
	name=$(basename "$dir" | tr -c 'a-zA-Z0-9_\n' _)
	[ ${#BUILDS[@]} = 0 ] && [ "$(echo $OLDS | wc -w)" = 1 ] && name=old
	(cd "$dir" && go build -o "$WORK/server-$name" ./cmd/server)
	BUILDS+=("$name")
done
cp "$WORK/server" "$WORK/server-new"
BUILDS+=(new)
machine
results="$WORK/ab.tsv"
printf 'build\tround\tsubmissions_per_s\tserver_ms\tpg_ms\tloadgen_ms\tsubmit_p99_ms\n' >"$results"
one() { # BUILD ROUND
	local build="$1" round="$2" name; name=$(echo "bp_ab_$1_$2" | tr 'A-Z' 'a-z' | cut -c1-60)
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
n=${#BUILDS[@]}
for round in $(seq 1 "$ROUNDS"); do
	for i in $(seq 0 $((n - 1))); do one "${BUILDS[$(( (i + round - 1) % n ))]}" "$round"; done
done
python3 - "$results" "${BUILDS[@]}" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
builds = sys.argv[2:]
keys = [k for k in rows[0] if k not in ("build", "round")]
med = {b: {k: statistics.median(float(r[k]) for r in rows if r["build"] == b) for k in keys} for b in builds}
print("medians over %d rounds" % (len(rows) // len(builds)))
olds = builds[:-1]
print("%-22s" % "figure" + "".join("%12s" % b[:12] for b in builds) + "".join("%14s" % ("new/" + o[:10]) for o in olds))
for k in keys:
    print("%-22s" % k + "".join("%12.3f" % med[b][k] for b in builds) + "".join("%14.2f" % (med["new"][k] / med[o][k]) for o in olds))
for b in builds:
    m = med[b]
    print("%s: %.0f submissions per CPU-second of server + PostgreSQL (%.2f ms each); %.0f counting the load generator" % (
        b, 1000 / (m["server_ms"] + m["pg_ms"]), m["server_ms"] + m["pg_ms"], 1000 / (m["server_ms"] + m["pg_ms"] + m["loadgen_ms"])))
n = med["new"]
for o in olds:
    m = med[o]
    print("per core (server + PostgreSQL CPU per submission), new/%s: %.2fx" % (o, (m["server_ms"] + m["pg_ms"]) / (n["server_ms"] + n["pg_ms"])))
# The same from each round's own ratio (builds of one round ran next to each other).
for o in olds:
    per = []
    for r in sorted({r["round"] for r in rows}):
        a = [x for x in rows if x["round"] == r and x["build"] == o]
        c = [x for x in rows if x["round"] == r and x["build"] == "new"]
        if a and c:
            per.append((float(a[0]["server_ms"]) + float(a[0]["pg_ms"])) / (float(c[0]["server_ms"]) + float(c[0]["pg_ms"])))
    print("per core, rounds' own ratios new/%s: %s (median %.2fx)" % (o, " ".join("%.2f" % x for x in per), statistics.median(per)))
PY
