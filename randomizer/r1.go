package randomizer

import (
	"fmt"
	"math"
)

// R1 is the l_1 randomizer R_1 of Girgis et al. (AISTATS'21, arXiv
// 2008.07180, Algorithm 2; spec §8). Let D be d rounded up to a power of 2
// and x ∈ B_1(a) be zero-padded to length D. With H the D×D Sylvester
// Hadamard matrix (entries ±1), R_1 draws j uniformly from [D] and outputs
//
//	z = +a·c·H_j  with probability 1/2 + ((Hx)_j/(2a))·(e^eps0−1)/(e^eps0+1),
//	z = −a·c·H_j  otherwise,
//
// where H_j is column j and c = (e^eps0+1)/(e^eps0−1). (The paper writes
// y = H x/√D and the probability with √D·y_j = (Hx)_j.) Since
// |(Hx)_j| ≤ ||x||_1 ≤ a the probability is in [0,1].
//
// Theorem (ibid., Thm 2): R_1 is eps0-LDP and unbiased —
// E[z] = (1/D)·Σ_j H_j (Hx)_j = H H x/D = x — with E||z − x||² ≤ a²·D·c².
// The decoded estimate is the first d coordinates of z. The report is
// log2(D)+1 bits.
//
// Randomize needs only the one coefficient (Hx)_j, which it computes in
// O(d) without a transform; OutputProbabilities and AddDecodedBatch use the
// fast Walsh–Hadamard transform (FWHT). H is never built.
type R1 struct {
	eps0, a float64
	d, D    int
	ib      int
	coin    signCoin
	mag     float64 // a/(realised 1/c)
}

// NewR1 returns R_1 with parameter eps0 on B_1(a) ⊂ R^d.
func NewR1(eps0 float64, d int, a float64) (*R1, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if d < 1 || d > 1<<30 {
		return nil, fmt.Errorf("dim must be in [1, 2^30], got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	D := 1
	for D < d {
		D <<= 1
	}
	r := &R1{eps0: eps0, a: a, d: d, D: D, ib: indexBits(D), coin: newSignCoin(eps0)}
	r.mag = a / r.coin.bias()
	return r, nil
}

func (r *R1) Name() string    { return "r1" }
func (r *R1) Dim() int        { return r.d }
func (r *R1) Eps0() float64   { return r.eps0 }
func (r *R1) Norm() Norm      { return NormL1 }
func (r *R1) Radius() float64 { return r.a }
func (r *R1) ReportSize() int { return packedSize(r.ib + 1) }

// PaddedDim is D, d rounded up to a power of 2.
func (r *R1) PaddedDim() int { return r.D }

// Randomize returns the report (j, sign) of x.
func (r *R1) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL1, r.a); err != nil {
		return nil, err
	}
	j := UniformIndex(src, uint64(r.D))
	t := r.coin.threshold(hadamardRow(x, int(j)) / r.a)
	return encodeIndexSign(kindR1, r.ib, j, !Bernoulli(src, t)), nil
}

// Decode returns the first d coordinates of ±mag·H_j.
func (r *R1) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.d)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·(±mag·H_j) (first d coordinates) into sum, O(d).
func (r *R1) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	j, neg, err := decodeIndexSign(rep, kindR1, r.ib, r.D)
	if err != nil {
		return err
	}
	s := scale * r.mag
	if neg {
		s = -s
	}
	sb := math.Float64bits(s)
	for i := range sum {
		sum[i] += math.Float64frombits(sb ^ signBit(i, j))
	}
	return nil
}

// AddDecodedBatch adds scale·Σ Decode(rep) into sum with one FWHT: the sum
// of decoded reports is mag·H·v, where v_j is the number of positive minus
// negative reports on column j. It costs O(len(reps) + D log D) instead of
// O(len(reps)·d). It validates every report before touching sum.
func (r *R1) AddDecodedBatch(reps []Report, scale float64, sum []float64) error {
	return addDecodedBatchR1(r, reps, scale, sum)
}

func addDecodedBatchR1[R ~[]byte](r *R1, reps []R, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	v := make([]float64, r.D)
	for i, rep := range reps {
		j, neg, err := decodeIndexSign(Report(rep), kindR1, r.ib, r.D)
		if err != nil {
			return fmt.Errorf("report %d: %w", i, err)
		}
		if neg {
			v[j]--
		} else {
			v[j]++
		}
	}
	FWHT(v)
	s := scale * r.mag
	for i := range sum {
		sum[i] += s * v[i]
	}
	return nil
}

// NumOutputs is 2D: output 2j is +H_j, output 2j+1 is −H_j.
func (r *R1) NumOutputs() int { return 2 * r.D }

// Output returns the report with index i.
func (r *R1) Output(i int) Report {
	return encodeIndexSign(kindR1, r.ib, uint64(i/2), i%2 == 1)
}

// OutputProbabilities writes P[±H_j | x] = (1/D)·t((Hx)_j/a)/2^64 (and its
// complement), computing all (Hx)_j with one FWHT.
func (r *R1) OutputProbabilities(x []float64, p []float64) error {
	if err := checkDomain(x, r.d, NormL1, r.a); err != nil {
		return err
	}
	if len(p) != 2*r.D {
		return fmt.Errorf("p has length %d, want %d", len(p), 2*r.D)
	}
	w := make([]float64, r.D)
	copy(w, x)
	FWHT(w)
	inv := 1 / float64(r.D)
	for j, wj := range w {
		t := r.coin.threshold(wj / r.a)
		p[2*j] = prob(t) * inv
		p[2*j+1] = probComplement(t) * inv
	}
	return nil
}

// InputGrid returns ±a·e_i for a few coordinates i (the vertices of the l_1
// ball, where |(Hx)_j| = a for every j, attaining the worst-case ratio),
// zero, and mixed points inside the ball.
func (r *R1) InputGrid() [][]float64 {
	var g [][]float64
	for _, i := range []int{0, r.d / 2, r.d - 1} {
		for _, s := range []float64{-1, 1} {
			x := make([]float64, r.d)
			x[i] = s * r.a
			g = append(g, x)
		}
	}
	g = append(g, make([]float64, r.d))
	for _, box := range boxGrid(r.d, r.a/float64(r.d)) {
		g = append(g, box)
	}
	return g
}
