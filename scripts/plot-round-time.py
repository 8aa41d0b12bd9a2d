#!/usr/bin/env python3
"""Plot time per round against k from scripts/network-ideal.sh's rounds.csv.

Usage: scripts/plot-round-time.py OUT/rounds.csv FIGURE.svg [TITLE]

Log-log axes: one line per binary of the CSV (train: the in-process round;
up-after, up-before: `shuffledp up` built from the current tree and from
the --before commit; any other label as it is), each point the median over
the CSV's repetitions; the HPKE floor k x (seal + open) / cores (the
standard library's seal and open of one report, measured in the same run)
and the ideal network round (train + floor), dashed. Plain SVG written by
this script (python3's standard library only; no plotting package needed).
"""
import csv
import math
import statistics
import sys
from collections import defaultdict


def main():
    src, dst = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "time per round against k"
    rows = list(csv.DictReader(open(src)))
    series = defaultdict(lambda: defaultdict(list))
    floor, ideal, loads = defaultdict(list), defaultdict(list), []
    for r in rows:
        k = int(r["k"])
        series[r["binary"]][k].append(float(r["seconds_per_round"]))
        if r["binary"] == "train":
            f = k * (float(r["seal_us"]) + float(r["open_us"])) * 1e-6 / int(r["cores"])
            floor[k].append(f)
            ideal[k].append(float(r["ideal_s"]))
        loads.append(float(r["load1"]))
    lines = []  # (label, points, colour, dashed)
    colours = {"train": "#1f77b4", "up-after": "#d62728", "up-before": "#ff7f0e"}
    extra = ["#2ca02c", "#9467bd", "#8c564b"]
    for name in sorted(series, key=lambda s: (s != "train", s)):
        pts = sorted((k, statistics.median(v)) for k, v in series[name].items() if not any(math.isnan(x) for x in v))
        label = {"train": "train (in process)", "up-after": "up", "up-before": "up (before)", "up-shards3": "up --shards 3"}.get(name, name)
        lines.append((label, pts, colours.get(name) or extra.pop(0), False))
    lines.append(("HPKE floor k(seal+open)/cores", sorted((k, statistics.median(v)) for k, v in floor.items()), "#444444", True))
    lines.append(("ideal: train + floor", sorted((k, statistics.median(v)) for k, v in ideal.items()), "#999999", True))

    allpts = [p for _, pts, _, _ in lines for p in pts if p[1] > 0]
    kmin, kmax = min(p[0] for p in allpts), max(p[0] for p in allpts)
    ymin, ymax = min(p[1] for p in allpts), max(p[1] for p in allpts)
    x0, x1 = math.floor(math.log10(kmin)), math.ceil(math.log10(kmax))
    y0, y1 = math.floor(math.log10(ymin)), math.ceil(math.log10(ymax))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1
    W, H, L, R, T, B = 720, 480, 80, 250, 40, 60
    pw, ph = W - L - R, H - T - B

    def X(k):
        return L + (math.log10(k) - x0) / (x1 - x0) * pw

    def Y(y):
        return T + ph - (math.log10(y) - y0) / (y1 - y0) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L + pw / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="black"/>']
    for e in range(x0, x1 + 1):
        x = X(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{T + ph}" stroke="#dddddd"/>')
        out.append(f'<text x="{x:.1f}" y="{T + ph + 18}" text-anchor="middle">1e{e}</text>')
    for e in range(y0, y1 + 1):
        y = Y(10 ** e)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" stroke="#dddddd"/>')
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{10.0 ** e:g}</text>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 15}" text-anchor="middle">k (reports per round)</text>')
    out.append(f'<text x="18" y="{T + ph / 2}" text-anchor="middle" transform="rotate(-90 18 {T + ph / 2})">seconds per round</text>')
    for i, (label, pts, colour, dashed) in enumerate(lines):
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        path = " ".join(f"{X(k):.1f},{Y(y):.1f}" for k, y in pts if y > 0)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        if not dashed:
            for k, y in pts:
                out.append(f'<circle cx="{X(k):.1f}" cy="{Y(y):.1f}" r="3" fill="{colour}"/>')
        ly = T + 10 + 20 * i
        out.append(f'<line x1="{L + pw + 10}" y1="{ly}" x2="{L + pw + 40}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{L + pw + 46}" y="{ly + 4}">{label}</text>')
    out.append(f'<text x="{L + pw + 10}" y="{T + 20 * len(lines) + 20}">load average {min(loads):.1f}-{max(loads):.1f}</text>')
    out.append("</svg>")
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
