#!/usr/bin/env bash
# Honest tuning for NeurIPS'21 Fig. 3: every configuration in a
# configs file runs on the VALIDATION split (train --validation 10000: 10,000
# examples held out of the 60,000 training examples by a fixed seeded split;
# 50,000 clients train; the test set is never evaluated), on top of
# `train --preset neurips21-fig3`. Every configuration tried is kept:
# $RESULTS/NAME.jsonl (metrics, with its command line in every row) and one
# summary line per run in $RESULTS/summary.tsv.
#
# Usage: scripts/tune-neurips21-fig3.sh CONFIGS [EPOCHS]
#   CONFIGS: lines "NAME [train flags...]" ('#' comments); EPOCHS default 42
#   (210 rounds of k = 10,000 out of 50,000).
# Environment: OUT (state dirs, default out/tuning), MNIST_DIR (default
#   data/mnist-cache), RESULTS (default results/tuning-neurips21-fig3),
#   SEEDS (default 1; e.g. "1 2 3"), BIN (a prebuilt shuffledp binary).
# Each run keeps its state in $OUT/NAME-sSEED and resumes if interrupted.
set -euo pipefail
cd "$(dirname "$0")/.."
configs=${1:?usage: $0 CONFIGS [EPOCHS]}
epochs=${2:-42}
OUT=${OUT:-out/tuning}
MNIST_DIR=${MNIST_DIR:-data/mnist-cache}
RESULTS=${RESULTS:-results/tuning-neurips21-fig3}
SEEDS=${SEEDS:-1}
mkdir -p "$OUT" "$RESULTS"
bin=${BIN:-}
if [ -z "$bin" ]; then
	go build -o "$OUT/shuffledp" ./cmd/shuffledp
	bin="$OUT/shuffledp"
fi
"$bin" data fetch mnist --dir "$MNIST_DIR" >/dev/null

grep -v '^[[:space:]]*#' "$configs" | grep -v '^[[:space:]]*$' | while read -r name flags; do
	for seed in $SEEDS; do
		id="$name-s$seed"
		if grep -q "^$id	" "$RESULTS/summary.tsv" 2>/dev/null; then
			continue # done in an earlier invocation
		fi
		start=$SECONDS
		# shellcheck disable=SC2086
		"$bin" train --preset neurips21-fig3 --dataset mnist --data-dir "$MNIST_DIR" \
			--clients 50000 --validation 10000 --epochs "$epochs" --seed "$seed" \
			--no-progress --state "$OUT/$id" $flags </dev/null >"$OUT/$id.log" 2>&1
		cp "$OUT/$id/metrics.jsonl" "$RESULTS/$id.jsonl"
		python3 - "$RESULTS/$id.jsonl" "$id" "$((SECONDS - start))" >>"$RESULTS/summary.tsv" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
last = rows[-1]
best = max(rows, key=lambda r: max(r.get("test_accuracy") or 0, r.get("test_accuracy_ema") or 0))
acc = lambda r: "%.4f" % (r.get("test_accuracy") or 0)
ema = lambda r: ("%.4f" % r["test_accuracy_ema"]) if r.get("test_accuracy_ema") is not None else "-"
print("\t".join([sys.argv[2], str(last["round"]), acc(last), ema(last),
                 "%.3f" % last["epsilon_neurips21"], "%.3f" % last["epsilon"], sys.argv[3] + "s"]))
PY
		tail -1 "$RESULTS/summary.tsv" >&2
	done
done
