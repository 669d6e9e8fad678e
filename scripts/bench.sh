#!/usr/bin/env bash
# Load benchmarks of a built holdco binary (make bench): start-to-ready on a
# warm data dir, resident memory after start, and wrk throughput of
# GET /health and authenticated GET /auth/me against a bare net/http
# handler on the same machine. Figures go to docs/benchmarks.md by hand.
set -euo pipefail
BIN=${1:-bin/holdco}
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "installing wrk (Debian)"; apt-get install -y wrk >/dev/null || sudo apt-get install -y wrk >/dev/null; }

DATA=.cache/bench-data
PORT=18080
export HOLDCO_DATA_DIR=$DATA HOLDCO_API_ADDR=127.0.0.1:$PORT HOLDCO_SITES_ADDR=127.0.0.1:0 HOLDCO_MCP_ADDR=127.0.0.1:0 HOLDCO_OAUTH_ADDR=127.0.0.1:0 HOLDCO_TEMPORAL_PORT=17233 HOLDCO_TEMPORAL_UI_PORT=18233 HOLDCO_LOG_LEVEL=warn
rm -rf "$DATA"; mkdir -p .cache
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_ready() { # prints milliseconds until /health answers 200
  local start=$(date +%s%N)
  until curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do sleep 0.01; done
  echo $(( ($(date +%s%N) - start) / 1000000 ))
}

echo "== cold data dir (first start creates the databases)"
"$BIN" serve 2>.cache/bench-serve.log & pid=$!; pids+=($pid)
echo "start to /health 200: $(wait_ready) ms"
kill -INT $pid; wait $pid || true

echo "== warm data dir, 5 starts"
for i in 1 2 3 4 5; do
  "$BIN" serve 2>>.cache/bench-serve.log & pid=$!
  echo "start $i to /health 200: $(wait_ready) ms"
  [ $i -lt 5 ] && { kill -INT $pid; wait $pid || true; }
done
pids+=($pid)
sleep 2
echo "resident memory after start: $(awk '/VmRSS/{print $2/1024 " MiB"}' /proc/$pid/status)"

go build -o .cache/bin/barehttp ./scripts/barehttp
go build -o .cache/bin/benchtoken ./scripts/benchtoken
.cache/bin/barehttp -addr 127.0.0.1:18090 & pids+=($!)
until curl -fs http://127.0.0.1:18090/ >/dev/null 2>&1; do sleep 0.05; done
PAT=$(.cache/bin/benchtoken -api "http://127.0.0.1:$PORT")

run_wrk() { wrk -t2 -c64 -d10s "$@" | awk '/Requests\/sec/{print $2}'; }
wrk -t2 -c64 -d2s http://127.0.0.1:18090/ >/dev/null # warm-up
bare=$(run_wrk http://127.0.0.1:18090/)
health=$(run_wrk "http://127.0.0.1:$PORT/health")
me=$(run_wrk -H "Authorization: Bearer $PAT" "http://127.0.0.1:$PORT/auth/me")
echo "wrk -t2 -c64 -d10s requests/s: bare net/http $bare, GET /health $health, GET /auth/me (PAT) $me"
awk -v b="$bare" -v h="$health" -v m="$me" 'BEGIN{printf "ratios: /health / bare = %.2f, /auth/me / /health = %.2f\n", h/b, m/h}'
