#!/usr/bin/env bash
# Soak: `holdco serve` (embedded default, SQLite or DATABASE_URL) on
# loopback for SOAK_MINUTES (default 30) under bounded mixed traffic
# (scripts/soak: REST reads and writes, analytics capture, messages that
# run agent turns), sampling the server every SOAK_SAMPLE seconds: RSS,
# threads and open files (from /proc), goroutines (go_goroutines of GET
# /metrics when the process serves it, else "-"), Postgres connections
# (when DATABASE_URL is Postgres), and each request class's count,
# p50/p99 and errors. Writes .cache/soak/samples.tsv.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin/holdco}
SOAK_MINUTES=${SOAK_MINUTES:-30}
SOAK_SAMPLE=${SOAK_SAMPLE:-30}
SOAK_RATE=${SOAK_RATE:-20}
out=.cache/soak
mkdir -p "$out"
$GO build -o "$BIN" ./cmd/holdco || exit 1
$GO build -o "$out/soak" ./scripts/soak || exit 1
dir=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
api=$(free_port); mcp=$(free_port); oauth=$(free_port); sites=$(free_port); tp=$(free_port)
HOLDCO_DATA_DIR="$dir" HOLDCO_API_ADDR=127.0.0.1:$api HOLDCO_MCP_ADDR=127.0.0.1:$mcp HOLDCO_OAUTH_ADDR=127.0.0.1:$oauth \
	HOLDCO_SITES_ADDR=127.0.0.1:$sites HOLDCO_TEMPORAL_PORT=$tp HOLDCO_TEMPORAL_UI_PORT=0 HOLDCO_LOG_LEVEL=warn \
	HOLDCO_LLM_SCRIPTED_STEP_DELAY=50ms HOLDCO_AGENT_RUN_EVERY=0s HOLDCO_ANALYTICS_ADDRESS_RATE=0 HOLDCO_ANALYTICS_KEY_RATE=0 \
	"$BIN" serve >"$out/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq 1 240); do
	curl -fs "http://127.0.0.1:$api/health" >/dev/null 2>&1 && break
	kill -0 $server 2>/dev/null || { echo "holdco serve stopped:"; cat "$out/server.log"; exit 1; }
	sleep 1
done
$GO build -o "$out/benchtoken" ./scripts/benchtoken || exit 1
SOAK_TOKEN=$("$out/benchtoken" -api "http://127.0.0.1:$api" -email soak@example.com) || exit 1
export SOAK_TOKEN
"$out/soak" -base "http://127.0.0.1:$api" -pid "$server" -minutes "$SOAK_MINUTES" -sample "$SOAK_SAMPLE" -rate "$SOAK_RATE" \
	-database "${DATABASE_URL:-}" -out "$out/samples.tsv"
