#!/usr/bin/env bash
# Analytics capture under load (make bench): wrk on POST /analytics/e/ of
# a running `holdco serve` against a bare net/http handler answering 200,
# as a ratio, with p99 latency; then that every accepted event was stored
# (each 200 follows its commit); then a document PUT's latency alone and
# during a capture flood; then the process's memory under a burst of
# batches. The flood guard is off here (wrk is one address sending for
# one key) unless HOLDCO_ANALYTICS_ADDRESS_RATE / HOLDCO_ANALYTICS_KEY_RATE
# are set (then most requests may answer 429); its tests are
# TestCaptureFloodAnswers429, TestCaptureLimitsEventsPerAddressAndPerKey
# and TestCaptureLimitIsCountedOnceAcrossProcesses. BENCH_CAPTURE_ONLY=1
# stops after the capture figures. With DATABASE_URL set (postgres://…)
# the store is Postgres (COPY), else SQLite. BENCH_SECONDS sets the
# capture rows' length (default 10); BENCH_PROFILE=1 writes a CPU profile
# of the server during the capture row (HOLDCO_PPROF_ADDR) to
# .cache/bench-profiles/analytics-<store>-capture.pprof.
# The bare row starts once the machine is quiet (scripts/quiet.sh).
# Figures go to docs/benchmarks.md by hand.
set -euo pipefail
BIN=${1:-bin/holdco}
cd "$(dirname "$0")/.."
. scripts/quiet.sh
command -v wrk >/dev/null || { echo "installing wrk (Debian)"; apt-get install -y wrk >/dev/null || sudo apt-get install -y wrk >/dev/null; }

DATA=.cache/bench-analytics
# Ports (BENCH_PORT_BASE moves all three, for two runs on one machine).
base=${BENCH_PORT_BASE:-0}
PORT=$((18180 + base)) BARE_PORT=$((18091 + base)) TEMPORAL_PORT=$((17333 + base)) PPROF_PORT=$((18183 + base))
SECS=${BENCH_SECONDS:-10}
[ "${BENCH_PROFILE:-0}" = 1 ] && export HOLDCO_PPROF_ADDR=127.0.0.1:$PPROF_PORT
export HOLDCO_DATA_DIR=$DATA HOLDCO_API_ADDR=127.0.0.1:$PORT HOLDCO_SITES_ADDR=127.0.0.1:0 HOLDCO_MCP_ADDR=127.0.0.1:0 HOLDCO_OAUTH_ADDR=127.0.0.1:0 HOLDCO_WORKER_HEALTH_ADDR=127.0.0.1:0 HOLDCO_TEMPORAL_PORT=$TEMPORAL_PORT HOLDCO_TEMPORAL_UI_PORT=0 HOLDCO_LOG_LEVEL=${HOLDCO_LOG_LEVEL:-warn}
export HOLDCO_ANALYTICS_ADDRESS_RATE=${HOLDCO_ANALYTICS_ADDRESS_RATE:-0} HOLDCO_ANALYTICS_KEY_RATE=${HOLDCO_ANALYTICS_KEY_RATE:-0}
echo "flood guard: address rate $HOLDCO_ANALYTICS_ADDRESS_RATE/s, key rate $HOLDCO_ANALYTICS_KEY_RATE/s (0: off)"
rm -rf "$DATA"; mkdir -p .cache/bin
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

"$BIN" serve 2>.cache/bench-analytics.log & pid=$!; pids+=($pid)
until curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do sleep 0.05; done
echo "store: ${DATABASE_URL:+postgres}${DATABASE_URL:-sqlite}" | sed 's#postgres.*#postgres#'

go build -o .cache/bin/barehttp ./scripts/barehttp
go build -o .cache/bin/benchtoken ./scripts/benchtoken
.cache/bin/barehttp -addr 127.0.0.1:$BARE_PORT & pids+=($!)
until curl -fs http://127.0.0.1:$BARE_PORT/ >/dev/null 2>&1; do sleep 0.05; done

API="http://127.0.0.1:$PORT"
PAT=$(.cache/bin/benchtoken -api "$API" -email analytics-bench@example.com)
auth=(-H "Authorization: Bearer $PAT")
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
CONG=$(curl -fs "${auth[@]}" "$API/auth/me" | field conglomerate_id)
CO=$(curl -fs "${auth[@]}" -H 'Content-Type: application/json' -d '{"name":"Bench Site"}' "$API/conglomerates/$CONG/companies" | field id | head -1)
export HOLDCO_BENCH_KEY=$(curl -fs "${auth[@]}" "$API/companies/$CO/analytics/summary?range=1d" | field key)
pageviews() { curl -fs "${auth[@]}" "$API/companies/$CO/analytics/summary?range=1d" | grep -o '"pageviews":{"value":[0-9.e+]*' | head -1 | sed 's/.*://'; }

LUA=scripts/benchanalytics/event.lua
wrk_run() { wrk -t2 -c64 -d"${SECS}s" --latency -s $LUA "$@"; }
summary() { awk '/Requests\/sec/{rps=$2} /requests in/{n=$1} /Non-2xx/{bad=$5} / 99%/{p99=$2} END{printf "%s %s %s %s\n", rps, n, bad+0, p99}'; }
quiet
wrk -t2 -c64 -d2s -s $LUA http://127.0.0.1:$BARE_PORT/ >/dev/null # warm-up
read -r bare_rps _ _ bare_p99 < <(wrk_run http://127.0.0.1:$BARE_PORT/ | summary)
prof=""
if [ "${BENCH_PROFILE:-0}" = 1 ]; then
	mkdir -p .cache/bench-profiles
	store=sqlite; [[ "${DATABASE_URL:-}" == postgres* ]] && store=postgres
	curl -fs -o ".cache/bench-profiles/analytics-$store-capture.pprof" \
		"http://127.0.0.1:$PPROF_PORT/debug/pprof/profile?seconds=$((SECS > 2 ? SECS - 1 : 1))" & prof=$!
fi
read -r cap_rps cap_n cap_bad cap_p99 < <(wrk_run "$API/analytics/e/" | summary)
[ -z "$prof" ] || wait $prof || echo "no profile of the capture row" >&2
accepted=$((cap_n - cap_bad))
# Every accepted event is stored once the writer catches up.
for _ in $(seq 1 600); do stored=$(pageviews); [ "${stored%.*}" -ge "$accepted" ] && break; sleep 0.1; done
echo "wrk -t2 -c64 -d${SECS}s POST: bare net/http $bare_rps req/s (p99 $bare_p99), POST /analytics/e/ $cap_rps req/s (p99 $cap_p99)"
awk -v c="$cap_rps" -v b="$bare_rps" 'BEGIN{printf "ratio capture / bare = %.2f\n", c/b}'
echo "capture: $cap_n requests, $cap_bad not 200 (503 when the queue is full, 429 past the flood guard), $accepted accepted, ${stored%.*} page views stored"
[ "${BENCH_CAPTURE_ONLY:-0}" = 1 ] && exit 0

# A tenant's write while capture floods: PUT a document 20 times, alone
# and during wrk posting batches of 50 events; median and worst seconds.
CO2=$(curl -fs "${auth[@]}" -H 'Content-Type: application/json' -d '{"name":"Bench Docs"}' "$API/conglomerates/$CONG/companies" | field id | head -1)
puts() {
	for i in $(seq 1 20); do
		curl -s -o /dev/null -w '%{time_total}\n' -X PUT "${auth[@]}" -H 'Content-Type: application/json' \
			-d "{\"content\":\"# Strategy $i\"}" "$API/companies/$CO2/documents/strategy"
	done | sort -n | awk '{t[NR]=$1} END{printf "median %.3f s, worst %.3f s\n", t[int((NR+1)/2)], t[NR]}'
}
echo "document PUT alone: $(puts)"
HOLDCO_BENCH_BATCH=50 wrk -t2 -c64 -d20s -s $LUA "$API/analytics/batch/" >.cache/bench-analytics-flood.txt & flood=$!
sleep 2
echo "document PUT during a capture flood (wrk -c64, batches of 50): $(puts)"
wait $flood
awk '/Requests\/sec/{print "flood: " $2 " batches of 50 events/s"} /Non-2xx/{print "flood: " $5 " not 200"}' .cache/bench-analytics-flood.txt

rss() { awk "/$1/{print \$2/1024 \" MiB\"}" /proc/$pid/status; }
echo "memory before the burst: resident $(rss VmRSS), peak so far $(rss VmHWM)"
HOLDCO_BENCH_BATCH=50 wrk -t2 -c256 -d5s -s $LUA "$API/analytics/batch/" | awk '/Requests\/sec/{print "burst: " $2 " batches of 50 events/s"} /Non-2xx/{print "burst: " $5 " answered 503 (queue full)"}'
echo "memory after the burst: resident $(rss VmRSS), peak $(rss VmHWM)"
