package randomizer

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// kindDJW is the wire-format kind of DJW reports (see wire.go): the header
// byte, then d IEEE-754 float32 values, little-endian, of the unit vector v
// (finite, ||v||_2 = 1 up to float32 rounding); the decoded report is M·v.
const kindDJW = 8

// DJW is the l_2 mechanism of Duchi, Jordan and Wainwright, "Local privacy
// and statistical minimax rates" (FOCS 2013, §4.2.3 and its appendix on
// sampling; journal version "Minimax optimal procedures for locally private
// estimation", JASA 2018, §4.2.3, the l_2-ball strategy), on the ball
// B_2(a) ⊂ R^d. It is the R_2 of the authors' released code for NeurIPS'21
// Fig. 6 (MNIST_dpsgd_norm_2.py, Private_gradients), without the Quan step
// of the AISTATS'21 R_2 (randomizer "r2"). For x ∈ B_2(a):
//
//  1. x̃ = +a·x/||x|| with probability 1/2 + ||x||/(2a), else −a·x/||x||
//     (so E[x̃] = x); x = 0 gives no preferred direction (step 2 then draws
//     z uniformly on the whole sphere);
//  2. with probability p = e^eps0/(e^eps0+1), z is uniform on the hemisphere
//     {z : ||z||_2 = M, <z, x̃> > 0}, otherwise uniform on {||z||_2 = M,
//     <z, x̃> ≤ 0},
//
// with, in DJW's notation (FOCS'13 eq. (26); JASA'18 eq. (27)),
//
//	M = a · (e^eps0+1)/(e^eps0−1) · √π·d·Γ((d−1)/2+1) / (2·Γ(d/2+1))
//	  = a · c · √π·Γ((d+1)/2)/Γ(d/2)         (Γ(d/2+1) = (d/2)·Γ(d/2))
//	  = a · c · π / B(1/2, d/2),             c = (e^eps0+1)/(e^eps0−1).
//
// Unbiasedness (DJW's Lemma): for u uniform on the unit sphere the mean of u
// over the hemisphere towards a unit vector e is E|u_1|·e, with E|u_1| =
// Γ(d/2)/(√π·Γ((d+1)/2)) = B(1/2, d/2)/π, so E[z | x̃] = (2p−1)·M·E|u_1|·x̃/a
// = x̃ and E[z] = x. M is computed from the realised coin (c = 1/(2p−1)
// with p = Threshold(eps0, 1)/2^64) and B(1/2, d/2) in log space
// (logmath.LogBeta), accurate for any d. For large d, M ≈ a·c·√(πd/2)·(1 −
// 1/(4d)): the authors' code uses a·c·√(πd/2), which overstates M by the
// factor 1 + 1/(4d) + O(d^-2) (1 + 1.8e-5 at d = 13,706), a slight upward
// bias of their decoded gradients.
//
// Privacy: z's density relative to the uniform measure on the sphere of
// radius M is 2p on the hemisphere of x̃ and 2(1−p) on the other, so given
// the sign coin of step 1 with probability q = 1/2 + ||x||/(2a) it is
// 2(q·p + (1−q)(1−p)) or 2(q·(1−p) + (1−q)·p) ∈ [2(1−p), 2p]; for x = 0 it
// is 1. Hence for any inputs x, x' and output z the density ratio is at most
// p/(1−p) = e^eps0, attained at z = ±M·x/||x|| for x = −x' on the sphere:
// DJW is exactly eps0-LDP (LogRatioBound; DensityAt gives the density, and
// AuditDJW audits it over a grid).
//
// Every decoded report has norm M, so E||z − x||² = M² − ||x||² ≈
// (π/2)·a²c²·d for large d — a factor d smaller than R_2 (= Quan∘DJW),
// whose decoded norm is M·√d, at the cost of a d-float report.
//
// Sampling: z = ±M·g/||g|| with g a standard normal vector (math/rand/v2's
// ziggurat on src), the sign chosen by the hemisphere test <g, x> and the
// two coins (Bernoulli thresholds; the eps0 coin is Threshold(eps0, 1)).
// The report carries v = z/M rounded to float32 (as the authors' code
// does): rounding is post-processing, so it costs no privacy, and it
// biases the decoded report by at most 2^-24·M per coordinate (≈ 2^-24·√d
// standard deviations of its noise). Sampling is floating-point (see the
// caveat on Gaussian). DJW does not implement Discrete; it implements
// Bounded, and its tests are analytic (the density) and statistical (the
// sampler).
type DJW struct {
	eps0, a float64
	d       int
	t       uint64  // eps0 coin threshold: P[toward x̃] = t/2^64
	m       float64 // output radius M
	// normals pools Randomize's scratch: *[]float64 of length d, the
	// normal vector g, so that a report allocates only itself.
	normals sync.Pool
}

// NewDJW returns the Duchi–Jordan–Wainwright l_2 mechanism with parameter
// eps0 on B_2(a) ⊂ R^d.
func NewDJW(eps0 float64, d int, a float64) (*DJW, error) {
	if err := checkEps0(eps0); err != nil {
		return nil, err
	}
	if d < 1 || d > 1<<28 {
		return nil, fmt.Errorf("dim must be in [1, 2^28] for djw, got %d", d)
	}
	if !(a > 0) || math.IsInf(a, 0) {
		return nil, fmt.Errorf("radius must be finite and > 0, got %g", a)
	}
	t := Threshold(eps0, 1)
	twoPm1 := float64(t-(-t)) / two64 // realised 2p − 1 = (2t − 2^64)/2^64, exact
	return &DJW{eps0: eps0, a: a, d: d, t: t, m: djwRadius(a, twoPm1, d)}, nil
}

// djwRadius returns M = a/((2p−1)·E|u_1|) = a·c·π/B(1/2, d/2), c = 1/(2p−1),
// with B(1/2, d/2) from logmath.LogBeta (no cancellation of two
// log-gammas at large d).
func djwRadius(a, twoPm1 float64, d int) float64 {
	return a / twoPm1 * math.Pi * math.Exp(-logmath.LogBeta(0.5, float64(d)/2))
}

func (r *DJW) Name() string    { return "djw" }
func (r *DJW) Dim() int        { return r.d }
func (r *DJW) Eps0() float64   { return r.eps0 }
func (r *DJW) Norm() Norm      { return NormL2 }
func (r *DJW) Radius() float64 { return r.a }
func (r *DJW) ReportSize() int { return 1 + 4*r.d }

// OutputRadius is M, the norm of every decoded report.
func (r *DJW) OutputRadius() float64 { return r.m }

// TowardProbability is the realised p = Threshold(eps0, 1)/2^64 of drawing z
// from the hemisphere of x̃.
func (r *DJW) TowardProbability() float64 { return prob(r.t) }

// LogRatioBound is log(t/(2^64 − t)) = log(p/(1−p)) for the realised eps0
// coin: the supremum over inputs x, x' and outputs z of the log density
// ratio (see DJW), at most eps0.
func (r *DJW) LogRatioBound() float64 {
	return math.Log(prob(r.t)) - math.Log(probComplement(r.t))
}

// plusCoin returns step 1's coin P[x̃ = +a·x/||x||] = 1/2 + ||x||/(2a) for
// an input of norm nx > 0 as a threshold t (P = t/2^64), or sure = true
// when nx ≥ a (P = 1 exactly, which a 64-bit threshold cannot express).
// Its value does not affect the ratio bound: any P in [0, 1] keeps the
// density within [2(1−p), 2p].
func (r *DJW) plusCoin(nx float64) (t uint64, sure bool) {
	if nx >= r.a {
		return 0, true
	}
	return fracThreshold((1 + nx/r.a) / 2), false
}

// plusProbability returns P[x̃ = +a·x/||x||] and its complement, as
// realised by plusCoin.
func (r *DJW) plusProbability(nx float64) (q, qc float64) {
	t, sure := r.plusCoin(nx)
	if sure {
		return 1, 0
	}
	return prob(t), probComplement(t)
}

// Randomize returns the report v = z/M (float32 coordinates).
func (r *DJW) Randomize(x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return nil, err
	}
	rng := normals(src)
	// g: a standard normal vector, so g/||g|| is uniform on the sphere; one
	// pass also accumulates <g, x> and ||g||². Its memory comes from the
	// pool (every g[i] is written before it is read).
	gp, _ := r.normals.Get().(*[]float64)
	if gp == nil {
		g := make([]float64, r.d)
		gp = &g
	}
	g := (*gp)[:len(x)]
	defer func() {
		// g with the report shows whether z was negated, which depends
		// on x and the coins: leave no copy of it in the pool.
		clear(g)
		r.normals.Put(gp)
	}()
	var dot, sq float64
	for i, xi := range x {
		gi := rng.NormFloat64()
		g[i] = gi
		dot += gi * xi
		sq += gi * gi
	}
	// z = ±M·g/||g||: negate g iff its side of x̃ differs from the chosen
	// one. <g, x̃> > 0 ⇔ (dot > 0) == plus. For x = 0, z = M·g/||g||:
	// uniform on the sphere.
	s := 1 / math.Sqrt(sq)
	if nx := l2Norm(x); nx > 0 {
		t, sure := r.plusCoin(nx)
		plus := sure || Bernoulli(src, t)
		toward := Bernoulli(src, r.t)
		if ((dot > 0) == plus) != toward {
			s = -s
		}
	}
	rep := make(Report, r.ReportSize())
	rep[0] = header(kindDJW)
	v := rep[1:]
	for i, gi := range g {
		binary.LittleEndian.PutUint32(v[4*i:4*i+4], math.Float32bits(float32(gi*s)))
	}
	return rep, nil
}

// check validates rep: length, header, finite coordinates, unit norm: it
// accepts rep iff every coordinate is finite and unitNorm(sq) holds for
// sq the sum of the squared coordinates added in index order.
//
// That sum is a chain of d dependent additions; check first sums the
// squares in four interleaved lanes (sq4), four times faster, and accepts
// from it when the decision cannot differ. Both sums add the same d
// rounded squares p_i ≥ 0 (exact S = Σ p_i; a float32 squared in float64
// neither underflows nor overflows), so (Higham, Accuracy and Stability
// of Numerical Algorithms, 2nd ed., §4.2, eq. (4.4)) |sq − S| ≤ γ_{d−1}·S
// and |sq4 − S| ≤ γ_{⌈d/4⌉+1}·S, γ_n = nu/(1−nu), u = 2^-53: sq lies
// within 2γ_d·S < 2.01·d·u·sq4 of sq4 (d ≤ 2^28). The accepted set of
// unitNorm is an interval (sqrt, the subtraction and the comparison are
// monotone), so when unitNorm accepts both sq4 ∓ 4·d·u·sq4 (the margin
// covers the rounding of the bracket) it accepts sq. Otherwise — a norm
// within about 2·d·u of the boundary 1 ± 1e-6, a non-finite coordinate
// (sq4 is then NaN or +Inf), or a report that is not accepted — the
// exact index-order test decides, as it always did.
func (r *DJW) check(rep Report) error {
	if len(rep) != r.ReportSize() {
		return fmt.Errorf("%w: length %d, want %d", ErrMalformed, len(rep), r.ReportSize())
	}
	if err := checkHeader(rep, kindDJW); err != nil {
		return err
	}
	v := rep[1 : 1+4*r.d]
	if sq4 := sumSquares4(v); !math.IsNaN(sq4) && !math.IsInf(sq4, 0) {
		e := 4 * float64(r.d) * 0x1p-53 * sq4
		if unitNorm(sq4-e) && unitNorm(sq4+e) {
			return nil
		}
	}
	var sq float64
	for i := range r.d {
		vi := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[4*i : 4*i+4])))
		if math.IsNaN(vi) || math.IsInf(vi, 0) {
			return fmt.Errorf("%w: coordinate %d is not finite", ErrMalformed, i)
		}
		sq += vi * vi
	}
	if !unitNorm(sq) {
		return fmt.Errorf("%w: direction has norm %g, want 1 (not on DJW's output sphere)", ErrMalformed, math.Sqrt(sq))
	}
	return nil
}

// unitNorm reports whether a direction whose squared norm is sq has norm
// 1: float32 rounding moves the norm by at most about 2^-24 relative.
func unitNorm(sq float64) bool {
	return !(math.Abs(math.Sqrt(sq)-1) > 1e-6)
}

// sumSquares4 returns the sum of the squares of the little-endian float32
// values in v (len(v) a multiple of 4), in four interleaved lanes.
func sumSquares4(v []byte) float64 {
	var s0, s1, s2, s3 float64
	for len(v) >= 16 {
		x0 := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[0:4])))
		x1 := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[4:8])))
		x2 := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[8:12])))
		x3 := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[12:16])))
		s0 += x0 * x0
		s1 += x1 * x1
		s2 += x2 * x2
		s3 += x3 * x3
		v = v[16:]
	}
	for ; len(v) >= 4; v = v[4:] {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(v[0:4])))
		s0 += x * x
	}
	return (s0 + s1) + (s2 + s3)
}

// Direction returns the unit vector v = z/M that rep carries.
func (r *DJW) Direction(rep Report) ([]float64, error) {
	if err := r.check(rep); err != nil {
		return nil, err
	}
	v := make([]float64, r.d)
	for i := range v {
		v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(rep[1+4*i:])))
	}
	return v, nil
}

// Decode returns M·v.
func (r *DJW) Decode(rep Report) ([]float64, error) {
	z := make([]float64, r.d)
	if err := r.AddDecoded(rep, 1, z); err != nil {
		return nil, err
	}
	return z, nil
}

// AddDecoded adds scale·M·v into sum in O(d). It validates the whole report
// (length, header, finite coordinates, unit norm) before touching sum.
func (r *DJW) AddDecoded(rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	if err := r.check(rep); err != nil {
		return err
	}
	f := scale * r.m
	v := rep[1 : 1+4*len(sum)]
	for i := range sum {
		sum[i] += f * float64(math.Float32frombits(binary.LittleEndian.Uint32(v[4*i:4*i+4])))
	}
	return nil
}
