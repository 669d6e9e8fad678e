#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each (default 10m), one
# after the other, with FUZZ_PARALLEL workers (default 1: the machine is
# shared), and prints a table: executions, new interesting inputs (new
# coverage) and the result per target. A failing input is written by go
# test under the package's testdata/fuzz/<target>/: fix the code, keep the
# file (it is a seed from then on) and commit both.
#
#   FUZZTIME=3m FUZZ_ONLY='FuzzPKCE|FuzzSitePath' scripts/fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-10m}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-1}
FUZZ_ONLY=${FUZZ_ONLY:-Fuzz.*}
GO=${GO:-go}
out=.cache/fuzz
mkdir -p "$out"

# package directory and target name of every fuzz target
mapfile -t targets < <(grep -rhoE --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.cache \
	-H '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' . | sed -E 's#^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort | grep -E " ($FUZZ_ONLY)\$")

printf '%-40s %-24s %12s %10s %8s %s\n' package target execs "execs/s" "new cov" result | tee "$out/summary.txt"
failed=0
for t in "${targets[@]}"; do
	pkg=${t% *}
	name=${t#* }
	log="$out/$name.log"
	$GO test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -parallel "$FUZZ_PARALLEL" "./$pkg" >"$log" 2>&1
	rc=$?
	# the last progress line: "fuzz: elapsed: 3m0s, execs: 123 (41/sec), new interesting: 4 (total: 20)"
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -1)
	execs=$(sed -nE 's/.*execs: ([0-9]+) .*/\1/p' <<<"$last")
	# the final line's rate is 0/sec (it is printed after the workers stop): the one before it
	rate=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -2 | head -1 | sed -nE 's/.*execs: [0-9]+ \(([0-9]+)\/sec\).*/\1/p')
	newcov=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
	result=ok
	if [ $rc -ne 0 ]; then
		result="FAIL (see $log)"
		failed=1
	fi
	printf '%-40s %-24s %12s %10s %8s %s\n' "$pkg" "$name" "${execs:--}" "${rate:--}" "${newcov:--}" "$result" | tee -a "$out/summary.txt"
done
exit $failed
