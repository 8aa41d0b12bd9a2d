package accounting

import (
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// KRR3Lower is a lower bound on the RDP of the subsampled shuffle model (k
// of n sampled without replacement, g = k/n; k == n is the plain shuffle):
// at every order, the largest exact Rényi divergence D_lambda(M(D)||M(D'))
// over these concrete eps0-LDP mechanisms and neighbouring datasets:
//
//   - 3-ary randomized response (the true value with probability
//     e^eps0/(e^eps0+2), each other value with 1/(e^eps0+2)), client 1
//     holding 0 in D and 1 in D', the others all holding 2;
//   - the same with the others all holding 0, in both directions;
//   - binary randomized response with the others holding 0, client 1
//     holding 1 vs 0 (NeurIPS'21 Thm 2's configuration), in both directions.
//
// The shuffled output is the histogram n of the k reports. With the others'
// report distribution p, Mult the Mult(k, p) pmf and
// h_u(n) = sum_y Pr[RR(u) = y] n_y/(k p_y), the outputs on D and D' are
// Mult(n) A(n) and Mult(n) B(n) with A = 1-g+g h_a, B = 1-g+g h_b, so
//
//	E[(M(D)/M(D'))^lambda] - 1 = sum_n Mult(n) B(n) phi(A(n)/B(n)),
//	phi(t) = t^lambda - 1 - lambda(t-1) >= 0,
//
// a sum of non-negative terms (sum Mult A = sum Mult B = 1). Terms far in
// the tails are dropped and, when there are many, t - 1 is rounded toward
// 0 on a fine geometric grid (phi decreases towards t = 1 from both sides),
// and the result is rounded down: every step can only lower the value, so
// it stays a lower bound. Valid for every real order > 1.
//
// This says how tight the upper bounds are; it is not a privacy guarantee.
func KRR3Lower(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	return &krr3Lower{n: n, k: k, eps0: eps0}, nil
}

type krr3Lower struct {
	n, k int64
	eps0 float64

	once    sync.Once
	configs []rrAtoms
}

func (b *krr3Lower) Name() string       { return BoundKRR3Lower }
func (b *krr3Lower) IsLowerBound() bool { return true }

// rrAtoms holds log weights log(Mult(n) B(n)) and y = A(n)/B(n) - 1.
type rrAtoms struct {
	logW, y []float64
}

func (b *krr3Lower) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	b.once.Do(b.build)
	best := 0.0
	for _, c := range b.configs {
		if v := c.rdp(order); v > best {
			best = v
		}
	}
	return finite(best, order, b.Name())
}

// rrCut: histogram cells whose multinomial probability is this many nats
// below the largest are dropped (a lower bound may drop terms).
const rrCut = 40

func (b *krr3Lower) build() {
	k, g, e := b.k, float64(b.k)/float64(b.n), b.eps0
	q3 := math.Exp(-logmath.Log1pExp(math.Log(2) - e))       // e^eps0/(e^eps0+2)
	r3 := math.Exp(-math.Ln2 - logmath.Log1pExp(e-math.Ln2)) // 1/(e^eps0+2)
	q2 := math.Exp(-logmath.Log1pExp(-e))                    // e^eps0/(e^eps0+1)
	r2 := math.Exp(-logmath.Log1pExp(e))                     // 1/(e^eps0+1)
	rr3 := func(u int) []float64 {
		p := []float64{r3, r3, r3}
		p[u] = q3
		return p
	}
	rr2 := func(u int) []float64 {
		p := []float64{r2, r2, 0}
		p[u] = q2
		return p
	}
	b.configs = []rrAtoms{
		rrConfig(k, g, rr3(2), rr3(0), rr3(1)),
		rrConfig(k, g, rr3(0), rr3(0), rr3(1)),
		rrConfig(k, g, rr3(0), rr3(1), rr3(0)),
		rrConfig(k, g, rr2(0), rr2(1), rr2(0)),
		rrConfig(k, g, rr2(0), rr2(0), rr2(1)),
	}
}

// rrConfig enumerates the histogram of k reports of randomized response
// with at most 3 outputs: the others report with distribution p, client 1
// with pa (numerator) or pb (denominator). The histogram is (n0, n1, n2)
// with s = n0 + n1 ~ Bin(k, p0+p1) and n0 | s ~ Bin(s, p0/(p0+p1)).
func rrConfig(k int64, g float64, p, pa, pb []float64) rrAtoms {
	kf := float64(k)
	p01 := p[0] + p[1]
	// log rho and log(1-rho), rho = p0/(p0+p1), without forming 1-rho
	// (which cancels when p1 << p0).
	lRho, l1Rho := math.Log(p[0])-math.Log(p01), math.Log(p[1])-math.Log(p01)
	var at rrAtoms
	h := func(pu []float64, n []float64) float64 {
		v := 0.0
		for y := range 3 {
			if p[y] > 0 {
				v += pu[y] * n[y] / (kf * p[y])
			}
		}
		return v
	}
	sLo, sHi := kf, kf
	if p[2] > 0 {
		sLo, sHi = binomRange(kf, math.Log(p01), math.Log(p[2]), rrCut)
	}
	for s := sLo; s <= sHi; s++ {
		logS := 0.0
		if p[2] > 0 {
			logS = logmath.LogBinom(kf, s) + s*math.Log(p01) + (kf-s)*math.Log(p[2])
		}
		lo, hi := binomRange(s, lRho, l1Rho, rrCut)
		for n0 := lo; n0 <= hi; n0++ {
			logM := logS + logmath.LogBinom(s, n0) + n0*lRho + (s-n0)*l1Rho
			n := []float64{n0, s - n0, kf - s}
			A := 1 - g + g*h(pa, n)
			B := 1 - g + g*h(pb, n)
			if B <= 0 || A <= 0 {
				continue
			}
			// A - B = g (h_a - h_b), summed term by term (no 1-g+... cancellation).
			d := 0.0
			for j := range 3 {
				if p[j] > 0 {
					d += (pa[j] - pb[j]) * n[j] / (kf * p[j])
				}
			}
			y := g * d / B
			if y == 0 {
				continue
			}
			at.logW = append(at.logW, logM+math.Log(B))
			at.y = append(at.y, y)
		}
	}
	if len(at.y) > maxExactAtoms {
		return at.bucketed()
	}
	return at
}

// rrGridLn is the bucket ratio e^(1/512) on |y| for many atoms.
const rrGridLn = 1.0 / 512

// bucketed rounds every |y| down to the grid ymax e^(-j/512) (same sign),
// j <= 16*512, drops smaller ones and sums the weights per bucket: phi
// decreases towards y = 0 from both sides, so this only lowers the sum.
func (a rrAtoms) bucketed() rrAtoms {
	ymax := 0.0
	for _, y := range a.y {
		ymax = math.Max(ymax, math.Abs(y))
	}
	nb := int(16/rrGridLn) + 1
	grid := make([]float64, nb)
	for j := range grid {
		grid[j] = ymax * math.Exp(-float64(j)*rrGridLn)
	}
	pos, neg := make([]float64, nb), make([]float64, nb)
	for i, y := range a.y {
		ay := math.Abs(y)
		j := int(math.Ceil(math.Log(ymax/ay) / rrGridLn))
		for j < nb && grid[j] > ay {
			j++
		}
		if j >= nb {
			continue
		}
		if y > 0 {
			pos[j] += math.Exp(a.logW[i])
		} else {
			neg[j] += math.Exp(a.logW[i])
		}
	}
	var out rrAtoms
	for j := range grid {
		if pos[j] > 0 {
			out.logW, out.y = append(out.logW, math.Log(pos[j])), append(out.y, grid[j])
		}
		if neg[j] > 0 && grid[j] < 1 {
			out.logW, out.y = append(out.logW, math.Log(neg[j])), append(out.y, -grid[j])
		}
	}
	return out
}

// binomRange returns the integer interval around the mode of Bin(n, p)
// where the log pmf is within cut of its maximum; logP = log p and
// log1mP = log(1-p) are passed separately (no cancellation).
func binomRange(n, logP, log1mP, cut float64) (float64, float64) {
	if math.IsInf(logP, -1) {
		return 0, 0
	}
	if math.IsInf(log1mP, -1) {
		return n, n
	}
	lp := func(x float64) float64 { return logmath.LogBinom(n, x) + x*logP + (n-x)*log1mP }
	mode := math.Min(n, math.Floor((n+1)*math.Exp(logP)))
	top := lp(mode)
	// Log-concave: binary search for each end.
	l, r := 0.0, mode
	for l < r {
		mid := math.Floor((l + r) / 2)
		if lp(mid) >= top-cut {
			r = mid
		} else {
			l = mid + 1
		}
	}
	lo := l
	l, r = mode, n
	for l < r {
		mid := math.Ceil((l + r) / 2)
		if lp(mid) >= top-cut {
			l = mid
		} else {
			r = mid - 1
		}
	}
	return lo, l
}

// rdp returns log(1 + sum W phi(1+y))/(order-1), rounded down.
func (a rrAtoms) rdp(lam float64) float64 {
	acc := newLSE()
	for i, y := range a.y {
		acc.add(a.logW[i] + logPhi(y, lam))
	}
	s := acc.value()
	if math.IsInf(s, -1) {
		return 0
	}
	// Each term is accurate to far better than 1e-9 relative; shrink by it.
	v := logmath.Log1pExp(s+math.Log1p(-1e-9)) / (lam - 1)
	return v * (1 - 1e-12)
}

// logPhi returns log((1+y)^lam - 1 - lam y) for y > -1, y != 0, real
// lam > 1, rounded down by a relative 1e-10 at most. Near y = 0 it sums
// the binomial series sum_{j>=2} C(lam, j) y^j.
func logPhi(y, lam float64) float64 {
	if math.Abs(lam*y) < 0.5 && math.Abs(y) < 0.5 {
		sum, term := 0.0, lam*y
		for j := 2.0; j < 400; j++ {
			term *= (lam - j + 1) / j * y
			sum += term
			if math.Abs(term) < 1e-18*math.Abs(sum) {
				break
			}
		}
		if sum <= 0 {
			return math.Inf(-1)
		}
		return math.Log(sum) + math.Log1p(-1e-10)
	}
	u := lam * math.Log1p(y)
	if u > 30 {
		return u + math.Log1p(-math.Exp(-u)*(1+lam*y)) + math.Log1p(-1e-10)
	}
	f := math.Expm1(u) - lam*y
	if f <= 0 {
		return math.Inf(-1)
	}
	return math.Log(f) + math.Log1p(-1e-10)
}
