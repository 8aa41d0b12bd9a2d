#!/usr/bin/env python3
"""Independent oracle for shuffler/checkin_bruteforce_test.go (mpmath, 50 digits).

Check-in rounds: every client is selected independently with probability
rate (cond: a selection of nobody is drawn again, i.e. conditioned on at
least one); a selected client reports R(x_i), or, if it drops out
(probability table[i][x_i]), a dummy R(x0) (x0 = input 0) when pad is set
and nothing when it is not. The server sees the histogram of the reports
(its size included). Writes checkin_oracle.json with the exact Renyi
divergences between neighbouring datasets. Run: python3 checkin_oracle.py
"""
import itertools, json
from mpmath import mp, mpf, exp, log, inf

mp.dps = 50

def rr(k, eps0):
    e = exp(mpf(eps0))
    return [[e / (e + k - 1) if x == y else 1 / (e + k - 1) for y in range(k)] for x in range(k)]

def view(m, n, rate, data, table, pad, cond):
    o = len(m[0])
    rate = mpf(rate)
    p0 = (1 - rate) ** n
    out = {}
    for sel in itertools.product([0, 1], repeat=n):
        size = sum(sel)
        if cond and size == 0:
            continue
        w = rate ** size * (1 - rate) ** (n - size)
        if cond:
            w /= 1 - p0
        cur = {tuple([0] * o): w}
        for i in range(n):
            if not sel[i]:
                continue
            p = mpf(table[i][data[i]])
            nxt = {}
            for h, q in cur.items():
                for y in range(o):
                    prob = (1 - p) * m[data[i]][y] + (p * m[0][y] if pad else 0)
                    h2 = list(h); h2[y] += 1; h2 = tuple(h2)
                    nxt[h2] = nxt.get(h2, 0) + q * prob
                if not pad:
                    nxt[h] = nxt.get(h, 0) + q * p
            cur = nxt
        for h, q in cur.items():
            if q > 0:
                out[h] = out.get(h, 0) + q
    return out

def renyi(p, q, a):
    a = mpf(a)
    s = 0
    for key, pv in p.items():
        if pv == 0:
            continue
        if q.get(key, 0) == 0:
            return inf
        s += pv ** a * q[key] ** (1 - a)
    return log(s) / (a - 1)

def fmt(x):
    return "inf" if x == inf else mp.nstr(x, 25)

instances = [
    # name, eps0, n, rate, data, x1', table, pad, cond
    ("padded-table", 1.0, 3, 0.5, [1, 0, 1], 0, [[0.25, 0.5], [0, 0.5], [1, 0.75]], True, True),
    ("padded-own", 0.5, 3, 0.9, [1, 1, 0], 0, [[0, 0.5], [0.5, 0], [0, 0]], True, True),
    ("padded-ideal", 2.0, 3, 0.25, [1, 0, 1], 0, [[0.5, 0.5], [0.1, 0.9], [0, 1]], True, False),
    ("client-coin-rates", 1.0, 3, 0.5, [1, 0, 0], 0, [[0, 0], [1, 1], [1, 1]], False, True),
]
orders = [1.5, 2, 8]
rows = []
for name, eps0, n, rate, data, x1p, table, pad, cond in instances:
    m = rr(2, eps0)
    d2 = list(data); d2[0] = x1p
    p, q = view(m, n, rate, data, table, pad, cond), view(m, n, rate, d2, table, pad, cond)
    for a in orders:
        rows.append({"name": name, "eps0": eps0, "n": n, "rate": rate, "data": data, "x1p": x1p, "table": table,
                     "pad": pad, "cond": cond, "order": a,
                     "forward": fmt(renyi(p, q, a)), "reverse": fmt(renyi(q, p, a))})
with open("checkin_oracle.json", "w") as f:
    json.dump(rows, f, indent=1)
    f.write("\n")
