package pld

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// gaussTailZ: the grid covers the outcomes within this many standard
// deviations; the P-mass beyond (about 1e-45) goes to the tails.
const gaussTailZ = 14

func checkSigma(sigma float64) error {
	if !(sigma >= 1e-3) || math.IsInf(sigma, 0) {
		return fmt.Errorf("pld: sigma = %v, want a finite sigma >= 1e-3", sigma)
	}
	return nil
}

// gaussianMech is the Gaussian mechanism with sensitivity 1 and noise
// N(0, sigma^2): P = N(1, sigma^2), Q = N(0, sigma^2). Its privacy loss is
// (2x - 1)/(2 sigma^2), distributed as N(mu, 1/sigma^2) under P with
// mu = 1/(2 sigma^2); the pair is symmetric (the law under Q of -loss is
// the same), so it serves both orders (Balle & Wang, ICML 2018, for the
// exact curve delta(eps) = Phi(-eps sigma + 1/(2 sigma)) -
// e^eps Phi(-eps sigma - 1/(2 sigma))).
type gaussianMech struct {
	sigma float64
	steps int
}

func (m *gaussianMech) count() int   { return m.steps }
func (m *gaussianMech) name() string { return fmt.Sprintf("gaussian sigma=%g", m.sigma) }
func (m *gaussianMech) stats() (mean, variance, span float64) {
	mu := 1 / (2 * m.sigma * m.sigma)
	s := 1 / m.sigma
	return mu, s * s, mu + gaussTailZ*s
}

func (m *gaussianMech) pair() *monotonePair {
	s2 := m.sigma * m.sigma
	sig := m.sigma
	return &monotonePair{
		pdfP:       func(x float64) float64 { return normPDF((x-1)/sig) / sig },
		loss:       func(x float64) float64 { return (2*x - 1) / (2 * s2) },
		inv:        func(l float64) float64 { return l*s2 + 0.5 },
		cdfP:       func(x float64) (float64, float64) { return normCDF((x - 1) / sig) },
		increasing: true,
		lInf:       math.Inf(-1),
		lSup:       math.Inf(1),
		scale:      sig / 4,
	}
}

func (m *gaussianMech) round(h float64) (Bracket, Bracket, error) {
	p := m.pair()
	xa, xb := 1-gaussTailZ*m.sigma, 1+gaussTailZ*m.sigma
	jLo, jHi := gridRange(p, xa, xb, h)
	bp, err := newBuilder(Pessimistic, h, jLo, jHi)
	if err != nil {
		return Bracket{}, Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, jLo, jHi)
	p.discretise(bp, bo, xa, xb)
	b := Bracket{Pess: bp.finish().truncate(DefaultTail), Opt: bo.finish().truncate(DefaultTail)}
	return b, b, nil
}

// AddGaussian adds steps applications of the Gaussian mechanism with
// sensitivity 1 and noise standard deviation sigma (in units of the
// sensitivity: for replace-one neighbours with clipping norm C and noise
// C sigma, pass sigma/2). Its pair is symmetric.
func (a *Accountant) AddGaussian(sigma float64, steps int) error {
	if err := checkSigma(sigma); err != nil {
		return err
	}
	if err := checkSteps(steps); err != nil {
		return err
	}
	a.events = append(a.events, &gaussianMech{sigma: sigma, steps: steps})
	return nil
}

// sampledGaussianMech is the Poisson-subsampled Gaussian mechanism
// (add-remove neighbours, sensitivity 1, sampling rate q): the remove
// order is P = (1-q) N(0, sigma^2) + q N(1, sigma^2) against
// Q = N(0, sigma^2), the add order the reverse (Koskela et al. 2020,
// Sec. 6; Zhu, Dong & Wang 2022, Thm 11: these two pairs dominate the
// two orders).
type sampledGaussianMech struct {
	sigma, q float64
	steps    int
}

func (m *sampledGaussianMech) count() int { return m.steps }
func (m *sampledGaussianMech) name() string {
	return fmt.Sprintf("sampled gaussian sigma=%g rate=%g", m.sigma, m.q)
}

// remove returns the remove-order pair: loss
// l(x) = log(1 - q + q e^{(2x-1)/(2 sigma^2)}), increasing, in (log(1-q), inf).
func (m *sampledGaussianMech) remove() *monotonePair {
	sig, q := m.sigma, m.q
	s2 := sig * sig
	la, lq := math.Log1p(-q), math.Log(q)
	if q == 1 {
		la = math.Inf(-1)
	}
	return &monotonePair{
		pdfP: func(x float64) float64 {
			return ((1-q)*normPDF(x/sig) + q*normPDF((x-1)/sig)) / sig
		},
		loss: func(x float64) float64 { return logmath.LogAddExp(la, lq+(2*x-1)/(2*s2)) },
		inv: func(l float64) float64 {
			// e^l = 1 - q + q e^u, u = (2x-1)/(2 sigma^2).
			return (s2*(logmath.LogSubExp(l, la)-lq)*2 + 1) / 2
		},
		cdfP: func(x float64) (float64, float64) {
			b0, a0 := normCDF(x / sig)
			b1, a1 := normCDF((x - 1) / sig)
			return (1-q)*b0 + q*b1, (1-q)*a0 + q*a1
		},
		increasing: true,
		lInf:       la,
		lSup:       math.Inf(1),
		scale:      sig / 4,
	}
}

// add returns the add-order pair: P = N(0, sigma^2), loss -l(x) with l as
// in remove: decreasing in x, in (-inf, -log(1-q)).
func (m *sampledGaussianMech) add() *monotonePair {
	r := m.remove()
	sig := m.sigma
	return &monotonePair{
		pdfP:       func(x float64) float64 { return normPDF(x/sig) / sig },
		loss:       func(x float64) float64 { return -r.loss(x) },
		inv:        func(l float64) float64 { return r.inv(-l) },
		cdfP:       func(x float64) (float64, float64) { return normCDF(x / sig) },
		increasing: false,
		lInf:       math.Inf(-1),
		lSup:       -r.lInf,
		scale:      sig / 4,
	}
}

// xRange is the outcome range the grid covers: beyond it, the tails.
func (m *sampledGaussianMech) xRange() (float64, float64) {
	return -gaussTailZ * m.sigma, 1 + gaussTailZ*m.sigma
}

// gridRange returns grid indices covering the losses of the pair on the
// x-range, clipped to the loss range's open end.
func gridRange(p *monotonePair, xa, xb, h float64) (int, int) {
	la, lb := p.loss(xa), p.loss(xb)
	if la > lb {
		la, lb = lb, la
	}
	return int(math.Floor(la/h)) - 1, int(math.Ceil(lb/h)) + 1
}

func (m *sampledGaussianMech) stats() (mean, variance, span float64) {
	xa, xb := m.xRange()
	for _, p := range []*monotonePair{m.remove(), m.add()} {
		// Moments of the loss under P by Gauss-Legendre over the x-range.
		var s0, s1, s2 float64
		n := 512
		w := (xb - xa) / float64(n)
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
		mu := s1 / s0
		v := s2/s0 - mu*mu
		mean = math.Max(mean, mu)
		variance = math.Max(variance, v)
		span = math.Max(span, math.Max(math.Abs(p.loss(xa)), math.Abs(p.loss(xb))))
	}
	return mean, variance, span
}

func (m *sampledGaussianMech) round(h float64) (Bracket, Bracket, error) {
	xa, xb := m.xRange()
	var out [2]Bracket
	for i, p := range []*monotonePair{m.remove(), m.add()} {
		jLo, jHi := gridRange(p, xa, xb, h)
		bp, err := newBuilder(Pessimistic, h, jLo, jHi)
		if err != nil {
			return Bracket{}, Bracket{}, err
		}
		bo, _ := newBuilder(Optimistic, h, jLo, jHi)
		p.discretise(bp, bo, xa, xb)
		out[i] = Bracket{Pess: bp.finish().truncate(DefaultTail), Opt: bo.finish().truncate(DefaultTail)}
	}
	return out[0], out[1], nil
}

// checkSampled checks the parameters of a sampled Gaussian mechanism:
// sigma, rate in (0, 1] and steps.
func checkSampled(sigma, rate float64, steps int) error {
	if err := checkSigma(sigma); err != nil {
		return err
	}
	if !(rate > 0 && rate <= 1) {
		return fmt.Errorf("pld: rate = %v, want 0 < rate <= 1", rate)
	}
	return checkSteps(steps)
}

// AddSampledGaussian adds steps rounds of the Poisson-subsampled Gaussian
// mechanism (DP-SGD's; add-remove neighbours, sensitivity 1, noise
// standard deviation sigma, sampling rate in (0, 1]).
func (a *Accountant) AddSampledGaussian(sigma, rate float64, steps int) error {
	if err := checkSampled(sigma, rate, steps); err != nil {
		return err
	}
	if rate == 1 {
		a.events = append(a.events, &gaussianMech{sigma: sigma, steps: steps})
		return nil
	}
	a.events = append(a.events, &sampledGaussianMech{sigma: sigma, q: rate, steps: steps})
	return nil
}

// SampledGaussian returns the composed PLD of steps rounds of the
// Poisson-subsampled Gaussian mechanism (rate 1: the Gaussian mechanism).
func SampledGaussian(sigma, rate float64, steps int, opt Options) (Composed, error) {
	a := Accountant{Options: opt}
	if err := a.AddSampledGaussian(sigma, rate, steps); err != nil {
		return Composed{}, err
	}
	return a.Compose()
}

// Gaussian returns the composed PLD of steps applications of the Gaussian
// mechanism (sensitivity 1, noise sigma).
func Gaussian(sigma float64, steps int, opt Options) (Composed, error) {
	a := Accountant{Options: opt}
	if err := a.AddGaussian(sigma, steps); err != nil {
		return Composed{}, err
	}
	return a.Compose()
}
