#!/usr/bin/env python3
"""Independent golden values for package pld, computed with mpmath at 50
digits. Run from this directory: python3 gen_goldens.py > goldens.json

1. The Gaussian mechanism (sensitivity 1, noise sigma, T-fold = sigma/sqrt(T)):
   delta(eps) = Phi(-eps s + 1/(2 s)) - e^eps Phi(-eps s - 1/(2 s)).
2. The Poisson-subsampled Gaussian, one step, both orders. The loss is
   monotone in x, so {loss > eps} is a half-line {x > x*} (remove) or
   {x < x*} (add) and delta(eps) = P(half-line) - e^eps Q(half-line) with
   x* solved in closed form; mixtures of normal CDFs.
3. The symmetric clone pair of the subsampled shuffle at small n: P_g, Q_c
   enumerated exactly (C ~ Bin(k-1, e^-eps0), A ~ Bin(C, 1/2),
   alpha = e^eps0/(e^eps0+1)), the symmetric pair built from its positive
   part, the T-fold product enumerated exactly, delta(eps) = sum (p - e^eps q)_+.
"""
import json
import mpmath as mp

mp.mp.dps = 50


def Phi(z):
    return mp.ncdf(z)


def gaussian_delta(sigma, eps):
    s = mp.mpf(sigma)
    e = mp.mpf(eps)
    return Phi(-e * s + 1 / (2 * s)) - mp.exp(e) * Phi(-e * s - 1 / (2 * s))


def sampled_gaussian_delta(sigma, q, eps, order):
    s, q, e = mp.mpf(sigma), mp.mpf(q), mp.mpf(eps)
    # loss_remove(x) = log(1 - q + q exp((2x - 1)/(2 s^2))).
    def mix_above(x):  # mixture P(X > x)
        return (1 - q) * (1 - Phi(x / s)) + q * (1 - Phi((x - 1) / s))

    def mix_below(x):
        return (1 - q) * Phi(x / s) + q * Phi((x - 1) / s)

    def n0_above(x):
        return 1 - Phi(x / s)

    def n0_below(x):
        return Phi(x / s)

    if order == "remove":
        # loss > eps  <=>  exp(u) > (e^eps - 1 + q)/q, u = (2x-1)/(2 s^2)
        t = (mp.exp(e) - 1 + q) / q
        assert t > 0  # eps >= 0
        x = (2 * s**2 * mp.log(t) + 1) / 2
        return mix_above(x) - mp.exp(e) * n0_above(x)
    # add: loss = -loss_remove > eps  <=>  1 - q + q e^u < e^-eps
    t = (mp.exp(-e) - 1 + q) / q
    if t <= 0:
        return mp.mpf(0)
    x = (2 * s**2 * mp.log(t) + 1) / 2
    return n0_below(x) - mp.exp(e) * mix_below(x)


def clone_pair(n, k, eps0):
    eps0 = mp.mpf(eps0)
    p = mp.exp(-eps0)
    alpha = mp.exp(eps0) / (mp.exp(eps0) + 1)
    g = mp.mpf(k) / n
    pg, qc = [], []
    m = k - 1
    for c in range(m + 1):
        wc = mp.binomial(m, c) * p**c * (1 - p) ** (m - c)

        def b(x):
            if x < 0 or x > c:
                return mp.mpf(0)
            return mp.binomial(c, x) / mp.mpf(2) ** c

        for x in range(c + 2):
            q = alpha * b(x) + (1 - alpha) * b(x - 1)
            pc = alpha * b(c + 1 - x) + (1 - alpha) * b(c - x)
            qc.append(wc * q)
            pg.append(wc * ((1 - g) * q + g * pc))
    return pg, qc


def symmetric(pg, qc):
    sp, sq = [], []
    used = mp.mpf(0)
    for a, b in zip(pg, qc):
        if a > b:
            sp += [a, b]
            sq += [b, a]
            used += a + b
    sp.append(1 - used)
    sq.append(1 - used)
    return sp, sq


def product_delta(sp, sq, T, eps):
    # PLD as a dict loss -> P-mass, composed exactly (losses as mp numbers,
    # merged by key at 40 digits).
    pld = {}
    for a, b in zip(sp, sq):
        if a == 0:
            continue
        l = mp.log(a / b)
        key = mp.nstr(l, 40)
        pld[key] = (pld.get(key, (l, mp.mpf(0)))[0], pld.get(key, (l, mp.mpf(0)))[1] + a)
    comp = {"0": (mp.mpf(0), mp.mpf(1))}
    for _ in range(T):
        nxt = {}
        for _, (l1, m1) in comp.items():
            for _, (l2, m2) in pld.items():
                l = l1 + l2
                key = mp.nstr(l, 40)
                if key in nxt:
                    nxt[key] = (nxt[key][0], nxt[key][1] + m1 * m2)
                else:
                    nxt[key] = (l, m1 * m2)
        comp = nxt
    e = mp.mpf(eps)
    return mp.fsum(m * (1 - mp.exp(e - l)) for (l, m) in comp.values() if l > e)


out = {"gaussian": [], "sampled_gaussian": [], "clone": []}
for sigma in [0.5, 1, 2, 5]:
    for T in [1, 10]:
        for eps in [0, 0.25, 1, 2]:
            s = mp.mpf(sigma) / mp.sqrt(T)
            d = gaussian_delta(s, eps)
            out["gaussian"].append({"sigma": sigma, "steps": T, "eps": eps, "delta": mp.nstr(d, 30)})
for sigma, q in [(1, 0.01), (0.8, 0.1), (2, 0.5)]:
    for eps in [0, 0.01, 0.1, 0.5, 1]:
        dr = sampled_gaussian_delta(sigma, q, eps, "remove")
        da = sampled_gaussian_delta(sigma, q, eps, "add")
        out["sampled_gaussian"].append({"sigma": sigma, "rate": q, "eps": eps,
                                        "remove": mp.nstr(dr, 30), "add": mp.nstr(da, 30)})
for n, k, eps0, T in [(10, 5, 1, 1), (10, 5, 1, 3), (8, 8, 2, 2), (20, 4, 0.5, 4), (4, 1, 2, 2)]:
    pg, qc = clone_pair(n, k, eps0)
    sp, sq = symmetric(pg, qc)
    for eps in [0, 0.1, 0.5, 1]:
        d = product_delta(sp, sq, T, eps)
        out["clone"].append({"n": n, "k": k, "eps0": eps0, "steps": T, "eps": eps, "delta": mp.nstr(d, 30)})
print(json.dumps(out, indent=1))
