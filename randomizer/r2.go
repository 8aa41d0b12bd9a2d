package randomizer

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// R2 is the l_2 randomizer R_2 = Quan∘Priv of Girgis et al. (AISTATS'21,
// arXiv 2008.07180, §3; spec §8), with the spec's corrections of the
// printed formulas.
//
// Priv is the l_2 mechanism of Duchi, Jordan and Wainwright ("Minimax optimal
// procedures for locally private estimation", JASA 2018, §4.2.3): for
// x ∈ B_2(a),
//
//  1. x̃ = +a·x/||x|| with probability 1/2 + ||x||/(2a), else −a·x/||x||
//     (so E[x̃] = x; x = 0 gives a uniformly random direction);
//  2. with probability p = e^eps0/(e^eps0+1), z is uniform on the hemisphere
//     {z : ||z|| = M, <z, x̃> > 0}, otherwise on the opposite hemisphere,
//
// with radius M = a·c·√π/2 · d · Γ((d−1)/2+1)/Γ(d/2+1) = a·c·√π·Γ((d+1)/2)/Γ(d/2)
// (the printed formula misses the factor d), c = (e^eps0+1)/(e^eps0−1).
// Then E[z | x̃] = (2p−1)·M·E|u_1|·x̃/a with E|u_1| = Γ(d/2)/(√π Γ((d+1)/2))
// for u uniform on the unit sphere, which is x̃: Priv is unbiased. The
// density of z under any two inputs differs by at most the factor
// p/(1−p) = e^eps0, so Priv is eps0-LDP.
//
// Quan (after Mayekar and Tyagi, "RATQ", AISTATS 2020) maps z (||z||_1 ≤
// √d·M) to one of the 2d points ±M√d·e_j: draw j with probability
// |z_j|/||z||_1, then output sign(z_j)·M√d·e_j with probability
// 1/2 + ||z||_1/(2M√d) and its negative otherwise (the printed
// probabilities "1/2 ± ||x||_1/(2a√d)" are these two sign probabilities).
// E[Quan(z) | z] = Σ_j (|z_j|/||z||_1)·sign(z_j)·M√d·(||z||_1/(M√d))·e_j = z.
//
// So R_2 is eps0-LDP (Quan is post-processing) and unbiased, and its report
// is log2(d)+1 bits. Every decoded report has norm M√d, so
// E||R_2(x) − x||² = M²d − ||x||² ≈ (π/2)·a²c²d² for large d
// (M ≈ a·c·√(πd/2)). Its output probabilities are integrals over the sphere
// with no closed form, so R2 does not implement Discrete; the tests check
// unbiasedness and the likelihood ratio statistically.
//
// The hemisphere coin is realised exactly as Threshold(eps0,1)/2^64 and M
// uses that realised p. The sphere sample is floating-point (normalised
// Gaussian vector); see the caveat on Gaussian.
type R2 struct {
	eps0, a float64
	d, ib   int
	t       uint64  // hemisphere coin threshold
	m       float64 // Priv radius M
	mag     float64 // M·√d, the magnitude of a decoded report
}

// NewR2 returns R_2 with parameter eps0 on B_2(a) ⊂ R^d.
func NewR2(eps0 float64, d int, a float64) (*R2, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if d < 1 || d > 1<<30 {
		return nil, fmt.Errorf("dim must be in [1, 2^30], got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	t := Threshold(eps0, 1)
	twoPm1 := float64(t-(-t)) / two64 // realised 2p − 1 = (2t − 2^64)/2^64
	r := &R2{eps0: eps0, a: a, d: d, ib: indexBits(d), t: t}
	r.m = a / (twoPm1 * meanAbsCoordinate(d))
	r.mag = r.m * math.Sqrt(float64(d))
	return r, nil
}

// meanAbsCoordinate returns E|u_1| = Γ(d/2)/(√π·Γ((d+1)/2)) for u uniform on
// the unit sphere S^{d−1}, computed as B(1/2, d/2)/π through
// logmath.LogBeta, which avoids the cancellation of lgamma(d/2) −
// lgamma((d+1)/2) at large d.
func meanAbsCoordinate(d int) float64 {
	return math.Exp(logmath.LogBeta(0.5, float64(d)/2)) / math.Pi
}

func (r *R2) Name() string    { return "r2" }
func (r *R2) Dim() int        { return r.d }
func (r *R2) Eps0() float64   { return r.eps0 }
func (r *R2) Norm() Norm      { return NormL2 }
func (r *R2) Radius() float64 { return r.a }
func (r *R2) ReportSize() int { return packedSize(r.ib + 1) }

// PrivRadius is M, the radius of Priv's output sphere.
func (r *R2) PrivRadius() float64 { return r.m }

// Magnitude is M·√d, the absolute value of the non-zero coordinate of a
// decoded report.
func (r *R2) Magnitude() float64 { return r.mag }

// Randomize returns the report (j, sign) of Quan(Priv(x)).
func (r *R2) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return nil, err
	}
	rng := normals(src)
	// u: a uniform point on the unit sphere (normalised later), drawn as a
	// standard normal vector; one pass also accumulates <u,x>, ||u||_1 and
	// ||u||_2², which is all Priv and Quan need.
	u := make([]float64, r.d)
	var dot, l1, l2sq float64
	for i, xi := range x {
		g := rng.NormFloat64()
		u[i] = g
		dot += g * xi
		l1 += math.Abs(g)
		l2sq += g * g
	}
	// Priv. Step 1: x̃ = ±a·x/||x|| with P[+] = 1/2 + ||x||/(2a). Step 2: z
	// in the hemisphere towards x̃ with probability p (the eps0 coin). z is
	// ±M·u/||u||: negate u iff the side of u differs from the chosen one.
	// For x = 0 every direction of x̃ is equally likely, so z is uniform on
	// the sphere and u is used as drawn.
	flip := false
	if nx := l2Norm(x); nx > 0 {
		plus := Bernoulli(src, fracThreshold((1+math.Min(nx/r.a, 1))/2))
		toward := Bernoulli(src, r.t)
		// <u, x̃> > 0  ⇔  (dot > 0) == plus.
		flip = ((dot > 0) == plus) != toward
	}
	// Quan on z = ±M·u/||u||_2: j with probability |u_j|/||u||_1, and
	// ||z||_1/(M√d) = ||u||_1/(||u||_2·√d).
	target := rng.Float64() * l1
	j := r.d - 1
	var acc float64
	for i, ui := range u {
		acc += math.Abs(ui)
		if target < acc {
			j = i
			break
		}
	}
	nu := math.Sqrt(l2sq)
	keep := Bernoulli(src, fracThreshold((1+l1/(nu*math.Sqrt(float64(r.d))))/2))
	neg := ((u[j] < 0) != flip) == keep
	return encodeIndexSign(kindR2, r.ib, uint64(j), neg), nil
}

// fracThreshold returns round(q·2^64) for q ∈ [0, 1], saturating at
// 2^64−1: a Bernoulli(q) threshold for coins that are post-processing (no
// LDP ratio rides on them), accurate to 2^-64 plus q's own rounding.
func fracThreshold(q float64) uint64 {
	if !(q > 0) {
		return 0
	}
	if q >= 1 {
		return math.MaxUint64
	}
	return uint64(math.Round(q * two64))
}

// Decode returns ±M√d·e_j.
func (r *R2) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.d)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·(±M√d·e_j) into sum in O(1).
func (r *R2) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	j, neg, err := decodeIndexSign(rep, kindR2, r.ib, r.d)
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
