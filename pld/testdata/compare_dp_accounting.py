#!/usr/bin/env python3
"""Side-by-side timing and values against Google's dp_accounting PLD.

Not a test and not a golden source: run by hand with Debian's python3
(apt-get install python3-numpy python3-scipy python3-attr python3-absl) and
a copy of the python/dp_accounting directory of
github.com/google/differential-privacy on PYTHONPATH:

    PYTHONPATH=/path/to/differential-privacy/python/dp_accounting \
        /usr/bin/python3 pld/testdata/compare_dp_accounting.py

It builds the same pairs as package pld (the symmetric clone pair of the
subsampled shuffle; the Poisson-subsampled Gaussian; the Gaussian) with
dp_accounting's pessimistic estimate and prints epsilon and seconds.
"""
import math
import sys
import time

import numpy as np
from scipy import stats

from dp_accounting.pld import privacy_loss_distribution as pldlib


def symmetric_clone_pair(n, k, eps0, cut=60.0):
    """The symmetric clone pair as two log-pmfs over outcomes ('+', c, x),
    ('-', c, x) and 'z' (docs/proofs/pld.md, Section 2). Terms more than
    `cut` nats below the largest are dropped (for timing only)."""
    g = k / n
    alpha = math.exp(eps0) / (math.exp(eps0) + 1)
    m = k - 1
    p = math.exp(-eps0)
    cs = np.arange(0, m + 1)
    logw = stats.binom.logpmf(cs, m, p)
    keep = logw > logw.max() - cut
    up, lo = {}, {}
    used = 0.0
    for c, lw in zip(cs[keep], logw[keep]):
        xs = np.arange(int(math.floor((c + 1) / 2)) + 1, c + 2)
        b = lambda x: np.where((x >= 0) & (x <= c), stats.binom.pmf(x, c, 0.5), 0.0)
        q = math.exp(lw) * (alpha * b(xs) + (1 - alpha) * b(xs - 1))
        pc = math.exp(lw) * (alpha * b(c + 1 - xs) + (1 - alpha) * b(c - xs))
        pg = (1 - g) * q + g * pc
        for x, a, bq in zip(xs, pg, q):
            if a <= 0 or bq <= 0:
                continue
            up[("+", int(c), int(x))] = math.log(a)
            lo[("+", int(c), int(x))] = math.log(bq)
            up[("-", int(c), int(x))] = math.log(bq)
            lo[("-", int(c), int(x))] = math.log(a)
            used += a + bq
    up["z"] = math.log(1 - used)
    lo["z"] = math.log(1 - used)
    return up, lo


def timed(f):
    t0 = time.perf_counter()
    v = f()
    return v, time.perf_counter() - t0


def clone(n, k, eps0, steps, delta, h):
    def run():
        up, lo = symmetric_clone_pair(n, k, eps0)
        pld = pldlib.from_two_probability_mass_functions(
            lo, up, pessimistic_estimate=True, value_discretization_interval=h,
            log_mass_truncation_bound=-60)
        return pld.self_compose(steps).get_epsilon_for_delta(delta)
    return timed(run)


def sampled_gaussian(sigma, q, steps, delta, h):
    def run():
        pld = pldlib.from_gaussian_mechanism(
            sigma, sampling_prob=q, value_discretization_interval=h)
        return pld.self_compose(steps).get_epsilon_for_delta(delta)
    return timed(run)


if __name__ == "__main__":
    rows = []
    for (n, k, eps0, T, delta) in [(100000, 100000, 4, 1, 1e-6), (100000, 1000, 3, 10, 1e-5),
                                   (100000, 1000, 3, 100, 1e-5), (100000, 1000, 3, 1000, 1e-5),
                                   (60000, 10000, 1.5, 1200, 1e-5)]:
        for h in [1e-4, 1e-5]:
            try:
                eps, s = clone(n, k, eps0, T, delta, h)
                rows.append(f"clone n={n} k={k} eps0={eps0} T={T} delta={delta} h={h}: eps {eps:.6f} in {s:.2f} s")
            except Exception as e:  # noqa: BLE001
                rows.append(f"clone n={n} k={k} eps0={eps0} T={T} h={h}: failed {e!r}")
            print(rows[-1], flush=True)
    for (sigma, q, T, delta) in [(1.0, 0.01, 1000, 1e-5), (0.8, 0.004, 10000, 1e-5)]:
        for h in [1e-4, 1e-3]:
            eps, s = sampled_gaussian(sigma, q, T, delta, h)
            rows.append(f"sampled gaussian sigma={sigma} q={q} T={T} delta={delta} h={h}: eps {eps:.6f} in {s:.2f} s")
            print(rows[-1], flush=True)
