#!/usr/bin/env bash
# A networked run at scale: `shuffledp up` with n enrolled clients and k
# sampled per round (default n = 1,000,000, k = 100,000: logistic
# regression, R_inf at eps0 1.5 with the clamp of the NeurIPS'21 Fig. 3
# preset, synthetic data), the clients spread over several client
# processes, a few rounds. It reports
#
#   - seconds per round (median over rounds 2.. of the differences of
#     wall_seconds between the metrics lines; round 1 includes enrolment,
#     registration and the first precomputation);
#   - the HPKE floor of a round: k x (stdlib seal + open of one 3-byte
#     report, R_inf's) / cores, from BenchmarkSeal/stdlib and
#     BenchmarkOpen/stdlib measured in the same run;
#   - with --train-clients M (M >= k), `train`'s in-process round at n = M
#     (a train round does not depend on n, but train holds the whole
#     training set in memory: 6.3 KB per client) and the ideal round,
#     train + floor;
#   - each process's CPU and maximum RSS (SHUFFLEDP_CPUPROFILE: every
#     process of `up` writes DIR/ROLE-PID.txt when it stops), its resident
#     set sampled every 2 s while the run goes (rss.csv), its Go heap from
#     its Prometheus endpoint (heap.csv), and its live heap after a
#     garbage collection once round 2 is done (SIGUSR1: ROLE-PID.heap.txt
#     and a heap profile ROLE-PID-heap-1.pprof).
#
# Usage: scripts/scale-run.sh [--clients 1000000] [--sample 100000]
#          [--rounds 3] [--client-processes 4] [--workers 1]
#          [--train-clients 0] [--round-timeout 10m] [--out out/scale-run]
# Run it with `nice -n 10` on a shared machine. Output in OUT: up.log,
# metrics (state/metrics.jsonl), prof/ROLE-PID.{txt,pprof,heap.txt},
# prof/ROLE-PID-heap-1.pprof, rss.csv, heap.csv, summary.txt (printed at
# the end). Compare the live heaps of two runs that differ only in
# --clients for the memory a role holds per enrolled client.
set -euo pipefail
cd "$(dirname "$0")/.."
N=1000000 K=100000 ROUNDS=3 PROCS=4 WORKERS=1 TRAIN_N=0 TIMEOUT=10m OUT=out/scale-run
while [ $# -gt 0 ]; do
  case "$1" in
    --clients) N=$2; shift 2 ;;
    --sample) K=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --client-processes) PROCS=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --train-clients) TRAIN_N=$2; shift 2 ;;
    --round-timeout) TIMEOUT=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CORES=$(nproc)
echo "building (not timed) ..." >&2
go build -o "$OUT/shuffledp" ./cmd/shuffledp
go test -c -o "$OUT/protocol.test" ./protocol
epochs() { python3 -c "print(repr($ROUNDS * $K / $1))"; }
flags() { # flags for n = $1
  echo --preset neurips21-fig3 --model logreg --dataset synthetic --clients "$1" --sample "$K" \
    --epochs "$(epochs "$1")" --eval-every 1 --test-size 100 --no-progress --workers "$WORKERS"
}
per_round() {
  python3 - "$1" <<'PY'
import json, os, statistics, sys
w = [json.loads(l)["wall_seconds"] for l in open(sys.argv[1]) if l.strip()] if os.path.exists(sys.argv[1]) else []
d = [b - a for a, b in zip(w, w[1:])][1:]
print(("%.3f" % statistics.median(d)) if d else "nan", " ".join("%.3f" % x for x in [w[0]] + [b - a for a, b in zip(w, w[1:])]) if w else "")
PY
}
hpke() { # median ns/op of a stdlib benchmark at 3 bytes
  "$OUT/protocol.test" -test.run '^$' -test.bench "^Benchmark$1\$/stdlib/bytes=3\$" -test.benchtime 2000x -test.count 3 |
    awk '/ns\/op/ {print $3}' | sort -n | sed -n 2p
}
load() { cut -d' ' -f1 /proc/loadavg; }

LOAD0=$(load)
SEAL=$(hpke Seal); OPEN=$(hpke Open)
FLOOR=$(python3 -c "print('%.3f' % ($K * ($SEAL + $OPEN) * 1e-9 / $CORES))")
TRAIN=""
if [ "$TRAIN_N" -gt 0 ]; then
  rm -rf "$OUT/train"
  # shellcheck disable=SC2046
  /usr/bin/time -f "train: wall %e s, user %U s, sys %S s, max RSS %M KiB" \
    "$OUT/shuffledp" train $(flags "$TRAIN_N") --state "$OUT/train" > "$OUT/train.log" 2>&1
  read -r TRAIN _ < <(per_round "$OUT/train/metrics.jsonl")
fi

rm -rf "$OUT/state" "$OUT/prof"
mkdir -p "$OUT/prof"
# shellcheck disable=SC2046
SHUFFLEDP_CPUPROFILE="$OUT/prof" "$OUT/shuffledp" up $(flags "$N") --release-when-complete \
  --round-timeout "$TIMEOUT" --client-processes "$PROCS" --prometheus --state "$OUT/state" > "$OUT/up.log" 2>&1 &
UP=$!
echo "time_s,pid,role,rss_kib" > "$OUT/rss.csv"
echo "time_s,rounds_done,process,heap_alloc_bytes,next_gc_bytes" > "$OUT/heap.csv"
T0=$(date +%s)
SIGNALLED=""
while kill -0 "$UP" 2>/dev/null; do
  for P in $(pgrep -P "$UP" || true); do
    ROLE=$( (tr '\0' ' ' < "/proc/$P/cmdline") 2>/dev/null | awk '{print $2}') || continue
    RSS=$(awk '/^VmRSS/ {print $2}' "/proc/$P/status" 2>/dev/null) || continue
    [ -n "$RSS" ] && echo "$(( $(date +%s) - T0 )),$P,$ROLE,$RSS" >> "$OUT/rss.csv"
  done
  # the Go heap of each process from its Prometheus endpoint: heap_alloc
  # (live + garbage not yet collected) and the next GC's goal (2 x the live
  # heap at the last collection, GOGC = 100)
  DONE=$(( $( (wc -l < "$OUT/state/metrics.jsonl") 2>/dev/null || echo 0) - 1 ))
  if [ "$DONE" -ge 2 ] && [ -z "$SIGNALLED" ]; then
    # after round 2: every process writes its live heap after a garbage
    # collection (SIGUSR1, internal/cpuprofile: prof/ROLE-PID.heap.txt and
    # a heap profile prof/ROLE-PID-heap-1.pprof)
    SIGNALLED=1
    for P in $(pgrep -P "$UP" || true); do kill -USR1 "$P" 2>/dev/null || true; done
  fi
  while read -r NAME URL; do
    curl -s --max-time 2 "$URL" 2>/dev/null | awk -v t="$(( $(date +%s) - T0 ))" -v n="$DONE,$NAME" \
      '/^go_memstats_heap_alloc_bytes / {h=$2} /^go_memstats_next_gc_bytes / {g=$2} END {if (h != "") printf "%s,%s,%.0f,%.0f\n", t, n, h, g}' >> "$OUT/heap.csv" || true
  done < <(sed -n 's/^\[\([a-z]*\) \{0,1\}\([0-9:]*\)\] [a-z]*: Prometheus metrics at \(http[^ ]*\)$/\1\2 \3/p' "$OUT/up.log" 2>/dev/null)
  sleep 2
done
STATUS=0
wait "$UP" || STATUS=$?
LOAD1=$(load)
read -r UPR ROUNDS_S < <(per_round "$OUT/state/metrics.jsonl")
{
  echo "n = $N, k = $K, client processes $PROCS (workers $WORKERS each), cores $CORES, load $LOAD0 -> $LOAD1, up exit $STATUS"
  echo "stdlib HPKE: seal $(python3 -c "print($SEAL/1e3)") us, open $(python3 -c "print($OPEN/1e3)") us per 3-byte report"
  echo "HPKE floor k x (seal + open) / cores: $FLOOR s"
  if [ -n "$TRAIN" ]; then
    IDEAL=$(python3 -c "print('%.3f' % ($TRAIN + $FLOOR))")
    echo "train (n = $TRAIN_N) s/round: $TRAIN; ideal = train + floor: $IDEAL s; up / ideal: $(python3 -c "print('%.2f' % (float('$UPR') / $IDEAL))")"
  fi
  echo "up s/round (median, rounds 2..): $UPR; up / floor: $(python3 -c "print('%.2f' % (float('$UPR') / $FLOOR))")"
  echo "up seconds to each metrics line (first: from the start): $ROUNDS_S"
  echo "per process (SHUFFLEDP_CPUPROFILE; max RSS from getrusage):"
  for f in "$OUT"/prof/*.txt; do [ -e "$f" ] && echo "  $(basename "$f" .txt): $(cat "$f")"; done
  echo "live heap after a garbage collection, at the end of round 2 (SIGUSR1):"
  for f in "$OUT"/prof/*.heap.txt; do [ -e "$f" ] && echo "  $(basename "$f" .heap.txt): $(head -1 "$f")"; done
  echo "resident set sampled every 2 s, the largest per process (KiB):"
  python3 - "$OUT/rss.csv" <<'PY'
import csv, sys
m = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["role"] not in ("server", "shuffler", "client"):
        continue
    k = (r["role"], r["pid"])
    m[k] = max(m.get(k, 0), int(r["rss_kib"]))
for (role, pid), v in sorted(m.items()):
    print(f"  {role}-{pid}: {v} KiB ({v / 1024:.0f} MiB)")
PY
  echo "Go heap from each process's metrics, sampled every 2 s after round 1's metrics line: the smallest heap_alloc (live + uncollected) and next-GC goal / 2 (the live heap at the last GC):"
  python3 - "$OUT/heap.csv" <<'PY'
import csv, sys
by = {}
for r in csv.DictReader(open(sys.argv[1])):
    if int(r["rounds_done"]) >= 1:
        by.setdefault(r["process"], []).append(r)
for p, rs in sorted(by.items()):
    h = min(int(r["heap_alloc_bytes"]) for r in rs)
    g = min(int(r["next_gc_bytes"]) for r in rs) / 2
    print(f"  {p}: heap_alloc >= {h / 2**20:.1f} MiB, next_gc/2 {g / 2**20:.1f} MiB ({len(rs)} samples)")
PY
  grep -E 'released:|phases:' "$OUT/up.log" | tail -n 8 || true
} | tee "$OUT/summary.txt"
exit "$STATUS"
