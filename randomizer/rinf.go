package randomizer

import (
	"fmt"
	"math"
)

// RInf is the l_inf randomizer R_inf of Girgis, Data, Diggavi, Kairouz and
// Suresh, "Shuffled model of federated learning: privacy, accuracy and
// communication trade-offs" (AISTATS'21, arXiv 2008.07180), Algorithm 3
// (spec §8). For x ∈ B_inf(a) ⊂ R^d it draws j uniformly from [d] and
// outputs
//
//	z = +a·d·c·e_j  with probability 1/2 + (x_j/(2a))·(e^eps0−1)/(e^eps0+1),
//	z = −a·d·c·e_j  otherwise,                 c = (e^eps0+1)/(e^eps0−1).
//
// Theorem (ibid., Thm 3): R_inf is eps0-LDP and unbiased,
// E[z] = x, with E||z − x||² ≤ a²d²c². Its report is log2(d)+1 bits.
//
// Here the sign coin is realised exactly with integer thresholds (see
// signCoin): the realised probabilities satisfy the eps0-LDP ratio bound
// exactly, and the decoder uses the matching realised magnitude, so the
// estimate is unbiased up to the float64 rounding of x_j/a.
type RInf struct {
	eps0, a float64
	d, ib   int
	coin    signCoin
	// mag is the decoded magnitude a·d/(2·t_hi/2^64 − 1) (= a·d·c for the
	// ideal coin), chosen so that E[z_j | j] = x_j for the realised coin.
	mag float64
}

// NewRInf returns R_inf with parameter eps0 on B_inf(a) ⊂ R^d.
func NewRInf(eps0 float64, d int, a float64) (*RInf, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if d < 1 || d > 1<<40 {
		return nil, fmt.Errorf("dim must be in [1, 2^40], got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	r := &RInf{eps0: eps0, a: a, d: d, ib: indexBits(d), coin: newSignCoin(eps0)}
	r.mag = a * float64(d) / r.coin.bias()
	return r, nil
}

func (r *RInf) Name() string    { return "rinf" }
func (r *RInf) Dim() int        { return r.d }
func (r *RInf) Eps0() float64   { return r.eps0 }
func (r *RInf) Norm() Norm      { return NormLinf }
func (r *RInf) Radius() float64 { return r.a }
func (r *RInf) ReportSize() int { return packedSize(r.ib + 1) }

// Magnitude is the absolute value a·d·c' of the one non-zero coordinate of
// a decoded report (c' the realised counterpart of c).
func (r *RInf) Magnitude() float64 { return r.mag }

// Randomize returns the report (j, sign) of x.
func (r *RInf) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormLinf, r.a); err != nil {
		return nil, err
	}
	j := UniformIndex(src, uint64(r.d))
	t := r.coin.threshold(x[j] / r.a)
	return encodeIndexSign(kindRInf, r.ib, j, !Bernoulli(src, t)), nil
}

// DrawIndex draws the coordinate j in [0, d) that Randomize reads, taking
// from src exactly the words Randomize takes before it reads x. With
// RandomizeCoordinate it splits Randomize in two, so that a caller can
// compute only the coordinate j of its input:
//
//	j := r.DrawIndex(src)
//	rep, err := r.RandomizeCoordinate(j, x[j], src)
//
// returns the same report as r.Randomize(x, src) for every x in B_inf(a),
// with src advanced alike: Randomize draws j from src, then reads x only
// through x_j (the sign coin's threshold t(x_j/a)) and draws the coin from
// src. So the pair is R_inf, and eps0-LDP (Thm 3 of Girgis et al.,
// AISTATS'21), whenever x_j is the j-th coordinate of an input in the
// domain, e.g. of a gradient clamped coordinate-wise into [-a, a]
// (ClipLinf): clamping x_j alone gives the same value as clamping x and
// reading x_j. (With ScaleLinf the clipped x_j depends on every
// coordinate, which must then all be known.)
func (r *RInf) DrawIndex(src Source) int {
	return int(UniformIndex(src, uint64(r.d)))
}

// RandomizeCoordinate returns the report of an input x whose coordinate j,
// drawn by DrawIndex from src, is xj = x[j]: the second half of Randomize
// (see DrawIndex). It checks what Randomize's domain check implies for
// that coordinate: j in [0, d), xj finite and |xj| <= a (up to the same
// relative slack).
func (r *RInf) RandomizeCoordinate(j int, xj float64, src Source) (Report, error) {
	if j < 0 || j >= r.d {
		return nil, fmt.Errorf("coordinate %d out of range [0, %d)", j, r.d)
	}
	if math.IsNaN(xj) || math.IsInf(xj, 0) {
		return nil, fmt.Errorf("%w: coordinate %d is %g", ErrDomain, j, xj)
	}
	if math.Abs(xj) > r.a*(1+domainSlack) {
		return nil, fmt.Errorf("%w: coordinate %d is %g, outside [-%g, %g] (clip first)", ErrDomain, j, xj, r.a, r.a)
	}
	t := r.coin.threshold(xj / r.a)
	return encodeIndexSign(kindRInf, r.ib, uint64(j), !Bernoulli(src, t)), nil
}

// Decode returns the dense vector ±mag·e_j.
func (r *RInf) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.d)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·(±mag·e_j) into sum in O(1).
func (r *RInf) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	j, neg, err := decodeIndexSign(rep, kindRInf, r.ib, r.d)
	if err != nil {
		return err
	}
	if neg {
		sum[j] -= scale * r.mag
	} else {
		sum[j] += scale * r.mag
	}
	return nil
}

// NumOutputs is 2d: output 2j is +e_j, output 2j+1 is −e_j.
func (r *RInf) NumOutputs() int { return 2 * r.d }

// Output returns the report with index i (see NumOutputs).
func (r *RInf) Output(i int) Report {
	return encodeIndexSign(kindRInf, r.ib, uint64(i/2), i%2 == 1)
}

// OutputProbabilities writes P[output i | x] = (1/d)·t(x_j/a)/2^64 (or its
// complement for the negative sign) into p.
func (r *RInf) OutputProbabilities(x []float64, p []float64) error {
	if err := checkDomain(x, r.d, NormLinf, r.a); err != nil {
		return err
	}
	if len(p) != 2*r.d {
		return fmt.Errorf("p has length %d, want %d", len(p), 2*r.d)
	}
	inv := 1 / float64(r.d)
	for j, xj := range x {
		t := r.coin.threshold(xj / r.a)
		p[2*j] = prob(t) * inv
		p[2*j+1] = probComplement(t) * inv
	}
	return nil
}

// InputGrid returns the constant vectors at −a, −a/2, 0, a/2, a and two
// mixed-sign vectors. The likelihood of an output depends on x only through
// one coordinate, so the constant vectors ±a attain the worst-case ratio.
func (r *RInf) InputGrid() [][]float64 {
	return boxGrid(r.d, r.a)
}

// boxGrid returns inputs in B_inf(a) (and so in B_1(a·d)) used by audits.
func boxGrid(d int, a float64) [][]float64 {
	var g [][]float64
	for _, v := range []float64{-1, -0.5, 0, 0.5, 1} {
		x := make([]float64, d)
		for i := range x {
			x[i] = v * a
		}
		g = append(g, x)
	}
	alt := make([]float64, d)
	ramp := make([]float64, d)
	for i := range alt {
		alt[i] = a
		if i%2 == 1 {
			alt[i] = -a
		}
		ramp[i] = a * (2*float64(i)/math.Max(1, float64(d-1)) - 1)
	}
	return append(g, alt, ramp)
}
