#!/usr/bin/env python3
"""Independent golden epsilons for package pld at the extremes (many rounds,
tiny delta), computed with mpmath at 40 digits. Run from this directory:
python3 gen_extreme.py > extreme.json

1. The Gaussian mechanism (sensitivity 1, noise sigma per step) composed
   T times is the Gaussian mechanism at s = sigma/sqrt(T):
   delta(eps) = Phi(-eps s + 1/(2 s)) - e^eps Phi(-eps s - 1/(2 s)).
2. Binary randomized response at a (P = (e^a, 1)/(1 + e^a), Q the reverse):
   the loss of T steps is (2A - T) a with A ~ Bin(T, e^a/(1 + e^a)) under
   P, so delta(eps) = sum over (2A - T) a > eps of
   Bin(T, p)(A) (1 - e^(eps - (2A - T) a)). The pair is symmetric, so both
   orders of add-remove neighbours give the same value.

epsilon(delta) is the root of delta(eps) = delta (delta(eps) is continuous
and decreasing in eps), found by bisection to 1e-30. About 2 CPU-minutes
(the binomial sums).
"""
import json
import mpmath as mp

mp.mp.dps = 40


def Phi(z):
    return mp.ncdf(z)


def gaussian_delta(s, eps):
    return Phi(-eps * s + 1 / (2 * s)) - mp.exp(eps) * Phi(-eps * s - 1 / (2 * s))


def rr_delta(a, T, eps):
    p = mp.exp(a) / (1 + mp.exp(a))
    lp, lq = mp.log(p), mp.log(1 - p)
    lgT = mp.loggamma(T + 1)
    # first A with (2A - T) a > eps
    A0 = int(mp.floor((T + eps / a) / 2)) + 1
    mean = T * p
    sd = mp.sqrt(T * p * (1 - p))
    A1 = min(T, int(mean + 60 * sd) + 1)
    total = mp.mpf(0)
    for A in range(max(A0, 0), A1 + 1):
        lw = lgT - mp.loggamma(A + 1) - mp.loggamma(T - A + 1) + A * lp + (T - A) * lq
        L = (2 * A - T) * a
        total += mp.exp(lw) * (1 - mp.exp(eps - L))
    return total


def solve(f, delta, lo, hi):
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    assert f(lo) > delta > f(hi)
    while hi - lo > mp.mpf("1e-30"):
        mid = (lo + hi) / 2
        if f(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


out = {"gaussian": [], "rr": []}
for sigma, T, delta in [(7000, 1000000, mp.mpf("1e-12")), (700, 10000, mp.mpf("1e-12"))]:
    s = mp.mpf(sigma) / mp.sqrt(T)
    eps = solve(lambda e: gaussian_delta(s, e), delta, 0, 50)
    out["gaussian"].append({"sigma": sigma, "steps": T, "delta": float(delta), "eps": mp.nstr(eps, 30)})
for a, T, delta in [(mp.mpf("7e-6"), 1000000, mp.mpf("1e-12"))]:
    eps = solve(lambda e: rr_delta(a, T, e), delta, 0, 1)
    out["rr"].append({"a": float(a), "steps": T, "delta": float(delta), "eps": mp.nstr(eps, 30)})
print(json.dumps(out, indent=1))
