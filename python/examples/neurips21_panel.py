#!/usr/bin/env python3
"""NeurIPS'21 Fig. 2a from Python: epsilon against the number of rounds T
for n = 10^6 clients, k = 1000 sampled per round, eps0 = 2, delta = 1e-8,
by several bounds (the paper's Thm 1, the CCS'21+WBK19 baseline, the
approximate-DP route FMT20+KOV15, the clone-pair RDP bound, the PLD
accountant, best) and the certified lower end.

Every number is the Go accountant's (``shuffledp.account(bound="all")``,
exactly ``shuffledp account --bound all --json``). With matplotlib
installed (Debian: python3-matplotlib) it writes the panel to a PNG;
otherwise, or with --table, it prints the table.

    .venv/bin/python python/examples/neurips21_panel.py --out fig2a.png
"""

import argparse
import math
import sys
from typing import Dict, List

import shuffledp

BOUNDS = ["neurips21-upper", "ccs21+wbk19", "fmt20+kov15", "clones-rdp", "pld", "best", "certified"]


def panel(steps: List[int], n: int, k: int, eps0: float, delta: float) -> Dict[str, List[float]]:
    """Epsilon of every bound of BOUNDS at each T of steps."""
    series: Dict[str, List[float]] = {b: [] for b in BOUNDS}
    for t in steps:
        res = shuffledp.account(mechanism="subsampled-shuffle", n=n, k=k, eps0=eps0, steps=t, delta=delta, bound="all")
        for b in BOUNDS:
            try:
                series[b].append(res.row(b)["epsilon"])
            except KeyError:  # skipped at these parameters (see res.warnings)
                series[b].append(math.nan)
    return series


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="neurips21_fig2a.png", help="PNG to write (needs matplotlib)")
    ap.add_argument("--table", action="store_true", help="print the table only")
    ap.add_argument("--points", type=int, default=6, help="values of T, log-spaced from 10^2 to 10^5")
    args = ap.parse_args(argv)
    steps = sorted({int(round(10 ** (2 + 3 * i / max(args.points - 1, 1)))) for i in range(args.points)})
    series = panel(steps, n=10**6, k=1000, eps0=2.0, delta=1e-8)

    print("T".rjust(8) + "".join(b.rjust(17) for b in BOUNDS))
    for i, t in enumerate(steps):
        print(str(t).rjust(8) + "".join(f"{series[b][i]:17.6g}" for b in BOUNDS))
    if args.table:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: table only (Debian: apt-get install python3-matplotlib)")
        return 0
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for b in BOUNDS:
        style = "--" if b == "certified" else "-"
        label = "certified lower end" if b == "certified" else b
        ax.plot(steps, series[b], style, marker="o", markersize=3, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rounds T")
    ax.set_ylabel("epsilon at delta = 1e-8")
    ax.set_title("NeurIPS'21 Fig. 2a: n = 1e6, k = 1000, eps0 = 2")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
