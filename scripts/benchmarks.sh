#!/usr/bin/env bash
# Regenerates the rows of BENCHMARKS.md's "Current figures" that one machine can retake
# unattended, and prints them in the table's form: figure, command, machine, date and the
# load average (1 min) before the step and after it. A row whose step started above
# MAX_LOAD (2) says so and must not be published: the machine was busy. The load after a
# server run is the run's own (server, PostgreSQL and clients filling the two cores).
#
#   scripts/benchmarks.sh                          # engine, campaign, hint, submissions, latency
#   STEPS="engine campaign" scripts/benchmarks.sh  # a subset (go benchmarks only: no database)
#   STEPS="event scale flood streams" scripts/benchmarks.sh   # the long runs; their own output is the figure
#   COUNT=3 STEPS=engine scripts/benchmarks.sh     # fewer repetitions (default 5)
#   ROUNDS=1 DURATION=3s PLAYERS=8 STEPS="submissions latency" scripts/benchmarks.sh   # a smoke test
#
# The go benchmarks run on one core (-cpu 1) and report the median over COUNT runs of the
# benchmark's own ns/op. "submissions" runs scripts/ab.sh on this tree alone (OLD=none) and
# "latency" scripts/load.sh paced at 80% of the submissions a second it found.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STEPS="${STEPS:-engine campaign hint submissions latency}"
COUNT="${COUNT:-5}" MAX_LOAD="${MAX_LOAD:-2}"
ROUNDS="${ROUNDS:-3}" DURATION="${DURATION:-15s}" PLAYERS="${PLAYERS:-64}"
OUT="$(mktemp -d /tmp/bp-benchmarks.XXXXXX)"
TODAY="$(date -u +%F)"
MACHINE="$(nproc) vCPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB, $(go version | cut -d' ' -f3)"
ROWS=()

load_now() { cut -d' ' -f1 /proc/loadavg; }

# step NAME COMMAND...: runs COMMAND with its output in $OUT/NAME.txt and sets LOAD to the
# 1-minute load average before it (BEFORE) and after it (LOAD, "before / after").
step() {
	local name="$1"; shift
	# The run before leaves its own load: wait up to two minutes for it to fall.
	for _ in $(seq 1 24); do
		awk -v l="$(load_now)" -v m="$MAX_LOAD" 'BEGIN { exit !(l <= m) }' && break
		sleep 5
	done
	local before; before=$(load_now)
	echo "== $name: $*  (load average $before)" >&2
	"$@" >"$OUT/$name.txt" 2>&1 || { cat "$OUT/$name.txt" >&2; echo "$name failed" >&2; exit 1; }
	BEFORE=$before
	LOAD="$before / $(load_now)"
}

# row WHAT FIGURE COMMAND: one row of the table, with today's date and the step's load.
row() {
	local note=""
	awk -v l="$BEFORE" -v m="$MAX_LOAD" 'BEGIN { exit !(l > m) }' && note=" (above $MAX_LOAD: do not publish)"
	ROWS+=("| $1 | $2 | \`$3\` | $MACHINE | $TODAY | $LOAD$note |")
}

# bench_ms FILE: per benchmark name, the median ns/op over its runs, in ms; then the
# geometric mean, the smallest and the largest over the names (for sub-benchmarks).
bench_ms() {
	python3 - "$1" <<'PY'
import math, re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(2)) / 1e6)
med = {k: statistics.median(v) for k, v in runs.items()}
if not med:
    sys.exit("no benchmark results")
for k, v in med.items():
    print(f"{k}\t{v:.3f}")
lo, hi = min(med, key=med.get), max(med, key=med.get)
geo = math.exp(sum(math.log(v) for v in med.values()) / len(med))
print(f"summary\t{geo:.3f}\t{lo.rsplit('/', 1)[-1]}\t{med[lo]:.3f}\t{hi.rsplit('/', 1)[-1]}\t{med[hi]:.3f}")
PY
}

gobench() { # PACKAGE PATTERN BENCHTIME
	go test -run '^$' -bench "$2" -benchtime "$3" -count "$COUNT" -cpu 1 -benchmem "$1"
}

submissions_per_second=""
for s in $STEPS; do
	case "$s" in
	engine)
		cmd="go test -run '^\$' -bench '^BenchmarkRun\$/components=20/ticks=6000\$' -benchtime 10x -cpu 1 ./internal/sim/"
		step engine gobench ./internal/sim/ '^BenchmarkRun$/components=20/ticks=6000$' 10x
		ms=$(bench_ms "$OUT/engine.txt" | awk -F'\t' '$1 == "summary" { print $2 }')
		row "Engine run, 20 components × 6,000 ticks" "$ms ms a run (median of $COUNT)" "$cmd"
		;;
	campaign)
		cmd="go test -run '^\$' -bench '^BenchmarkVerdictCampaign\$' -benchtime 10x -cpu 1 -benchmem ./internal/challenges/"
		step campaign gobench ./internal/challenges/ '^BenchmarkVerdictCampaign$' 10x
		IFS=$'\t' read -r _ geo lo lo_ms hi hi_ms < <(bench_ms "$OUT/campaign.txt" | grep '^summary')
		row "Campaign evaluation, a scored submission's run (\`Level.Verdict\`)" "$lo_ms ms ($lo) to $hi_ms ms ($hi), geometric mean $geo ms" "$cmd"
		;;
	hint)
		cmd="go test -run '^\$' -bench '^BenchmarkHint\$' -benchtime 3x -cpu 1 ./internal/challenges/"
		step hint gobench ./internal/challenges/ '^BenchmarkHint$' 3x
		IFS=$'\t' read -r _ geo lo lo_ms hi hi_ms < <(bench_ms "$OUT/hint.txt" | grep '^summary')
		row "Fix-hint search" "$lo_ms ms ($lo) to $hi_ms ms ($hi), geometric mean $geo ms" "$cmd"
		;;
	submissions)
		cmd="OLD=none ROUNDS=$ROUNDS DURATION=$DURATION PLAYERS=$PLAYERS scripts/ab.sh"
		step submissions env OLD=none ROUNDS="$ROUNDS" DURATION="$DURATION" PLAYERS="$PLAYERS" bash scripts/ab.sh
		submissions_per_second=$(awk '$1 == "submissions_per_s" { printf "%.0f", $2 }' "$OUT/submissions.txt")
		cpu=$(sed -n 's/^new: .*(\([0-9.]*\) ms each).*/\1/p' "$OUT/submissions.txt")
		row "Scored submissions a second, one replica and its PostgreSQL ($PLAYERS closed-loop players)" "$submissions_per_second /s" "$cmd"
		row "CPU per scored submission (server + PostgreSQL)" "$cpu ms" "$cmd"
		;;
	latency)
		rate=$(( ${submissions_per_second:-600} * 8 / 10 ))
		cmd="RATE=$rate PLAYERS=$PLAYERS DURATION=$DURATION RUNS=$ROUNDS scripts/load.sh"
		step latency env RATE="$rate" PLAYERS="$PLAYERS" DURATION="$DURATION" RUNS="$ROUNDS" bash scripts/load.sh
		p99=$(awk '$1 == "POST" && $2 == "submissions" && NF == 4 { print $4 }' "$OUT/latency.txt" | tail -n1)
		row "Submission p99 at 80% of saturation ($rate /s paced)" "$p99 ms" "$cmd"
		;;
	event | scale | flood | streams)
		step "$s" bash "scripts/$s.sh"
		tail -n 20 "$OUT/$s.txt"
		row "scripts/$s.sh: the figures in its output ($OUT/$s.txt)" "see output" "scripts/$s.sh"
		;;
	*)
		echo "unknown step $s (engine campaign hint submissions latency event scale flood streams)" >&2
		exit 2
		;;
	esac
done

echo
echo "| what | figure | command | machine | date | load avg |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "raw output: $OUT"
