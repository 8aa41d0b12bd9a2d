#!/usr/bin/env bash
# The learning frontier's sweep (docs/frontier.md): every line of a configs
# file is one `shuffledp train` run. Tuning runs carry --validation 10000
# (10,000 training examples held out by the fixed seeded split; the test set
# is never evaluated); the chosen configurations' test runs do not. Every
# run keeps its state in $OUT/NAME-sSEED (a killed sweep resumes each run
# where its ledger and checkpoint left it) and, once finished, its metrics
# in $RESULTS/NAME-sSEED.jsonl and one line in $RESULTS/summary.tsv (last
# round; raw and EMA accuracy; epsilon; wall seconds of the invocation that
# finished it).
#
# Usage: scripts/frontier-sweep.sh CONFIGS
#   CONFIGS: lines "NAME train-flags..." ('#' comments), without --seed,
#   --state or --data-dir.
# Environment: OUT (default out/frontier), MNIST_DIR (default
#   data/mnist-cache), RESULTS (default results/frontier/validation),
#   SEEDS (default 1), BIN (a prebuilt shuffledp binary), NICE (default 15).
set -euo pipefail
cd "$(dirname "$0")/.."
configs=${1:?usage: $0 CONFIGS}
OUT=${OUT:-out/frontier}
MNIST_DIR=${MNIST_DIR:-data/mnist-cache}
RESULTS=${RESULTS:-results/frontier/validation}
SEEDS=${SEEDS:-1}
NICE=${NICE:-15}
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
		if ! nice -n "$NICE" "$bin" train --dataset mnist --data-dir "$MNIST_DIR" --seed "$seed" \
			--no-progress --state "$OUT/$id" $flags </dev/null >"$OUT/$id.log" 2>&1; then
			echo "$id failed: $(tail -1 "$OUT/$id.log")" >&2
			continue
		fi
		cp "$OUT/$id/metrics.jsonl" "$RESULTS/$id.jsonl"
		python3 - "$RESULTS/$id.jsonl" "$id" "$((SECONDS - start))" >>"$RESULTS/summary.tsv" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
last = rows[-1]
acc = lambda r: "%.4f" % (r.get("test_accuracy") or 0)
ema = lambda r: ("%.4f" % r["test_accuracy_ema"]) if r.get("test_accuracy_ema") is not None else "-"
eps = "%.4f" % last["epsilon"] if last.get("epsilon") is not None else "-"
print("\t".join([sys.argv[2], str(last["round"]), acc(last), ema(last), eps, last.get("eval_set", "test"),
                 sys.argv[3] + "s"]))
PY
		tail -1 "$RESULTS/summary.tsv" >&2
	done
done
