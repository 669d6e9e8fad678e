# quiet (sourced by the bench scripts) waits until the machine is less
# than 10 % busy over half a second; after 60 s it says so and returns. A
# capture row leaves work behind it — the server folds the events it
# acknowledged, then the kernel writes the fold's pages back — that would
# take the CPU from the rows after it; a bench's first row would share it
# with the builds and the migrations before it.
quiet() {
	local a b tot idle k
	for _ in $(seq 1 120); do
		read -ra a </proc/stat
		sleep 0.5
		read -ra b </proc/stat
		tot=0
		for k in 1 2 3 4 5 6 7 8; do tot=$((tot + b[k] - a[k])); done
		idle=$((b[4] - a[4] + b[5] - a[5]))
		if [ "$tot" -gt 0 ] && [ $((100 * (tot - idle) / tot)) -lt 10 ]; then return 0; fi
	done
	echo "the machine stayed busy for 60 s (other work on it?): measuring anyway" >&2
}
