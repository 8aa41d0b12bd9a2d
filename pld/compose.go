package pld

import (
	"fmt"
	"math"
	"math/bits"
)

// DefaultTail is the default truncation threshold: after each convolution
// the lowest and the highest losses whose total mass is at most this are
// truncated (pessimistic: the top moves to +inf, the bottom up to the
// lowest loss kept; optimistic: both are dropped).
const DefaultTail = 1e-30

// Compose returns the PLD of the composition of the two mechanisms (the
// product pair): the convolution of the finite parts, and mass at +inf
// a + b - ab. Both must have the same side and grid width. Composition
// of dominating pairs dominates the adaptive composition (Zhu, Dong &
// Wang, AISTATS 2022, Thm 10). It does not tilt the FFT (tilt.go): its
// absolute error bound is a plain L1 bound.
func (p *PLD) Compose(q *PLD) (*PLD, error) {
	return p.compose(q, DefaultTail, 0)
}

// compose composes p and q, the FFT (if used) tilted by tilt (0: none);
// a PLD with an absolute error bound must already carry that tilt.
func (p *PLD) compose(q *PLD, tail, tilt float64) (*PLD, error) {
	if p.side != q.side {
		return nil, fmt.Errorf("pld: cannot compose a %v PLD with a %v one", p.side, q.side)
	}
	if p.h != q.h {
		return nil, fmt.Errorf("pld: cannot compose PLDs of grid widths %v and %v", p.h, q.h)
	}
	self := p == q
	p = p.tilted(tilt)
	if self {
		q = p
	} else {
		q = q.tilted(tilt)
	}
	if p.tilt != tilt || q.tilt != tilt {
		return nil, fmt.Errorf("pld: cannot compose PLDs of tilts %v and %v at tilt %v", p.tilt, q.tilt, tilt)
	}
	r := &PLD{side: p.side, h: p.h, lo: p.lo + q.lo, tilt: tilt}
	if tilt > 0 {
		r.ref = p.ref + q.ref
	}
	r.inf = p.inf + q.inf - p.inf*q.inf
	if p.side == Pessimistic {
		r.inf = math.Min(1, r.inf*(1+4*ulp))
	} else {
		r.inf *= 1 - 4*ulp
	}
	// Absolute errors propagate through the other factor's (tilted) mass:
	// ||x * y||_w <= ||x||_w ||y||_w (tilt.go).
	// With p^ = p~ + e_p (p~ the ideal masses up to relative errors):
	// p^ * q^ = p~ * q~ + e_p * q^ + p~ * e_q, and ||p~||_w <= ||p^||_w +
	// ||e_p||_w; the convolution's relative error multiplies all of it.
	if p.absErr > 0 || q.absErr > 0 {
		np, nq := tiltedNorm(p), tiltedNorm(q)
		r.absErr = (p.absErr*nq + q.absErr*np + p.absErr*q.absErr) * (1 + 4*ulp)
	}
	if len(p.mass) == 0 || len(q.mass) == 0 {
		r.relErr = p.relErr + q.relErr
		r.absErr = r.scaleRef(p, q)
		return r, nil
	}
	var convRel, convAbs float64
	var spec *tiltSpec
	if tilt > 0 {
		spec = &tiltSpec{h: p.h, t: tilt, aLo: p.lo, bLo: q.lo, aRef: p.ref, bRef: q.ref}
	}
	r.mass, convRel, convAbs = convolve(p.mass, q.mass, spec)
	// (1+e1)(1+e2)(1+e3) - 1 <= e1 + e2 + e3 + (products), bounded by a
	// factor 1.01 for errors below 1e-3.
	r.relErr = 1.01 * (p.relErr + q.relErr + convRel)
	r.absErr = r.absErr*(1+1.01*convRel) + convAbs
	r.absErr = r.scaleRef(p, q)
	// FFT round-off leaves noise of total size at most convAbs (in the
	// tilted norm) in the far tails, where the true masses are below it:
	// truncation may cut that much more (truncate).
	return r.cut(tail, convAbs), nil
}

// scaleRef returns r.absErr widened for the rounding of r.ref = p.ref +
// q.ref (the weights of r are those of p times those of q up to it).
func (r *PLD) scaleRef(p, q *PLD) float64 {
	if r.tilt == 0 || r.absErr == 0 {
		return r.absErr
	}
	return r.absErr * (1 + 4*ulp*(1+r.tilt*(math.Abs(p.ref)+math.Abs(q.ref))))
}

func sum(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s
}

// SelfCompose returns the T-fold composition (T >= 1) by repeated
// squaring, truncating tails after every convolution.
func (p *PLD) SelfCompose(T int) (*PLD, error) {
	return p.selfCompose(T, DefaultTail, 0)
}

func (p *PLD) selfCompose(T int, tail, tilt float64) (*PLD, error) {
	if T < 1 {
		return nil, fmt.Errorf("pld: steps = %d, want >= 1", T)
	}
	var result *PLD
	base := p
	for {
		if T&1 == 1 {
			if result == nil {
				result = base
			} else {
				var err error
				if result, err = result.compose(base, tail, tilt); err != nil {
					return nil, err
				}
			}
		}
		T >>= 1
		if T == 0 {
			return result, nil
		}
		var err error
		if base, err = base.compose(base, tail, tilt); err != nil {
			return nil, err
		}
	}
}

// truncate applies the tail truncation in the side's direction and trims
// zeros (cut with no round-off noise).
func (p *PLD) truncate(tail float64) *PLD { return p.cut(tail, 0) }

// cut applies the tail truncation in the side's direction and trims
// zeros: the largest and the smallest losses whose mass is at most tail
// plus noise (an absolute error bound of the vector, in its norm: below
// it, computed masses are indistinguishable from round-off).
//
// Untilted: the top moves to +inf (pessimistic) or is dropped
// (optimistic), the bottom moves up to the lowest loss kept (pessimistic)
// or is dropped.
//
// Tilted (tilt.go): the noise bound at loss l is noise e^{tilt (ref - l)}
// (tiny at the top, large at the bottom), so the top is cut where the
// plain mass is below tail plus that, and the bottom where the plain mass
// is below tail or the tilted mass below noise. On the pessimistic side the top goes to
// +inf with the error bound of those entries (absErr e^{tilt (ref - l)} at
// the lowest loss moved: its absolute error is only bounded in the tilted
// norm); the bottom is dropped and its tilted mass added to absErr
// (moving it up could multiply its error by the weights' ratio, while a
// dropped mass is an error of the vector like any other: its effect on
// Delta is bounded by errAt). Optimistic: both dropped.
func (p *PLD) cut(tail, noise float64) *PLD {
	if tail+noise <= 0 || len(p.mass) == 0 {
		return p.trim()
	}
	if p.tilt > 0 {
		return p.truncateTilted(tail, noise)
	}
	tail += noise
	// Top: the largest losses of total mass <= tail.
	s := 0.0
	z := len(p.mass)
	for z > 1 && s+p.mass[z-1] <= tail {
		s += p.mass[z-1]
		z--
	}
	if p.side == Pessimistic {
		p.inf = math.Min(1, (p.inf+s*(1+p.relErr))*(1+2*ulp))
	}
	// Bottom.
	s2 := 0.0
	a := 0
	for a < z-1 && s2+p.mass[a] <= tail {
		s2 += p.mass[a]
		a++
	}
	p.mass = p.mass[:z]
	if p.side == Pessimistic && a > 0 {
		p.mass[a] += s2 // moved up: the sum is no larger than the values it replaces
	}
	p.mass = p.mass[a:]
	p.lo += a
	return p.trim()
}

func (p *PLD) truncateTilted(tail, noise float64) *PLD {
	t := p.tilt
	loss := func(i int) float64 { return float64(p.lo+i) * p.h }
	// e^{t (l - ref)} rounded up (s = +1) or down (s = -1).
	weight := func(l, s float64) float64 {
		x := t * (l - p.ref)
		return math.Exp(x) * (1 + s*(4*ulp*(t*(math.Abs(l)+math.Abs(p.ref))+math.Abs(x))+4*ulp))
	}
	rel := 1 + 1.01*p.relErr
	s := 0.0
	z := len(p.mass)
	for z > 1 {
		m := p.mass[z-1]
		w := weight(loss(z-1), -1)
		thr := tail
		if noise > 0 {
			thr += noise / w
		}
		if s+m > thr {
			break
		}
		// Pessimistic: the entries moved to +inf are charged their
		// error bound, absErr / w at the lowest one; cut only where that
		// is within the tail too (at an intermediate composition the top
		// of the support may lie only a few 1/tilt above ref).
		if p.side == Pessimistic && p.absErr/w > tail {
			break
		}
		s += m
		z--
	}
	if p.side == Pessimistic && z < len(p.mass) {
		moved := s
		if p.absErr > 0 {
			moved += p.absErr / weight(loss(z), -1)
		}
		p.inf = math.Min(1, (p.inf+moved*rel)*(1+2*ulp))
	}
	// Bottom: while the plain mass is within the tail (the untilted
	// rule) or the tilted mass within the noise (round-off left below the
	// bulk, large in plain terms).
	st, sp := 0.0, 0.0
	a := 0
	for a < z-1 {
		v := p.mass[a] * weight(loss(a), 1)
		if sp+p.mass[a] > tail && st+v > noise {
			break
		}
		st += v
		sp += p.mass[a]
		a++
	}
	if p.side == Pessimistic && a > 0 {
		p.absErr = (p.absErr + st) * rel * (1 + 2*ulp)
	}
	p.mass = p.mass[a:z]
	p.lo += a
	return p.trim()
}

// directBudget: convolutions with at most this many multiply-adds are done
// directly (exact up to a relative error per entry), larger ones by FFT.
const directBudget = 1 << 25

// convolve returns a*b (non-negative inputs), a relative error bound on
// every entry and an absolute error bound: L1 when s is nil, in the
// tilted norm of s (tilt.go) otherwise.
func convolve(a, b []float64, s *tiltSpec) (c []float64, rel, abs float64) {
	// The direct convolution skips zeros: its cost is nnz(a) len(b).
	na, nb := nnz(a), nnz(b)
	if float64(na)*float64(len(b)) > float64(nb)*float64(len(a)) {
		a, b, na, nb = b, a, nb, na
		if s != nil {
			s = &tiltSpec{h: s.h, t: s.t, aLo: s.bLo, bLo: s.aLo, aRef: s.bRef, bRef: s.aRef}
		}
	}
	if na <= 64 || float64(na)*float64(len(b)) <= directBudget {
		return convolveDirect(a, b)
	}
	return convolvePeaks(a, b, s)
}

// convolvePeaks convolves by FFT after taking out the peaks: the FFT's
// error bound is proportional to the 2-norms of its operands, which a few
// large entries dominate (the subsampled shuffle at a small sampling rate
// keeps most of its mass at loss 0 for hundreds of rounds). With
// a = Pa + Ra and b = Pb + Rb (P the entries at least 1/64 of the
// largest, when there are at most maxPeaks of them), a*b = Pa*b + Ra*Pb
// (direct, relative error only) + Ra*Rb (FFT).
func convolvePeaks(a, b []float64, s *tiltSpec) (c []float64, rel, abs float64) {
	same := &a[0] == &b[0] && len(a) == len(b)
	pa := peaks(a)
	pb := pa
	if !same {
		pb = peaks(b)
	}
	without := func(x []float64, idx []int) []float64 {
		if len(idx) == 0 {
			return x
		}
		y := append([]float64(nil), x...)
		for _, i := range idx {
			y[i] = 0
		}
		return y
	}
	ra := without(a, pa)
	rb := ra
	if !same {
		rb = without(b, pb)
	}
	if s != nil {
		c, rel, abs = fftConvolveTilted(ra, rb, *s)
	} else {
		c, rel, abs = fftConvolve(ra, rb)
	}
	if len(pa)+len(pb) == 0 {
		return c, rel, abs
	}
	// Each entry gains at most len(pa) + len(pb) non-negative products,
	// added in sequence.
	for _, i := range pa {
		x := a[i]
		ci := c[i : i+len(b)]
		for j, y := range b {
			ci[j] += x * y
		}
	}
	for _, j := range pb {
		y := b[j]
		cj := c[j : j+len(ra)]
		for i, x := range ra {
			cj[i] += x * y
		}
	}
	return c, rel + float64(len(pa)+len(pb)+3)*ulp, abs
}

// maxPeaks bounds the entries convolvePeaks convolves directly.
const maxPeaks = 32

// peaks returns the indices of the entries of x at least 1/64 of its
// largest, or none when there are more than maxPeaks of them (a spread
// vector: the FFT bound is already small relative to its mass).
func peaks(x []float64) []int {
	mx := 0.0
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	if !(mx > 0) {
		return nil
	}
	var idx []int
	for i, v := range x {
		if v >= mx/64 {
			if len(idx) == maxPeaks {
				return nil
			}
			idx = append(idx, i)
		}
	}
	return idx
}

func nnz(x []float64) int {
	n := 0
	for _, v := range x {
		if v != 0 {
			n++
		}
	}
	return n
}

// convolveDirect is the schoolbook convolution of non-negative vectors,
// skipping the zeros of a. Rows of a are taken four at a time, each entry
// of c receiving the four products in the row order of the one-row loop,
// so the sums are rounded exactly as there (a zero row adds 0 exactly).
func convolveDirect(a, b []float64) (c []float64, rel, abs float64) {
	c = make([]float64, len(a)+len(b)-1)
	nb := len(b)
	i := 0
	if nb >= 4 {
		for ; i+4 <= len(a); i += 4 {
			x0, x1, x2, x3 := a[i], a[i+1], a[i+2], a[i+3]
			if x0 == 0 && x1 == 0 && x2 == 0 && x3 == 0 {
				continue
			}
			ci := c[i : i+nb+3]
			// Entries i..i+2 get only the rows that reach them.
			ci[0] += x0 * b[0]
			ci[1] += x0 * b[1]
			ci[1] += x1 * b[0]
			ci[2] += x0 * b[2]
			ci[2] += x1 * b[1]
			ci[2] += x2 * b[0]
			body := ci[3:nb]
			b0, b1, b2, b3 := b[3:nb], b[2:nb-1], b[1:nb-2], b[:nb-3]
			for m := range body {
				s := body[m]
				s += x0 * b0[m]
				s += x1 * b1[m]
				s += x2 * b2[m]
				s += x3 * b3[m]
				body[m] = s
			}
			// Entries past the first row's end.
			ci[nb] += x1 * b[nb-1]
			ci[nb] += x2 * b[nb-2]
			ci[nb] += x3 * b[nb-3]
			ci[nb+1] += x2 * b[nb-1]
			ci[nb+1] += x3 * b[nb-2]
			ci[nb+2] += x3 * b[nb-1]
		}
	}
	for ; i < len(a); i++ {
		x := a[i]
		if x == 0 {
			continue
		}
		ci := c[i : i+nb]
		for j, y := range b {
			ci[j] += x * y
		}
	}
	// Each entry is a sum of at most min(len) non-negative products.
	return c, float64(min(len(a), len(b))+2) * ulp, 0
}

// fftConvolve convolves by a real FFT of size N (a power of two >= n). The
// round-off bound follows Higham, Accuracy and Stability of Numerical
// Algorithms (2nd ed.), Thm 24.2: a computed FFT of size N errs by at most
// gamma ||y||_2 in 2-norm, gamma = log2(N) eta/(1 - log2(N) eta),
// eta = mu + gamma_4 (sqrt 2 + mu), mu the error of the twiddle factors;
// we take eta = 32 ulps (mu <= 8 ulps for gonum's precomputed twiddles).
// With A = Fa, B = Fb (|B_k| <= ||b||_1): ||C^ - C||_2 <= gamma sqrt(N)
// (||a||_2 ||b||_1 + ||a||_1 ||b||_2) (1 + gamma) + ulp-level product
// errors, the inverse adds gamma ||c||_2, and ||.||_1 <= sqrt(N) ||.||_2.
// Negative outputs are clamped to zero (the true values are >= 0, so
// clamping only reduces the error).
func fftConvolve(a, b []float64) (c []float64, rel, abs float64) {
	n := len(a) + len(b) - 1
	N := 1 << bits.Len(uint(n-1))
	f := getFFT(N)
	defer putFFT(f)
	buf := make([]float64, N)
	copy(buf, a)
	A := f.Coefficients(nil, buf)
	clear(buf)
	copy(buf, b)
	B := f.Coefficients(nil, buf)
	for i := range A {
		A[i] *= B[i]
	}
	out := f.Sequence(buf, A)
	c = make([]float64, n)
	inv := 1 / float64(N)
	for i := range c {
		v := out[i] * inv
		if v > 0 {
			c[i] = v
		}
	}
	l2 := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v * v
		}
		return math.Sqrt(s)
	}
	a1, b1 := sum(a), sum(b)
	a2, b2, c2 := l2(a), l2(b), l2(c)
	lg := float64(bits.Len(uint(N)) - 1)
	eta := 32 * ulp
	gamma := lg * eta / (1 - lg*eta)
	sq := math.Sqrt(float64(N))
	abs = sq * (gamma*(1+gamma)*(a2*b1+a1*b2) + 8*ulp*a2*b1 + (gamma+4*ulp)*(c2+gamma*(a2*b1+a1*b2)))
	return c, 0, abs * 1.01
}
