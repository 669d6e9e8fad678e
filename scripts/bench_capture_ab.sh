#!/usr/bin/env bash
# Capture's rate, build A against build B (a change to the writer, a
# runtime setting): scripts/bench_capture_ab.sh BIN_A BIN_B [ROUNDS].
# Both servers run side by side (SQLite; BENCH_AB_POSTGRES=1: each on a
# fresh Postgres database of its own), each with a company. A round is:
# the bare POST handler, A's capture row and B's (the order swapped every
# other round, so that neither always runs second), the bare handler
# again; every row starts once the machine is quiet (scripts/quiet.sh),
# after the other server's fold and the kernel's writeback. Each round
# prints capture's ratio to the round's bare handler for A and B and B's
# rate over A's; the last line gives the medians. One run of
# scripts/bench_analytics.sh per build, minutes apart, differs by ±20 %
# on a shared 2-core machine; eight rounds here tell a 5–10 % change
# (docs/benchmarks.md, Analytics, eighth pass). BENCH_SECONDS sets each
# row's length (default 3); BENCH_PORT_BASE moves the ports.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BIN_A BIN_B [ROUNDS]" >&2; exit 2; }
A=$1 B=$2 ROUNDS=${3:-8}
cd "$(dirname "$0")/.."
. scripts/quiet.sh
command -v wrk >/dev/null || { echo "installing wrk (Debian)"; apt-get install -y wrk >/dev/null || sudo apt-get install -y wrk >/dev/null; }
SECS=${BENCH_SECONDS:-3}
base=${BENCH_PORT_BASE:-0}
BARE_PORT=$((18591 + base)) PORT_A=$((18600 + base)) PORT_B=$((18700 + base))
PG_ADMIN=${BENCH_PG_ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}
mkdir -p .cache/bin
go build -o .cache/bin/barehttp ./scripts/barehttp
go build -o .cache/bin/benchtoken ./scripts/benchtoken

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	if [ "${BENCH_AB_POSTGRES:-0}" = 1 ]; then
		psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS holdco_bench_a" -c "DROP DATABASE IF EXISTS holdco_bench_b" || true
	fi
}
trap cleanup EXIT
.cache/bin/barehttp -addr 127.0.0.1:$BARE_PORT & pids+=($!)

start() { # name binary port
	local data=.cache/bench-ab-$1 db=""
	rm -rf "$data"
	if [ "${BENCH_AB_POSTGRES:-0}" = 1 ]; then
		psql -q "$PG_ADMIN" -c "DROP DATABASE IF EXISTS holdco_bench_$1" -c "CREATE DATABASE holdco_bench_$1"
		db=${PG_ADMIN%%\?*}
		db="${db%/*}/holdco_bench_$1?sslmode=disable"
	fi
	DATABASE_URL=$db HOLDCO_DATA_DIR=$data HOLDCO_API_ADDR=127.0.0.1:$3 HOLDCO_SITES_ADDR=127.0.0.1:0 HOLDCO_MCP_ADDR=127.0.0.1:0 \
		HOLDCO_OAUTH_ADDR=127.0.0.1:0 HOLDCO_WORKER_HEALTH_ADDR=127.0.0.1:0 HOLDCO_TEMPORAL_PORT=$(($3 + 50)) HOLDCO_TEMPORAL_UI_PORT=0 \
		HOLDCO_LOG_LEVEL=warn HOLDCO_ANALYTICS_ADDRESS_RATE=0 HOLDCO_ANALYTICS_KEY_RATE=0 \
		"$2" serve >/dev/null 2>".cache/bench-ab-$1.log" &
	pids+=($!)
}
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
key() { # port: a company's public analytics key
	local api=http://127.0.0.1:$1 pat cong co
	until curl -fs "$api/health" >/dev/null 2>&1; do sleep 0.1; done
	pat=$(.cache/bin/benchtoken -api "$api" -email capture-ab@example.com)
	cong=$(curl -fs -H "Authorization: Bearer $pat" "$api/auth/me" | field conglomerate_id)
	co=$(curl -fs -H "Authorization: Bearer $pat" -H 'Content-Type: application/json' -d '{"name":"Bench Site"}' \
		"$api/conglomerates/$cong/companies" | field id | head -1)
	curl -fs -H "Authorization: Bearer $pat" "$api/companies/$co/analytics/summary?range=1d" | field key
}
start a "$A" $PORT_A
start b "$B" $PORT_B
KEY_A=$(key $PORT_A) KEY_B=$(key $PORT_B)

row() { # key url: requests/s once the machine is quiet
	quiet
	HOLDCO_BENCH_KEY=$1 wrk -t2 -c64 -d"${SECS}s" -s scripts/benchanalytics/event.lua "$2" | awk '/Requests\/sec/{print $2}'
}
CAP_A=http://127.0.0.1:$PORT_A/analytics/e/ CAP_B=http://127.0.0.1:$PORT_B/analytics/e/ BARE=http://127.0.0.1:$BARE_PORT/
row "$KEY_A" "$CAP_A" >/dev/null # warm-up
row "$KEY_B" "$CAP_B" >/dev/null
echo "capture, A: $A, B: $B (wrk -t2 -c64 -d${SECS}s rows)"
out=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
	bare1=$(row - "$BARE")
	if [ $((round % 2)) = 1 ]; then
		a=$(row "$KEY_A" "$CAP_A") b=$(row "$KEY_B" "$CAP_B")
	else
		b=$(row "$KEY_B" "$CAP_B") a=$(row "$KEY_A" "$CAP_A")
	fi
	bare2=$(row - "$BARE")
	awk -v r="$round" -v b1="$bare1" -v b2="$bare2" -v a="$a" -v b="$b" \
		'BEGIN{bare=(b1+b2)/2; printf "round %d: bare %.0f, A %.0f (%.3f), B %.0f (%.3f), B/A %.3f\n", r, bare, a, a/bare, b, b/bare, b/a}'
done | tee "$out"
median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
echo "medians: A $(sed 's/.*A [0-9]* (\([0-9.]*\)).*/\1/' "$out" | median), B $(sed 's/.*B [0-9]* (\([0-9.]*\)).*/\1/' "$out" | median), B/A $(sed 's#.*B/A ##' "$out" | median)"
rm -f "$out"
