package pld

import (
	"math"
)

// addCell adds the aggregate of a continuous part of the pair whose losses
// lie in the cell [j h, (j+1) h]: P-mass P, excess E = P - e^{l_j} Q over
// the cell's lower point and deficit D = e^{l_{j+1}} Q - P under its upper
// point (Q the cell's Q-mass). rel bounds their relative errors; they are
// rounded in the side's direction. Pessimistic: connect the dots, P-mass
// E/(1 - e^{-h}) at l_{j+1} and the rest at l_j (both P and Q kept).
// Optimistic: the cell enters the garbling like a merged atom.
func (b *builder) addCell(j int, P, E, D, rel float64) {
	if !(P > 0) {
		return
	}
	k := j - b.lo
	if k < 0 || k >= b.hi-b.lo {
		// Outside the grid: treat as an atom at the cell's upper (pess)
		// or lower (opt) end.
		if b.side == Pessimistic {
			b.add(float64(j+1)*b.h, P*(1+rel))
		} else {
			b.add(float64(j)*b.h, P*(1-rel))
		}
		return
	}
	b.n++
	b.count[k]++
	b.count[k+1]++
	if b.side == Pessimistic {
		P *= 1 + rel
		p2 := math.Min(P, E*(1+rel)/-math.Expm1(-b.h)*(1+8*ulp))
		p2 = math.Max(p2, 0)
		b.mass[k] += P - p2
		b.mass[k+1] += p2
		return
	}
	b.cp[k] += P * (1 - rel)
	b.ce[k] += math.Max(0, E*(1-rel))
	b.cd[k] += D * (1 + rel)
}

// Gauss-Legendre nodes and weights on [-1, 1], 8 points.
var glX = [8]float64{
	-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
	0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363,
}
var glW = [8]float64{
	0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
	0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763,
}

// monotonePair describes a pair over the real line whose privacy loss is
// a monotone function of the outcome x: densities and the loss.
type monotonePair struct {
	pdfP func(x float64) float64
	loss func(x float64) float64
	// inv returns the x with loss(x) = l (for l inside the loss range).
	inv func(l float64) float64
	// cdfP returns P(X <= x) and P(X > x), each computed without
	// cancellation.
	cdfP func(x float64) (below, above float64)
	// increasing: the loss increases with x.
	increasing bool
	// lInf, lSup: the infimum and supremum of the loss (inv is defined
	// strictly between them).
	lInf, lSup float64
	scale      float64 // quadrature pieces are at most this wide in x
}

// integrate returns (P, E, D) over the x-interval [xa, xb] for the cell
// [lj, lj + h], by composite 8-point Gauss-Legendre.
func (m *monotonePair) integrate(xa, xb, lj, h float64) (P, E, D float64) {
	if !(xb > xa) {
		return 0, 0, 0
	}
	pieces := int(math.Ceil((xb - xa) / m.scale))
	pieces = min(max(pieces, 1), 4096)
	w := (xb - xa) / float64(pieces)
	for i := 0; i < pieces; i++ {
		a := xa + float64(i)*w
		for k := range glX {
			x := a + w*(glX[k]+1)/2
			f := m.pdfP(x) * glW[k] * w / 2
			l := m.loss(x)
			P += f
			E += f * -math.Expm1(lj-l)
			D += f * math.Expm1(lj+h-l)
		}
	}
	return P, math.Max(E, 0), math.Max(D, 0)
}

// quadRel is the relative error allowed for the quadrature and the loss
// evaluations (8-point Gauss-Legendre on pieces at most a quarter of the
// noise scale wide integrates the smooth integrands to far better than
// this; the goldens check it against mpmath).
const quadRel = 1e-9

// discretise fills both builders from the continuous pair on the outcome
// range [xa, xb] (grid indices jLo..jHi, covering loss(xa)..loss(xb)).
// Each cell [l_j, l_{j+1}] is integrated over the outcomes whose loss lies
// in it, clipped to [xa, xb]. The outcomes beyond are the tails:
// pessimistic, those with losses above the range go to +inf and those
// below up to the grid point at or above the loss at the range's end;
// optimistic, both are dropped.
func (m *monotonePair) discretise(bp, bo *builder, xa, xb float64) {
	h := bp.h
	la := m.loss(xa) // the lower end of the loss range
	if !m.increasing {
		la = m.loss(xb)
	}
	// Tails.
	var lowTail, highTail float64
	if m.increasing {
		lowTail, _ = m.cdfP(xa)
		_, highTail = m.cdfP(xb)
	} else {
		_, lowTail = m.cdfP(xb)
		highTail, _ = m.cdfP(xa)
	}
	bp.add(math.Ceil(la/h)*h, lowTail*(1+quadRel))
	bp.add(math.Inf(1), highTail*(1+quadRel))
	m.discretiseCells(bp, bo, xa, xb)
}

// discretiseCells fills both builders with the cells of the outcome range
// [xa, xb] only (no tails): each cell [l_j, l_{j+1}] of the grid
// (bp.lo..bp.hi) is integrated over the outcomes whose loss lies in it,
// clipped to [xa, xb].
func (m *monotonePair) discretiseCells(bp, bo *builder, xa, xb float64) {
	h := bp.h
	lowX, highX := xa, xb // the end with the lower / higher loss
	if !m.increasing {
		lowX, highX = xb, xa
	}
	jLo, jHi := bp.lo, bp.hi
	// x at loss l, clipped to the outcome range.
	xAt := func(l float64) float64 {
		switch {
		case l <= m.loss(lowX) || l <= m.lInf:
			return lowX
		case l >= m.loss(highX) || l >= m.lSup:
			return highX
		}
		x := m.inv(l)
		if m.increasing {
			return math.Min(math.Max(x, xa), xb)
		}
		return math.Min(math.Max(x, xa), xb)
	}
	prev := xAt(float64(jLo) * h)
	for j := jLo; j < jHi; j++ {
		next := xAt(float64(j+1) * h)
		x0, x1 := prev, next
		if x0 > x1 {
			x0, x1 = x1, x0
		}
		P, E, D := m.integrate(x0, x1, float64(j)*h, h)
		bp.addCell(j, P, E, D, quadRel)
		bo.addCell(j, P, E, D, quadRel)
		prev = next
	}
}

// normCDF returns Phi(z) and 1 - Phi(z) without cancellation.
func normCDF(z float64) (below, above float64) {
	return 0.5 * math.Erfc(-z/math.Sqrt2), 0.5 * math.Erfc(z/math.Sqrt2)
}

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
