package pld

import (
	"math"
	"math/bits"
	"sync"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Exponential tilting of the FFT convolution (docs/proofs/pld.md,
// Section 5b).
//
// An FFT convolution errs by about 1e-16 of the largest entry at every
// entry, so its L1 error bound is an absolute one: after T-fold
// composition it is roughly T times that, which is above delta once
// delta is below about 1e-16 T (Fig. 2a: 8e-10 of delta = 1e-8; T = 1e6 at
// delta = 1e-12: above delta, and the PLD route could not answer). The
// hockey-stick divergence at eps only weighs the losses above eps, whose
// masses are below delta. Tilting fixes the scale: with weights
// w(l) = e^{tilt (l - ref)}, the vector m_i w(l_i) is convolved instead of
// m_i (w(l_i + l_j) = w(l_i) w(l_j) up to the references, which add), and
// the result is divided by w again. The FFT's error is then a bound in
// the tilted norm
//
//	||e||_w = sum_i |e_i| e^{tilt (l_i - ref)},
//
// which is submultiplicative under convolution (||x * y||_w <= ||x||_w
// ||y||_w, exactly multiplicative for non-negative vectors), so it
// propagates through later compositions like the plain L1 norm does. Its
// effect on Delta at eps is at most
//
//	sum_{l_i > eps} |e_i| (1 - e^{eps - l_i})
//	  <= ||e||_w e^{tilt (ref - eps)} sup_{u > 0} (1 - e^{-u}) e^{-tilt u}
//	  =  ||e||_w e^{tilt (ref - eps)} hockeyTilt(tilt)            (errAt),
//
// tiny at the eps where Delta is about delta when tilt is near the
// Chernoff-optimal order for that delta (chooseTilt): there
// e^{tilt (ref - eps)} is about delta itself.

// errAt returns the bound on the effect of the absolute error absErr on
// Delta(eps): absErr itself when the PLD is untilted, else
// absErr e^{tilt (ref - eps)} hockeyTilt(tilt), rounded up.
func (p *PLD) errAt(eps float64) float64 {
	if p.absErr == 0 {
		return 0
	}
	if p.tilt == 0 {
		return p.absErr
	}
	x := p.tilt * (p.ref - eps)
	x += 4*ulp*(p.tilt*(math.Abs(p.ref)+math.Abs(eps))+math.Abs(x)) + 1e-300
	v := p.absErr * math.Exp(x) * hockeyTilt(p.tilt) * (1 + 8*ulp)
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return v
}

// hockeyTilt returns sup_{u > 0} (1 - e^{-u}) e^{-t u}, attained at
// e^{-u} = t/(1+t): (1/(1+t)) (t/(1+t))^t, rounded up; 1 at t = 0.
func hockeyTilt(t float64) float64 {
	if t <= 0 {
		return 1
	}
	x := -math.Log1p(t) - t*math.Log1p(1/t)
	return math.Exp(x) * (1 + 64*ulp*(2+math.Abs(x)))
}

// tilted returns p with the tilt t: a copy whose ref makes its tilted
// mass about 1 (ref = log(sum_i m_i e^{t l_i})/t). Only a PLD without
// absolute error can change its tilt (its norm is then immaterial).
func (p *PLD) tilted(t float64) *PLD {
	if p.tilt == t || p.absErr != 0 {
		return p
	}
	q := *p
	q.tilt, q.ref = t, 0
	if t > 0 {
		q.ref = logTiltedMass(p, t) / t
		if math.IsInf(q.ref, 0) || math.IsNaN(q.ref) {
			q.ref = 0
		}
	}
	return &q
}

// logTiltedMass returns log sum_i m_i e^{t l_i} (-Inf for no mass).
func logTiltedMass(p *PLD, t float64) float64 {
	return newLogMasses(p).at(t)
}

// logMasses holds the logs of a PLD's non-zero masses and their losses,
// for evaluating its log tilted mass at several tilts.
type logMasses struct{ lm, l []float64 }

func newLogMasses(p *PLD) logMasses {
	var r logMasses
	for i, m := range p.mass {
		if m > 0 {
			r.lm = append(r.lm, math.Log(m))
			r.l = append(r.l, float64(p.lo+i)*p.h)
		}
	}
	return r
}

// at returns log sum m e^{t l}.
func (r logMasses) at(t float64) float64 {
	top := math.Inf(-1)
	for i, lm := range r.lm {
		top = math.Max(top, lm+t*r.l[i])
	}
	if math.IsInf(top, -1) {
		return top
	}
	s := 0.0
	for i, lm := range r.lm {
		s += math.Exp(lm + t*r.l[i] - top)
	}
	return top + math.Log(s)
}

// tiltBlock is the block length of tiltWeights' table.
const tiltBlock = 64

// tiltWeights returns w_i = e^{t ((lo+i) h - ref)} for i < n and a
// relative error bound on each: a table of e^{t h r} (r < tiltBlock) times
// one exponential per block. Where the exponent is above 700 the weight is
// +Inf and where it is below -690 it is 0: the callers treat those
// entries separately. t may be negative (the inverse weights).
func tiltWeights(lo, n int, h, t, ref float64) (w []float64, rel float64) {
	w = make([]float64, n)
	th := t * h
	var pw [tiltBlock]float64
	for r := range pw {
		pw[r] = math.Exp(th * float64(r))
	}
	lmax := math.Max(math.Abs(float64(lo)*h), math.Abs(float64(lo+n)*h))
	at := math.Abs(t)
	for b := 0; b < n; b += tiltBlock {
		xb := t * (float64(lo+b)*h - ref)
		e := min(n, b+tiltBlock)
		xe := xb + th*float64(e-b)
		if math.Max(xb, xe) < 680 && math.Min(xb, xe) > -680 {
			base := math.Exp(xb)
			for i := b; i < e; i++ {
				w[i] = base * pw[i-b]
			}
			continue
		}
		for i := b; i < e; i++ {
			x := xb + th*float64(i-b)
			switch {
			case x > 700:
				w[i] = math.Inf(1)
			case x < -690:
				w[i] = 0
			default:
				w[i] = math.Exp(x)
			}
		}
	}
	// The exponent t ((lo+i) h - ref) of the block start errs by at most
	// 3 ulps of t (|l| + |ref|) plus one of itself, t h r by 2 ulps of
	// itself; each exp and the product add an ulp.
	rel = 1.01 * ulp * (4*at*(lmax+math.Abs(ref)) + 3*at*math.Abs(h)*tiltBlock + 6)
	return w, rel
}

// tiltedNorm returns sum_i m_i e^{t (l_i - ref)} of p, rounded up.
func tiltedNorm(p *PLD) float64 {
	if p.tilt == 0 {
		return sum(p.mass) * (1 + float64(len(p.mass)+2)*ulp)
	}
	w, rel := tiltWeights(p.lo, len(p.mass), p.h, p.tilt, p.ref)
	s := 0.0
	for i, m := range p.mass {
		if m > 0 {
			if math.IsInf(w[i], 1) {
				return math.Inf(1)
			}
			s += m * math.Max(w[i], 0x1p-990)
		}
	}
	return s * (1 + rel + float64(len(p.mass)+4)*ulp)
}

// tiltSpec describes the operands of a tilted convolution: grid width,
// tilt, the first grid index and the reference of each.
type tiltSpec struct {
	h, t       float64
	aLo, bLo   int
	aRef, bRef float64
}

// fftConvolveTilted convolves a and b by FFT in the tilted domain
// (the weights of tiltWeights), and returns the untilted result, a
// relative error bound of every entry (the weights' rounding) and an
// absolute error bound in the tilted norm of reference aRef + bRef (the
// FFT bound of fftConvolve applied to the tilted vectors). Entries whose
// tilted value underflows are left out, their weight charged to the
// absolute bound; an untilted entry is clamped to [0, U], U >= every
// entry of the exact convolution (the true values lie there, so clamping
// does not increase the error).
func fftConvolveTilted(a, b []float64, s tiltSpec) (c []float64, rel, abs float64) {
	same := &a[0] == &b[0] && len(a) == len(b) && s.aLo == s.bLo && s.aRef == s.bRef
	n := len(a) + len(b) - 1
	N := 1 << bits.Len(uint(n-1))
	// Shift a reference up when the top weight would exceed e^500 (norms
	// stay finite; the shift is multiplied back into abs).
	shift := func(lo, m int, ref float64) (float64, float64) {
		x := s.t * (float64(lo+m-1)*s.h - ref)
		if x <= 500 {
			return ref, 0
		}
		d := (x - 500) / s.t
		return ref + d, x - 500
	}
	aRef, shA := shift(s.aLo, len(a), s.aRef)
	bRef, shB := shift(s.bLo, len(b), s.bRef)
	tilt := func(x []float64, lo int, ref float64) (buf []float64, under, rel float64) {
		w, rel := tiltWeights(lo, len(x), s.h, s.t, ref)
		buf = make([]float64, N)
		for i, v := range x {
			if v == 0 {
				continue
			}
			if w[i] == 0 {
				under += v // tilted value below e^-690 v
				continue
			}
			buf[i] = v * w[i]
		}
		return buf, under, rel
	}
	f := getFFT(N)
	defer putFFT(f)
	bufA, underA, relA := tilt(a, s.aLo, aRef)
	a1, a2 := sum(bufA), l2(bufA)
	A := f.Coefficients(nil, bufA)
	b1, b2, underB, relB := a1, a2, underA, relA
	if same {
		for i := range A {
			A[i] *= A[i]
		}
	} else {
		bufB, uB, rB := tilt(b, s.bLo, bRef)
		underB, relB = uB, rB
		b1, b2 = sum(bufB), l2(bufB)
		B := f.Coefficients(nil, bufB)
		for i := range A {
			A[i] *= B[i]
		}
	}
	out := f.Sequence(bufA, A)
	inv := 1 / float64(N)
	rRef := aRef + bRef
	wc, relC := tiltWeights(s.aLo+s.bLo, n, s.h, -s.t, rRef)
	U := sum(a) * sum(b) * (1 + 4*(relA+relB) + float64(2*(len(a)+len(b))+8)*ulp)
	c = make([]float64, n)
	c2sq := 0.0
	// Entries left at 0 where the inverse weight is out of range: far
	// below the bulk (weight e^{t (l - ref)} < e^-700: any value in
	// [0, U] errs by at most U e^-700 in the tilted norm) or far above it
	// (inverse weight < e^-690: the error is the tilted value itself).
	var farBelow int
	var farAbove float64
	for i := range c {
		v := out[i] * inv
		if !(v > 0) {
			continue
		}
		c2sq += v * v
		switch {
		case math.IsInf(wc[i], 1):
			farBelow++
		case wc[i] == 0:
			farAbove += v
		default:
			c[i] = math.Min(U, v*wc[i])
		}
	}
	c2 := math.Sqrt(c2sq)
	lg := float64(bits.Len(uint(N)) - 1)
	eta := 32 * ulp
	gamma := lg * eta / (1 - lg*eta)
	sq := math.Sqrt(float64(N))
	abs = sq * (gamma*(1+gamma)*(a2*b1+a1*b2) + 8*ulp*a2*b1 + (gamma+4*ulp)*(c2+gamma*(a2*b1+a1*b2)))
	// Left-out tilted inputs (each below e^-690 of its mass), and the
	// absolute rounding (2^-1074 an entry) of tilted values below the
	// normal range.
	abs += 1.01*math.Exp(-690)*(underA*b1+underB*a1+underA*underB) + float64(N)*0x1p-1070*(a1+b1+1)
	abs += 1.01 * (farAbove + float64(farBelow)*U*math.Exp(-699))
	abs *= 1.01 * (1 + relC)
	if shA+shB > 0 {
		abs = math.Exp(math.Log(abs) + shA + shB)
	}
	// Relative: the tilt weights of both factors and the inverse weight,
	// and the final product.
	rel = 1.01 * (relA + relB + relC + 2*ulp)
	return c, rel, abs
}

func l2(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

// chooseTilt returns the tilt for composing the per-step PLDs steps[i]
// (each applied counts[i] times) for a query at delta: the order t
// minimising the Chernoff bound (sum_i counts[i] K_i(t) + log(1/delta))/t
// on the tail of the composed loss, K_i(t) = log sum m e^{t l} of step i's
// finite part; about where the tilted composed loss has its mean at the
// answer. Capped so that t times the composed loss range stays below
// about 300 (the weights' dynamic range), and 0 when there is nothing to
// tilt.
func chooseTilt(steps []*PLD, counts []int, delta float64) float64 {
	var mean, vr, span float64
	total := 0
	for i, p := range steps {
		if p == nil || len(p.mass) == 0 {
			continue
		}
		m := sum(p.mass)
		if !(m > 0) {
			continue
		}
		mu := p.Mean() / m
		v := 0.0
		for j, x := range p.mass {
			d := float64(p.lo+j)*p.h - mu
			v += x * d * d
		}
		v /= m
		lo, hi := p.Losses()
		mean += float64(counts[i]) * mu
		vr += float64(counts[i]) * v
		span = math.Max(span, math.Max(math.Abs(lo), math.Abs(hi)))
		total += counts[i]
	}
	if total <= 1 || !(span > 0) {
		return 0
	}
	R := math.Abs(mean) + 20*math.Sqrt(vr) + span
	tmax := 300 / R
	L := -math.Log(delta)
	lms := make([]logMasses, len(steps))
	for i, p := range steps {
		if p != nil {
			lms[i] = newLogMasses(p)
		}
	}
	obj := func(t float64) float64 {
		k := 0.0
		for i, r := range lms {
			if len(r.lm) > 0 {
				k += float64(counts[i]) * r.at(t)
			}
		}
		return (k + L) / t
	}
	best, bestT := math.Inf(1), 0.0
	// Four points an octave from tmax down to tmax 2^-30.
	for i := 0; i <= 120; i++ {
		t := tmax * math.Exp2(-float64(i)/4)
		if v := obj(t); v < best {
			best, bestT = v, t
		}
	}
	return bestT
}

// fftPlans keeps FFT plans (their twiddle factors cost about as much as a
// transform) by size; a plan is not safe for concurrent use, so each is
// taken from and returned to its size's pool.
var fftPlans sync.Map // int -> *sync.Pool

func getFFT(n int) *fourier.FFT {
	p, _ := fftPlans.LoadOrStore(n, &sync.Pool{New: func() any { return fourier.NewFFT(n) }})
	return p.(*sync.Pool).Get().(*fourier.FFT)
}

func putFFT(f *fourier.FFT) {
	if p, ok := fftPlans.Load(f.Len()); ok {
		p.(*sync.Pool).Put(f)
	}
}
