#!/usr/bin/env bash
# Fault injection (docs/reliability.md lists each fault with the outcome
# expected before it was run): the Go fault tests (build tag `faults`),
# then what only the binary can show. Exits non-zero if one fault did not
# end as expected.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin/holdco}
failed=0

echo "== fault tests (go test -tags faults)"
$GO test -tags faults -count=1 -run '^TestFault' -v ./service/files/ ./service/mail/ ./service/turns/ 2>&1 \
	| grep -E '^(=== RUN|--- |ok|FAIL|PASS)|faults_test' || true
$GO test -tags faults -count=1 -run '^TestFault' ./service/files/ ./service/mail/ ./service/turns/ >/dev/null 2>&1 || failed=1

echo "== Postgres unreachable at start: one line naming DATABASE_URL, exit status 1"
$GO build -o "$BIN" ./cmd/holdco || exit 1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
HOLDCO_DATA_DIR="$dir" DATABASE_URL="postgres://holdco:secret@127.0.0.1:$port/holdco?sslmode=disable&connect_timeout=5" \
	HOLDCO_API_ADDR=127.0.0.1:0 HOLDCO_MCP_ADDR=127.0.0.1:0 HOLDCO_OAUTH_ADDR=127.0.0.1:0 HOLDCO_SITES_ADDR=127.0.0.1:0 \
	timeout 120 "$BIN" serve --roles api >"$dir/out" 2>"$dir/err"
rc=$?
lines=$(grep -c . "$dir/err")
echo "exit status $rc, $lines line(s) on stderr:"
sed 's/^/  /' "$dir/err"
if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! grep -q '^holdco: DATABASE_URL: ' "$dir/err" || grep -q 'secret' "$dir/err"; then
	echo "FAIL: expected exit 1 and one line starting 'holdco: DATABASE_URL:' without the password"
	failed=1
else
	echo "ok"
fi

echo "== Postgres restarted during traffic; Temporal down (scripts/outage on a private Postgres)"
$GO run ./scripts/outage -parts postgres,temporal -bin "$BIN" || failed=1
exit $failed
