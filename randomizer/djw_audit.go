package randomizer

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DensityAt returns the density of DJW's output direction v = z/M given the
// input x, relative to the uniform probability measure on the unit sphere,
// from the realised coin probabilities p = t/2^64 (eps0 coin) and q
// (step 1's sign coin): 1 for x = 0; otherwise 2(q·p + (1−q)(1−p)) where
// <v, x> > 0 and 2(q(1−p) + (1−q)·p) where <v, x> ≤ 0 (the sampler's
// convention on the measure-zero boundary). v need not be normalised; x
// must be in the domain.
func (r *DJW) DensityAt(x, v []float64) (float64, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return 0, err
	}
	if len(v) != r.d {
		return 0, fmt.Errorf("output has length %d, want dim %d", len(v), r.d)
	}
	nx := l2Norm(x)
	if nx == 0 {
		return 1, nil
	}
	var dot float64
	for i, xi := range x {
		dot += xi * v[i]
	}
	p, pc := prob(r.t), probComplement(r.t)
	q, qc := r.plusProbability(nx)
	if dot > 0 {
		return 2 * (q*p + qc*pc), nil
	}
	return 2 * (q*pc + qc*p), nil
}

// mean returns E[Decode(Randomize(x))] from the realised coins, in closed
// form: by symmetry the mean of a uniform point of the unit hemisphere
// towards e is E|u_1|·e, so E[z | x] = M·(2p−1)·E|u_1|·(2q−1)·x/||x||
// (and 0 for x = 0), with E|u_1| = B(1/2, d/2)/π.
func (r *DJW) mean(x []float64, out []float64) {
	nx := l2Norm(x)
	if nx == 0 {
		clear(out)
		return
	}
	q, qc := r.plusProbability(nx)
	twoQm1 := q - qc
	twoPm1 := float64(r.t-(-r.t)) / two64
	f := r.m * twoPm1 * meanAbsCoordinate(r.d) * twoQm1 / nx
	for i, xi := range x {
		out[i] = f * xi
	}
}

// InputGrid returns inputs of B_2(a) that contain the extreme points of the
// density ratio: 0, ±a·e_i (the first min(d, 8) coordinates), ±a·1/√d,
// ±(a/2)·e_0, and a point strictly inside.
func (r *DJW) InputGrid() [][]float64 {
	var grid [][]float64
	unit := func(i int, s float64) []float64 {
		x := make([]float64, r.d)
		x[i] = s
		return x
	}
	grid = append(grid, make([]float64, r.d))
	for i := range min(r.d, 8) {
		grid = append(grid, unit(i, r.a), unit(i, -r.a))
	}
	diag := make([]float64, r.d)
	for i := range diag {
		diag[i] = r.a / math.Sqrt(float64(r.d))
	}
	neg := make([]float64, r.d)
	for i := range neg {
		neg[i] = -diag[i]
	}
	inside := make([]float64, r.d)
	for i := range inside {
		inside[i] = 0.3 * r.a / math.Sqrt(float64(r.d)) * float64(1-2*(i%2))
	}
	return append(grid, diag, neg, unit(0, r.a/2), unit(0, -r.a/2), inside)
}

// AuditDJW audits DJW's eps0-LDP claim and its unbiasedness exactly from
// the output density and the closed-form mean (Method "density"): the
// output is continuous, so instead of enumerating outputs it evaluates the
// density (DensityAt) of every output direction in a set — ±x/||x|| for each
// grid input x (where the ratio is extreme) and 64 seeded uniformly random
// directions — under every input of r.InputGrid(). MaxLogRatio is the
// largest |log f(v|x) − log f(v|x')|; MaxProbSumError the largest deviation
// of the density's integral (f on each hemisphere times its mass 1/2) from
// 1; MaxBias the largest |E[z|x]_i − x_i| from the realised coins.
func AuditDJW(r *DJW) (AuditResult, error) {
	grid := r.InputGrid()
	var outs [][]float64
	for _, x := range grid {
		if nx := l2Norm(x); nx > 0 {
			v, w := make([]float64, r.d), make([]float64, r.d)
			for i, xi := range x {
				v[i], w[i] = xi/nx, -xi/nx
			}
			outs = append(outs, v, w)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(r.d), 0xd1a)) // audit directions, not privacy noise
	for range 64 {
		v := make([]float64, r.d)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		outs = append(outs, v)
	}
	res := AuditResult{Randomizer: r.Name(), Eps0: r.Eps0(), Dim: r.Dim(), Inputs: len(grid), Outputs: len(outs), Method: "density"}
	mean := make([]float64, r.d)
	for _, x := range grid {
		r.mean(x, mean)
		for i, m := range mean {
			res.MaxBias = math.Max(res.MaxBias, math.Abs(m-x[i]))
		}
		// The hemispheres {<v,x> > 0} and {<v,x> ≤ 0} each have mass 1/2.
		var fPlus, fMinus float64 = 1, 1
		if nx := l2Norm(x); nx > 0 {
			v := make([]float64, r.d)
			for i, xi := range x {
				v[i] = xi / nx
			}
			var err error
			if fPlus, err = r.DensityAt(x, v); err != nil {
				return res, err
			}
			for i := range v {
				v[i] = -v[i]
			}
			if fMinus, err = r.DensityAt(x, v); err != nil {
				return res, err
			}
		}
		res.MaxProbSumError = math.Max(res.MaxProbSumError, math.Abs((fPlus+fMinus)/2-1))
	}
	for _, v := range outs {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range grid {
			f, err := r.DensityAt(x, v)
			if err != nil {
				return res, err
			}
			l := math.Log(f)
			lo, hi = math.Min(lo, l), math.Max(hi, l)
		}
		res.MaxLogRatio = math.Max(res.MaxLogRatio, hi-lo)
	}
	res.MaxRelBias = res.MaxBias / r.m
	res.OK = res.MaxLogRatio <= res.Eps0*(1+1e-12) && res.MaxRelBias <= 1e-9
	return res, nil
}
