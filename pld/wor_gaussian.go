package pld

import (
	"fmt"
	"math"
)

// worGaussianMech is the Gaussian mechanism (sensitivity 1, noise sigma)
// run on a sample of k of n records drawn WITHOUT replacement, q = k/n,
// under replace-one neighbours: the subsampled shuffle Gaussian mechanism
// (docs/proofs/shuffle-gaussian.md, "subsampled"). Its dominating pair is
// the symmetric pair (P*, Q*) whose privacy profile at every eps >= 0, in
// both orders, is that of the remove pair of Poisson subsampling,
//
//	delta_rem(eps) = H_{e^eps}((1-q) N(0, s^2) + q N(1, s^2) || N(0, s^2))
//	               = q delta_G(log(1 + (e^eps - 1)/q)),
//
// the bound that advanced joint convexity (Balle, Barthe, Gaboardi 2018,
// Thm 2) gives for the pair ((1-q)U + qP, (1-q)U + qP') of every WOR
// neighbour (U, P, P' pairwise within the sensitivity). For eps < 0 the
// profile of the symmetric pair is 1 - e^eps + e^eps delta_rem(-eps), which
// bounds the mechanism's by the same identity, so (P*, Q*) dominates it at
// every order and composes (Zhu, Dong, Wang 2022, Thm 10). This is the
// tradeoff function C_q(G_{1/sigma}) of Dong, Roth, Su (JRSS-B 2022,
// Thm 4.2), realised explicitly. Taking the larger of the composed remove
// and add pairs instead (as for Poisson add-remove) would not be justified.
//
// With the outcome x of the remove pair and its loss
// l(x) = log(1 - q + q e^{(2x-1)/(2 s^2)}) (increasing, 0 at x = 1/2), P*'s
// privacy loss is
//   - l(x) for x > 1/2 under the mixture's density (the positive losses),
//   - -l(x) for x > 1/2 under N(0, s^2)'s density (their mirror images:
//     there P* and Q* swap their densities),
//   - 0 with the remaining mass m0 = (1-q) erf(1/(2 sqrt 2 s)).
type worGaussianMech struct {
	sigma, q float64
	steps    int
}

func (m *worGaussianMech) count() int { return m.steps }
func (m *worGaussianMech) name() string {
	return fmt.Sprintf("wor subsampled gaussian sigma=%g q=%g", m.sigma, m.q)
}

// parts returns the positive part (the mixture's density, loss l(x)) and the
// negative part (N(0, s^2)'s density, loss -l(x)), both over x >= 1/2.
func (m *worGaussianMech) parts() (pos, neg *monotonePair) {
	pos = (&sampledGaussianMech{sigma: m.sigma, q: m.q}).remove()
	sig := m.sigma
	neg = &monotonePair{
		pdfP:       func(x float64) float64 { return normPDF(x/sig) / sig },
		loss:       func(x float64) float64 { return -pos.loss(x) },
		inv:        func(l float64) float64 { return pos.inv(-l) },
		cdfP:       func(x float64) (float64, float64) { return normCDF(x / sig) },
		increasing: false,
		lInf:       math.Inf(-1),
		lSup:       -pos.lInf,
		scale:      sig / 4,
	}
	return pos, neg
}

// xRange is the outcome range of both parts: [1/2, 1 + Z sigma]; beyond it,
// the tails.
func (m *worGaussianMech) xRange() (float64, float64) { return 0.5, 1 + gaussTailZ*m.sigma }

// zeroMass is m0 = (1-q) erf(1/(2 sqrt 2 sigma)): 1 minus the P*-mass of the
// two parts, (q Phi(a) + (1-q) Phi(-a)) + Phi(-a) with a = 1/(2 sigma).
func (m *worGaussianMech) zeroMass() float64 {
	return (1 - m.q) * math.Erf(1/(2*math.Sqrt2*m.sigma))
}

func (m *worGaussianMech) stats() (mean, variance, span float64) {
	pos, neg := m.parts()
	xa, xb := m.xRange()
	var s0, s1, s2 float64
	n := 512
	w := (xb - xa) / float64(n)
	for _, p := range []*monotonePair{pos, neg} {
		for i := 0; i < n; i++ {
			for k := range glX {
				x := xa + float64(i)*w + w*(glX[k]+1)/2
				f := p.pdfP(x) * glW[k] * w / 2
				l := p.loss(x)
				s0 += f
				s1 += f * l
				s2 += f * l * l
			}
		}
	}
	s0 += m.zeroMass()
	mean = s1 / s0
	return mean, math.Max(0, s2/s0-mean*mean), pos.loss(xb)
}

func (m *worGaussianMech) round(h float64) (Bracket, Bracket, error) {
	pos, neg := m.parts()
	xa, xb := m.xRange()
	top := pos.loss(xb)
	jLo, jHi := int(math.Floor(-top/h))-1, int(math.Ceil(top/h))+1
	bp, err := newBuilder(Pessimistic, h, jLo, jHi)
	if err != nil {
		return Bracket{}, Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, jLo, jHi)
	pos.discretiseCells(bp, bo, xa, xb)
	neg.discretiseCells(bp, bo, xa, xb)
	// Tails (pessimistic; the optimistic side drops them): the positive
	// part beyond xb to +inf, the negative part beyond xb (losses below
	// -l(xb)) up to the grid point at or above -l(xb).
	_, posTail := pos.cdfP(xb)
	_, negTail := neg.cdfP(xb)
	bp.add(math.Inf(1), posTail*(1+quadRel))
	bp.add(math.Ceil(-top/h)*h, negTail*(1+quadRel))
	m0 := m.zeroMass()
	bp.add(0, m0*(1+quadRel))
	bo.add(0, m0*(1-quadRel))
	b := Bracket{Pess: bp.finish().truncate(DefaultTail), Opt: bo.finish().truncate(DefaultTail)}
	return b, b, nil
}

// AddWORGaussian adds steps rounds of the Gaussian mechanism (sensitivity
// 1, noise standard deviation sigma) on k of n records sampled without
// replacement, rate = k/n in (0, 1], under replace-one neighbours (its
// symmetric dominating pair, worGaussianMech). For the shuffle Gaussian
// mechanism with clipping norm C and noise C sigma, pass sigma/2 (the
// changed client against another sampled one: up to 2C apart). rate 1 is
// the Gaussian mechanism.
func (a *Accountant) AddWORGaussian(sigma, rate float64, steps int) error {
	if err := checkSampled(sigma, rate, steps); err != nil {
		return err
	}
	if rate == 1 {
		a.events = append(a.events, &gaussianMech{sigma: sigma, steps: steps})
		return nil
	}
	a.events = append(a.events, &worGaussianMech{sigma: sigma, q: rate, steps: steps})
	return nil
}

// checkinGaussianMech is the Gaussian mechanism (sensitivity 1, noise
// sigma) whose changed record takes part with probability p independently
// of everything else (shuffled check-in; docs/proofs/shuffle-gaussian.md,
// "check-in"): the dominating pair is the changed record's slot,
// (p N(1, s^2) + (1-p) bot, p N(0, s^2) + (1-p) bot), symmetric; its
// privacy loss is the Gaussian loss (2x-1)/(2 s^2) with probability p and 0
// at bot.
type checkinGaussianMech struct {
	sigma, p float64
	steps    int
}

func (m *checkinGaussianMech) count() int { return m.steps }
func (m *checkinGaussianMech) name() string {
	return fmt.Sprintf("check-in gaussian sigma=%g rate=%g", m.sigma, m.p)
}

// pair is the Gaussian pair with its P-density and tails scaled by p.
func (m *checkinGaussianMech) pair() *monotonePair {
	g := (&gaussianMech{sigma: m.sigma}).pair()
	p := m.p
	pdf, cdf := g.pdfP, g.cdfP
	g.pdfP = func(x float64) float64 { return p * pdf(x) }
	g.cdfP = func(x float64) (float64, float64) {
		b, a := cdf(x)
		return p * b, p * a
	}
	return g
}

func (m *checkinGaussianMech) stats() (mean, variance, span float64) {
	mu := 1 / (2 * m.sigma * m.sigma)
	v := 2 * mu // the Gaussian loss: N(mu, 2 mu) under P
	mean = m.p * mu
	second := m.p * (v + mu*mu)
	return mean, math.Max(0, second-mean*mean), mu + gaussTailZ/m.sigma
}

func (m *checkinGaussianMech) round(h float64) (Bracket, Bracket, error) {
	p := m.pair()
	xa, xb := 1-gaussTailZ*m.sigma, 1+gaussTailZ*m.sigma
	jLo, jHi := gridRange(p, xa, xb, h)
	jLo, jHi = min(jLo, -1), max(jHi, 1)
	bp, err := newBuilder(Pessimistic, h, jLo, jHi)
	if err != nil {
		return Bracket{}, Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, jLo, jHi)
	p.discretise(bp, bo, xa, xb)
	bp.add(0, (1-m.p)*(1+quadRel))
	bo.add(0, (1-m.p)*(1-quadRel))
	b := Bracket{Pess: bp.finish().truncate(DefaultTail), Opt: bo.finish().truncate(DefaultTail)}
	return b, b, nil
}

// AddCheckinGaussian adds steps rounds of the Gaussian mechanism
// (sensitivity 1, noise sigma) in which the changed record takes part with
// probability rate in (0, 1] (checkinGaussianMech). rate 1 is the Gaussian
// mechanism.
func (a *Accountant) AddCheckinGaussian(sigma, rate float64, steps int) error {
	if err := checkSampled(sigma, rate, steps); err != nil {
		return err
	}
	if rate == 1 {
		a.events = append(a.events, &gaussianMech{sigma: sigma, steps: steps})
		return nil
	}
	a.events = append(a.events, &checkinGaussianMech{sigma: sigma, p: rate, steps: steps})
	return nil
}

// WORGaussian returns the composed PLD of steps rounds of the Gaussian
// mechanism on k of n records sampled without replacement (rate k/n,
// replace-one; AddWORGaussian).
func WORGaussian(sigma, rate float64, steps int, opt Options) (Composed, error) {
	a := Accountant{Options: opt}
	if err := a.AddWORGaussian(sigma, rate, steps); err != nil {
		return Composed{}, err
	}
	return a.Compose()
}
