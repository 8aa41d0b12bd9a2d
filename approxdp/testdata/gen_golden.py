#!/usr/bin/env python3
"""Independent high-precision oracle for package approxdp.

Run:  python3 approxdp/testdata/gen_golden.py > approxdp/testdata/golden.json

Written from the formulas (FMT20 Thm 3.1 and Appendix E, Ullman 2017,
KOV15 Thm 3.5), not from the Go code: the clones divergence is summed by brute
force over every clone count c and every position x, in BOTH directions
(P||Q and Q||P) with mpmath at 60 digits, so the Go code's symmetry shortcut,
cut-off and log-space summation are all checked.
"""
import json
from mpmath import mp, mpf, binomial, exp, log, log1p, sqrt, tanh, e as EULER

mp.dps = 60


def closed_form(n, eps0, delta):
    n, eps0, delta = mpf(n), mpf(eps0), mpf(delta)
    if eps0 > log(n / (16 * log(4 / delta))):
        return None
    a = 8 * sqrt(exp(eps0) * log(4 / delta) / n)
    b = 8 * exp(eps0) / n
    e1 = log(1 + a + b)
    factor = (1 - exp(-eps0)) / (1 + exp(-eps0 - e1))
    return log(1 + factor * (a + b))


def clones_delta(n, eps0, eps):
    """max(D_{e^eps}(P||Q), D_{e^eps}(Q||P)) summed over all (c, x)."""
    eps0, eps = mpf(eps0), mpf(eps)
    p = exp(-eps0)
    alpha = exp(eps0) / (exp(eps0) + 1)
    ee = exp(eps)
    dpq = mpf(0)
    dqp = mpf(0)
    for c in range(n):
        wc = binomial(n - 1, c) * p**c * (1 - p) ** (n - 1 - c)
        half = mpf(2) ** (-c)
        b = [binomial(c, x) * half for x in range(c + 1)]

        def pmf(x):
            return b[x] if 0 <= x <= c else mpf(0)

        spq = mpf(0)
        sqp = mpf(0)
        for x in range(c + 2):
            P = alpha * pmf(x) + (1 - alpha) * pmf(x - 1)
            Q = (1 - alpha) * pmf(x) + alpha * pmf(x - 1)
            spq += max(mpf(0), P - ee * Q)
            sqp += max(mpf(0), Q - ee * P)
        dpq += wc * spq
        dqp += wc * sqp
    return dpq, dqp


def clones_eps(n, eps0, delta, iters=60):
    lo, hi = mpf(0), mpf(eps0)
    for _ in range(iters):
        mid = (lo + hi) / 2
        d = max(clones_delta(n, eps0, mid))
        if d <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def ullman(eps, delta, gamma):
    eps, delta, gamma = mpf(eps), mpf(delta), mpf(gamma)
    return log(1 + gamma * (exp(eps) - 1)), gamma * delta


def kov15(eps, T, dt):
    eps, T, dt = mpf(eps), mpf(T), mpf(dt)
    head = T * eps * tanh(eps / 2)
    return min(T * eps,
               head + eps * sqrt(2 * T * log(EULER + sqrt(T * eps**2) / dt)),
               head + eps * sqrt(2 * T * log(1 / dt)))


def compose_at_split(eps_s, delta_s, gamma, T, dt):
    e1, d1 = ullman(eps_s, delta_s, gamma)
    return kov15(e1, T, dt), 1 - (1 - d1) ** T * (1 - mpf(dt))


def s(x):
    return mp.nstr(x, 25)


def pipeline_min(n, k, eps0, T, delta, decades=4, per_decade=10):
    """min over a log grid of delta_shuffle (and delta_shuffle = 0) of the
    fmt20(numeric)+ullman+kov15 bound, each split made exactly feasible."""
    gamma = mpf(k) / n
    delta = mpf(delta)
    best = kov15(ullman(eps0, 0, gamma)[0], T, delta)  # (eps0, 0) per shuffle
    ds_max = delta / (gamma * T)
    for i in range(1, decades * per_decade + 1):
        ds = ds_max * mpf(10) ** (-mpf(i) / per_decade)
        d1 = gamma * ds
        dt = 1 - (1 - delta) / (1 - d1) ** T
        if dt <= 0:
            continue
        es = clones_eps(k, eps0, ds, iters=50)
        e1, _ = ullman(es, ds, gamma)
        best = min(best, kov15(e1, T, dt))
    return best


out = {"closed_form": [], "clones_delta": [], "clones_eps": [], "ullman": [], "kov15": [],
       "compose_at_split": [], "pipeline": []}
for n, eps0, delta in [(100000, 4, 1e-6), (10000, 1, 1e-6), (100000, 2, 1e-6),
                       (1000000, 4, 1e-8), (10**9, 3, 1e-10), (10000, 0.5, 1e-8)]:
    v = closed_form(n, eps0, delta)
    out["closed_form"].append({"n": n, "eps0": eps0, "delta": delta,
                               "valid": v is not None, "eps": s(v) if v is not None else None})
out["closed_form"].append({"n": 1000, "eps0": 2, "delta": 1e-10, "valid": False, "eps": None})

for n, eps0, eps in [(1, 1.0, 0.3), (2, 1.0, 0.2), (10, 2.0, 0.5), (50, 1.0, 0.1),
                     (50, 3.0, 1.0), (120, 0.5, 0.05), (120, 4.0, 2.5)]:
    dpq, dqp = clones_delta(n, eps0, eps)
    out["clones_delta"].append({"n": n, "eps0": eps0, "eps": eps, "pq": s(dpq), "qp": s(dqp)})

for n, eps0, delta in [(20, 1.0, 1e-2), (60, 2.0, 1e-3), (80, 1.0, 1e-4)]:
    out["clones_eps"].append({"n": n, "eps0": eps0, "delta": delta,
                              "eps": s(clones_eps(n, eps0, delta))})

for eps, delta, gamma in [(1.0, 1e-6, 0.001), (0.05, 1e-9, 0.5), (5.0, 1e-3, 1.0)]:
    e1, d1 = ullman(eps, delta, gamma)
    out["ullman"].append({"eps": eps, "delta": delta, "gamma": gamma, "eps_out": s(e1), "delta_out": s(d1)})

for eps, T, dt in [(0.001, 100000, 1e-9), (0.1, 10, 1e-6), (1.0, 1, 0.5), (0.01, 1000, 1e-3),
                   (2e-4, 100000, 1e-12)]:
    out["kov15"].append({"eps": eps, "T": T, "delta_tilde": dt, "eps_T": s(kov15(eps, T, dt))})

for eps_s, delta_s, gamma, T, dt in [(0.8, 1e-10, 0.001, 100000, 5e-9), (0.2, 1e-6, 0.01, 1000, 1e-7)]:
    et, dtot = compose_at_split(eps_s, delta_s, gamma, T, dt)
    out["compose_at_split"].append({"eps_s": eps_s, "delta_s": delta_s, "gamma": gamma, "T": T,
                                    "delta_tilde": dt, "eps_T": s(et), "delta_T": s(dtot)})

for n, k, eps0, T, delta in [(3000, 30, 1.0, 100, 1e-6)]:
    out["pipeline"].append({"n": n, "k": k, "eps0": eps0, "T": T, "delta": delta,
                            "grid_min_eps": s(pipeline_min(n, k, eps0, T, delta))})

print(json.dumps(out, indent=1))
