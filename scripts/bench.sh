#!/usr/bin/env bash
# Load benchmarks of a built holdco binary (make bench). One run, one
# machine, one table: wrk throughput of each hot path next to the figure
# it is measured against (a bare net/http handler, the API's GET /health),
# as ratios, so a later round re-runs it and compares ratios rather than
# absolute rates (the machine is shared). Before the table: start-to-ready
# on a warm data dir and resident memory after start.
#
# Rows: a bare handler (GET and POST); GET /health; GET /auth/me with a
# personal access token; a company's dashboard; the connector's GET
# /health, tools/list and tools/call get_credits with an OAuth access token
# obtained the way an assistant's client does (scripts/benchtoken -mcp);
# analytics capture (POST /analytics/e/, each request one page view), with
# the check that every event answered 200 was stored.
#
# DATABASE_URL=postgres://… switches the store to Postgres (else SQLite);
# BENCH_SECONDS sets each wrk run's length (default 10); BENCH_ROUNDS how
# many times each row is run (default 3; the table gives the median ratio
# and the range); BENCH_STARTS=0
# skips the start-up timings; BENCH_PROFILE=1 writes a CPU profile of the
# server during each of its rows in the first round (HOLDCO_PPROF_ADDR) to
# .cache/bench-profiles/<store>-<row>.pprof. The first row, and each
# round after its capture row, start once the machine is quiet
# (scripts/quiet.sh). Figures go to docs/benchmarks.md by hand.
set -euo pipefail
BIN=${1:-bin/holdco}
cd "$(dirname "$0")/.."
. scripts/quiet.sh
command -v wrk >/dev/null || { echo "installing wrk (Debian)"; apt-get install -y wrk >/dev/null || sudo apt-get install -y wrk >/dev/null; }
SECS=${BENCH_SECONDS:-10}
STARTS=${BENCH_STARTS:-5}

DATA=.cache/bench-data
PORT=18080 MCP_PORT=18081 OAUTH_PORT=18082 BARE_PORT=18090
export HOLDCO_DATA_DIR=$DATA HOLDCO_API_ADDR=127.0.0.1:$PORT HOLDCO_SITES_ADDR=127.0.0.1:0 HOLDCO_MCP_ADDR=127.0.0.1:$MCP_PORT \
	HOLDCO_OAUTH_ADDR=127.0.0.1:$OAUTH_PORT HOLDCO_WORKER_HEALTH_ADDR=127.0.0.1:0 HOLDCO_TEMPORAL_PORT=17233 HOLDCO_TEMPORAL_UI_PORT=0 HOLDCO_LOG_LEVEL=warn
PPROF=127.0.0.1:18083
[ "${BENCH_PROFILE:-0}" = 1 ] && export HOLDCO_PPROF_ADDR=$PPROF
# The capture flood guard is off: wrk is one address sending for one key
# (its tests are TestCaptureFloodAnswers429 and
# TestCaptureLimitsEventsPerAddressAndPerKey).
export HOLDCO_ANALYTICS_ADDRESS_RATE=0 HOLDCO_ANALYTICS_KEY_RATE=0
rm -rf "$DATA"; mkdir -p .cache/bin
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
store=sqlite; [[ "${DATABASE_URL:-}" == postgres* ]] && store=postgres

wait_ready() { # prints milliseconds until /health answers 200
	local start=$(date +%s%N)
	until curl -fs "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do sleep 0.01; done
	echo $(( ($(date +%s%N) - start) / 1000000 ))
}

go build -o .cache/bin/barehttp ./scripts/barehttp
go build -o .cache/bin/benchtoken ./scripts/benchtoken

if [ "$STARTS" -gt 0 ]; then
	echo "== start-up ($store)"
	"$BIN" serve 2>.cache/bench-serve.log & pid=$!
	echo "first start (creates the databases) to /health 200: $(wait_ready) ms"
	kill -INT $pid; wait $pid || true
	for i in $(seq 1 "$STARTS"); do
		"$BIN" serve 2>>.cache/bench-serve.log & pid=$!
		echo "warm start $i to /health 200: $(wait_ready) ms"
		[ "$i" -lt "$STARTS" ] && { kill -INT $pid; wait $pid || true; }
	done
	pids+=($pid)
	sleep 2
	echo "resident memory after start: $(awk '/VmRSS/{print $2/1024 " MiB"}' /proc/$pid/status)"
else
	"$BIN" serve 2>.cache/bench-serve.log & pid=$!; pids+=($pid)
	wait_ready >/dev/null
fi

.cache/bin/barehttp -addr 127.0.0.1:$BARE_PORT & pids+=($!)
until curl -fs http://127.0.0.1:$BARE_PORT/ >/dev/null 2>&1; do sleep 0.05; done

API="http://127.0.0.1:$PORT" MCP="http://127.0.0.1:$MCP_PORT" BARE="http://127.0.0.1:$BARE_PORT/"
PAT=$(.cache/bin/benchtoken -api "$API")
auth=(-H "Authorization: Bearer $PAT")
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
CONG=$(curl -fs "${auth[@]}" "$API/auth/me" | field conglomerate_id)
CO=$(curl -fs "${auth[@]}" -H 'Content-Type: application/json' -d '{"name":"Bench Co"}' "$API/conglomerates/$CONG/companies" | field id | head -1)
export HOLDCO_BENCH_KEY=$(curl -fs "${auth[@]}" "$API/companies/$CO/analytics/summary?range=1d" | field key)
export HOLDCO_BENCH_TOKEN=$(.cache/bin/benchtoken -mcp "$MCP")
pageviews() { curl -fs "${auth[@]}" "$API/companies/$CO/analytics/summary?range=1d" | grep -o '"pageviews":{"value":[0-9.e+]*' | head -1 | sed 's/.*://'; }

# Each request is checked once by hand: wrk counts only non-2xx, and the
# connector answers an RPC error with 200.
rpc() {
	local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
	local params="{$meta}" name=()
	if [ -n "${2:-}" ]; then params="{\"name\":\"$2\",\"arguments\":{},$meta}"; name=(-H "Mcp-Name: $2"); fi
	local body; body=$(curl -s -X POST "$MCP/" -H "Authorization: Bearer $HOLDCO_BENCH_TOKEN" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H 'Mcp-Protocol-Version: 2026-07-28' -H "Mcp-Method: $1" "${name[@]}" \
		-d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"$1\",\"params\":$params}")
	if ! grep -q '"result"' <<<"$body" || grep -q '"isError":true' <<<"$body"; then echo "connector $1 ${2:-} failed: ${body:0:300}" >&2; exit 1; fi
}
rpc tools/list
rpc tools/call get_credits
curl -fs "${auth[@]}" "$API/companies/$CO/dashboard" >/dev/null || { echo "dashboard failed" >&2; exit 1; }

# wrk_run NAME ARGS…: requests/s and non-2xx answers into rps[NAME], bad[NAME].
declare -A rps bad total
wrk_run() {
	local name=$1; shift
	local prof=""
	if [ "${BENCH_PROFILE:-0}" = 1 ] && [[ $name != bare* ]] && [ "$round" = 1 ]; then
		mkdir -p .cache/bench-profiles
		curl -fs -o ".cache/bench-profiles/$store-$name.pprof" "http://$PPROF/debug/pprof/profile?seconds=$((SECS > 2 ? SECS - 1 : 1))" & prof=$!
	fi
	local out; out=$(wrk -t2 -c64 -d"${SECS}s" "$@")
	[ -z "$prof" ] || wait $prof || echo "no profile of $name" >&2
	rps[$name]=$(awk '/Requests\/sec/{print $2}' <<<"$out")
	total[$name]=$(awk '/requests in/{print $1}' <<<"$out")
	bad[$name]=$(awk '/Non-2xx/{print $5}' <<<"$out"); bad[$name]=${bad[$name]:-0}
}
# Each row is measured ROUNDS times, the rows one after another in each
# round; a row's ratio in a round is to its reference measured in the
# same round, seconds before. The table gives the median of the rounds and
# their range: this machine's speed drifts by a quarter from one minute to
# the next, and interleaved rounds keep that drift out of the ratios.
ROUNDS=${BENCH_ROUNDS:-3}
# Rows and their references, in the order run.
pairs=(health:bare me:health dashboard:health mcp_health:health tools_list:health get_credits:health capture:bare_post)
declare -A ratios speeds
cap_total=0 cap_bad=0
LUA_EVENT=scripts/benchanalytics/event.lua LUA_RPC=scripts/benchmcp/rpc.lua
echo "== wrk -t2 -c64 -d${SECS}s, $ROUNDS rounds ($store)"
quiet
wrk -t2 -c64 -d2s "$BARE" >/dev/null # warm-up
for round in $(seq 1 "$ROUNDS"); do
	wrk_run bare "$BARE"
	wrk_run health "$API/health"
	wrk_run me -H "Authorization: Bearer $PAT" "$API/auth/me"
	wrk_run dashboard -H "Authorization: Bearer $PAT" "$API/companies/$CO/dashboard"
	wrk_run mcp_health "$MCP/health"
	HOLDCO_BENCH_METHOD=tools/list wrk_run tools_list -s $LUA_RPC "$MCP/"
	HOLDCO_BENCH_METHOD=tools/call HOLDCO_BENCH_TOOL=get_credits wrk_run get_credits -s $LUA_RPC "$MCP/"
	wrk_run bare_post -s $LUA_EVENT "$BARE"
	wrk_run capture -s $LUA_EVENT "$API/analytics/e/"
	for name in bare bare_post; do speeds[$name]+="${rps[$name]} "; done
	for p in "${pairs[@]}"; do
		n=${p%%:*} ref=${p##*:}
		speeds[$n]+="${rps[$n]} "
		ratios[$n]+="$(awk -v r="${rps[$n]}" -v b="${rps[$ref]}" 'BEGIN{printf "%.3f", r/b}') "
		[ "${bad[$n]}" = 0 ] || echo "round $round: $n answered ${bad[$n]} not 2xx" >&2
	done
	cap_total=$((cap_total + total[capture])) cap_bad=$((cap_bad + bad[capture]))
	# The capture row leaves its events in the inbox; the server folds
	# them into the reports' tables once the flood stops, which takes
	# seconds of CPU. The next round waits for that, or its first rows
	# would share the cores with the fold. Every event answered 200 must
	# be stored (each 200 follows its commit; the summary folds what waits
	# and reads the rollups).
	accepted=$((cap_total - cap_bad))
	settled=$(date +%s%N) stored=0
	for _ in $(seq 1 1200); do stored=$(pageviews); [ "${stored%.*}" -ge "$accepted" ] && break; sleep 0.1; done
	quiet
	settled=$(( ($(date +%s%N) - settled) / 1000000 ))
	echo "round $round: capture $(awk -v r="${rps[capture]}" -v b="${rps[bare_post]}" 'BEGIN{printf "%.3f", r/b}') of bare POST, dashboard $(awk -v r="${rps[dashboard]}" -v b="${rps[health]}" 'BEGIN{printf "%.3f", r/b}') of /health; the round's events folded and the machine quiet $settled ms after its capture row"
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}'; }
range() { tr ' ' '\n' | grep . | sort -g | awk 'NR==1{lo=$1} {hi=$1} END{if (lo==hi) print ""; else printf "%s–%s", lo, hi}'; }
row() { # name, what, base name, target
	local r b
	r=$(median <<<"${speeds[$1]}")
	awk -v n="$2" -v r="$r" -v ratio="$(median <<<"${ratios[$1]}")" -v span="$(range <<<"${ratios[$1]}")" -v base="$3" -v t="$4" \
		'BEGIN{printf "| %-40s | %8.0f | %s of %-9s | %-11s | %-6s |\n", n, r, ratio, base, span, t}'
}
base() { awk -v n="$2" -v r="$(median <<<"${speeds[$1]}")" 'BEGIN{printf "| %-40s | %8.0f | %-16s | %-11s | %-6s |\n", n, r, "1", "", ""}'; }
echo
echo "| what ($store, wrk -t2 -c64 -d${SECS}s, median of $ROUNDS rounds) | req/s | ratio | ratio's range | target |"
echo "|---|---|---|---|---|"
base bare "bare net/http GET"
row health "GET /health" bare ""
row me "GET /auth/me (personal access token)" health "≥ 0.6"
row dashboard "GET /companies/{id}/dashboard" health "≥ 0.1"
row mcp_health "connector GET /health" health "≈ 1"
row tools_list "connector tools/list" health "≥ 0.3"
row get_credits "connector tools/call get_credits" health "≥ 0.15"
base bare_post "bare net/http POST (one event)"
row capture "POST /analytics/e/ (one page view)" bare_post "≥ 0.5"
echo
echo "capture: $cap_total requests, $cap_bad not 200, $accepted answered 200, ${stored%.*} page views stored"
[ "${stored%.*}" -ge "$accepted" ] || { echo "capture: events answered 200 are missing" >&2; exit 1; }
