#!/usr/bin/env python3
"""Golden values for package randomizer, computed with mpmath at 80 digits.

thresholds: t = floor(2^64 * e^eps0 / (e^eps0 + m)), the largest 64-bit
  threshold whose realised keep probability t/2^64 satisfies
  t*m <= e^eps0 * (2^64 - t)  (randomizer.Threshold).
r2_radius: M = a*c*sqrt(pi)/2 * d * Gamma((d-1)/2+1)/Gamma(d/2+1) with
  c = (e^eps0+1)/(e^eps0-1), the radius of Priv in R_2 (spec §8, with the
  factor d), using the ideal c (the Go code uses the realised coin, which
  differs by < 2^-60 relative).
Run: python3 gen_golden.py > golden.json
"""
import json
from mpmath import mp, mpf, exp, floor, gamma, sqrt, pi

mp.dps = 80
TWO64 = mpf(2) ** 64

thresholds = []
for eps0 in ["0.01", "0.1", "0.5", "1", "1.5", "2", "3", "4", "8", "10", "20", "40"]:
    for m in [1, 2, 9, 1023, 26009]:
        e = exp(mpf(float(eps0)))  # the exact binary64 value Go sees
        t = int(floor(TWO64 * e / (e + m)))
        thresholds.append({"eps0": float(eps0), "m": m, "t": str(t)})

r2 = []
for eps0 in ["0.5", "1", "2", "5"]:
    for d in [1, 2, 3, 10, 100, 13000]:
        e = exp(mpf(float(eps0)))  # the exact binary64 value Go sees
        c = (e + 1) / (e - 1)
        a = mpf(1)
        M = a * c * sqrt(pi) / 2 * d * gamma(mpf(d - 1) / 2 + 1) / gamma(mpf(d) / 2 + 1)
        r2.append({"eps0": float(eps0), "d": d, "M": float(M)})



def privunit_golden():
    """PrivUnit2 (Bhowmick et al. 2018): for the cap threshold gamma and cap
    probability p, q = P[<U,u> >= gamma] for U uniform on S^{d-1} and
    m = E[<V,u>] = p E[t | t >= gamma] + (1-p) E[t | t < gamma], with t's
    density proportional to (1-t^2)^((d-3)/2). Small d: direct numerical
    integration (independent of the closed form in the Go code); large d:
    the regularised incomplete beta function."""
    out = []
    for d in [2, 3, 5, 10, 100, 13000]:
        gammas = ["0.05", "0.3", "0.7"] if d <= 100 else ["0.003", "0.01", "0.025"]
        for gamma in gammas:
            for p in ["0.6", "0.9"]:
                g, pp = mpf(float(gamma)), mpf(float(p))
                if d <= 100:
                    f = lambda t: (1 - t * t) ** (mpf(d - 3) / 2)
                    tot = mp.quad(f, [-1, 0, g, 1])
                    cap = mp.quad(f, [g, 1])
                    tcap = mp.quad(lambda t: t * f(t), [g, 1])
                    trest = mp.quad(lambda t: t * f(t), [-1, 0, g])
                    q = cap / tot
                    m = pp * tcap / cap + (1 - pp) * trest / (tot - cap)
                else:
                    # t is concentrated within ~1/sqrt(d) of 0: integrate the
                    # cap numerically on a fine partition; the normaliser
                    # B(1/2, (d-1)/2) and the first moment (1-g^2)^a/(d-1)
                    # are exact.
                    a = mpf(d - 1) / 2
                    f = lambda t: (1 - t * t) ** (a - 1)
                    pts = [g + k * mpf("0.005") for k in range(0, 41)] + [mpf(1)]
                    cap = mp.quad(f, pts)
                    tot = mp.beta(mpf(1) / 2, a)
                    tcap = (1 - g * g) ** a / (d - 1)
                    q = cap / tot
                    m = pp * tcap / cap - (1 - pp) * tcap / (tot - cap)
                out.append({"d": d, "gamma": float(gamma), "p": float(p), "q": float(q), "m": float(m)})
    return out


def output_probabilities():
    """Ideal output probabilities of R_inf and R_1 (spec §8) at fixed
    inputs, from the formulas, for comparison with the realised ones (which
    may differ by < 2^-63)."""
    out = []
    cases = [
        ("rinf", 1.0, 1.0, [0.5, -1.0, 0.0, 0.25, 1.0]),
        ("rinf", 3.0, 2.0, [1.5, -0.2, 2.0]),
        ("r1", 1.0, 1.0, [0.5, -0.25, 0.0, 0.125, 0.1]),
        ("r1", 2.5, 3.0, [0.0, -3.0, 0.0]),
        ("r1", 0.7, 1.2, [0.3, 0.3, -0.3, 0.05, 0.0, 0.0, 0.0, 0.05, 0.1]),
    ]
    for name, eps0, a, x in cases:
        e = exp(mpf(eps0))
        b = (e - 1) / (e + 1)
        a_ = mpf(a)
        xs = [mpf(v) for v in x]
        d = len(xs)
        if name == "rinf":
            coef = xs
            n = d
        else:
            n = 1
            while n < d:
                n *= 2
            xs = xs + [mpf(0)] * (n - d)
            coef = [sum(xs[i] * (-1) ** bin(i & j).count("1") for i in range(n)) for j in range(n)]
        probs = []
        for j in range(n):
            pp = (mpf(1) / 2 + coef[j] / (2 * a_) * b) / n
            probs += [float(pp), float(mpf(1) / n - pp)]
        out.append({"name": name, "eps0": eps0, "radius": a, "x": x, "p": probs})
    return out


print(json.dumps({"thresholds": thresholds, "r2_radius": r2, "privunit": privunit_golden(),
                  "output_probabilities": output_probabilities()}, indent=1))
