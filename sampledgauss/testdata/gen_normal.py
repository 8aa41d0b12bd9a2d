#!/usr/bin/env python3
"""Reference values of the normal-distribution helpers of package sampledgauss
(mpmath 1.3.0, 40 digits): log(erfcx(w)/2) = log(e^{w^2} erfc(w)/2) and
log Phi(x), Phi the standard normal CDF.

Run: python3 gen_normal.py > normal.json
"""
import json
import sys

import mpmath
from mpmath import mp, mpf, erfc, exp, log, ncdf, nstr

mp.dps = 40


def log_ncdf(x):
    # log1p(-Phi(-x)) for x > 0 keeps the tiny negative value that
    # log(Phi(x)) would round to 0 at 40 digits.
    if x > 0:
        return mpmath.log1p(-ncdf(-x))
    return log(ncdf(x))


def main():
    ws = [0, 1e-8, 0.1, 0.5, 1, 2, 3.5, 3.999, 4, 4.001, 5, 6, 8, 10, 20, 26, 27, 50, 100, 1e3, 1e5, 1e8]
    xs = [-1e8, -1e4, -1000, -100, -38, -37, -20, -10, -5, -2, -1, -0.1, -1e-10, 0, 1e-10, 0.1, 1, 2, 5, 8, 10, 20, 40]
    out = {"generator": "gen_normal.py (mpmath %s, %d digits)" % (mpmath.__version__, mp.dps),
           "log_half_erfcx": [{"w": w, "v": nstr(log(exp(mpf(w) ** 2) * erfc(mpf(w)) / 2), 25)}
                              for w in ws],
           "log_norm_cdf": [{"x": x, "v": nstr(log_ncdf(mpf(x)), 25)} for x in xs]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
