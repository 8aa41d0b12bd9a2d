#!/usr/bin/env python3
"""Golden values of the DJW l_2 mechanism's output radius, mpmath at 80 digits.

M = a * c * sqrt(pi) * d * Gamma((d-1)/2 + 1) / (2 * Gamma(d/2 + 1)),
c = (e^eps0 + 1)/(e^eps0 - 1): Duchi, Jordan and Wainwright, "Local privacy
and statistical minimax rates" (FOCS 2013) / JASA 2018, the l_2-ball
mechanism's radius B, evaluated literally from the paper's expression (the
Go code uses the equivalent a*c*pi/B(1/2, d/2) and the realised coin, which
differs from the ideal c by < 2^-60 relative). authors_M is the radius of
the authors' code (MNIST_dpsgd_norm_2.py): a*c*sqrt(pi*d/2).
Run: python3 gen_djw_golden.py > djw_golden.json
"""
import json
from mpmath import mp, mpf, exp, gamma, sqrt, pi

mp.dps = 80
out = []
for eps0 in ["0.5", "1", "2", "5"]:
    for d in [1, 2, 3, 10, 100, 13706, 26010, 100000]:
        e = exp(mpf(float(eps0)))  # the exact binary64 value Go sees
        c = (e + 1) / (e - 1)
        for a in ["1", "0.005"]:
            A = mpf(float(a))
            M = A * c * sqrt(pi) * d * gamma(mpf(d - 1) / 2 + 1) / (2 * gamma(mpf(d) / 2 + 1))
            authors = A * c * sqrt(pi * d / 2)
            out.append({"eps0": float(eps0), "d": d, "a": float(A), "M": float(M), "authors_M": float(authors)})
print(json.dumps({"djw_radius": out}, indent=1))
