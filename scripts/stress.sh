#!/usr/bin/env bash
# stress.sh: the test suite under CPU load, several times.
#
# Runs `go test -count=1 PKGS` N times while LOAD CPU-bound processes
# (`yes > /dev/null`) compete for the cores, prints each run's per-package
# times and outcomes, and at the end each package's slowest time. It exits
# non-zero if any run failed, or if any package took more than half of
# go test's per-package timeout (TIMEOUT): a suite that only passes on a
# quiet machine, or close to its timeout, is not done.
#
# Settings (environment):
#   N=5          runs
#   PKGS=./...   packages (e.g. PKGS="./cmd/shuffledp/e2e ./statedir")
#   RUN=         a go test -run pattern (e.g. RUN='TestCrashLoop$'); empty: all tests
#   LOAD=2       CPU-bound processes running alongside
#   TIMEOUT=10m  go test's -timeout (its default); a package above half of it fails the check
#   OUT=         directory for each run's full output (default: a new temporary directory)
#
# Example, the crash loop three times under load:
#   N=3 PKGS=./cmd/shuffledp/e2e RUN='TestCrashLoop$' scripts/stress.sh
set -uo pipefail
cd "$(dirname "$0")/.."

N=${N:-5}
PKGS=${PKGS:-./...}
RUN=${RUN:-}
LOAD=${LOAD:-2}
TIMEOUT=${TIMEOUT:-10m}
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/stress.XXXXXX")}
mkdir -p "$OUT"

case "$N$LOAD" in *[!0-9]*) echo "stress.sh: N and LOAD must be whole numbers (N=$N LOAD=$LOAD)" >&2; exit 2 ;; esac
# TIMEOUT in seconds (Go durations of the forms 600s, 10m, 1h, 1h30m).
timeout_s=$(awk -v d="$TIMEOUT" 'BEGIN {
	s = 0; n = ""
	for (i = 1; i <= length(d); i++) {
		c = substr(d, i, 1)
		if (c ~ /[0-9.]/) { n = n c; continue }
		if (n == "") { print "bad"; exit }
		if (c == "h") s += n * 3600; else if (c == "m") s += n * 60; else if (c == "s") s += n; else { print "bad"; exit }
		n = ""
	}
	if (n != "" || s == 0) { print "bad"; exit }
	print s
}')
if [ "$timeout_s" = bad ]; then
	echo "stress.sh: TIMEOUT=$TIMEOUT is not a duration such as 600s, 10m or 1h" >&2
	exit 2
fi
limit=$(awk -v t="$timeout_s" 'BEGIN { print t / 2 }')

loaders=()
stop_load() {
	for pid in "${loaders[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	loaders=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
for _ in $(seq 1 "$LOAD"); do
	yes >/dev/null &
	loaders+=($!)
done

args=(test -count=1 -timeout "$TIMEOUT")
[ -n "$RUN" ] && args+=(-run "$RUN")
echo "stress.sh: $N run(s) of go ${args[*]} $PKGS with $LOAD CPU-bound processes alongside; a package fails above ${limit}s (half of $TIMEOUT); outputs in $OUT"

failed=0
summary="$OUT/summary.tsv" # run, package, seconds, status
: >"$summary"
for i in $(seq 1 "$N"); do
	log="$OUT/run$i.txt"
	start=$(date +%s)
	# shellcheck disable=SC2086 # PKGS is a list of patterns
	go "${args[@]}" $PKGS >"$log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	# Per-package lines: "ok  <pkg> 1.23s", "FAIL <pkg> 1.23s", "FAIL <pkg> [build failed]".
	awk -v run="$i" -v limit="$limit" '
		$1 == "ok" && $3 ~ /s$/ { t = $3; sub(/s$/, "", t); st = (t + 0 > limit) ? "SLOW" : "ok"; print run "\t" $2 "\t" t "\t" st; next }
		$1 == "FAIL" && NF >= 3 && $2 ~ /\// { t = $3; sub(/s$/, "", t); if (t !~ /^[0-9.]+$/) t = "-"; print run "\t" $2 "\t" t "\tFAIL" }
	' "$log" >"$OUT/run$i.tsv"
	cat "$OUT/run$i.tsv" >>"$summary"
	bad=$(awk -F'\t' '$4 != "ok"' "$OUT/run$i.tsv" | wc -l)
	echo
	echo "run $i of $N: exit $rc, ${took}s wall"
	awk -F'\t' '{ printf "  %-6s %8s s  %s\n", $4, $3, $2 }' "$OUT/run$i.tsv" | sort -k2,2 -rn
	if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
		failed=$((failed + 1))
		echo "  run $i FAILED ($bad package(s) failed or slow; go test exit $rc): see $log"
		grep -E '^(--- FAIL|panic:|FAIL)' "$log" | head -40 | sed 's/^/    /'
	fi
done

echo
echo "slowest time of each package over $N run(s) (limit ${limit}s):"
awk -F'\t' '$3 != "-" { if (!($2 in m) || $3 + 0 > m[$2]) m[$2] = $3 + 0 } END { for (p in m) printf "  %8.2f s  %s\n", m[p], p }' "$summary" | sort -rn | head -60
if [ "$failed" -ne 0 ]; then
	echo "stress.sh: $failed of $N run(s) failed"
	exit 1
fi
echo "stress.sh: all $N run(s) passed"
