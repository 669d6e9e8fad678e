#!/usr/bin/env bash
# Agent turns (make bench, issue 29 item 5): a scripted turn's overhead
# through the workflow (BenchmarkTurnThroughput: the whole turn, polled
# until it ended and its workflow closed, minus the same model and tool
# calls made directly) and send_message's latency while the turns the
# earlier messages started run (BenchmarkSendMessage, p50 and p99). Both run
# on the tests' Temporal server (testenv/temporaldev, in memory) and the
# SQLite store; with TEST_DATABASE_URL set (postgres://…) the store is
# Postgres. HOLDCO_TEMPORAL_DEV_BIN should be built without -race (make
# bench does: make temporaldev RACE=). BENCH_TURNS sets the turns timed
# one after another (60), BENCH_MESSAGES the messages sent (200: the p99
# is the third slowest, not the slowest one of 60). Figures go to
# docs/benchmarks.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_TURNS:-60} M=${BENCH_MESSAGES:-200}
# The test binary is built first and each benchmark starts once the
# machine is quiet (scripts/quiet.sh): in make bench the capture flood
# before it leaves its fold and the kernel's writeback behind, which took
# the cores from the turns (a send_message p99 of 427 ms in one run).
. scripts/quiet.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/turns.test" ./service/turns
run() { quiet; (cd service/turns && "$tmp/turns.test" -test.run '^$' -test.bench "$1" -test.benchtime "$2" -test.count 1); }
out=$(run 'BenchmarkTurnThroughput$' "${N}x"
	run 'BenchmarkSendMessage$' "${M}x")
echo "$out" | grep -E '^(Benchmark|PASS|FAIL)' || true
# metric UNIT: the value before the unit on the benchmark's line.
metric() { echo "$out" | awk -v b="$1" -v u="$2" '$1 ~ "^"b"(-[0-9]+)?$" { for (i = 3; i <= NF; i++) if ($i == u) print $(i-1) }'; }
turn=$(metric BenchmarkTurnThroughput µs/turn) direct=$(metric BenchmarkTurnThroughput µs/direct)
p50=$(metric BenchmarkSendMessage p50-µs) p99=$(metric BenchmarkSendMessage p99-µs)
[ -n "$turn" ] && [ -n "$direct" ] && [ -n "$p50" ] && [ -n "$p99" ] || { echo "bench_turns: a benchmark printed no figures" >&2; exit 1; }
awk -v m="$M" -v turn="$turn" -v direct="$direct" -v p50="$p50" -v p99="$p99" -v store="${TEST_DATABASE_URL:+postgres}" 'BEGIN {
	if (store == "") store = "sqlite"
	over = (turn - direct) / 1000
	printf "\nturns (%s store, in-memory Temporal)\n", store
	printf "| what | figure | target |\n|---|---|---|\n"
	printf "| scripted turn, whole | %.1f ms | |\n", turn / 1000
	printf "| the same calls made directly | %.2f ms | |\n", direct / 1000
	printf "| overhead per turn | %.1f ms | <= 100 ms %s |\n", over, (over <= 100 ? "ok" : "MISSED")
	printf "| send_message p50 while turns run (%d messages) | %.1f ms | |\n", m, p50 / 1000
	printf "| send_message p99 while turns run | %.1f ms | <= 40 ms %s |\n", p99 / 1000, (p99 / 1000 <= 40 ? "ok" : "MISSED")
}'
