#!/usr/bin/env python3
"""Build the learning frontier's table from committed metrics files.

Each entry below names a method (a series of the plot), a group of metrics JSONL files (one
per seed) and, optionally, an epsilon at which to read them: the last evaluation whose
`epsilon` is <= it (default: each file's last row). It prints the Markdown table of
docs/frontier.md (epsilon, accuracy mean +- sample sd over the files, configuration, command)
and writes results/frontier/frontier.tsv, which `shuffledp train plot --frontier` draws.
Non-private entries (no epsilon) become horizontal lines.

Usage: scripts/frontier-table.py [--out results/frontier/frontier.tsv]
"""
import argparse
import decimal
import glob
import json
import os
import statistics

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# (series, label of the configuration, file glob, epsilon to read at or None)
ENTRIES = [
    ("shuffle R_inf, ScatterNet + logreg (this work)", "eps0 2, k 10,000, 1,466 rounds, C 0.01 clamp, lr 15 cosine",
     "results/frontier/test/t-eps1-e2-c0.01-lr15-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg (this work)", "eps0 3, k 10,000, 2,673 rounds, C 0.01 clamp, lr 11 cosine",
     "results/frontier/test/t-eps3-e3long-c0.01-lr11-s*.jsonl", None),
    ("shuffle PrivUnit2, ScatterNet + logreg (this work)", "eps0 4, k 10,000, 114 rounds, l2 clip 0.5, lr 100 cosine",
     "results/frontier/test/t-pu-eps1-e4-c0.5-lr100-s*.jsonl", None),
    ("shuffle PrivUnit2, ScatterNet + logreg (this work)", "eps0 5.5, k 10,000, 147 rounds, l2 clip 0.5, lr 100 cosine (not screened at eps0 5.5)",
     "results/frontier/test/t-pu-eps3-e5.5-c0.5-lr100-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct (this work)", "eps0 1.5, k 10,000, 3,512 rounds, C 0.01 clamp, lr 10 cosine",
     "results/frontier/test/t-dct-eps1-e1.5-c0.01-lr10-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct (this work)", "eps0 1, k 10,000, 11,025 rounds, C 0.01 clamp, lr 5 cosine",
     "results/frontier/test/t-dct-eps1-e1-c0.01-lr5-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct (this work)", "eps0 3, k 10,000, 2,673 rounds, C 0.01 clamp, lr 11 cosine",
     "results/frontier/test/t-dct-eps3-e3-c0.01-lr11-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct (this work)", "eps0 2, k 10,000, 10,557 rounds, C 0.01 clamp, lr 7.5 cosine",
     "results/frontier/test/t-dct-eps3-e2-c0.01-lr7.5-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct, NeurIPS'21 Fig. 3 points (this work)",
     "epsilon_neurips21 1.3996 (Thm 1, the paper's accounting; <= 1.4): eps0 1, 1,301 rounds, C 0.01, lr 10 cosine",
     "results/frontier/test/t-dct-fig3-1.4-e1-c0.01-lr10-s*.jsonl", None),
    ("shuffle R_inf, ScatterNet + logreg-dct, NeurIPS'21 Fig. 3 points (this work)",
     "epsilon_neurips21 2.9098 (Thm 1; <= 2.91): eps0 1.25, 2,417 rounds, C 0.01, lr 10 cosine",
     "results/frontier/test/t-dct-fig3-2.91-e1.25-c0.01-lr10-s*.jsonl", None),
    ("shuffle R_inf, cnn-tanh (earlier runs)", "tuned Fig. 3 preset, eps0 1.5, 1,200 rounds",
     "results/neurips21-fig3-fig6/tuned-fig3-s*.jsonl", None),
    ("shuffle R_inf, cnn-tanh (earlier runs)", "eps0 1.5, 2,985 rounds (RDP-only stop at 1)",
     "results/neurips21-fig3-fig6/best-eps1-s*.jsonl", None),
    ("shuffle R_inf, cnn-tanh (earlier runs)", "eps0 3, 2,316 rounds (RDP-only stop at 3)",
     "results/neurips21-fig3-fig6/best-eps3-s*.jsonl", None),
    ("shuffle DJW (R_2), cnn-tanh (earlier runs)", "Fig. 6 preset, eps0 2, k 2,000, 6,000 rounds",
     "results/neurips21-fig3-fig6/preset-fig6-s*.jsonl", None),
    ("shuffle Gaussian, ScatterNet + logreg, zero-out (ICLR'23 Fig. 1a mechanism)",
     "k 100, sigma 1.4, C 0.1 l2, 117,600 rounds, lr 0.765 cosine; ledger zero-out",
     "results/frontier/test/t-g-k100-sig1.4-s*.jsonl", None),
    # The same runs under replace-one: the ledger is zero-out, so the epsilon is re-accounted
    # (REACCOUNTED below) with
    #   shuffledp account --mechanism subsampled-shuffle-gaussian --n 60000 --k 100 --sigma 1.4 \
    #     --steps 117600 --delta 1e-5 --adjacency replace-one
    ("shuffle Gaussian, ScatterNet + logreg, replace-one (ICLR'23 Fig. 1a mechanism)",
     "the same runs, re-accounted under replace-one (`shuffledp account ... --adjacency replace-one`)",
     "results/frontier/test/t-g-k100-sig1.4-s*.jsonl", None),
    ("shuffle Gaussian, ScatterNet + logreg, zero-out (ICLR'23 Fig. 1a mechanism)",
     "k 75, sigma 1.2, C 0.1 l2, 86,400 rounds, lr 1.0417 cosine; ledger zero-out",
     "results/frontier/test/t-g-k75-sig1.2-s*.jsonl", None),
    #   shuffledp account --mechanism subsampled-shuffle-gaussian --n 60000 --k 75 --sigma 1.2 \
    #     --steps 86400 --delta 1e-5 --adjacency replace-one    # 1.842269982807482
    ("shuffle Gaussian, ScatterNet + logreg, replace-one, k 75 (ICLR'23 Fig. 1a mechanism)",
     "the same runs, re-accounted under replace-one (`shuffledp account ... --adjacency replace-one`)",
     "results/frontier/test/t-g-k75-sig1.2-s*.jsonl", None),
    # The shuffle Gaussian aimed at the targets' adjacency: ledger replace-one (--target-epsilon),
    # 4x4-pooled ScatterNet features (`scatter:pool=4`, d = 12,970); screens g5-g8.
    ("shuffle Gaussian, ScatterNet 4x4 + logreg, replace-one (this work)",
     "k 150, sigma 1.6492, C 0.1 l2, 80,000 rounds, lr 1.125 cosine; ledger replace-one (zero-out: 0.6065)",
     "results/frontier/test/t-g-p4-eps1-k150-sig1.6492-s*.jsonl", None),
    ("shuffle Gaussian, ScatterNet 4x4 + logreg, replace-one (this work)",
     "k 300, sigma 1.108, C 0.1 l2, 40,000 rounds, lr 2.25 cosine; ledger replace-one (zero-out: 1.0135)",
     "results/frontier/test/t-g-p4-eps3-k300-sig1.108-s*.jsonl", None),
    # The accountant's largest Q at epsilon 3 (configs-test-gauss-eps3b.txt).
    ("shuffle Gaussian, ScatterNet 4x4 + logreg, replace-one (this work)",
     "k 400, sigma 1.3256, C 0.1 l2, 90,000 rounds, lr 1 cosine; ledger replace-one (zero-out: 1.7536)",
     "results/frontier/test/t-g-p4-eps3-k400-sig1.3256-s*.jsonl", None),
    ("shuffle Gaussian, cnn-tanh, zero-out (ICLR'23 Fig. 1a)", "sigma 0.86, 1 seed; zero-out adjacency (replace-one is larger)",
     "results/iclr23-fig1/fig1a-shuffle-noisesum-cos30.jsonl", None),
    ("central DP-SGD, cnn-tanh, add-remove (ICLR'23 Fig. 1a)", "trusted server; Poisson sampling; 1 seed",
     "results/iclr23-fig1/fig1a-central.jsonl", None),
    ("central DP-SGD, cnn-tanh, add-remove (ICLR'23 Fig. 1a)", "the same with a cosine decay; 1 seed",
     "results/iclr23-fig1/fig1a-central-cos30.jsonl", None),
    # The non-private line: configs-test-nonprivate2.txt (chosen on validation by
    # configs-nonprivate-val2.txt). It replaced t-nonprivate-s* (constant lr 100, 10 epochs;
    # 92.67% +- 6.69, one seed ended on an oscillation at 84.94%), whose files are kept.
    ("non-private ScatterNet + logreg-dct", "randomizer none, batch 1,000, 30 epochs, lr 1000 cosine",
     "results/frontier/test/t-nonprivate2-dct-lr1000-s*.jsonl", None),
]


# Series whose epsilon is not the ledger's but the same rounds re-accounted under another
# adjacency (the command is beside the entry above): series -> epsilon.
REACCOUNTED = {
    "shuffle Gaussian, ScatterNet + logreg, replace-one (ICLR'23 Fig. 1a mechanism)": 1.407,  # 1.406993624405366, rounded up
    "shuffle Gaussian, ScatterNet + logreg, replace-one, k 75 (ICLR'23 Fig. 1a mechanism)": 1.8423,  # 1.842269982807482, rounded up
}


def up(x, digits):
    """x rounded up to the given significant digits, as text: a printed
    epsilon is never smaller than the bound it stands for."""
    d = decimal.Decimal(repr(x))
    if d == 0:
        return "0"
    q = decimal.Decimal(1).scaleb(d.adjusted() - digits + 1)
    return "{:f}".format(d.quantize(q, rounding=decimal.ROUND_CEILING).normalize())


def read(path, at):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    if at is not None:
        rows = [r for r in rows if r.get("epsilon") is not None and r["epsilon"] <= at]
    return rows[-1], rows[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "results/frontier/frontier.tsv"))
    args = ap.parse_args()
    tsv = ["# kind\tseries\tepsilon\taccuracy\tstd  (scripts/frontier-table.py)"]
    print("| method | epsilon (delta 1e-5) | test accuracy, mean ± sd | seeds | configuration | files |")
    print("|---|---|---|---|---|---|")
    for series, conf, pattern, at in ENTRIES:
        files = sorted(glob.glob(os.path.join(ROOT, pattern)))
        if not files:
            continue
        rows = [read(f, at) for f in files]
        accs = [r["test_accuracy"] for r, _ in rows]
        mean = statistics.mean(accs)
        sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
        eps = [r.get("epsilon") for r, _ in rows]
        rel = os.path.relpath(os.path.dirname(files[0]), ROOT)
        names = ", ".join(os.path.basename(f) for f in files)
        if eps[0] is None:
            tsv.append("line\t%s\t-\t%.6f\t%.6f" % (series, mean, sd))
            epstext = "none (not private)"
        else:
            e = REACCOUNTED.get(series, max(eps))
            tsv.append("point\t%s\t%s\t%.6f\t%.6f" % (series, up(e, 6), mean, sd))
            epstext = up(e, 4)
        print("| %s | %s | %.2f%% ± %.2f | %d | %s | `%s/` %s |" % (series, epstext, 100 * mean, 100 * sd, len(files), conf, rel, names))
    with open(args.out, "w") as f:
        f.write("\n".join(tsv) + "\n")


if __name__ == "__main__":
    main()
