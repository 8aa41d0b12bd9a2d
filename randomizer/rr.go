package randomizer

import (
	"fmt"
)

// BinaryRR is Warner's randomized response on one bit: the report equals
// the input bit x ∈ {0, 1} with probability p = e^eps0/(e^eps0+1) and is
// flipped otherwise. It is eps0-LDP (p/(1−p) = e^eps0), and
// (y − (1−p))/(2p − 1) is an unbiased estimate of x.
//
// Inputs are vectors of length 1 holding 0 or 1. The keep probability is
// realised as Threshold(eps0, 1)/2^64 and the decoder uses that realised p,
// so decoding is unbiased for the coin actually flipped.
type BinaryRR struct {
	eps0 float64
	t    uint64
	p, q float64 // realised P[keep], P[flip]
}

// NewBinaryRR returns binary randomized response with parameter eps0; dim
// must be 1.
func NewBinaryRR(eps0 float64, dim int) (*BinaryRR, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if dim != 1 {
		return nil, fmt.Errorf("dim must be 1 for binary randomized response (one bit), got %d", dim)
	}
	t := Threshold(eps0, 1)
	return &BinaryRR{eps0: eps0, t: t, p: prob(t), q: probComplement(t)}, nil
}

func (r *BinaryRR) Name() string    { return "rr" }
func (r *BinaryRR) Dim() int        { return 1 }
func (r *BinaryRR) Eps0() float64   { return r.eps0 }
func (r *BinaryRR) Norm() Norm      { return NormNone }
func (r *BinaryRR) Radius() float64 { return 1 }
func (r *BinaryRR) ReportSize() int { return packedSize(1) }

// KeepProbability is the realised probability that the report equals the
// input.
func (r *BinaryRR) KeepProbability() float64 { return r.p }

func bitInput(x []float64) (uint64, error) {
	if len(x) != 1 {
		return 0, fmt.Errorf("%w: input has length %d, want dim 1", ErrDomain, len(x))
	}
	switch x[0] {
	case 0:
		return 0, nil
	case 1:
		return 1, nil
	}
	return 0, fmt.Errorf("%w: binary randomized response input must be 0 or 1, got %g", ErrDomain, x[0])
}

// Randomize reports x[0] with probability p, 1 − x[0] otherwise.
func (r *BinaryRR) Randomize(x []float64, src Source) (Report, error) {
	b, err := bitInput(x)
	if err != nil {
		return nil, err
	}
	if !Bernoulli(src, r.t) {
		b ^= 1
	}
	return encodeBits(kindRR, 1, b), nil
}

func (r *BinaryRR) decodeBit(rep Report) (float64, error) {
	b, err := decodeBits(rep, kindRR, 1)
	if err != nil {
		return 0, err
	}
	return (float64(b) - r.q) / (r.p - r.q), nil
}

// Decode returns [(y − q)/(p − q)].
func (r *BinaryRR) Decode(rep Report) ([]float64, error) {
	v, err := r.decodeBit(rep)
	if err != nil {
		return nil, err
	}
	return []float64{v}, nil
}

// AddDecoded adds scale·(y − q)/(p − q) to sum[0].
func (r *BinaryRR) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != 1 {
		return fmt.Errorf("sum has length %d, want dim 1", len(sum))
	}
	v, err := r.decodeBit(rep)
	if err != nil {
		return err
	}
	sum[0] += scale * v
	return nil
}

// NumOutputs is 2 (output i is the bit i).
func (r *BinaryRR) NumOutputs() int { return 2 }

// Output returns the report of bit i.
func (r *BinaryRR) Output(i int) Report { return encodeBits(kindRR, 1, uint64(i&1)) }

// OutputProbabilities writes P[0 | x], P[1 | x].
func (r *BinaryRR) OutputProbabilities(x []float64, p []float64) error {
	b, err := bitInput(x)
	if err != nil {
		return err
	}
	if len(p) != 2 {
		return fmt.Errorf("p has length %d, want 2", len(p))
	}
	p[b], p[b^1] = r.p, r.q
	return nil
}

// InputGrid returns both inputs, [0] and [1].
func (r *BinaryRR) InputGrid() [][]float64 { return [][]float64{{0}, {1}} }

// KRR is k-ary randomized response (Warner 1965; Kairouz, Bonawitz and
// Ramage, ICML 2016): the input is a category v ∈ [k], given as a one-hot
// vector of length k; the report is v with probability
// p = e^eps0/(e^eps0+k−1) and each other category with probability
// q = 1/(e^eps0+k−1). It is eps0-LDP (p/q = e^eps0), and
// (e_y − q·1)/(p − q) is an unbiased estimate of the one-hot input.
//
// p is realised as Threshold(eps0, k−1)/2^64 (the other category is then
// drawn exactly uniformly), so p·(k−1)/(1−p) ≤ e^eps0 holds for the
// realised probabilities; the decoder uses the realised p and q.
type KRR struct {
	eps0 float64
	k    int
	ib   int
	t    uint64
	p, q float64
}

// NewKRR returns k-ary randomized response over k ≥ 2 categories.
func NewKRR(eps0 float64, k int) (*KRR, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if k < 2 || k > 1<<30 {
		return nil, fmt.Errorf("dim (number of categories k) must be in [2, 2^30], got %d", k)
	}
	t := Threshold(eps0, k-1)
	return &KRR{eps0: eps0, k: k, ib: indexBits(k), t: t, p: prob(t), q: probComplement(t) / float64(k-1)}, nil
}

func (r *KRR) Name() string    { return "krr" }
func (r *KRR) Dim() int        { return r.k }
func (r *KRR) Eps0() float64   { return r.eps0 }
func (r *KRR) Norm() Norm      { return NormNone }
func (r *KRR) Radius() float64 { return 1 }
func (r *KRR) ReportSize() int { return packedSize(r.ib) }

func (r *KRR) category(x []float64) (int, error) {
	if len(x) != r.k {
		return 0, fmt.Errorf("%w: input has length %d, want dim %d", ErrDomain, len(x), r.k)
	}
	v := -1
	for i, xi := range x {
		switch {
		case xi == 1 && v < 0:
			v = i
		case xi == 0:
		default:
			return 0, fmt.Errorf("%w: k-ary randomized response input must be one-hot (one 1, rest 0)", ErrDomain)
		}
	}
	if v < 0 {
		return 0, fmt.Errorf("%w: k-ary randomized response input must be one-hot (one 1, rest 0)", ErrDomain)
	}
	return v, nil
}

// Randomize reports the category of x with probability p, else one of the
// other k−1 categories uniformly.
func (r *KRR) Randomize(x []float64, src Source) (Report, error) {
	v, err := r.category(x)
	if err != nil {
		return nil, err
	}
	y := uint64(v)
	if !Bernoulli(src, r.t) {
		y = UniformIndex(src, uint64(r.k-1))
		if y >= uint64(v) {
			y++
		}
	}
	return encodeBits(kindKRR, r.ib, y), nil
}

func (r *KRR) decodeCategory(rep Report) (int, error) {
	y, err := decodeBits(rep, kindKRR, r.ib)
	if err != nil {
		return 0, err
	}
	if y >= uint64(r.k) {
		return 0, fmt.Errorf("%w: category %d outside [0, %d)", ErrMalformed, y, r.k)
	}
	return int(y), nil
}

// Decode returns (e_y − q·1)/(p − q).
func (r *KRR) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.k)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·(e_y − q·1)/(p − q) into sum (O(k)).
func (r *KRR) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.k {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.k)
	}
	y, err := r.decodeCategory(rep)
	if err != nil {
		return err
	}
	s := scale / (r.p - r.q)
	off := -r.q * s
	for i := range sum {
		sum[i] += off
	}
	sum[y] += s
	return nil
}

// NumOutputs is k.
func (r *KRR) NumOutputs() int { return r.k }

// Output returns the report of category i.
func (r *KRR) Output(i int) Report { return encodeBits(kindKRR, r.ib, uint64(i)) }

// OutputProbabilities writes P[y | x] for every category y.
func (r *KRR) OutputProbabilities(x []float64, p []float64) error {
	v, err := r.category(x)
	if err != nil {
		return err
	}
	if len(p) != r.k {
		return fmt.Errorf("p has length %d, want %d", len(p), r.k)
	}
	for i := range p {
		p[i] = r.q
	}
	p[v] = r.p
	return nil
}

// InputGrid returns all k one-hot inputs (at most the first 64 categories
// when k is large; every category is symmetric).
func (r *KRR) InputGrid() [][]float64 {
	n := min(r.k, 64)
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, r.k)
		g[i][i] = 1
	}
	return g
}
