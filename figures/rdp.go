package figures

import (
	"fmt"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
)

// RDPBound is a line computed by the Rényi-DP accountant (package
// accounting): the named per-round RDP curve of the subsampled shuffle
// model, composed over T rounds and converted to (eps, delta) at the best
// order of the default grid (widened to order 2^16 for neurips21-upper and
// -lower when their optimum is at the grid's top). Curve values are
// memoised per (n, k, eps0), so a sweep over T evaluates each curve once.
type RDPBound struct {
	name string

	mu     sync.Mutex
	curves map[curveSetting]*memoRDP
}

type curveSetting struct {
	n, k int64
	eps0 float64
}

// NewRDPBound returns the line for one bound name of package accounting
// (accounting.BoundNames).
func NewRDPBound(name string) *RDPBound {
	return &RDPBound{name: name, curves: map[curveSetting]*memoRDP{}}
}

// RDPBounds returns the accountant's lines of the papers' figures:
// neurips21-upper (Thm 1), neurips21-lower (Thm 2, a lower bound on the RDP
// curve: converted, not a lower bound on epsilon),
// ccs21+wbk19 (CCS'21 Thm 3.1 at n := k with WBK19 subsampling), clones-rdp
// (the clone-pair bound, docs/proofs/clones-rdp.md) and the
// accountant's own best (the minimum over its upper bounds at every order).
func RDPBounds() []Bound {
	return []Bound{
		NewRDPBound(accounting.BoundNeurIPS21Upper),
		NewRDPBound(accounting.BoundNeurIPS21Lower),
		NewRDPBound(accounting.BoundCCS21WBK19),
		NewRDPBound(accounting.BoundClonesRDP),
		NewRDPBound(accounting.BoundBest),
	}
}

// Label implements Bound. The accountant's best is labelled "rdp-best" so
// that it is not confused with the figure's overall best line.
func (b *RDPBound) Label() string {
	if b.name == accounting.BoundBest {
		return "rdp-best"
	}
	return b.name
}

// Upper implements Bound.
func (b *RDPBound) Upper() bool { return b.name != accounting.BoundNeurIPS21Lower }

// Epsilon implements Bound.
func (b *RDPBound) Epsilon(s Setting) (float64, error) {
	curve, err := b.curve(s)
	if err != nil {
		return 0, err
	}
	if s.Steps == 0 {
		return 0, nil
	}
	g, err := b.epsilonOver(curve, s, nil)
	if err != nil {
		return 0, err
	}
	// At very small sampling ratios the optimum of Thm 1/Thm 2 runs past
	// the default grid's largest order (4096). These two curves are cheap
	// at any order, so the grid is widened to 2^16 there; the smaller
	// epsilon is kept (both are valid conversions of the same curve).
	// ccs21+wbk19 and the accountant's best cost O(order^2) per order and
	// keep the default grid.
	def := accounting.DefaultOrders()
	if g.AtGridEdge && g.Order == def[len(def)-1] &&
		(b.name == accounting.BoundNeurIPS21Upper || b.name == accounting.BoundNeurIPS21Lower) {
		wide := append(def, 8192, 16384, 32768, 65536)
		if g2, err := b.epsilonOver(curve, s, wide); err == nil && g2.Epsilon < g.Epsilon {
			g = g2
		}
	}
	return g.Epsilon, nil
}

func (b *RDPBound) epsilonOver(curve accounting.RDP, s Setting, orders []float64) (accounting.Guarantee, error) {
	acct, err := accounting.NewAccountant(orders)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	if err := acct.Compose64(curve, s.Steps); err != nil {
		return accounting.Guarantee{}, fmt.Errorf("%s: %w", b.name, err)
	}
	g, err := acct.Epsilon(s.Delta)
	if err != nil {
		return accounting.Guarantee{}, fmt.Errorf("%s: %w", b.name, err)
	}
	return g, nil
}

func (b *RDPBound) curve(s Setting) (*memoRDP, error) {
	key := curveSetting{s.N, s.K, s.Eps0}
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.curves[key]; ok {
		return c, nil
	}
	inner, err := accounting.NewBound(accounting.MechanismSubsampledShuffle, b.name, s.N, s.K, s.Eps0)
	if err != nil {
		return nil, err
	}
	c := &memoRDP{inner: inner, vals: map[float64]memoValue{}}
	b.curves[key] = c
	return c, nil
}

// memoRDP memoises an RDP curve's values (and errors) per order. It
// forwards the lower-bound marker, so the accountant treats it exactly as
// the curve it wraps.
type memoRDP struct {
	inner accounting.RDP
	mu    sync.Mutex
	vals  map[float64]memoValue
}

type memoValue struct {
	v   float64
	err error
}

func (m *memoRDP) Name() string       { return m.inner.Name() }
func (m *memoRDP) IsLowerBound() bool { return accounting.IsLower(m.inner) }

func (m *memoRDP) RDP(order float64) (float64, error) {
	m.mu.Lock()
	r, ok := m.vals[order]
	m.mu.Unlock()
	if ok {
		return r.v, r.err
	}
	v, err := m.inner.RDP(order)
	m.mu.Lock()
	m.vals[order] = memoValue{v, err}
	m.mu.Unlock()
	return v, err
}
