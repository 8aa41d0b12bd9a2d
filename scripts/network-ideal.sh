#!/usr/bin/env bash
# Side by side in one run: the time per round of `shuffledp train` (the
# in-process round) and of `shuffledp up` (server, shuffler and client
# processes over gRPC/TLS with HPKE-sealed reports), and the standard
# library's HPKE seal and open of one report (crypto/hpke single-shot,
# BenchmarkSeal/stdlib and BenchmarkOpen/stdlib at 3 bytes, R_inf's report).
# It prints, for each k, the ratio of `up` to the ideal network round
#
#   ideal = train round + k x (seal + open) / cores
#
# (the in-process round plus the cryptography a network round cannot avoid,
# spread over the machine's cores), and the shuffler's reports per
# CPU-second (its release log lines: process CPU between releases).
#
# With --before COMMIT the same measurements run for `up` built from COMMIT
# (a temporary `git worktree`, removed at the end), interleaved with the
# current tree's, so the before/after ratios come from one run under the
# same load. The current tree is built as it is (uncommitted changes
# included).
#
# Per round: the median, over rounds 2.., of the differences of
# wall_seconds between the metrics lines (--eval-every 1, --test-size 100,
# the same evaluation in both), so round 1 (registration, data loading) is
# left out. The load average (1 min) is recorded before each measurement;
# on a shared machine compare only figures of one run.
#
# Usage: scripts/network-ideal.sh [--before COMMIT] [--k 10000[,30000...]]
#          [--rounds 6] [--repeat 1] [--clients N] [--client-processes 1] [--out DIR]
#          [--model cnn-tanh] [--shards-ledger postgres://...]
#   defaults: the NeurIPS'21 Fig. 3 preset on synthetic data, k = 10,000 of
#   n = 60,000 (n = max(60,000, 2k) for larger k), 6 rounds, OUT=out/network-ideal.
#   --repeat R repeats the whole sequence R times (rep column).
#   --shards-ledger URL also runs `up --shards 3 --ledger URL` (binary
#   up-shards3; k and n rounded down to multiples of 3, as shards need).
# Output: OUT/rounds.csv (one line per repetition, k and binary), a table on
# stdout; the runs' logs and state directories in OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE="" SHARDS_LEDGER="" KS="10000" REPEAT=1 ROUNDS=6 CLIENTS="" OUT=out/network-ideal PROCS=1 MODEL=""
while [ $# -gt 0 ]; do
  case "$1" in
    --before) BEFORE=$2; shift 2 ;;
    --k) KS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --client-processes) PROCS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --model) MODEL=$2; shift 2 ;;
    --shards-ledger) SHARDS_LEDGER=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CORES=$(nproc)
echo "building (not timed) ..." >&2
go build -o "$OUT/shuffledp-after" ./cmd/shuffledp
go test -c -o "$OUT/protocol.test" ./protocol
BINS="after"
if [ -n "$BEFORE" ]; then
  WT=$(mktemp -d /tmp/network-ideal-before.XXXXXX)
  rmdir "$WT"
  git worktree add --quiet --detach "$WT" "$BEFORE" >&2
  (cd "$WT" && go build -o "$OUT/shuffledp-before" ./cmd/shuffledp)
  git worktree remove --force "$WT"
  BINS="before after"
fi
load() { cut -d' ' -f1 /proc/loadavg; }
# per_round METRICS: median seconds per round over rounds 2..
per_round() {
  python3 - "$1" <<'PY'
import json, os, statistics, sys
w = [json.loads(l)["wall_seconds"] for l in open(sys.argv[1]) if l.strip()] if os.path.exists(sys.argv[1]) else []
d = [b - a for a, b in zip(w, w[1:])][1:]
print(f"{statistics.median(d):.4f}" if d else "nan")
PY
}
# shuffler_rate LOG: median reports per shuffler CPU-second over rounds 2..
shuffler_rate() {
  python3 - "$1" <<'PY'
import re, statistics, sys
r = [int(m[1]) / float(m[2]) for m in re.findall(r"round (\d+) released: (\d+) reports .*shuffler CPU ([0-9.]+)s", open(sys.argv[1]).read())
     if int(m[0]) > 1 and float(m[2]) > 0]
print(f"{statistics.median(r):.0f}" if r else "nan")
PY
}
hpke() { # median ns/op of a stdlib benchmark at 3 bytes
  "$OUT/protocol.test" -test.run '^$' -test.bench "^Benchmark$1\$/stdlib/bytes=3\$" -test.benchtime 2000x -test.count 3 |
    awk '/ns\/op/ {print $3}' | sort -n | sed -n 2p
}
CSV="$OUT/rounds.csv"
echo "rep,k,clients,binary,seconds_per_round,seal_us,open_us,cores,ideal_s,ratio,shuffler_reports_per_cpu_s,load1" > "$CSV"
for REP in $(seq "$REPEAT"); do
for K in ${KS//,/ }; do
  N=${CLIENTS:-$(( K * 2 > 60000 ? K * 2 : 60000 ))}
  EPOCHS=$(python3 -c "print(repr($ROUNDS * $K / $N))")
  F=(--preset neurips21-fig3 --dataset synthetic --clients "$N" --sample "$K" --epochs "$EPOCHS"
     --eval-every 1 --test-size 100 --no-progress --workers "$CORES")
  [ -n "$MODEL" ] && F+=(--model "$MODEL")
  L=$(load)
  rm -rf "$OUT/train-$K"
  "$OUT/shuffledp-after" train "${F[@]}" --state "$OUT/train-$K" > "$OUT/train-$K-$REP.log" 2>&1
  TRAIN=$(per_round "$OUT/train-$K/metrics.jsonl")
  SEAL=$(hpke Seal); OPEN=$(hpke Open)
  IDEAL=$(python3 -c "print(f'{$TRAIN + $K * ($SEAL + $OPEN) * 1e-9 / $CORES:.4f}')")
  echo "$REP,$K,$N,train,$TRAIN,$(python3 -c "print($SEAL/1e3)"),$(python3 -c "print($OPEN/1e3)"),$CORES,$IDEAL,,,$L" >> "$CSV"
  for B in $BINS; do
    L=$(load)
    rm -rf "$OUT/up-$B-$K"
    "$OUT/shuffledp-$B" up "${F[@]}" --release-when-complete --client-processes "$PROCS" --state "$OUT/up-$B-$K" > "$OUT/up-$B-$K-$REP.log" 2>&1 || echo "up-$B k=$K failed: $OUT/up-$B-$K-$REP.log" >&2
    UP=$(per_round "$OUT/up-$B-$K/metrics.jsonl")
    RATE=$(shuffler_rate "$OUT/up-$B-$K-$REP.log")
    RATIO=$(python3 -c "print('%.3f' % (float('$UP') / $IDEAL))")
    echo "$REP,$K,$N,up-$B,$UP,$(python3 -c "print($SEAL/1e3)"),$(python3 -c "print($OPEN/1e3)"),$CORES,$IDEAL,$RATIO,$RATE,$L" >> "$CSV"
  done
  if [ -n "$SHARDS_LEDGER" ]; then
    K3=$(( K / 3 * 3 )); N3=$(( N / 3 * 3 ))
    G=(--preset neurips21-fig3 --dataset synthetic --clients "$N3" --sample "$K3" --epochs "$(python3 -c "print(repr($ROUNDS * $K3 / $N3))")"
       --eval-every 1 --test-size 100 --no-progress --workers "$CORES")
    [ -n "$MODEL" ] && G+=(--model "$MODEL")
    L=$(load)
    rm -rf "$OUT/up-shards3-$K"
    "$OUT/shuffledp-after" up "${G[@]}" --release-when-complete --shards 3 --ledger "$SHARDS_LEDGER" --client-processes 3 --state "$OUT/up-shards3-$K" > "$OUT/up-shards3-$K-$REP.log" 2>&1 || echo "up-shards3 k=$K failed" >&2
    UP=$(per_round "$OUT/up-shards3-$K/metrics.jsonl")
    RATIO=$(python3 -c "print('%.3f' % (float('$UP') / $IDEAL))")
    echo "$REP,$K,$N,up-shards3,$UP,$(python3 -c "print($SEAL/1e3)"),$(python3 -c "print($OPEN/1e3)"),$CORES,$IDEAL,$RATIO,,$L" >> "$CSV"
  fi
done
done
column -s, -t < "$CSV"
