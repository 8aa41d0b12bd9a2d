#!/usr/bin/env python3
"""Mean and standard deviation over seeds of test accuracy at epsilon thresholds.

For each metrics JSONL (one per seed) and each threshold, takes the accuracy of the last
evaluation whose epsilon (the field named by --x: epsilon_neurips21, the paper's accounting, or
epsilon, our best bound) is at most the threshold; prints one row per threshold with every
seed's value, the mean and the sample standard deviation (n-1). With --ema the averaged
parameters' accuracy is used.

Usage: scripts/seed-summary.py --x epsilon_neurips21 --at 1.4,2.91 runs/s1.jsonl runs/s2.jsonl ...
"""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--x", default="epsilon_neurips21", choices=["epsilon", "epsilon_neurips21"])
    ap.add_argument("--at", required=True, help="comma-separated epsilon thresholds")
    ap.add_argument("--ema", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    field = "test_accuracy_ema" if a.ema else "test_accuracy"
    runs = [[json.loads(l) for l in open(f) if l.strip()] for f in a.files]
    print("| %s <= | %s | mean | std | epoch |" % (a.x, " | ".join("seed %s" % r[-1]["seed"] for r in runs)))
    print("|---" * (len(runs) + 4) + "|")
    for t in [float(x) for x in a.at.split(",")]:
        vals, epochs = [], []
        for rows in runs:
            ok = [r for r in rows if r.get(a.x) is not None and r[a.x] <= t and r.get(field) is not None]
            if not ok:
                raise SystemExit("no evaluation at %s <= %g" % (a.x, t))
            vals.append(ok[-1][field])
            epochs.append(ok[-1]["epoch"])
        std = statistics.stdev(vals) if len(vals) > 1 else 0.0
        print("| %g | %s | **%.2f%%** | %.2f | %s |" % (
            t, " | ".join("%.2f%%" % (100 * v) for v in vals), 100 * statistics.mean(vals), 100 * std,
            "/".join("%g" % e for e in epochs)))


if __name__ == "__main__":
    main()
