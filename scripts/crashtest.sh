#!/usr/bin/env bash
# Kills `holdco serve` (SIGKILL) during 30 concurrent company creates,
# restarts it on the same data and prints companies created vs provisioned,
# on SQLite and, when TEST_PG_URL answers, on Postgres. Slow; not part of
# `make test`. Usage: scripts/crashtest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
TEST_PG_URL=${TEST_PG_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
run() { go test -tags crashtest -count=1 -run TestKillDuringConcurrentCreates -v ./app/ 2>&1 | grep -E 'crash test on|^(--- |ok|FAIL)'; }
echo "SQLite:"; run
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
	echo "Postgres:"; TEST_DATABASE_URL=$TEST_PG_URL run
fi
