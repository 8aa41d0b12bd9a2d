#!/usr/bin/env python3
"""Golden values for package shufflegauss (mpmath 1.3.0, independent of the Go code).

Theorem 1 of the ICLR'23 shuffle Gaussian submission:
  A(lam) = e^{-lam/(2 s^2)} / n^lam * sum_{k_1+..+k_n=lam} multinom(lam; k) e^{sum k_i^2/(2 s^2)}.
Two independent evaluations in high precision:
  * "partition": enumerate integer partitions of lam into at most n parts (the
    paper's Algorithm 1, with the at-most-n-parts restriction it omits), each
    weighted by multinom(lam; parts) * n!/((n-r)! prod mult!);
  * "miller": lam! [x^lam] f(x)^n with f_j = e^{j^2/(2s^2)}/j!, by Miller's
    recurrence g_m = (1/m) sum_j ((n+1) j - m) f_j g_{m-j}, in 400-digit
    arithmetic (so the sign changes for n < lam do no harm).
Both are written to golden.json as log A (natural log) with 30 digits.
Also: Table 1 of the paper (n=60000, sigma=9.48, delta=1/n, orders 2..30,
T=1,2,7; conversion eq. (3)), and the subsampled (eq. 10) bound at a few points.
Run: python3 gen_golden.py > golden.json
"""
import json
from mpmath import mp, mpf, exp, log, factorial, binomial

mp.dps = 60


def partitions(n, maxpart=None):
    if maxpart is None:
        maxpart = n
    if n == 0:
        yield []
        return
    for p in range(min(n, maxpart), 0, -1):
        for rest in partitions(n - p, p):
            yield [p] + rest


def logA_partition(lam, n, sigma):
    s2 = 2 * mpf(sigma) ** 2
    total = mpf(0)
    for parts in partitions(lam):
        r = len(parts)
        if r > n:
            continue
        mult = {}
        for p in parts:
            mult[p] = mult.get(p, 0) + 1
        arr = factorial(n) / factorial(n - r)
        for c in mult.values():
            arr /= factorial(c)
        mn = factorial(lam)
        for p in parts:
            mn /= factorial(p)
        total += arr * mn * exp(sum(mpf(p) ** 2 for p in parts) / s2)
    return log(exp(-lam / s2) / mpf(n) ** lam * total)


def logA_miller(lams, n, sigma):
    """log A for every lam in lams, one recurrence up to max(lams)."""
    with mp.workdps(400):
        s2 = 2 * mpf(sigma) ** 2
        L = max(lams)
        f = [exp(mpf(j) ** 2 / s2) / factorial(j) for j in range(L + 1)]
        g = [mpf(1)]
        for m in range(1, L + 1):
            acc = mpf(0)
            for j in range(1, m + 1):
                acc += ((n + 1) * j - m) * f[j] * g[m - j]
            g.append(acc / m)
        return {lam: log(exp(-lam / s2) * factorial(lam) * g[lam] / mpf(n) ** lam) for lam in lams}


def cks_eps(rdp_total, lam, delta):
    lam = mpf(lam)
    return rdp_total + (log(1 / delta) + (lam - 1) * log(1 - 1 / lam) - log(lam)) / (lam - 1)


def main():
    out = {"partition": [], "miller": [], "table1": [], "subsampled": []}
    for (lam, n, sigma) in [(2, 3, 1.0), (5, 4, 0.7), (8, 10, 2.0), (3, 1, 1.5), (6, 2, 1.0),
                            (7, 3, 0.8), (10, 4, 1.2), (12, 5, 3.0), (9, 9, 0.5), (11, 100, 1.0),
                            (13, 7, 2.5), (14, 60000, 9.48), (10, 1000000000, 1.0)]:
        out["partition"].append({"order": lam, "n": n, "sigma": sigma,
                                 "log_a": mp.nstr(logA_partition(lam, n, sigma), 30)})
    for (n, sigma, lams) in [(60000, 9.48, [2, 3, 10, 30, 100, 300, 1000, 1976, 1977, 1978, 2000, 2100]),
                             (1000000000, 1.0, [2, 5, 50, 200]),
                             (1000, 0.8, [2, 50, 400]),
                             (10, 2.0, [2, 11, 12, 40, 150]),
                             (3, 1.0, [2, 4, 30, 100]),
                             (1, 1.3, [2, 7, 64])]:
        for lam, v in logA_miller(lams, n, sigma).items():
            out["miller"].append({"order": lam, "n": n, "sigma": sigma, "log_a": mp.nstr(v, 30)})
    # Table 1: orders 2..30, integer orders, eq. (3) conversion.
    n, sigma = 60000, 9.48
    delta = mpf(1) / n
    la = logA_miller(list(range(2, 31)), n, sigma)
    for T in [1, 2, 7]:
        best = min((cks_eps(T * la[l] / (l - 1), l, delta), l) for l in range(2, 31))
        out["table1"].append({"steps": T, "epsilon": mp.nstr(best[0], 20), "order": best[1]})
    # Without the cap: the optimum over orders 2..2100 lies at 1976 (checked
    # by the Go test over 2..4096); record eps there for T = 1, 2, 7.
    la = logA_miller([1976], n, sigma)
    for T in [1, 2, 7]:
        out.setdefault("table1_uncapped", []).append(
            {"steps": T, "order": 1976, "epsilon": mp.nstr(cks_eps(T * la[1976] / 1975, 1976, delta), 20)})
    # Subsampled shuffle Gaussian, eq. (10) (WBK19 Thm 9 with eps(inf)=inf).
    for (m, nn, sigma, lams) in [(100, 10000, 2.0, [2, 5, 20]), (1000, 60000, 1.0, [2, 8, 32])]:
        la = logA_miller(list(range(2, max(lams) + 1)), m, sigma)
        g = mpf(m) / nn
        for lam in lams:
            a2 = exp(la[2])
            tot = 1 + g ** 2 * binomial(lam, 2) * min(4 * (a2 - 1), 2 * a2)
            for j in range(3, lam + 1):
                tot += 2 * g ** j * binomial(lam, j) * exp(la[j])
            out["subsampled"].append({"order": lam, "m": m, "n": nn, "sigma": sigma,
                                      "eps": mp.nstr(log(tot) / (lam - 1), 30)})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
