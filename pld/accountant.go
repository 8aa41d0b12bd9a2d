package pld

import (
	"errors"
	"fmt"
	"math"
)

// Options tune the discretisation. The zero value chooses automatically.
type Options struct {
	// Grid is the grid width h of the privacy loss; 0 chooses one from
	// the events (AutoGrid).
	Grid float64
	// Tail is the truncation threshold after each convolution (0:
	// DefaultTail). On the pessimistic side truncated mass is never
	// dropped (it goes to +inf, or up to the lowest loss kept).
	Tail float64
}

// Accountant composes heterogeneous events by PLD: each event is a
// mechanism applied Steps times. Add events, then call Compose (or
// Epsilon/Delta). The two orders of a neighbouring pair are composed
// separately ("remove": (P, Q), "add": (Q, P) for an add-remove
// mechanism); symmetric pairs (replace-one, the clone pair) enter both
// the same way. The reported epsilon is the larger of the two.
type Accountant struct {
	Options
	events []mech
}

// mech is one event: a mechanism with its number of steps.
type mech interface {
	// stats returns the mean and the variance of the per-step privacy
	// loss (under P, the larger of the two directions) and the loss
	// range one step needs; used to choose the grid.
	stats() (mean, variance, span float64)
	// round returns the per-step brackets of the two directions on grid h.
	round(h float64) (remove, add Bracket, err error)
	count() int
	name() string
}

// AddClone adds steps rounds of the subsampled shuffle (k of n clients
// sampled without replacement, each applying the same eps0-LDP
// randomizer, reports shuffled; k = n is the plain shuffle), accounted
// through the symmetric clone pair (replace-one neighbours).
func (a *Accountant) AddClone(n, k int64, eps0 float64, steps int) error {
	if err := checkClone(n, k, eps0); err != nil {
		return err
	}
	if err := checkSteps(steps); err != nil {
		return err
	}
	a.events = append(a.events, newCloneMech(n, k, eps0, steps))
	return nil
}

// AddPMFs adds steps applications of a mechanism whose pair over a finite
// outcome set is (p, q). symmetric = false: add-remove style, (p, q) in
// one order and (q, p) in the other; symmetric = true: the symmetric pair
// of Symmetric in both.
func (a *Accountant) AddPMFs(p, q []float64, steps int, symmetric bool) error {
	if err := checkPMFs(p, q); err != nil {
		return err
	}
	if err := checkSteps(steps); err != nil {
		return err
	}
	a.events = append(a.events, &pmfMech{p: append([]float64(nil), p...), q: append([]float64(nil), q...), steps: steps, symmetric: symmetric})
	return nil
}

func checkSteps(steps int) error {
	if steps < 1 {
		return fmt.Errorf("pld: steps = %d, want >= 1", steps)
	}
	return nil
}

// Composed is the result of an accountant: the composed brackets of the
// two orders of a neighbouring pair.
type Composed struct {
	Remove, Add Bracket
	// Grid is the grid width used.
	Grid float64
}

// Epsilon returns the interval of epsilons at delta: each end is the
// larger over the two orders.
func (c Composed) Epsilon(delta float64) (Interval, error) {
	r, err := c.Remove.Epsilon(delta)
	if err != nil {
		return Interval{}, err
	}
	if c.Add.Pess == nil || (c.Add.Pess == c.Remove.Pess && c.Add.Opt == c.Remove.Opt) {
		return r, nil
	}
	s, err := c.Add.Epsilon(delta)
	if err != nil {
		return Interval{}, err
	}
	return Interval{Lower: math.Max(r.Lower, s.Lower), Upper: math.Max(r.Upper, s.Upper)}, nil
}

// Delta returns the interval of deltas at eps, the larger over the two
// orders.
func (c Composed) Delta(eps float64) (Interval, error) {
	r, err := c.Remove.Delta(eps)
	if err != nil {
		return Interval{}, err
	}
	if c.Add.Pess == nil {
		return r, nil
	}
	s, err := c.Add.Delta(eps)
	if err != nil {
		return Interval{}, err
	}
	return Interval{Lower: math.Max(r.Lower, s.Lower), Upper: math.Max(r.Upper, s.Upper)}, nil
}

// Epsilon composes the events and returns the epsilon interval at delta.
// Unless Options.Tail is set it truncates at TailFor(delta, steps), so
// that truncation adds at most 1e-6 delta on the pessimistic side.
func (a *Accountant) Epsilon(delta float64) (Interval, error) {
	if !(delta > 0 && delta < 1) {
		return Interval{}, fmt.Errorf("pld: delta = %v, want 0 < delta < 1", delta)
	}
	b := *a
	if b.Tail == 0 {
		b.Tail = TailFor(delta, a.steps())
	}
	c, err := b.compose(delta, false)
	if err != nil {
		return Interval{}, err
	}
	return c.Epsilon(delta)
}

// EpsilonLower composes the optimistic sides only and returns their
// epsilon at delta, the larger over the two orders: Interval.Lower of
// Epsilon, for half the work, and it fails only where the optimistic
// PLD itself has mass at +inf of at least delta (then no finite epsilon
// reaches delta for the pair: ErrDeltaTooSmall). Its truncation is
// optimistic by construction (dropped mass), so it needs no tail budget
// from delta; it uses the same TailFor as Epsilon.
func (a *Accountant) EpsilonLower(delta float64) (float64, error) {
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("pld: delta = %v, want 0 < delta < 1", delta)
	}
	b := *a
	if b.Tail == 0 {
		b.Tail = TailFor(delta, a.steps())
	}
	c, err := b.compose(delta, true)
	if err != nil {
		return 0, err
	}
	l, err := c.Remove.Opt.Epsilon(delta)
	if err != nil {
		return 0, err
	}
	if c.Add.Opt != c.Remove.Opt {
		la, err := c.Add.Opt.Epsilon(delta)
		if err != nil {
			return 0, err
		}
		l = math.Max(l, la)
	}
	return l, nil
}

// steps returns the total number of steps of the events.
func (a *Accountant) steps() int {
	t := 0
	for _, e := range a.events {
		t += e.count()
	}
	return t
}

// TailFor returns a truncation threshold for a query at delta after
// steps compositions: each truncation moves at most this much mass to
// +inf, and by repeated squaring the final mass at +inf from truncation is
// at most 4 * steps * tail (each truncated PLD enters the result at most
// 2 * steps times, and each event adds its own), so 4 steps tail <=
// 1e-6 delta. Never above 1e-12 nor below DefaultTail.
func TailFor(delta float64, steps int) float64 {
	t := 1e-6 * delta / (4 * float64(max(steps, 1)+1))
	return math.Max(DefaultTail, math.Min(t, 1e-12))
}

// AutoGrid returns the grid width chosen for the events: at most
// 1/400 of the composed loss's standard deviation, and at most 0.025 of
// each event's per-step standard deviation (connect-the-dots adds at most
// h^2/4 of variance per step, and the optimistic garbling removes about
// as much, so this keeps both within 0.02% of the variance) unless that
// would put more than 6000 points in a standard deviation of the composed
// loss (the FFT round-off bound grows with the points), and coarse enough
// that no single step needs more than 2^22 points.
func (a *Accountant) AutoGrid() (float64, error) {
	if len(a.events) == 0 {
		return 0, errors.New("pld: no events")
	}
	total := 0.0
	h := math.Inf(1)
	span := 0.0
	for _, e := range a.events {
		_, v, s := e.stats()
		total += float64(e.count()) * v
		if v > 0 {
			h = math.Min(h, gridPerStepSD*math.Sqrt(v))
		}
		span = math.Max(span, s)
	}
	if total > 0 {
		sd := math.Sqrt(total)
		// No finer than needed for the composed loss: the FFT round-off
		// bound grows with the number of points and with the number of
		// compositions it is amplified through.
		h = math.Max(h, sd/gridMaxPerSD)
		h = math.Min(h, sd/gridPointsPerSD)
	}
	if span > 0 {
		// A step whose loss is nearly constant has a tiny variance; its
		// grid need not be finer than 1e-5 of its range.
		h = math.Max(h, math.Max(2*span/maxStepPoints, span*minGridPerSpan))
	}
	if math.IsInf(h, 1) || !(h > 0) {
		h = 1e-3 // every event is the identity
	}
	return h, nil
}

const (
	gridPointsPerSD = 400
	gridMaxPerSD    = 6000
	gridPerStepSD   = 0.025
	maxStepPoints   = 1 << 22
	minGridPerSpan  = 1e-5
)

// Compose builds every event's per-step PLDs on a common grid, composes
// them, and returns the result (untilted: its absolute error bounds are
// plain L1 bounds; Epsilon tilts for its delta).
func (a *Accountant) Compose() (Composed, error) {
	return a.compose(0, false)
}

// compose composes the events. With delta > 0 the FFT convolutions are
// tilted for a query at delta (chooseTilt, tilt.go); with optOnly only
// the optimistic sides are composed (Pess is nil in the result).
func (a *Accountant) compose(delta float64, optOnly bool) (Composed, error) {
	h := a.Grid
	if h == 0 {
		var err error
		if h, err = a.AutoGrid(); err != nil {
			return Composed{}, err
		}
	}
	if !(h > 0) || math.IsInf(h, 0) {
		return Composed{}, fmt.Errorf("pld: grid = %v, want a finite grid > 0", h)
	}
	tail := a.Tail
	if tail == 0 {
		tail = DefaultTail
	}
	if !(tail >= 0 && tail < 1e-6) {
		return Composed{}, fmt.Errorf("pld: tail = %v, want 0 <= tail < 1e-6", tail)
	}
	n := len(a.events)
	rs, ads := make([]Bracket, n), make([]Bracket, n)
	counts := make([]int, n)
	// symmetric: every event's two orders are the same pair; then one
	// composition serves both.
	symmetric := true
	for i, e := range a.events {
		r, ad, err := e.round(h)
		if err != nil {
			return Composed{}, fmt.Errorf("%s: %w", e.name(), err)
		}
		if optOnly {
			r.Pess, ad.Pess = nil, nil
		}
		rs[i], ads[i], counts[i] = r, ad, e.count()
		symmetric = symmetric && r.Pess == ad.Pess && r.Opt == ad.Opt
	}
	var tiltR, tiltA float64
	if delta > 0 {
		pick := func(b []Bracket) float64 {
			steps := make([]*PLD, len(b))
			for i := range b {
				steps[i] = b[i].Pess
				if optOnly {
					steps[i] = b[i].Opt
				}
			}
			return chooseTilt(steps, counts, delta)
		}
		tiltR = pick(rs)
		tiltA = tiltR
		if !symmetric {
			tiltA = pick(ads)
		}
	}
	chain := func(b []Bracket, tilt float64) (Bracket, error) {
		var acc *Bracket
		for i := range b {
			r, err := b[i].selfCompose(counts[i], tail, tilt)
			if err != nil {
				return Bracket{}, err
			}
			if acc == nil {
				acc = &r
				continue
			}
			if *acc, err = acc.compose(r, tail, tilt); err != nil {
				return Bracket{}, err
			}
		}
		return *acc, nil
	}
	rem, err := chain(rs, tiltR)
	if err != nil {
		return Composed{}, err
	}
	add := rem
	if !symmetric {
		if add, err = chain(ads, tiltA); err != nil {
			return Composed{}, err
		}
	}
	return Composed{Remove: rem, Add: add, Grid: h}, nil
}

// selfCompose composes both sides (a nil side stays nil).
func (b Bracket) selfCompose(steps int, tail, tilt float64) (Bracket, error) {
	var out Bracket
	var err error
	if b.Pess != nil {
		if out.Pess, err = b.Pess.selfCompose(steps, tail, tilt); err != nil {
			return Bracket{}, err
		}
	}
	if out.Opt, err = b.Opt.selfCompose(steps, tail, tilt); err != nil {
		return Bracket{}, err
	}
	return out, nil
}

func (b Bracket) compose(c Bracket, tail, tilt float64) (Bracket, error) {
	var out Bracket
	var err error
	if b.Pess != nil {
		if out.Pess, err = b.Pess.compose(c.Pess, tail, tilt); err != nil {
			return Bracket{}, err
		}
	}
	if out.Opt, err = b.Opt.compose(c.Opt, tail, tilt); err != nil {
		return Bracket{}, err
	}
	return out, nil
}

// CloneShuffle returns the composed PLD of steps rounds of the subsampled
// shuffle (k of n, eps0-LDP randomizer; k = n the plain shuffle) by the
// symmetric clone pair. Its Epsilon(delta).Upper is a certified upper
// bound for every eps0-LDP randomizer (replace-one neighbours).
func CloneShuffle(n, k int64, eps0 float64, steps int, opt Options) (Composed, error) {
	a := Accountant{Options: opt}
	if err := a.AddClone(n, k, eps0, steps); err != nil {
		return Composed{}, err
	}
	return a.Compose()
}

// cloneMech is the subsampled shuffle by the symmetric clone pair.
type cloneMech struct {
	n, k    int64
	eps0    float64
	steps   int
	hi, lo  []cloneAtom
	lossMax float64
}

func newCloneMech(n, k int64, eps0 float64, steps int) *cloneMech {
	m := &cloneMech{n: n, k: k, eps0: eps0, steps: steps}
	if eps0 > 0 {
		m.hi, m.lo, m.lossMax = clonePositive(n, k, eps0, defaultCloneCut)
	}
	return m
}

func (m *cloneMech) count() int { return m.steps }
func (m *cloneMech) name() string {
	return fmt.Sprintf("clone pair n=%d k=%d eps0=%g", m.n, m.k, m.eps0)
}

func (m *cloneMech) stats() (mean, variance, span float64) {
	// The symmetric pair: P-mass q e^l at l and q at -l.
	var s1, s2 float64
	for _, a := range m.hi {
		q := math.Exp(a.logQ)
		L := math.Exp(a.l)
		s1 += q * (L - 1) * a.l
		s2 += q * (L + 1) * a.l * a.l
	}
	return s1, math.Max(0, s2-s1*s1), m.lossMax
}

func (m *cloneMech) round(h float64) (Bracket, Bracket, error) {
	if m.eps0 == 0 {
		z := zeroBracket(h)
		return z, z, nil
	}
	top := int(math.Ceil(m.lossMax/h)) + 1
	bp, err := newBuilder(Pessimistic, h, -top, top)
	if err != nil {
		return Bracket{}, Bracket{}, err
	}
	bo, _ := newBuilder(Optimistic, h, -top, top)
	symmetricFromPositive(bp, m.hi, 0)
	symmetricFromPositive(bo, m.lo, 0)
	b := Bracket{Pess: bp.finish().truncate(DefaultTail), Opt: bo.finish().truncate(DefaultTail)}
	return b, b, nil
}

// pmfMech is a pair over a finite outcome set.
type pmfMech struct {
	p, q      []float64
	steps     int
	symmetric bool
}

func (m *pmfMech) count() int { return m.steps }
func (m *pmfMech) name() string {
	return fmt.Sprintf("pmf pair (%d outcomes)", len(m.p))
}

func (m *pmfMech) stats() (mean, variance, span float64) {
	one := func(p, q []float64) (float64, float64, float64) {
		var s1, s2, mx float64
		for i := range p {
			if p[i] > 0 && q[i] > 0 {
				l := math.Log(p[i] / q[i])
				s1 += p[i] * l
				s2 += p[i] * l * l
				mx = math.Max(mx, math.Abs(l))
			}
		}
		return s1, math.Max(0, s2-s1*s1), mx
	}
	m1, v1, s1 := one(m.p, m.q)
	m2, v2, s2 := one(m.q, m.p)
	return math.Max(m1, m2), math.Max(v1, v2), math.Max(s1, s2)
}

func (m *pmfMech) round(h float64) (Bracket, Bracket, error) {
	if m.symmetric {
		b, err := Symmetric(m.p, m.q, h)
		return b, b, err
	}
	r, err := FromPMFs(m.p, m.q, h)
	if err != nil {
		return Bracket{}, Bracket{}, err
	}
	a, err := FromPMFs(m.q, m.p, h)
	return r, a, err
}
