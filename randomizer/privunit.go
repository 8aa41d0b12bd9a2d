package randomizer

import (
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
	"gonum.org/v1/gonum/mathext"
)

// PrivUnit is the l_2 randomizer PrivUnit2 of Bhowmick, Duchi, Freudiger,
// Kapoor and Rogers, "Protection against reconstruction and its
// applications in private federated learning" (arXiv 1812.00984,
// Algorithm 1), on the ball B_2(a) ⊂ R^d, d ≥ 2.
//
// For x ∈ B_2(a) it first rounds x to the sphere, u = ±x/||x|| with
// P[+] = 1/2 + ||x||/(2a) (so E[a·u] = x), then draws V on the unit sphere:
// with probability p uniformly on the cap C_γ(u) = {v : <v,u> ≥ γ}, else
// uniformly on its complement, and reports a·V/m with
//
//	m = (1−γ²)^α / ((d−1)·B(1/2, α)) · [ p/q − (1−p)/(1−q) ],  α = (d−1)/2,
//
// where q = P[<U,u> ≥ γ] = I_{(1−γ)/2}(α, α) for U uniform on the sphere.
// (Derivation: <U,u> has density ∝ (1−t²)^{(d−3)/2}, and
// ∫_γ^1 t(1−t²)^{(d−3)/2} dt = (1−γ²)^α/(d−1), so E[<V,u>] = m.) Hence
// E[a·V/m] = x: PrivUnit is unbiased.
//
// Privacy: V's density relative to the uniform measure is p/q on the cap and
// (1−p)/(1−q) off it, so for any two inputs the ratio is at most
// (p/(1−p))·((1−q)/q) = e^{eps_p}·e^{eps_γ}. The constructor splits eps0 =
// eps_γ + eps_p + margin, choosing the split that maximises m (minimises
// variance) on a grid of 64 fractions; q comes from gonum's regularised
// incomplete beta function and is then recomputed for the γ actually used,
// and margin = 1e-9·max(1, eps0) absorbs its rounding error. p is realised
// as Threshold(eps_p, 1)/2^64.
//
// The cap coordinate t = <V,u> is drawn by inverting the incomplete beta
// function (from the upper tail for the cap, for accuracy when q is small)
// and V = t·u + √(1−t²)·w with w uniform on the sphere orthogonal to u. The
// report is d float64 values (as Gaussian's); sampling is floating-point
// (see the caveat on Gaussian). PrivUnit does not implement Discrete; its
// tests are statistical.
type PrivUnit struct {
	eps0, a  float64
	d        int
	alpha    float64 // (d−1)/2
	gamma, q float64 // cap threshold and cap probability
	t        uint64  // P[cap] threshold
	p        float64 // realised P[cap]
	m        float64
	epsBound float64   // realised worst-case log ratio, ≤ eps0
	pool     sync.Pool // *[]float64 scratch of length d for Randomize
}

// NewPrivUnit returns PrivUnit2 with parameter eps0 on B_2(a) ⊂ R^d.
func NewPrivUnit(eps0 float64, d int, a float64) (*PrivUnit, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if d < 2 || d > 1<<28 {
		return nil, fmt.Errorf("dim must be in [2, 2^28] for privunit, got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	r := &PrivUnit{eps0: eps0, a: a, d: d, alpha: float64(d-1) / 2}
	margin := 1e-9 * math.Max(1, eps0)
	best := math.Inf(-1)
	for i := 1; i < 64; i++ {
		epsGamma := eps0 * float64(i) / 64
		c, ok := r.candidate(epsGamma, eps0-margin)
		if ok && c.m > best {
			best = c.m
			r.gamma, r.q, r.t, r.p, r.m, r.epsBound = c.gamma, c.q, c.t, c.p, c.m, c.eps
		}
	}
	if !(best > 0) {
		return nil, fmt.Errorf("privunit: no valid cap for eps0 %g, dim %d", eps0, d)
	}
	return r, nil
}

type privUnitCandidate struct {
	gamma, q, p, m, eps float64
	t                   uint64
}

// candidate returns the parameters for a cap of target privacy epsGamma
// (q = 1/(1+e^epsGamma)) within total budget total.
func (r *PrivUnit) candidate(epsGamma, total float64) (privUnitCandidate, bool) {
	var c privUnitCandidate
	qTarget := 1 / (1 + math.Exp(epsGamma))
	// q = P[X ≥ (1+γ)/2], X ~ Beta(α,α), = I_{(1−γ)/2}(α,α) by symmetry.
	w := mathext.InvRegIncBeta(r.alpha, r.alpha, qTarget)
	c.gamma = 1 - 2*w
	if !(c.gamma >= 0 && c.gamma < 1) {
		return c, false
	}
	c.q = mathext.RegIncBeta(r.alpha, r.alpha, (1-c.gamma)/2)
	if !(c.q > 0 && c.q <= 0.5) {
		return c, false
	}
	epsG := math.Log1p(-c.q) - math.Log(c.q)
	epsP := total - epsG
	if !(epsP > 0) {
		return c, false
	}
	c.t = Threshold(epsP, 1)
	c.p = prob(c.t)
	// realised bound: log(p/(1−p)) + log((1−q)/q), with p/(1−p) ≤ e^epsP.
	c.eps = math.Log(c.p) - math.Log(probComplement(c.t)) + epsG
	c.m = privUnitScale(r.d, c.gamma, c.p, c.q)
	return c, c.m > 0
}

// privUnitScale returns m = E[<V,u>] = (1−γ²)^α/((d−1)·B(1/2,α)) ·
// (p/q − (1−p)/(1−q)), α = (d−1)/2.
func privUnitScale(d int, gamma, p, q float64) float64 {
	alpha := float64(d-1) / 2
	logScale := alpha*math.Log1p(-gamma*gamma) - math.Log(float64(d-1)) - logmath.LogBeta(0.5, alpha)
	return math.Exp(logScale) * (p/q - (1-p)/(1-q))
}

func (r *PrivUnit) Name() string    { return "privunit" }
func (r *PrivUnit) Dim() int        { return r.d }
func (r *PrivUnit) Eps0() float64   { return r.eps0 }
func (r *PrivUnit) Norm() Norm      { return NormL2 }
func (r *PrivUnit) Radius() float64 { return r.a }
func (r *PrivUnit) ReportSize() int { return 1 + 8*r.d }

// Cap returns the cap threshold γ, the cap's probability q under the
// uniform distribution, and the realised probability p of reporting from
// the cap.
func (r *PrivUnit) Cap() (gamma, q, p float64) { return r.gamma, r.q, r.p }

// Scale is m: E[<V,u>] = m, and the report is a·V/m.
func (r *PrivUnit) Scale() float64 { return r.m }

// WorstCaseLogRatio is log(p/(1−p)) + log((1−q)/q) for the realised p and
// the computed q: the exact sup over inputs and outputs of the log density
// ratio. It is at most eps0 − 1e-9·max(1, eps0).
func (r *PrivUnit) WorstCaseLogRatio() float64 { return r.epsBound }

// Randomize returns the report a·V/m.
//
// The arithmetic is that of the construction above, operation for
// operation, so a report is a deterministic function of x and the words
// drawn from src (TestPrivUnitMatchesReference checks this bit for bit
// against privUnitReference, the direct transcription kept in the tests).
// What makes it fast is what it does not do: u is not stored (u_i = x_i·s
// is recomputed where needed), the d normals are kept in a pooled scratch
// vector instead of a fresh one.
func (r *PrivUnit) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return nil, err
	}
	rng := normals(src)
	sp := r.scratch()
	defer r.pool.Put(sp)
	g := (*sp)[:r.d]
	// u: x rounded to the sphere, u_i = x_i·s (x = 0: a uniformly random
	// direction, the only case that stores u).
	var u []float64
	var s float64
	nx := l2Norm(x)
	if nx > 0 {
		s = 1 / nx
		if !Bernoulli(src, fracThreshold((1+math.Min(nx/r.a, 1))/2)) {
			s = -s
		}
	} else {
		u = make([]float64, r.d)
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		n := l2Norm(u)
		for i := range u {
			u[i] /= n
		}
	}
	t := r.capCoordinate(src, rng)
	// w uniform on the unit sphere orthogonal to u: g ~ N(0, I_d), minus
	// its component along u, normalised.
	var gu float64
	if u == nil {
		for i := range g {
			gi := rng.NormFloat64()
			g[i] = gi
			gu += gi * (x[i] * s)
		}
	} else {
		for i := range g {
			gi := rng.NormFloat64()
			g[i] = gi
			gu += gi * u[i]
		}
	}
	gn := projectAndNorm(g, gu, x, s, u)
	st := math.Sqrt(math.Max(0, 1-t*t))
	scale := r.a / r.m
	rep := make(Report, r.ReportSize())
	rep[0] = header(kindPrivUnit)
	out := rep[1:]
	if u == nil {
		for i, gi := range g {
			v := (t*(x[i]*s) + st*gi/gn) * scale
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
	} else {
		for i, gi := range g {
			v := (t*u[i] + st*gi/gn) * scale
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
	}
	return rep, nil
}

// capCoordinate draws t = <V,u>: from the cap [γ, 1] with probability p,
// else from [−1, γ), each with the density ∝ (1−t²)^{(d−3)/2} of a
// uniform point's coordinate, by inverting the incomplete beta function.
func (r *PrivUnit) capCoordinate(src Source, rng *mrand.Rand) float64 {
	var t float64
	if Bernoulli(src, r.t) {
		// 1 − X ~ Beta(α,α) restricted to [0, (1−γ)/2]: mass q.
		w := mathext.InvRegIncBeta(r.alpha, r.alpha, rng.Float64()*r.q)
		t = math.Max(1-2*w, r.gamma)
	} else {
		x := mathext.InvRegIncBeta(r.alpha, r.alpha, rng.Float64()*(1-r.q))
		t = 2*x - 1
		if t >= r.gamma {
			t = math.Nextafter(r.gamma, -1)
		}
	}
	return math.Max(-1, math.Min(1, t))
}

// projectAndNorm replaces g by g − gu·u, where u_i = x_i·s (or u itself
// when u is not nil), and returns ||g||₂ (l2Norm).
func projectAndNorm(g []float64, gu float64, x []float64, s float64, u []float64) float64 {
	if u == nil {
		for i := range g {
			g[i] -= gu * (x[i] * s)
		}
	} else {
		for i := range g {
			g[i] -= gu * u[i]
		}
	}
	return l2Norm(g)
}

// scratch returns a pooled vector of capacity d for the normals.
func (r *PrivUnit) scratch() *[]float64 {
	if sp, ok := r.pool.Get().(*[]float64); ok && cap(*sp) >= r.d {
		return sp
	}
	g := make([]float64, r.d)
	return &g
}

func (r *PrivUnit) check(rep Report) error {
	if len(rep) != r.ReportSize() {
		return fmt.Errorf("%w: length %d, want %d", ErrMalformed, len(rep), r.ReportSize())
	}
	if err := checkHeader(rep, kindPrivUnit); err != nil {
		return err
	}
	// A valid report lies on the sphere of radius a/m; allow rounding.
	var s float64
	for i := 0; i < r.d; i++ {
		v := math.Float64frombits(binary.LittleEndian.Uint64(rep[1+8*i:]))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: coordinate %d is not finite", ErrMalformed, i)
		}
		s += v * v
	}
	want := r.a / r.m
	if n := math.Sqrt(s); math.Abs(n-want) > 1e-6*want {
		return fmt.Errorf("%w: norm %g, want %g (not on PrivUnit's output sphere)", ErrMalformed, n, want)
	}
	return nil
}

// Decode returns a·V/m.
func (r *PrivUnit) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.d)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·a·V/m into sum.
func (r *PrivUnit) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	if err := r.check(rep); err != nil {
		return err
	}
	for i := range sum {
		sum[i] += scale * math.Float64frombits(binary.LittleEndian.Uint64(rep[1+8*i:]))
	}
	return nil
}
