#!/usr/bin/env python3
"""Golden values for package sampledgauss (mpmath 1.3.0, 50 digits; independent of the Go code).

The sampled Gaussian mechanism (Mironov, Talwar, Zhang 2019, arXiv:1908.10530, Sec. 3):
mu0 = N(0, s^2), mu1 = N(1, s^2), mu = (1-q) mu0 + q mu1,

    A_alpha = E_{z~mu0}[(mu(z)/mu0(z))^alpha] = int phi_s(z) (1 - q + q e^{(2z-1)/(2s^2)})^alpha dz,
    eps(alpha) = log(A_alpha)/(alpha - 1).

This script does NOT use the series of the paper (Sec. 3.3/3.4) that the Go code
evaluates: it integrates over the real line numerically with mpmath.quad
(Gauss-Legendre on subintervals of width sigma/2 covering every point where the
integrand is within e^-140 of its maximum, plus the two infinite tails). Two
integrals are computed independently:
  * A_alpha itself, and
  * A_alpha - 1 = int phi_s(z) [(1 + qW)^alpha - 1 - alpha q W] dz, W = e^{(2z-1)/(2s^2)} - 1
    (a non-negative integrand; E[W] = 0), evaluated with 30 guard digits
    because of the cancellation inside the bracket,
and the script asserts that they agree, that quad's error estimates are tiny,
and, at integer orders, that A_alpha equals the exact binomial sum of Sec. 3.3
(a third, independent route). Outputs log A, log(A - 1) and eps with 30
significant digits.

Run: python3 gen_golden.py > golden.json   (takes a few minutes)
"""
import json
import sys

import mpmath
from mpmath import mp, mpf, exp, log, sqrt, pi, quad, inf, binomial, nstr

mp.dps = 50


def log_integrand(z, q, s, alpha):
    """log of phi_s(z) (1 - q + q e^{(2z-1)/(2s^2)})^alpha (float-ish, for the scan)."""
    t = (2 * z - 1) / (2 * s * s)
    # log(1 - q + q e^t) stably
    if q == 1:
        inner = t
    else:
        a, b = log(1 - q), log(q) + t
        m = max(a, b)
        inner = m + log(exp(a - m) + exp(b - m))
    return -z * z / (2 * s * s) - log(s * sqrt(2 * pi)) + alpha * inner


def log_g(z, q, s, alpha):
    """log of phi_s(z) [(1+qW)^alpha - 1 - alpha q W] (for the scan), or None when 0."""
    with mp.workdps(80):
        W = exp((2 * z - 1) / (2 * s * s)) - 1
        v = (1 + q * W) ** alpha - 1 - alpha * q * W
        if v <= 0:
            return None
        return float(-z * z / (2 * s * s) - log(s * sqrt(2 * pi)) + log(v))


def breakpoints(q, s, alpha):
    q, s, alpha = mpf(q), mpf(s), mpf(alpha)
    z0 = s * s * log(1 / q - 1) + mpf(1) / 2 if q < 1 else mpf(alpha)
    lo0 = min(mpf(0), z0) - 40 * s - 2
    hi0 = max(alpha, z0, mpf(1)) + 40 * s + 2
    step = s / 8
    n = int((hi0 - lo0) / step) + 1
    zs = [lo0 + i * step for i in range(n + 1)]
    lf = [float(log_integrand(z, q, s, alpha)) for z in zs]
    lg = [log_g(z, q, s, alpha) for z in zs]
    keep = set()
    mf = max(lf)
    keep |= {i for i, v in enumerate(lf) if v >= mf - 140}
    vg = [v for v in lg if v is not None]
    if vg:
        mg = max(vg)
        keep |= {i for i, v in enumerate(lg) if v is not None and v >= mg - 140}
    i0, i1 = min(keep), max(keep)
    if i0 == 0 or i1 == n:
        raise RuntimeError("scan window too small for q=%s s=%s alpha=%s" % (q, s, alpha))
    # Scales: the integrands are divided by e^{max log} so that quad's
    # absolute convergence test is a relative one.
    scales = (mpf(mf), mpf(mg) if vg else mpf(0))
    lo, hi = zs[i0 - 1], zs[i1 + 1]
    pts = [lo + i * s / 2 for i in range(int((hi - lo) / (s / 2)) + 1)] + [hi]
    if lo < z0 < hi:
        pts.append(z0)
    pts = sorted(set(pts))
    return [-inf] + pts + [inf], scales


def compute(q, s, alpha):
    qm, sm, am = mpf(q), mpf(s), mpf(alpha)
    pts, (lsf, lsg) = breakpoints(q, s, alpha)
    c = 1 / (sm * sqrt(2 * pi))

    def f(z):
        # phi_s(z) (1-q+qL)^alpha / e^{lsf}, computed via its logarithm.
        return exp(log(c) - z * z / (2 * sm * sm) + am * log(1 - qm + qm * exp((2 * z - 1) / (2 * sm * sm))) - lsf)

    def g(z):
        with mp.workdps(80):
            W = exp((2 * z - 1) / (2 * sm * sm)) - 1
            v = (1 + qm * W) ** am - 1 - am * qm * W
            if v <= 0:
                return mpf(0)
            r = exp(log(c) - z * z / (2 * sm * sm) + log(v) - lsg)
        return +r

    A, errA = quad(f, pts, method="gauss-legendre", error=True, maxdegree=10)
    Am1, errG = quad(g, pts, method="gauss-legendre", error=True, maxdegree=10)
    A, errA = A * exp(lsf), errA * exp(lsf)
    Am1, errG = Am1 * exp(lsg), errG * exp(lsg)
    # Cross-checks of the oracle itself.
    assert errA <= mpf(10) ** -40 * A, ("quad error A", q, s, alpha, errA, A)
    assert errG <= mpf(10) ** -35 * Am1, ("quad error A-1", q, s, alpha, errG, Am1)
    assert abs((A - 1) - Am1) <= mpf(10) ** -40 * A + mpf(10) ** -30 * Am1, ("A-1 mismatch", q, s, alpha, A - 1, Am1)
    if am == int(am) and q < 1:
        k = int(am)
        exact = sum(binomial(k, i) * (1 - qm) ** (k - i) * qm ** i * exp(mpf(i * i - i) / (2 * sm * sm))
                    for i in range(k + 1))
        assert abs(exact - A) <= mpf(10) ** -40 * A, ("binomial mismatch", q, s, alpha, exact, A)
    return A, Am1


def main():
    # (q, sigma, orders): small q to 1, sigma 0.5..50, fractional and integer
    # orders up to 256.
    grid = []
    orders_small = [1.01, 1.1, 1.5, 1.75, 2, 2.5, 3, 4.5, 7.25, 10]
    orders_large = [16, 31.5, 64, 100.5, 128, 200.75, 256, 255.5]
    for q in [1e-4, 1e-3, 0.01, 0.1, 0.5, 0.9, 1.0]:
        for s in [0.5, 1.0, 5.0, 50.0]:
            for a in orders_small:
                grid.append((q, s, a))
    for q in [1e-4, 0.01, 0.3, 0.99]:
        for s in [0.5, 2.0, 10.0, 50.0]:
            for a in orders_large:
                grid.append((q, s, a))
    # The parameters of TF Privacy's own mpmath test
    # (tensorflow_privacy/privacy/analysis/rdp_accountant_test.py,
    # test_compute_log_a_equals_mp), inside sigma >= 0.1.
    tfp = [(1e-7, 0.1, 1.01), (1e-6, 0.1, 256), (1e-5, 0.1, 256.1), (1e-6, 1, 27),
           (1e-4, 1, 1.5), (1e-3, 1, 2), (0.01, 10, 20), (0.1, 100, 20.5),
           (0.99, 0.1, 256), (0.999, 100, 256.1)]
    grid += tfp
    out = []
    for i, (q, s, a) in enumerate(grid):
        A, Am1 = compute(q, s, a)
        out.append({"q": q, "sigma": s, "order": a,
                    "log_a": nstr(log(A), 30, min_fixed=-inf, max_fixed=inf),
                    "log_am1": nstr(log(Am1), 30, min_fixed=-inf, max_fixed=inf),
                    "eps": nstr(log(A) / (mpf(a) - 1), 30, min_fixed=-inf, max_fixed=inf)})
        print("%d/%d q=%g sigma=%g order=%g eps=%s" % (i + 1, len(grid), q, s, a, out[-1]["eps"]), file=sys.stderr)
    json.dump({"generator": "gen_golden.py (mpmath %s, %d digits)" % (mpmath.__version__, mp.dps), "points": out},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
