package pld

import (
	"fmt"
	"math"
)

// builder discretises a pair given as atoms (P-mass p at privacy loss l)
// onto the grid {j h : lo <= j <= hi}.
//
// Pessimistic (connect the dots, Doroshenko, Ghazi, Kamath, Kumar,
// Manurangsi, PETS 2022): an atom at l in [l_j, l_{j+1}] is split into
// P-masses p1 at l_j and p2 at l_{j+1} with p1 + p2 = p and
// p1 e^{-l_j} + p2 e^{-l_{j+1}} = p e^{-l}, that is
// p2 = p (1 - e^{-(l - l_j)})/(1 - e^{-h}): both the P- and the Q-mass are
// kept, and the split pair dominates the atom at every order
// ((p1 - a q1)_+ + (p2 - a q2)_+ >= (p - a q)_+). Atoms above the grid go
// to +inf, atoms below it are moved up to l_lo.
//
// Optimistic (a garbling onto the grid): the atoms of each cell
// [l_j, l_{j+1}) are merged (P-mass P_j, excess E_j = P_j - e^{l_j} Q_j
// over the lower grid point, deficit D_j = e^{l_{j+1}} Q_j - P_j under the
// upper one); the part of cell j-1 carried up to l_j is merged with the
// fraction of cell j whose excess balances its deficit, which puts the
// merged outcome exactly at loss l_j. What cannot be balanced is rounded
// down to the cell's lower point, atoms above the grid are rounded down to
// its top, atoms below it are dropped. Merging, splitting by a fixed
// fraction and rounding down only lower every hockey-stick divergence.
type builder struct {
	side   Side
	h      float64
	lo, hi int // grid points lo..hi
	// pessimistic: mass at the grid points.
	mass []float64
	// optimistic: per cell j (between points lo+j and lo+j+1): P-mass,
	// excess and deficit of the atoms strictly inside; on-grid mass at
	// points.
	cp, ce, cd, on []float64
	inf            float64
	// dropped is the P-mass dropped (optimistic) or moved up from below
	// the grid (pessimistic), for diagnostics.
	dropped float64
	n       int     // atoms added
	count   []int32 // atoms summed into each point (pessimistic) or cell (optimistic)
}

// newBuilder covers the losses [lo h, hi h]; hi > lo.
func newBuilder(side Side, h float64, lo, hi int) (*builder, error) {
	if !(h > 0) || math.IsInf(h, 0) {
		return nil, fmt.Errorf("pld: grid width h = %v, want a finite h > 0", h)
	}
	if hi <= lo {
		hi = lo + 1
	}
	if hi-lo > maxGridPoints {
		return nil, fmt.Errorf("pld: %d grid points needed (loss range [%.4g, %.4g] at h = %.3g), more than %d: use a larger grid width", hi-lo+1, float64(lo)*h, float64(hi)*h, h, maxGridPoints)
	}
	b := &builder{side: side, h: h, lo: lo, hi: hi}
	n := hi - lo + 1
	b.count = make([]int32, n)
	if side == Pessimistic {
		b.mass = make([]float64, n)
	} else {
		b.cp = make([]float64, n)
		b.ce = make([]float64, n)
		b.cd = make([]float64, n)
		b.on = make([]float64, n)
	}
	return b, nil
}

// maxGridPoints bounds one PLD's support (memory: 8 bytes a point, and
// the FFTs of its compositions).
const maxGridPoints = 1 << 24

// add adds P-mass p at loss l (l may be +Inf; p >= 0). l is the atom's
// loss as computed: the caller has already rounded it in the side's
// direction.
func (b *builder) add(l, p float64) {
	if !(p > 0) {
		return
	}
	b.n++
	if math.IsInf(l, 1) {
		b.inf += p
		return
	}
	top := float64(b.hi) * b.h
	bottom := float64(b.lo) * b.h
	if b.side == Pessimistic {
		switch {
		case l > top:
			b.inf += p
		case l <= bottom:
			b.mass[0] += p
			if l < bottom {
				b.dropped += p
			}
		default:
			j := int(math.Floor(l/b.h)) - b.lo
			j = min(max(j, 0), b.hi-b.lo-1)
			lj := float64(b.lo+j) * b.h
			// frac = l - l_j, computed with error <= 2 ulp (|l| + |l_j|);
			// rounded up so that p2 is rounded up.
			frac := l - lj + 2*ulp*(math.Abs(l)+math.Abs(lj))
			for frac > b.h && j < b.hi-b.lo-1 {
				j++
				lj = float64(b.lo+j) * b.h
				frac = l - lj + 2*ulp*(math.Abs(l)+math.Abs(lj))
			}
			if frac <= 0 {
				b.mass[j] += p
				b.count[j]++
				return
			}
			p2 := p * (math.Expm1(-frac) / math.Expm1(-b.h)) * (1 + 8*ulp)
			p2 = min(p2, p)
			b.mass[j] += p - p2
			b.mass[j+1] += p2
			b.count[j]++
			b.count[j+1]++
		}
		return
	}
	switch {
	case l >= top:
		b.on[b.hi-b.lo] += p
		b.count[b.hi-b.lo]++
	case l < bottom:
		b.dropped += p
	default:
		j := int(math.Floor(l/b.h)) - b.lo
		j = min(max(j, 0), b.hi-b.lo-1)
		lj := float64(b.lo+j) * b.h
		// frac rounded down.
		frac := l - lj - 2*ulp*(math.Abs(l)+math.Abs(lj))
		for frac >= b.h && j < b.hi-b.lo-1 {
			j++
			lj = float64(b.lo+j) * b.h
			frac = l - lj - 2*ulp*(math.Abs(l)+math.Abs(lj))
		}
		if frac <= 0 || frac >= b.h {
			b.on[j] += p // rounded down onto the grid
			b.count[j]++
			return
		}
		b.cp[j] += p
		b.count[j]++
		b.ce[j] += p * -math.Expm1(-frac) * (1 - 8*ulp)
		b.cd[j] += p * math.Expm1(b.h-frac) * (1 + 8*ulp)
	}
}

// sumSlack is a relative bound on the summation error of the per-point
// or per-cell sums: a sequential sum of n non-negative terms, each with
// relative error at most 16 ulps, errs by at most (n+16) ulps relative.
func (b *builder) sumSlack() float64 {
	var m int32
	for _, c := range b.count {
		m = max(m, c)
	}
	return (float64(m) + 16) * ulp
}

// finish returns the PLD.
func (b *builder) finish() *PLD {
	p := &PLD{side: b.side, h: b.h, lo: b.lo, inf: b.inf}
	n := b.hi - b.lo + 1
	if b.side == Pessimistic {
		p.mass = b.mass
		p.relErr = b.sumSlack()
		return p.trim()
	}
	cellSlack := b.sumSlack()
	out := b.on
	eh := math.Exp(b.h)
	// carP, carD: P-mass and deficit (relative to the current grid point
	// j) of the merged mass carried up from the cells below; its loss is
	// l_j - log(1 + carD/carP).
	carP, carD := 0.0, 0.0
	for j := 0; j < n-1; j++ {
		P, E, D := b.cp[j], b.ce[j]*(1-cellSlack), b.cd[j]*(1+cellSlack)
		switch {
		case carP == 0:
			carP, carD = P, D
		case E >= carD:
			// Merge the carried mass with the fraction a of cell j whose
			// excess balances its deficit: the merged loss is >= l_j.
			a := math.Min(1, carD/E*(1+4*ulp))
			out[j] += carP + a*P
			carP, carD = (1-a)*P, (1-a)*D
		default:
			// All of cell j's excess balances the fraction beta of the
			// carried mass; the rest of it is carried on to l_{j+1},
			// merged with nothing (its deficit grows accordingly).
			beta := E / carD * (1 - 4*ulp)
			out[j] += beta*carP + P
			restP, restD := (1-beta)*carP, (1-beta)*carD
			carP, carD = restP, (eh*restD+(eh-1)*restP*(1+cellSlack))*(1+4*ulp)
		}
	}
	if carP > 0 {
		// Carried past the top: round it down to the grid point at or
		// below its loss l_top - log(1 + carD/carP).
		l := -math.Log1p(carD/carP) * (1 + 4*ulp)
		k := n - 1 + int(math.Floor(l/b.h))
		if k >= 0 {
			out[k] += carP
		}
	}
	p.mass = out
	// Float error of the sums and the fractions, relative.
	p.relErr = 4*cellSlack + 16*ulp
	return p.trim()
}

// trim drops zero masses at both ends.
func (p *PLD) trim() *PLD {
	a, z := 0, len(p.mass)
	for a < z && p.mass[a] == 0 {
		a++
	}
	for z > a && p.mass[z-1] == 0 {
		z--
	}
	if a == z {
		p.mass = nil
		return p
	}
	p.lo += a
	p.mass = p.mass[a:z]
	return p
}
