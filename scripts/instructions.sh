#!/usr/bin/env bash
# Exact instructions per iteration of one Go benchmark, for comparing two builds on a
# noisy machine: callgrind counts instructions, not seconds, so the figure does not depend
# on what else the machine is doing.
#
#   go test -c -o /tmp/ch.test ./internal/challenges
#   scripts/instructions.sh /tmp/ch.test '^BenchmarkEvaluateCampaign$/^black-friday$' 10
#
# It runs the test binary under callgrind twice, at -test.benchtime 1x and (N+1)x, and
# prints the difference ÷ N, so the binary's start-up (loading and checking the campaign)
# cancels out. GOGC=off keeps a collection landing in one run and not the other from
# moving the count (allocation is measured apart, with -test.benchmem);
# GODEBUG=asyncpreemptoff=1 keeps Go's preemption signals out of valgrind's way.
set -euo pipefail
if [ "$#" -lt 2 ]; then
	echo "usage: $0 TEST_BINARY BENCH_REGEXP [N]" >&2
	exit 2
fi
binary=$1 pattern=$2 n=${3:-10}
command -v valgrind >/dev/null || { echo "valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 1; }

count() {
	# Valgrind 3.19 stops a run with SIGILL at RDTSCP, which the Go runtime's lock spinning
	# may execute: cpu.rdtscp=off keeps the runtime from it, and a run that stops all the
	# same still reports a (short) count, so it is taken again.
	local out try
	for try in 1 2 3 4 5 6 7 8 9 10 11 12; do
		out=$(GOGC=off GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$binary" -test.run '^$' -test.bench "$pattern" -test.benchtime "$1x" -test.cpu 1 2>&1 || true)
		if ! grep -q SIGILL <<<"$out" && grep -q '^PASS' <<<"$out"; then
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out"
			return
		fi
	done
	echo "$0: no run of $binary finished cleanly in 12 tries" >&2
	exit 1
}
once=$(count 1)
more=$(count $((n + 1)))
awk -v a="$once" -v b="$more" -v n="$n" 'BEGIN { printf "%.3f M instructions per op\n", (b - a) / n / 1e6 }'
