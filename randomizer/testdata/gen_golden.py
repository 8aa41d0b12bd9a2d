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

print(json.dumps({"thresholds": thresholds, "r2_radius": r2}, indent=1))
