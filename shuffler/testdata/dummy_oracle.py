#!/usr/bin/env python3
"""Independent oracle for shuffler/dummy_bruteforce_test.go (mpmath, 50 digits).

Computes, for a few pinned instances, the exact Rényi divergence between the
server's views of a round under neighbouring datasets, where each sampled
client's report is R(x_i), or a dummy R(x0) (x0 = input 0) when it drops out.
Writes dummy_oracle.json. Run: python3 dummy_oracle.py
"""
import itertools, json
from mpmath import mp, mpf, exp, log

mp.dps = 50

def rr(k, eps0):
    e = exp(mpf(eps0))
    return [[e / (e + k - 1) if x == y else 1 / (e + k - 1) for y in range(k)] for x in range(k)]

def view(m, n, k, data, drop):
    """Distribution of the histogram of reports (dummies indistinguishable)."""
    o = len(m[0])
    out = {}
    subsets = list(itertools.combinations(range(n), k))
    w = mpf(1) / len(subsets)
    for s in subsets:
        cur = {tuple([0] * o): w}
        for i in s:
            p = mpf(drop(i, data, s))
            sym = [(1 - p) * m[data[i]][y] + p * m[0][y] for y in range(o)]
            nxt = {}
            for h, q in cur.items():
                for y in range(o):
                    h2 = list(h); h2[y] += 1; h2 = tuple(h2)
                    nxt[h2] = nxt.get(h2, 0) + q * sym[y]
            cur = nxt
        for h, q in cur.items():
            out[h] = out.get(h, 0) + q
    return out

def renyi(p, q, a):
    a = mpf(a)
    s = sum(pv ** a * q[key] ** (1 - a) for key, pv in p.items() if pv > 0)
    return log(s) / (a - 1)

def own_table(table):
    return lambda i, d, s: table[i][d[i]]

instances = [
    # name, eps0, n, k, data, x1', dropout
    ("own-table", 1.0, 3, 2, [1, 0, 1], 0, own_table([[0.25, 0.5], [0, 0.5], [1, 0.75]])),
    ("cross-dependent", 0.5, 2, 1, [1, 1], 0, lambda i, d, s: 1 if (i == 1 and d[0] == 0) else 0),
    ("none", 2.0, 4, 3, [1, 0, 1, 1], 0, lambda i, d, s: 0),
]
orders = [1.5, 2, 8]
rows = []
for name, eps0, n, k, data, x1p, drop in instances:
    m = rr(2, eps0)
    d2 = list(data); d2[0] = x1p
    p, q = view(m, n, k, data, drop), view(m, n, k, d2, drop)
    for a in orders:
        rows.append({"name": name, "eps0": eps0, "n": n, "k": k, "data": data, "x1p": x1p, "order": a,
                     "forward": mp.nstr(renyi(p, q, a), 25), "reverse": mp.nstr(renyi(q, p, a), 25)})
with open("dummy_oracle.json", "w") as f:
    json.dump(rows, f, indent=1)
    f.write("\n")
