package sampledgauss

import (
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Remainder control of the fractional-order series (see tail.go).
const (
	// relTol stops the series once the width of the remainder bracket is
	// below relTol times the current estimate of A - 1.
	relTol = 1e-11
	// checkEvery is the number of terms between remainder checks.
	checkEvery = 4
	// maxExtraTerms caps the terms beyond floor(order)+1; the result is
	// still a rigorous upper bound when the cap is hit, only looser.
	maxExtraTerms = 1 << 16
)

// term is one signed term s e^{logAbs} of a series with relative error
// bound rho.
type term struct{ sign, logAbs, rho float64 }

var zeroTerm = term{sign: 1, logAbs: math.Inf(-1)}

// fractionalLogAm1 returns an upper bound on log(A_alpha - 1) for a
// non-integer order alpha > 1 and 0 < q < 1 (Mironov, Talwar, Zhang 2019,
// Sec. 3.4).
//
// With L(z) = mu1(z)/mu0(z) = e^{(2z-1)/(2 sigma^2)}, E_{mu0}[L] = 1, so
//
//	A_alpha - 1 = E_{z~mu0}[ g(z) ],  g = (1-q+qL)^alpha - 1 - alpha q (L - 1) >= 0.
//
// Split the line at zs, the floating-point value of z0 = sigma^2 log((1-q)/q) + 1/2
// (where qL = 1-q). Left of zs, with u = qL/(1-q), (1-q+qL)^alpha =
// (1-q)^alpha (1+u)^alpha = sum_{k<=K} C(alpha,k) (1-q)^{alpha-k} q^k L^k + (1-q)^alpha R_K(u);
// right of zs, (qL)^alpha (1+1/u)^alpha = sum_{k<=K} C(alpha,k) (1-q)^k q^{alpha-k} L^{alpha-k}
// + (qL)^alpha R_K(1/u), R_K(x) = (1+x)^alpha - sum_{k<=K} C(alpha,k) x^k the
// binomial remainder (tail.go bounds its integral). With
// E[L^c; z <= t] = e^{(c^2-c)/(2 sigma^2)} Phi((t-c)/sigma) and
// E[L^c; z > t] = e^{(c^2-c)/(2 sigma^2)} Phi((c-t)/sigma), s = sigma:
//
//	A_alpha - 1 = Phi(zs/s) h0 + alpha q Phi((zs-1)/s) h1 + sum_{k>=2} T1_k        (z <= zs)
//	            + sum_{k>=0} T2_k - (1 - alpha q) Phi(-zs/s) - alpha q Phi((1-zs)/s)   (z > zs),
//
// h0 = (1-q)^alpha - 1 + alpha q >= 0 and h1 = (1-q)^{alpha-1} - 1 <= 0 (the
// k = 0, 1 terms of the left series combined with the left part of
// 1 + alpha q (L - 1)), and T1_k, T2_k the terms of Sec. 3.4 with zs in
// place of z0. Both series are summed through k = K and their remainders
// from K+1 on are bracketed by eulerTail; the result is the upper end of
// every bracket plus the floating-point error bounds. Since zs is z0 up to
// rounding, u exceeds 1 left of zs (or 1/u right of it) by at most
// eta = expm1(dz/s^2), dz the bound on |zs - z0|; eulerTail accounts for it.
func (p params) fractionalLogAm1(alpha float64) float64 {
	c := newCoefs(alpha)
	s := p.sigma
	// lambda = log((1-q)/q): log1p((1-2q)/q) for q >= 1/4 (1-2q exact, so the
	// error is a few ulps of lambda even near q = 1/2), else log(1-q) - log q
	// (|log q| > |log(1-q)|, no cancellation).
	var lam, lamErr float64
	if p.q >= 0.25 {
		lam = math.Log1p((1 - 2*p.q) / p.q)
		lamErr = 4 * eps * math.Abs(lam)
	} else {
		lam = p.l1 - p.lq
		lamErr = 2 * eps * (math.Abs(p.l1) + math.Abs(p.lq) + math.Abs(lam))
	}
	s2 := s * s
	zs := s2*lam + 0.5
	// |zs - z0| <= s^2 lamErr + (rounding of s^2, the product and the sum),
	// doubled.
	dz := 2 * (s2*lamErr + 4*eps*(s2*math.Abs(lam)+math.Abs(zs)+1))
	sp := split{p: p, c: c, z: zs,
		cl: (2*zs - 1) * p.inv2s2, c0: zs * zs * p.inv2s2,
		eta: math.Expm1(dz / s2)}

	// Two ledgers: the left of zs (b1) and the right (b2); each region's
	// total is E[g; region] >= 0. The left terms carry the factor
	// alpha(alpha-1)/2 q^2 (with q^k, k >= 2, or from h0 and h1), which is
	// taken out exactly (b1 holds the terms divided by e^C,
	// C = log(alpha(alpha-1)/2) + 2 log q, computed without forming C) so
	// that the rounding of log q, shared by all of them, is not amplified
	// by their cancellation (a factor ~sigma^2 when sigma is large).
	b1, b2 := newLedger(), newLedger()
	aq := alpha * p.q
	laq := logmath.Log(alpha) + p.lq
	lc2 := logmath.Log(alpha * (alpha - 1) / 2)
	C := lc2 + 2*p.lq
	sp.lc2 = lc2

	// Left of zs, k = 0, 1 with the left part of 1 + alpha q (L-1):
	// Phi(zs/s) h0 and alpha q h1 Phi((zs-1)/s), h1 = -(alpha-1) q r.
	lh0, rh0 := p.logH0Scaled(alpha, C)
	x := zs / s
	b1.add(1, lh0+logNormCDF(x), rh0+rho(logNormCDFMag(x)))
	xm := (alpha - 1) * p.l1
	r := -math.Expm1(xm) / p.q
	x = (zs - 1) / s
	l2 := logmath.Log(2 / (alpha - 1))
	b1.add(-1, l2+logmath.Log(r)+logNormCDF(x), rho(math.Abs(l2)+math.Abs(logmath.Log(r))+math.Abs(xm)+2+logNormCDFMag(x)))

	// Right of zs: minus (1 - alpha q) Phi(-zs/s) + alpha q Phi((1-zs)/s).
	x = -zs / s
	if cq := 1 - aq; cq != 0 {
		b2.add(-math.Copysign(1, cq), logmath.Log(math.Abs(cq))+logNormCDF(x), rho((1+aq)/math.Abs(cq)+logNormCDFMag(x)))
	} else {
		b2.addErr(logmath.Log(4*eps*(1+aq)) + logNormCDF(x))
	}
	x = (1 - zs) / s
	b2.add(-1, laq+logNormCDF(x), rho(math.Abs(laq)+logNormCDFMag(x)))

	// The two series. Terms k <= floor(alpha)+1 are positive; from there on
	// both alternate (sign of C(alpha,k)), and the remainder after K >= m
	// is bracketed from the next eulerN+2 terms.
	m := c.m
	var s1, s2t []term
	committed := 0
	kmax := m + 1 + maxExtraTerms
	for k := 0; ; k++ {
		if k < 2 {
			s1 = append(s1, zeroTerm)
		} else {
			s1 = append(s1, sp.left(k))
		}
		s2t = append(s2t, sp.right(k))
		K := k - (eulerN + 2)
		if K < m || ((K-m)%checkEvery != 0 && k < kmax) {
			continue
		}
		for ; committed <= K; committed++ {
			t1, t2 := s1[committed], s2t[committed]
			b1.add(t1.sign, t1.logAbs, t1.rho)
			b2.add(t2.sign, t2.logAbs, t2.rho)
		}
		r1 := eulerTail(s1[K+1:k+1], sp.eta)
		r2 := eulerTail(s2t[K+1:k+1], sp.eta)
		width := logmath.LogAddExp(r1.logWidth()+C, r2.logWidth())
		est := logmath.LogAddExp(b1.estimate()+C, b2.estimate())
		errs := logmath.LogAddExp(b1.errEstimate()+C, b2.errEstimate())
		if width <= logmath.Log(relTol)+est || width <= errs-logmath.Log(16) || k >= kmax {
			r1.addTo(&b1)
			r2.addTo(&b2)
			// e^C is formed once here; its rounding (a few ulps of
			// |lc2| + 2|log q|) is added to the exponent.
			u1 := b1.upper() + C + 4*eps*(math.Abs(lc2)+2*math.Abs(p.lq)+1)
			v := logmath.LogAddExp(u1, b2.upper())
			return v + 8*eps*(math.Abs(v)+1)
		}
	}
}

// split holds the constants of the two series for one order.
type split struct {
	p      params
	c      coefs
	z      float64 // the split point zs
	cl, c0 float64 // (2 zs - 1)/(2 s^2), zs^2/(2 s^2)
	eta    float64 // bound on how far u (left) or 1/u (right) exceeds 1
	lc2    float64 // log(alpha(alpha-1)/2), the left terms' common factor with q^2
}

// left returns T1_k = C(alpha,k) (1-q)^{alpha-k} q^k e^{(k^2-k)/(2 s^2)} Phi((zs-k)/s)
// divided by alpha(alpha-1)/2 q^2, for k >= 2.
// When Phi's argument is negative, e^{(k^2-k)/(2 s^2)} Phi(x) is evaluated
// as e^{(k(2 zs - 1) - zs^2)/(2 s^2)} erfcx(-x/sqrt 2)/2 (an identity), so
// that no two large exponents cancel.
func (sp *split) left(k int) term {
	p := sp.p
	fk := float64(k)
	sign, lc, cmag := sp.c.at(k)
	if math.IsInf(lc, -1) {
		return zeroTerm
	}
	a := sp.c.alpha
	// log C(alpha,k) - log(alpha(alpha-1)/2): exactly 0 at k = 2.
	dc := 0.0
	if k > 2 {
		dc = lc - sp.lc2
		cmag += math.Abs(sp.lc2)
	} else {
		cmag = 0
	}
	base := dc + (a-fk)*p.l1 + (fk-2)*p.lq
	mag := cmag + math.Abs((a-fk)*p.l1) + math.Abs((fk-2)*p.lq)
	x := (sp.z - fk) / p.sigma
	if x >= 0 {
		quad := fk * (fk - 1) * p.inv2s2
		return term{sign, base + quad + logNormCDF(x), rho(mag + quad + 1)}
	}
	w := (fk - sp.z) / (p.sigma * math.Sqrt2)
	lhe := logHalfErfcx(w)
	lin := fk * sp.cl
	mag += math.Abs(lin) + sp.c0 + fk*(2*math.Abs(sp.z)+1)*p.inv2s2 + math.Abs(lhe) + math.Min(w*w, 16)
	return term{sign, base + lin - sp.c0 + lhe, rho(mag)}
}

// right returns T2_k = C(alpha,k) (1-q)^k q^j e^{(j^2-j)/(2 s^2)} Phi((j-zs)/s),
// j = alpha - k, with the same erfcx form for a negative argument.
func (sp *split) right(k int) term {
	p := sp.p
	fk := float64(k)
	sign, lc, cmag := sp.c.at(k)
	if math.IsInf(lc, -1) {
		return zeroTerm
	}
	j := sp.c.alpha - fk
	base := lc + fk*p.l1 + j*p.lq
	// j carries a rounding error of one ulp; its effect on the exponent
	// is within 2 j^2/(2 s^2) + |j log q| ulps.
	mag := cmag + math.Abs(fk*p.l1) + math.Abs(j*p.lq) + 2*j*j*p.inv2s2
	x := (j - sp.z) / p.sigma
	if x >= 0 {
		quad := j * (j - 1) * p.inv2s2
		return term{sign, base + quad + logNormCDF(x), rho(mag + math.Abs(quad) + 1)}
	}
	w := (sp.z - j) / (p.sigma * math.Sqrt2)
	lhe := logHalfErfcx(w)
	lin := j * sp.cl
	mag += math.Abs(lin) + sp.c0 + math.Abs(j)*(2*math.Abs(sp.z)+1)*p.inv2s2 + math.Abs(lhe) + math.Min(w*w, 16)
	return term{sign, base + lin - sp.c0 + lhe, rho(mag)}
}

// logH0Scaled returns log(h0) - C, h0 = (1-q)^alpha - 1 + alpha q > 0 and
// C = log(alpha(alpha-1)/2 q^2), and a bound on its relative error. When
// alpha q <= 1/2 it sums the binomial series h0 = sum_{j>=2} C(alpha,j) (-q)^j
// divided by its first term, 1 + sum_{j>=3} prod_{i=2..j-1} (-q (alpha-i)/(i+1)),
// whose term ratios q |alpha-j|/(j+1) are at most 1/2 (so the remainder
// after a term is at most that term; the sum is at least 2/3);
// otherwise expm1(alpha log(1-q)) + alpha q loses at most a factor ~5 to
// cancellation and C is subtracted.
func (p params) logH0Scaled(alpha, C float64) (float64, float64) {
	aq := alpha * p.q
	if aq <= 0.5 {
		sum, t := 1.0, 1.0
		for j := 2; j < 200; j++ {
			t *= -p.q * (alpha - float64(j)) / float64(j+1)
			sum += t
			if math.Abs(t) <= 1e-18*sum {
				break
			}
		}
		return logmath.Log(sum), rho(4)
	}
	v := math.Expm1(alpha*p.l1) + aq
	l := logmath.Log(v)
	return l - C, rho(4 + math.Abs(l) + math.Abs(C) + (aq+alpha*math.Abs(p.l1))/v)
}

// coefs evaluates the generalized binomial coefficients C(alpha, k).
type coefs struct {
	alpha        float64
	m            int     // floor(alpha)
	logSinOverPi float64 // log(|sin(pi alpha)|/pi)
}

func newCoefs(alpha float64) coefs {
	m := math.Floor(alpha)
	f := alpha - m // exact
	return coefs{alpha: alpha, m: int(m), logSinOverPi: logmath.Log(math.Sin(math.Pi*math.Min(f, 1-f)) / math.Pi)}
}

// at returns the sign and log|C(alpha,k)| with a magnitude for the error
// bound. For k <= floor(alpha) it is logmath.LogBinom; for k > alpha,
// C(alpha,k) = (-1)^{k+1} sin(pi alpha)/pi B(k-alpha, alpha+1) by the
// reflection formula, so |C(alpha,k)| is computed without cancellation
// and the signs alternate from k = floor(alpha)+1 (positive) on.
func (c coefs) at(k int) (sign, l, mag float64) {
	fk := float64(k)
	if k <= c.m {
		l = logmath.LogBinom(c.alpha, fk)
		return 1, l, binomMag(l, c.alpha, fk)
	}
	l = c.logSinOverPi + logmath.LogBeta(fk-c.alpha, c.alpha+1)
	sign = 1
	if (k-c.m-1)%2 == 1 {
		sign = -1
	}
	return sign, l, math.Abs(l) + math.Abs(c.logSinOverPi) + math.Min(fk-c.alpha, c.alpha+1)*(math.Log1p(fk)+1) + 1
}
