#!/usr/bin/env python3
"""Numerical checks of the shuffle Gaussian routes (docs/proofs/shuffle-gaussian.md).

Independent of the Go code: python3 + mpmath 1.3.0 only. Units: the clipping
norm C = 1, inputs in [-1, 1] (1-D instances of the d-dimensional mechanism),
noise N(0, sigma^2) per report. Writes shuffle_gaussian_golden.json:

  renyi_n2   exact D_lambda(M(D) || M(D')) of the shuffled pair of n = 2
             reports (2-D composite Gauss-Legendre of the smooth integrand
             p^lam q^(1-lam) at two resolutions; err: their difference), for the
             counterexample placement D = (x, -x), D' = (0, -x), |x| = 1
             (zero-out) and random / adversarial placements; checked here
             against Cor. 1, lambda |x - x'|^2 / (2 sigma^2).
  hs_n2      exact hockey-stick H_{e^eps}(M(D) || M(D')) at n = 2 (rotated
             coordinates: a closed-form inner integral and a 1-D mpmath
             quadrature, see hs_n2), checked against the Gaussian pair's
             profile delta_G(eps; |x - x'| / sigma).
  hs_wor     WOR subsampling, k of n, q = k/n (k = 1: one report, 1-D
             mpmath quadrature split at the sign changes; k = 2 of 3: 2-D
             Gauss-Legendre at two resolutions, err 4x their difference), checked
             against delta_rem(eps) = q delta_G(log(1 + (e^eps - 1)/q); 2/sigma)
             for both adjacencies; NEGATIVE CONTROL: the same formula at
             sensitivity 1 (what zero-out would cost without the other
             sampled client) is exceeded at the zero-out placement.
  hs_checkin check-in with rate p at n = 2 (outputs: none, one or two
             reports; the two-report part as hs_n2), checked against
             p delta_G(eps; |x - x'|/sigma).
  pair_profiles  the privacy profiles of the dominating pairs themselves
             (the WOR pair after 1 and 2 rounds, in closed form over Phi
             plus one mpmath quadrature; the check-in pair after 1 round),
             for the pld package's discretisation and composition.
  mc         Monte Carlo at n = 20 (zero-out counterexample placement
             D = (x, -x, ..., -x), D' = (0, -x, ..., -x)): the Renyi moment
             at order 4 and hockey-sticks, with standard errors; the WOR
             mechanism at n = 20, k = 5 likewise.

The NEGATIVE CONTROL of the Renyi check: ICLR'23 Thm 1 at sigma (the pair
(0..0) vs (1,0..0)) claims D_2 = 0.620115 at n = 2, sigma = 1; the exact
value at the counterexample placement is 0.951458 (the Go test computes
Thm 1 with package shufflegauss and asserts it lies below this golden).

Run: python3 shuffle_gaussian_oracle.py > shuffle_gaussian_golden.json
(about two minutes).
"""
import json
import math
import random
import sys

from mpmath import mp, mpf, quad, exp, log, erfc, sqrt, pi, inf

mp.dps = 25


def phi(z, s):
    return exp(-(z * z) / (2 * s * s)) / (s * sqrt(2 * pi))


def Phi(z):
    return erfc(-z / sqrt(2)) / 2


def delta_gauss(eps, mu):
    """Privacy profile of (N(mu,1), N(0,1)): Balle & Wang 2018."""
    eps, mu = mpf(eps), mpf(mu)
    if mu == 0:
        return mpf(0) if eps >= 0 else 1 - exp(eps)
    return Phi(-eps / mu + mu / 2) - exp(eps) * Phi(-eps / mu - mu / 2)


def delta_rem(eps, q, mu):
    """WOR bound: q delta_G(log(1 + (e^eps - 1)/q)) for eps >= 0."""
    return q * delta_gauss(log(1 + (exp(eps) - 1) / q), mu)


def shuffled2(a, b, s):
    """Density of the shuffled pair of reports N(a), N(b) on ordered pairs."""
    return lambda y1, y2: (phi(y1 - a, s) * phi(y2 - b, s) + phi(y1 - b, s) * phi(y2 - a, s)) / 2


def gl2d(f, lo, hi, cells):
    """2-D composite 4-point Gauss-Legendre of f over [lo, hi]^2."""
    w = (hi - lo) / cells
    pts = []
    for c in range(cells):
        for x, wt in GL:
            pts.append((lo + (c + (x + 1) / 2) * w, wt * w / 2))
    tot = 0.0
    for y1, w1 in pts:
        for y2, w2 in pts:
            tot += f(y1, y2) * w1 * w2
    return tot


def renyi2(D, Dp, s, lam):
    """D_lambda of the shuffled pairs: the smooth integrand p^lam q^(1-lam) by
    2-D Gauss-Legendre on [-L, L]^2 at two resolutions (err: their
    difference, plus a bound on the mass outside the box, relative)."""
    lp, lq = flogshuffled2(D[0], D[1], s), flogshuffled2(Dp[0], Dp[1], s)
    L = 1 + 12 * s + 2 * lam * s  # the tilted integrand's tails are below 1e-25 outside
    f = lambda y1, y2: math.exp(lam * lp(y1, y2) + (1 - lam) * lq(y1, y2))
    a = gl2d(f, -L, L, 60)
    b = gl2d(f, -L, L, 120)
    v = math.log(b) / (lam - 1)
    err = (abs(a - b) / b + 1e-13) / (lam - 1)
    return v, err


# Gauss-Legendre nodes on [-1, 1] (double precision, mpmath-computed).
def gl_nodes(m):
    from mpmath import legendre, findroot, diff
    nodes = []
    for i in range(1, m + 1):
        x0 = math.cos(math.pi * (i - 0.25) / (m + 0.5))
        x = findroot(lambda t: legendre(m, t), x0)
        w = 2 / ((1 - x * x) * diff(lambda t: legendre(m, t), x) ** 2)
        nodes.append((float(x), float(w)))
    return nodes


GL = gl_nodes(4)


def hs2d(fp, fq, gamma, lo, hi, cells):
    """sum over a cells x cells grid of 4x4 Gauss-Legendre of (p - gamma q)_+."""
    w = (hi - lo) / cells
    pts = []
    for c in range(cells):
        for x, wt in GL:
            pts.append((lo + (c + (x + 1) / 2) * w, wt * w / 2))
    tot = 0.0
    for y1, w1 in pts:
        for y2, w2 in pts:
            d = fp(y1, y2) - gamma * fq(y1, y2)
            if d > 0:
                tot += d * w1 * w2
    return tot


def fphi(z, s):
    return math.exp(-z * z / (2 * s * s)) / (s * math.sqrt(2 * math.pi))


def fshuffled2(a, b, s):
    return lambda y1, y2: (fphi(y1 - a, s) * fphi(y2 - b, s) + fphi(y1 - b, s) * fphi(y2 - a, s)) / 2


def flogshuffled2(a, b, s):
    """log of fshuffled2, without underflow."""
    c = -math.log(s * s * 2 * math.pi) - math.log(2)

    def f(y1, y2):
        u = -((y1 - a) ** 2 + (y2 - b) ** 2) / (2 * s * s)
        v = -((y1 - b) ** 2 + (y2 - a) ** 2) / (2 * s * s)
        m = max(u, v)
        return c + m + math.log(math.exp(u - m) + math.exp(v - m))
    return f


def hs_n2(D, Dp, s, eps):
    """H_{e^eps} of the shuffled pairs of reports N(D[0]), N(D[1]) against
    N(Dp[0]), N(Dp[1]) (D[1] == Dp[1], D[0] != Dp[0]), exactly: in the
    rotated coordinates u = (y1+y2)/sqrt2, v = (y1-y2)/sqrt2 both densities
    factor as phi_s(u - mu) psi(v), psi(v) = (phi_s(v-d) + phi_s(v+d))/2,
    mu = (a+b)/sqrt2, d = (a-b)/sqrt2; for fixed v the set {p > gamma q} is
    a half-line in u, so the inner integral is closed form in Phi and the
    outer one (smooth in v) is an mpmath quadrature."""
    s = mpf(s)
    gamma = exp(mpf(eps))
    r2 = sqrt(2)
    mp_, dp = (D[0] + D[1]) / r2, (D[0] - D[1]) / r2
    mq, dq = (Dp[0] + Dp[1]) / r2, (Dp[0] - Dp[1]) / r2
    psi = lambda v, d: (phi(v - d, s) + phi(v + d, s)) / 2

    def inner(v):
        a, b = psi(v, dp), gamma * psi(v, dq)
        ustar = (mp_ + mq) / 2 + s * s * log(b / a) / (mp_ - mq)
        if mp_ > mq:
            return a * Phi(-(ustar - mp_) / s) - b * Phi(-(ustar - mq) / s)
        return a * Phi((ustar - mp_) / s) - b * Phi((ustar - mq) / s)
    L = 2 + 14 * s
    pts = [-L + 2 * L * i / 40 for i in range(41)]
    v, err = quad(inner, pts, error=True)
    return v, 10 * err + mpf(10) ** -18


def hs1d(fp, fq, gamma, L):
    """integral of (p - gamma q)_+ over [-L, L], split at the sign changes
    of p - gamma q (located on a grid of 2000 and refined by bisection), so
    that every piece has a smooth integrand of one sign."""
    g = lambda y: fp(y) - gamma * fq(y)
    grid = [mpf(-L) + mpf(2 * L) * i / 2000 for i in range(2001)]
    vals = [g(y) for y in grid]
    cuts = [grid[0]]
    for i in range(2000):
        if (vals[i] > 0) != (vals[i + 1] > 0):
            a, b = grid[i], grid[i + 1]
            for _ in range(100):
                m = (a + b) / 2
                if (g(m) > 0) == (vals[i] > 0):
                    a = m
                else:
                    b = m
            cuts.append((a + b) / 2)
    cuts.append(grid[-1])
    tot = mpf(0)
    for a, b in zip(cuts, cuts[1:]):
        if g((a + b) / 2) > 0:
            tot += quad(g, [a, b])
    return tot


class WORPair:
    """The symmetric dominating pair (P*, Q*) of WOR subsampling
    (pld.worGaussianMech; sensitivity 1, noise s, rate q), by its parts over
    x > 1/2: pos (P* density (1-q) phi(x) + q phi(x-1), Q* density phi(x),
    loss l(x)), neg (the densities swapped, loss -l(x)), and an atom at loss
    0 of mass m0 = 1 - mix(x > 1/2) - phi(x > 1/2)."""

    def __init__(self, s, q):
        self.s, self.q = mpf(s), mpf(q)
        self.m0 = 1 - self.Fm(mpf(1) / 2) - self.Fq(mpf(1) / 2)

    def Fm(self, t):  # mixture mass above t
        return (1 - self.q) * Phi(-t / self.s) + self.q * Phi(-(t - 1) / self.s)

    def Fq(self, t):
        return Phi(-t / self.s)

    def l(self, x):
        return log(1 - self.q + self.q * exp((2 * x - 1) / (2 * self.s ** 2)))

    def linv(self, r):  # x > 1/2 with l(x) = r >= 0
        return (2 * self.s ** 2 * log((exp(r) - 1 + self.q) / self.q) + 1) / 2

    def h(self, r):
        """sum over the parts b of [P_b - e^r Q_b](L_b > r)."""
        half = mpf(1) / 2
        if r >= 0:
            t = self.linv(r)
            return self.Fm(t) - exp(r) * self.Fq(t)
        pos = self.Fm(half) - exp(r) * self.Fq(half)
        t = self.linv(-r)
        neg = (self.Fq(half) - self.Fq(t)) - exp(r) * (self.Fm(half) - self.Fm(t))
        return pos + neg + self.m0 * (1 - exp(r))

    def delta1(self, eps):
        return self.h(mpf(eps))

    def delta2(self, eps):
        """the 2-fold product's profile: E over the first loss of h(eps - L1)."""
        eps = mpf(eps)
        s, q = self.s, self.q
        fm = lambda x: (1 - q) * phi(x, s) + q * phi(x - 1, s)
        fq = lambda x: phi(x, s)
        half = mpf(1) / 2
        top = 1 + 30 * s
        # pos part: loss l(x1); h(eps - l) has a kink where l(x1) = eps.
        pts = [half, top]
        if eps > 0:
            pts = [half, self.linv(eps), top]
        pos = quad(lambda x: fm(x) * self.h(eps - self.l(x)), pts)
        pts = [half, top]
        if eps < 0:
            pts = [half, self.linv(-eps), top]
        neg = quad(lambda x: fq(x) * self.h(eps + self.l(x)), pts)
        return pos + neg + self.m0 * self.h(eps)


def main():
    rnd = random.Random(20261201)
    out = {"generator": "route/testdata/shuffle_gaussian_oracle.py (mpmath %s)" % mp.__dict__.get("version", "1.3.0")}

    # --- the dominating pairs' profiles ------------------------------------------
    prof = []
    for sig, q in [(0.6, 0.00125), (1.0, 0.01), (0.5, 0.3), (2.0, 0.05)]:
        pair = WORPair(sig, q)
        for eps in [0.0, 0.1, 0.5, 1.0, 2.0]:
            d1 = pair.delta1(eps)
            assert abs(d1 - delta_rem(eps, q, 1 / mpf(sig))) <= mpf(10) ** -20
            d2 = pair.delta2(eps)
            prof.append({"pair": "wor", "sigma": sig, "rate": q, "eps": eps, "delta1": mp.nstr(d1, 20),
                         "delta2": mp.nstr(d2, 20)})
            print("wor pair", sig, q, eps, mp.nstr(d1, 12), mp.nstr(d2, 12), file=sys.stderr)
    for sig, p in [(1.0, 0.1), (0.5, 0.5)]:
        for eps in [0.0, 0.5, 1.0, 2.0]:
            d1 = p * delta_gauss(eps, 1 / mpf(sig))
            prof.append({"pair": "checkin", "sigma": sig, "rate": p, "eps": eps, "delta1": mp.nstr(d1, 20)})
    out["pair_profiles"] = prof

    # --- Renyi at n = 2 -------------------------------------------------------
    renyi = []
    cases = [
        ("counterexample zero-out", (1, -1), (0, -1), 1.0, 2),
        ("counterexample zero-out", (1, -1), (0, -1), 1.0, 3),
        ("counterexample zero-out", (1, -1), (0, -1), 0.5, 2),
        ("replace-one opposite, other at x'", (1, -1), (-1, -1), 1.0, 2),
        ("replace-one opposite, other at x", (1, 1), (-1, 1), 1.0, 2),
        ("replace-one opposite, other at 0", (1, 0), (-1, 0), 1.0, 2),
    ]
    for _ in range(4):
        x, xp, r = (round(rnd.uniform(-1, 1), 3) for _ in range(3))
        cases.append(("random replace-one", (x, r), (xp, r), rnd.choice([0.5, 1.0]), rnd.choice([2, 3])))
    for _ in range(2):
        x, r = (round(rnd.uniform(-1, 1), 3) for _ in range(2))
        cases.append(("random zero-out", (x, r), (0, r), rnd.choice([0.5, 1.0]), 2))
    for name, D, Dp, s, lam in cases:
        v, err = renyi2(D, Dp, s, lam)
        sens = abs(D[0] - Dp[0])
        cor1 = lam * sens ** 2 / (2 * s ** 2)
        assert v - err <= cor1, (name, D, Dp, s, lam, v, cor1)
        renyi.append({"name": name, "n": 2, "D": list(D), "Dprime": list(Dp), "sigma": s, "order": lam,
                      "renyi": v, "err": err, "cor1": cor1})
        print("renyi", name, D, Dp, s, lam, v, err, "cor1", cor1, file=sys.stderr)
    out["renyi_n2"] = renyi

    # --- hockey-stick at n = 2 ------------------------------------------------
    hs = []
    hcases = [((1, -1), (0, -1), 1.0), ((1, -1), (-1, -1), 1.0), ((1, -1), (-1, -1), 0.3),
              ((1, 1), (-1, 1), 0.3), ((1, -1), (0, -1), 0.3), ((0.4, -0.9), (-0.7, -0.9), 0.5)]
    for D, Dp, s in hcases:
        sens = abs(D[0] - Dp[0])
        for eps in [0.0, 0.5, 1.0, 2.0]:
            v, err = hs_n2(D, Dp, s, eps)
            bound = delta_gauss(eps, sens / mpf(s))
            assert v - err <= bound, (D, Dp, s, eps, v, err, bound)
            v, err, bound = float(v), float(err) + 1e-16 * float(v), float(bound)
            hs.append({"n": 2, "D": list(D), "Dprime": list(Dp), "sigma": s, "eps": eps, "hs": v, "err": err,
                       "gauss_bound": bound})
            print("hs", D, Dp, s, eps, v, err, bound, file=sys.stderr)
    out["hs_n2"] = hs

    # --- WOR subsampling --------------------------------------------------------
    wor = []
    # k = 1: the output is one report, M(D) = mean of N(x_i).
    wcases = [
        ("zero-out", [1, -1], [0, -1], 1, 1.0),
        ("zero-out", [1, -1], [0, -1], 1, 0.5),
        ("replace-one", [1, -1], [-1, -1], 1, 1.0),
        ("replace-one", [1, -1, -1], [-1, -1, -1], 1, 1.0),
        ("zero-out", [1, -1, -1], [0, -1, -1], 1, 0.5),
        ("replace-one", [0.3, -0.8, 0.9], [-0.6, -0.8, 0.9], 1, 0.7),
    ]
    for adj, D, Dp, k, s in wcases:
        n = len(D)
        q = mpf(k) / n
        fp = lambda y, D=D, s=s: sum(phi(y - x, mpf(s)) for x in D) / n
        fq = lambda y, Dp=Dp, s=s: sum(phi(y - x, mpf(s)) for x in Dp) / n
        for eps in [0.0, 0.5, 1.0, 2.0, 3.0]:
            v = hs1d(fp, fq, exp(eps), 1 + 12 * s)
            bound = delta_rem(eps, q, 2 / mpf(s))
            wrong = delta_rem(eps, q, 1 / mpf(s))  # sensitivity 1: the known-wrong variant
            assert v <= bound * (1 + mpf(10) ** -12) + mpf(10) ** -20, (adj, D, Dp, s, eps, v, bound)
            wor.append({"adjacency": adj, "n": n, "k": k, "D": D, "Dprime": Dp, "sigma": s, "eps": eps,
                        "hs": mp.nstr(v, 20), "bound": mp.nstr(bound, 20), "wrong_bound": mp.nstr(wrong, 20),
                        "wrong_exceeded": bool(v > wrong * (1 + mpf(10) ** -12))})
            print("wor", adj, D, Dp, s, eps, mp.nstr(v, 10), "bound", mp.nstr(bound, 10), "wrong", mp.nstr(wrong, 10),
                  file=sys.stderr)
    # k = 2 of n = 3: the shuffled pair of the sampled reports (2-D).
    for adj, D, Dp, s in [("replace-one", [1, -1, -1], [-1, -1, -1], 0.5), ("zero-out", [1, -1, -1], [0, -1, -1], 0.5)]:
        subsets = [(0, 1), (0, 2), (1, 2)]

        def mix(data):
            fs = [fshuffled2(data[i], data[j], s) for i, j in subsets]
            return lambda y1, y2: sum(f(y1, y2) for f in fs) / len(fs)
        fp, fq = mix(D), mix(Dp)
        L = 1 + 8 * s
        for eps in [0.0, 1.0, 2.0]:
            a = hs2d(fp, fq, math.exp(eps), -L, L, 80)
            b = hs2d(fp, fq, math.exp(eps), -L, L, 160)
            err = 4 * abs(a - b) + 1e-14  # the kink's error, generously
            bound = float(delta_rem(eps, mpf(2) / 3, 2 / mpf(s)))
            assert b - err <= bound, (adj, D, Dp, s, eps, b, bound)
            wor.append({"adjacency": adj, "n": 3, "k": 2, "D": D, "Dprime": Dp, "sigma": s, "eps": eps,
                        "hs": repr(b), "err": err, "bound": repr(bound)})
            print("wor k=2", adj, eps, b, abs(a - b), bound, file=sys.stderr)
    out["hs_wor"] = wor

    # --- check-in at n = 2 ------------------------------------------------------
    chk = []
    for adj, D, Dp, s, p in [("zero-out", (1, -1), (0, -1), 1.0, 0.5), ("replace-one", (1, -1), (-1, -1), 0.5, 0.3),
                             ("replace-one", (1, 1), (-1, 1), 0.5, 0.8)]:
        sens = abs(D[0] - Dp[0])
        for eps in [0.0, 1.0, 2.0]:
            g = math.exp(eps)
            # none: mass (1-p)^2 both -> no contribution for eps >= 0.
            # one report: client 0 alone (p(1-p)) or client 1 alone ((1-p)p).
            f1p = lambda y: p * (1 - p) * (fphi(y - D[0], s) + fphi(y - D[1], s))
            f1q = lambda y: p * (1 - p) * (fphi(y - Dp[0], s) + fphi(y - Dp[1], s))
            one = float(hs1d(lambda y: mpf(f1p(float(y))), lambda y: mpf(f1q(float(y))), g, 1 + 12 * s))
            two, _ = hs_n2(D, Dp, s, eps)
            v = one + p * p * float(two)
            err = 1e-15
            bound = p * float(delta_gauss(eps, sens / s))
            assert v - err <= bound, (adj, eps, v, bound)
            chk.append({"adjacency": adj, "n": 2, "rate": p, "D": list(D), "Dprime": list(Dp), "sigma": s, "eps": eps,
                        "hs": v, "err": err, "bound": bound})
            print("checkin", adj, eps, v, err, bound, file=sys.stderr)
    out["hs_checkin"] = chk

    # --- Monte Carlo at n = 20 ---------------------------------------------------
    mc = []
    rng = random.Random(7)
    n, s, x = 20, 1.0, 1.0
    N = 200000

    def ratio_shuffle(ys, a, b, r):
        # p/q for the multiset ys: sum_i phi(y_i - a)/phi(y_i - r) over sum_i phi(y_i - b)/phi(y_i - r).
        num = sum(math.exp(-((y - a) ** 2 - (y - r) ** 2) / (2 * s * s)) for y in ys)
        den = sum(math.exp(-((y - b) ** 2 - (y - r) ** 2) / (2 * s * s)) for y in ys)
        return num / den

    # Renyi moment of order 4 under Q = M(D'): E_Q[(p/q)^4], and hockey-sticks E_P[(1 - g q/p)_+].
    samples_q, samples_p = [], []
    for _ in range(N):
        ys = [rng.gauss(0, s)] + [rng.gauss(-x, s) for _ in range(n - 1)]
        samples_q.append(ratio_shuffle(ys, x, 0, -x))
        ys = [rng.gauss(x, s)] + [rng.gauss(-x, s) for _ in range(n - 1)]
        samples_p.append(ratio_shuffle(ys, x, 0, -x))
    lam = 4
    m = [v ** lam for v in samples_q]
    mean = sum(m) / N
    se = math.sqrt(sum((v - mean) ** 2 for v in m) / (N - 1) / N)
    d4 = math.log(mean) / (lam - 1)
    d4_lo = math.log(max(mean - 3 * se, 1e-300)) / (lam - 1)
    d4_hi = math.log(mean + 3 * se) / (lam - 1)
    assert d4_hi <= lam / (2 * s * s), (d4, d4_hi)
    mc.append({"kind": "shuffle renyi", "n": n, "sigma": s, "x": x, "order": lam, "samples": N, "renyi": d4,
               "renyi_lo3se": d4_lo, "renyi_hi3se": d4_hi, "cor1": lam / (2 * s * s)})
    print("mc renyi", d4, d4_lo, d4_hi, file=sys.stderr)
    for eps in [0.5, 1.0, 2.0]:
        g = math.exp(eps)
        vals = [max(0.0, 1 - g / v) for v in samples_p]
        mean = sum(vals) / N
        se = math.sqrt(sum((v - mean) ** 2 for v in vals) / (N - 1) / N)
        bound = float(delta_gauss(eps, x / s))
        assert mean - 3 * se <= bound
        mc.append({"kind": "shuffle hs", "n": n, "sigma": s, "x": x, "eps": eps, "samples": N, "hs": mean, "se": se,
                   "gauss_bound": bound})
        print("mc hs", eps, mean, se, bound, file=sys.stderr)

    # WOR k of n: the other n-1 clients at r = -1; the changed one x = 1 vs
    # x' (replace-one -1, zero-out 0). M(D) as a mixture over whether the
    # changed client is sampled: p/q = ((1-q) + q mean_i l_x(y_i)) / ((1-q) + q mean_i l_x'(y_i)),
    # l_a(y) = phi(y - a)/phi(y - r).
    n, k, s = 20, 5, 1.0
    qq = k / n
    for adj, xp in [("replace-one", -1.0), ("zero-out", 0.0)]:
        def lr(ys, a):
            return sum(math.exp(-((y - a) ** 2 - (y + 1) ** 2) / (2 * s * s)) for y in ys) / len(ys)
        vals_p = []
        for _ in range(N // 2):
            if rng.random() < qq:
                ys = [rng.gauss(1.0, s)] + [rng.gauss(-1.0, s) for _ in range(k - 1)]
            else:
                ys = [rng.gauss(-1.0, s) for _ in range(k)]
            vals_p.append(((1 - qq) + qq * lr(ys, 1.0)) / ((1 - qq) + qq * lr(ys, xp)))
        M = len(vals_p)
        for eps in [0.25, 0.5, 1.0]:
            g = math.exp(eps)
            vals = [max(0.0, 1 - g / v) for v in vals_p]
            mean = sum(vals) / M
            se = math.sqrt(sum((v - mean) ** 2 for v in vals) / (M - 1) / M)
            bound = float(delta_rem(eps, mpf(qq), 2 / mpf(s)))
            assert mean - 3 * se <= bound
            mc.append({"kind": "wor hs", "adjacency": adj, "n": n, "k": k, "sigma": s, "eps": eps, "samples": M,
                       "hs": mean, "se": se, "bound": bound})
            print("mc wor", adj, eps, mean, se, bound, file=sys.stderr)
    out["mc"] = mc
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
