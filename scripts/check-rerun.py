#!/usr/bin/env python3
"""Re-run the start of committed training results from their own command lines and compare.

Every metrics row that `shuffledp train` writes carries the command line that produced it (the
JSON array field `command`). For each metrics JSONL given, this script takes the first row's
command, runs it again with a binary of today's code for as many epochs as the first --rows
evaluations of the file cover (`--epochs` replaced; `--state` dropped, the metrics written to a
temporary file instead; every other flag, the seed included, as committed), and compares the
overlapping rows: test accuracy and loss (raw, and of the averaged parameters where present),
train loss, epsilon and epsilon_neurips21 must agree to --tol (absolute). It exits 1 if any
value differs, 2 on a usage or run error.

A Gaussian run recorded before `--adjacency` existed (its rows have no `adjacency` field) was
accounted under the relation that was then the only one: zero-out for the shuffle Gaussian
mechanisms, add-remove for central-gaussian. Its command is re-run with that relation stated
(`--adjacency=...`, and said so), as the ledger reads such events; today's default for the
shuffle Gaussian mechanisms is replace-one, whose epsilon is larger.

A row written before the ledger stated one number per run (its rows have no `route` field)
printed the RDP route's epsilon; today's row prints the ledger's statement, the minimum of that
RDP route and the PLD and approximate-DP routes (docs/proofs/ledger-checkpoints.md). For such a
row the re-run's epsilon must be at most the committed one (a tighter valid route, never a
looser one), and both are printed. A legacy shuffle Gaussian row (randomizer gaussian) printed an
ICLR'23 bound, a conjecture under replace-one and refuted under zero-out
(docs/proofs/shuffle-gaussian.md): its committed epsilon is no guarantee, so it is printed beside
today's proven statement and not compared. Every other field is compared as before.

Usage: scripts/check-rerun.py [--bin shuffledp] [--rows 3] [--data-dir DIR] results/.../x.jsonl ...
       scripts/check-rerun.py --bin shuffledp --set frontier     # the rows of a named set (SETS)
       scripts/check-rerun.py --bin shuffledp --set frontier-ci --rows 2   # CI's short check
"""
import glob
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

# The relation a Gaussian run's epsilon was for before --adjacency existed.
LEGACY_ADJACENCY = {"gaussian": "zero-out", "central-gaussian": "add-remove"}

# Named sets of committed results (globs relative to the repository root): --set NAME re-runs
# the first --rows evaluations of each. "frontier": the learning frontier's test-set runs and
# the validation runs they were chosen by (docs/frontier.md); each row's command carries
# --features, whose cache (DATA-DIR/features) is rebuilt on first use.
SETS = {
    "frontier": ["results/frontier/test/*.jsonl", "results/frontier/validation/*.jsonl"],
    # The short check CI runs (.ci/run, --rows 2): seed 1 of one test run per randomizer and
    # model of the frontier (R_inf on logreg and on logreg-dct, PrivUnit2, the shuffle Gaussian).
    "frontier-ci": [
        "results/frontier/test/t-eps1-e2-c0.01-lr15-s1.jsonl",
        "results/frontier/test/t-dct-eps1-e1.5-c0.01-lr10-s1.jsonl",
        "results/frontier/test/t-pu-eps1-e4-c0.5-lr100-s1.jsonl",
        "results/frontier/test/t-g-k75-sig1.2-s1.jsonl",
    ],
}

FIELDS = ["test_accuracy", "test_loss", "test_accuracy_ema", "test_loss_ema", "train_loss",
          "epsilon", "epsilon_neurips21"]

# Randomizers whose legacy epsilon rested on the ICLR'23 shuffle Gaussian bounds.
CONJECTURE_ERA = {"gaussian"}


def legacy_epsilon(path, w, g, tol):
    """Compare a legacy row's epsilon (no route field: the RDP route's number) with today's
    statement; returns the number of differences (0 or 1)."""
    got = g.get("epsilon")
    where = "%s: round %d epsilon" % (path, w["round"])
    if w.get("randomizer") in CONJECTURE_ERA:
        print("%s committed %r rested on an ICLR'23 shuffle Gaussian bound (no guarantee); today's proven "
              "statement %r (route %s): not compared" % (where, w["epsilon"], got, g.get("route")))
        return 0
    if got is None or math.isnan(got) or got > w["epsilon"] + tol:
        print("%s committed %r (RDP route), re-run %r (route %s): looser than the committed route" %
              (where, w["epsilon"], got, g.get("route")))
        return 1
    print("%s committed %r (RDP route), today's statement %r (route %s): the same or tighter" %
          (where, w["epsilon"], got, g.get("route")))
    return 0


def rerun_command(command, epochs, metrics, data_dir):
    """The committed command with --epochs, --state, --metrics and --data-dir replaced."""
    out = []
    for arg in command[1:]:
        name = arg.split("=", 1)[0]
        if name in ("--epochs", "--state", "--metrics", "--no-progress"):
            continue
        if name == "--data-dir" and data_dir:
            arg = "--data-dir=" + data_dir
        out.append(arg)
    if out[:1] != ["train"]:
        raise ValueError("not a train command: %r" % command)
    return out + ["--epochs=%r" % epochs, "--metrics=" + metrics, "--no-progress"]


def rerun_epochs(rows, n):
    """The epochs to re-run so that the first n rows are written again: as many as the n-th row's.

    The first row is the evaluation before any round (epoch 0), and train refuses --epochs 0:
    when only it is compared, the re-run is one round (a later row's epoch over its round).
    """
    epochs = rows[n - 1]["epoch"]
    if epochs > 0:
        return epochs
    later = next((r for r in rows if r["round"] > 0 and r["epoch"] > 0), None)
    return None if later is None else later["epoch"] / later["round"]


def differs(a, b, tol):
    if a is None or b is None:
        return a is not b
    if math.isnan(a) or math.isnan(b):
        return True
    return abs(a - b) > tol


def check(path, args):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    if not rows or "command" not in rows[0]:
        print("%s: no command in the first row" % path)
        return 2
    want = rows[:args.rows]
    epochs = rerun_epochs(rows, len(want))
    if epochs is None:
        print("%s: no row after round 0 to tell the length of a round" % path)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "metrics.jsonl")
        argv = [args.bin] + rerun_command(rows[0]["command"], epochs, metrics, args.data_dir)
        legacy = LEGACY_ADJACENCY.get(rows[0].get("randomizer"))
        if legacy and "adjacency" not in rows[0] and not any(a.startswith("--adjacency") for a in argv):
            argv.append("--adjacency=" + legacy)
            print("%s: recorded before --adjacency: re-run with --adjacency=%s" % (path, legacy))
        run = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if run.returncode != 0:
            print("%s: %s failed (%d): %s" % (path, " ".join(argv), run.returncode, run.stderr.strip()[-500:]))
            return 2
        got = [json.loads(l) for l in open(metrics) if l.strip()]
    bad = 0
    by_round = {r["round"]: r for r in got}
    for w in want:
        g = by_round.get(w["round"])
        if g is None:
            print("%s: round %d not re-run" % (path, w["round"]))
            bad += 1
            continue
        for f in FIELDS:
            if f == "epsilon" and "route" not in w and f in w:
                bad += legacy_epsilon(path, w, g, args.tol)
                continue
            if f in w and differs(w[f], g.get(f), args.tol):
                print("%s: round %d %s committed %r, re-run %r" % (path, w["round"], f, w[f], g.get(f)))
                bad += 1
    status = "same" if bad == 0 else "DIFFERENT"
    print("%s: %s (%d rows to round %d, epoch %g, tol %g)" % (path, status, len(want), want[-1]["round"], epochs, args.tol))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="shuffledp", help="the shuffledp binary to re-run with")
    ap.add_argument("--rows", type=int, default=3, help="how many of each file's first rows to re-run and compare")
    ap.add_argument("--data-dir", default="", help="replace the command's --data-dir (MNIST IDX files)")
    ap.add_argument("--tol", type=float, default=1e-9, help="absolute tolerance")
    ap.add_argument("--set", choices=sorted(SETS), help="re-run a named set of committed results (SETS)")
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    if args.set:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        for pattern in SETS[args.set]:
            args.files += sorted(glob.glob(os.path.join(root, pattern)))
    if not args.files:
        ap.error("give metrics files or --set")
    if args.rows < 1:
        ap.error("--rows must be >= 1")
    worst = 0
    for path in args.files:
        worst = max(worst, check(path, args))
    sys.exit(worst)


if __name__ == "__main__":
    main()
