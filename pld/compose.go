package pld

import (
	"fmt"
	"math"
	"math/bits"

	"gonum.org/v1/gonum/dsp/fourier"
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
// Wang, AISTATS 2022, Thm 10).
func (p *PLD) Compose(q *PLD) (*PLD, error) {
	return p.compose(q, DefaultTail)
}

func (p *PLD) compose(q *PLD, tail float64) (*PLD, error) {
	if p.side != q.side {
		return nil, fmt.Errorf("pld: cannot compose a %v PLD with a %v one", p.side, q.side)
	}
	if p.h != q.h {
		return nil, fmt.Errorf("pld: cannot compose PLDs of grid widths %v and %v", p.h, q.h)
	}
	r := &PLD{side: p.side, h: p.h, lo: p.lo + q.lo}
	r.inf = p.inf + q.inf - p.inf*q.inf
	if p.side == Pessimistic {
		r.inf = math.Min(1, r.inf*(1+4*ulp))
	} else {
		r.inf *= 1 - 4*ulp
	}
	if len(p.mass) == 0 || len(q.mass) == 0 {
		r.relErr = p.relErr + q.relErr
		r.absErr = p.absErr + q.absErr
		return r, nil
	}
	var convRel, convAbs float64
	r.mass, convRel, convAbs = convolve(p.mass, q.mass)
	mp, mq := sum(p.mass), sum(q.mass)
	// (1+e1)(1+e2)(1+e3) - 1 <= e1 + e2 + e3 + (products), bounded by a
	// factor 1.01 for errors below 1e-3; absolute errors propagate through
	// the other factor's total mass.
	r.relErr = 1.01 * (p.relErr + q.relErr + convRel)
	r.absErr = p.absErr*mq*(1+q.relErr) + q.absErr*mp*(1+p.relErr) + p.absErr*q.absErr + convAbs
	// FFT round-off leaves noise of total size at most convAbs in the far
	// tails, where the true masses are below it: truncating up to that
	// much more mass costs no more than the error bound already charged
	// (the truncated computed mass still goes to +inf on the pessimistic
	// side, so nothing is lost).
	return r.truncate(tail + convAbs), nil
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
	return p.selfCompose(T, DefaultTail)
}

func (p *PLD) selfCompose(T int, tail float64) (*PLD, error) {
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
				if result, err = result.compose(base, tail); err != nil {
					return nil, err
				}
			}
		}
		T >>= 1
		if T == 0 {
			return result, nil
		}
		var err error
		if base, err = base.compose(base, tail); err != nil {
			return nil, err
		}
	}
}

// truncate applies the tail truncation in the side's direction and trims
// zeros.
func (p *PLD) truncate(tail float64) *PLD {
	if tail <= 0 || len(p.mass) == 0 {
		return p.trim()
	}
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

// directBudget: convolutions with at most this many multiply-adds are done
// directly (exact up to a relative error per entry), larger ones by FFT.
const directBudget = 1 << 25

// convolve returns a*b (non-negative inputs), a relative error bound on
// every entry and an absolute L1 error bound.
func convolve(a, b []float64) (c []float64, rel, abs float64) {
	// The direct convolution skips zeros: its cost is nnz(a) len(b).
	na, nb := nnz(a), nnz(b)
	if float64(na)*float64(len(b)) > float64(nb)*float64(len(a)) {
		a, b, na, nb = b, a, nb, na
	}
	if na <= 64 || float64(na)*float64(len(b)) <= directBudget {
		return convolveDirect(a, b)
	}
	return fftConvolve(a, b)
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
// skipping the zeros of a.
func convolveDirect(a, b []float64) (c []float64, rel, abs float64) {
	c = make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		ci := c[i : i+len(b)]
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
	f := fourier.NewFFT(N)
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
