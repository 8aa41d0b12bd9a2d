package randomizer

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Gaussian is the local Gaussian randomizer of shuffle-Gaussian SGD (ICLR'23
// submission, "Shuffle Gaussian mechanism"; spec §6): for x ∈ B_2(a) it
// reports z = x + N(0, (σa)² I_d). The decoded estimate is z itself, which is
// unbiased. It is not pure LDP (Eps0 is +Inf); its privacy after shuffling
// is accounted from σ by package shufflegauss, whose Theorem 1 assumes
// sensitivity a = 1 relative to noise σ — i.e. noise σ·a at radius a.
//
// The report is the d float64 values of z (8d bytes plus the header).
//
// Caveat for deployment: the normal draws are floating-point (ziggurat of
// math/rand/v2 over the given Source); like the floating-point Laplace
// mechanism (Mironov, CCS 2012) this can leak through the low-order bits of
// x. Simulations are unaffected.
type Gaussian struct {
	sigma, a float64
	d        int
}

// NewGaussian returns the Gaussian randomizer with noise multiplier sigma
// on B_2(a) ⊂ R^d.
func NewGaussian(sigma float64, d int, a float64) (*Gaussian, error) {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, fmt.Errorf("sigma must be finite and > 0, got %g", sigma)
	}
	if d < 1 || d > 1<<28 {
		return nil, fmt.Errorf("dim must be in [1, 2^28], got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	return &Gaussian{sigma: sigma, a: a, d: d}, nil
}

func (g *Gaussian) Name() string { return "gaussian" }
func (g *Gaussian) Dim() int     { return g.d }

// Eps0 is +Inf: the Gaussian mechanism is not pure LDP.
func (g *Gaussian) Eps0() float64   { return math.Inf(1) }
func (g *Gaussian) Norm() Norm      { return NormL2 }
func (g *Gaussian) Radius() float64 { return g.a }
func (g *Gaussian) ReportSize() int { return 1 + 8*g.d }

// Sigma is the noise multiplier: the noise standard deviation per
// coordinate is Sigma·Radius.
func (g *Gaussian) Sigma() float64 { return g.sigma }

// Randomize returns x + N(0, (σa)² I).
func (g *Gaussian) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, g.d, NormL2, g.a); err != nil {
		return nil, err
	}
	rng := normals(src)
	sd := g.sigma * g.a
	rep := make(Report, g.ReportSize())
	rep[0] = header(kindGaussian)
	for i, xi := range x {
		binary.LittleEndian.PutUint64(rep[1+8*i:], math.Float64bits(xi+sd*rng.NormFloat64()))
	}
	return rep, nil
}

func (g *Gaussian) check(rep Report) error {
	if len(rep) != g.ReportSize() {
		return fmt.Errorf("%w: length %d, want %d", ErrMalformed, len(rep), g.ReportSize())
	}
	if err := checkHeader(rep, kindGaussian); err != nil {
		return err
	}
	for i := 0; i < g.d; i++ {
		v := math.Float64frombits(binary.LittleEndian.Uint64(rep[1+8*i:]))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: coordinate %d is not finite", ErrMalformed, i)
		}
	}
	return nil
}

// Decode returns z.
func (g *Gaussian) Decode(rep Report) ([]float64, error) {
	z := make([]float64, g.d)
	if err := g.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·z into sum.
func (g *Gaussian) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != g.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), g.d)
	}
	if err := g.check(rep); err != nil {
		return err
	}
	for i := range sum {
		sum[i] += scale * math.Float64frombits(binary.LittleEndian.Uint64(rep[1+8*i:]))
	}
	return nil
}
