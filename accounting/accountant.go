package accounting

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
)

// Guarantee is an (epsilon, delta)-DP statement obtained from RDP at one order.
type Guarantee struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Order is the Rényi order at which the conversion was tightest.
	Order float64 `json:"order"`
	// AtGridEdge is true when Order is the smallest or largest usable order
	// of the grid: a wider grid might give a smaller epsilon (or delta).
	AtGridEdge bool `json:"at_grid_edge"`
	// Conversion names the RDP->DP conversion used ("cks20" or "mironov").
	Conversion string `json:"conversion"`
}

// Accountant composes RDP curves over rounds, in the spirit of Google's
// dp_accounting RdpAccountant: it holds, for every order of its grid, the sum
// of the per-round RDP of all composed events, and converts that total to
// (epsilon, delta) at the best order.
//
// Curves are evaluated once per order and cached by identity (for comparable
// curve values such as the pointers returned by this package), so composing
// the same curve every round costs O(len(orders)).
//
// An order at which any composed curve is unsupported is dropped from the
// grid. The zero value is not usable; use NewAccountant.
type Accountant struct {
	orders []float64
	total  []float64 // +Inf marks an unusable order
	cache  map[RDP][]float64
	events []Event
	last   RDP   // the curve of the last event, to merge repeated compositions
	lower  *bool // nil until the first composition; then whether curves are lower bounds
}

// Event records one composition: a curve and how many times it was applied.
type Event struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// NewAccountant returns an accountant over the given orders (nil or empty
// means DefaultOrders). Orders must be finite and > 1.
func NewAccountant(orders []float64) (*Accountant, error) {
	if len(orders) == 0 {
		orders = DefaultOrders()
	}
	o := append([]float64(nil), orders...)
	sort.Float64s(o)
	for _, a := range o {
		if err := checkOrder(a, false); err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
	}
	return &Accountant{orders: o, total: make([]float64, len(o)), cache: map[RDP][]float64{}}, nil
}

// Orders returns the accountant's grid.
func (a *Accountant) Orders() []float64 { return append([]float64(nil), a.orders...) }

// Events returns the compositions so far.
func (a *Accountant) Events() []Event { return append([]Event(nil), a.events...) }

// Curve evaluates m at every order of the grid; unsupported orders are +Inf.
// An error is returned only for failures other than ErrOrderUnsupported, or
// when the curve is unsupported at every order.
func (a *Accountant) Curve(m RDP) ([]float64, error) {
	cacheable := m != nil && reflect.TypeOf(m).Comparable()
	if cacheable {
		if v, ok := a.cache[m]; ok {
			return v, nil
		}
	}
	v, err := EvaluateCurve(m, a.orders)
	if err != nil {
		return nil, err
	}
	if cacheable {
		a.cache[m] = v
	}
	return v, nil
}

// EvaluateCurve evaluates m at each order; orders where the bound does not
// hold (ErrOrderUnsupported) or where it is not finite are +Inf.
func EvaluateCurve(m RDP, orders []float64) ([]float64, error) {
	if m == nil {
		return nil, fmt.Errorf("accounting: nil RDP curve")
	}
	v := make([]float64, len(orders))
	usable := 0
	for i, o := range orders {
		e, err := m.RDP(o)
		switch {
		case err != nil && isUnsupported(err):
			v[i] = math.Inf(1)
		case err != nil:
			return nil, fmt.Errorf("%s at order %g: %w", m.Name(), o, err)
		case math.IsNaN(e) || e < 0:
			return nil, fmt.Errorf("%s at order %g: invalid RDP value %g", m.Name(), o, e)
		default:
			v[i] = e
			if !math.IsInf(e, 1) {
				usable++
			}
		}
	}
	if usable == 0 {
		return nil, fmt.Errorf("%s: %w at every order of the grid", m.Name(), ErrOrderUnsupported)
	}
	return v, nil
}

// Compose adds count applications of m. Upper and lower bounds cannot be
// mixed in one accountant.
func (a *Accountant) Compose(m RDP, count int) error {
	return a.Compose64(m, int64(count))
}

// Compose64 is Compose with a 64-bit count.
func (a *Accountant) Compose64(m RDP, count int64) error {
	if count < 0 {
		return fmt.Errorf("count must be >= 0, got %d", count)
	}
	if m == nil {
		return fmt.Errorf("accounting: nil RDP curve")
	}
	low := IsLower(m)
	if a.lower != nil && *a.lower != low {
		return fmt.Errorf("accounting: cannot compose lower bound %q with upper bounds (or vice versa)", m.Name())
	}
	v, err := a.Curve(m)
	if err != nil {
		return err
	}
	if a.lower == nil {
		a.lower = &low
	}
	if count == 0 {
		return nil
	}
	c := float64(count)
	for i := range a.total {
		a.total[i] += c * v[i]
	}
	if n := len(a.events); n > 0 && a.last != nil && sameCurve(a.last, m) {
		a.events[n-1].Count += count
	} else {
		a.events = append(a.events, Event{Name: m.Name(), Count: count})
	}
	a.last = m
	return nil
}

// TotalRDP returns the composed RDP at every order (+Inf where unusable).
func (a *Accountant) TotalRDP() []float64 { return append([]float64(nil), a.total...) }

// IsLower reports whether the composed curves are lower bounds, in which
// case Epsilon reports a lower bound on what the upper-bound route could
// certify, not a guarantee.
func (a *Accountant) IsLower() bool { return a.lower != nil && *a.lower }

// Epsilon returns the smallest epsilon over the grid such that the composed
// mechanism is (epsilon, delta)-DP.
func (a *Accountant) Epsilon(delta float64) (Guarantee, error) {
	if !(delta > 0 && delta < 1) {
		return Guarantee{}, fmt.Errorf("delta must be in (0,1), got %g", delta)
	}
	g := Guarantee{Delta: delta}
	var err error
	g.Epsilon, g.Order, g.Conversion, g.AtGridEdge, err = a.minimise(func(order, rdp float64) (float64, string, error) {
		return EpsilonFromRDP(order, rdp, delta)
	})
	if err != nil {
		return Guarantee{}, err
	}
	// Nothing composed: epsilon 0 at every order, so no edge to speak of.
	g.AtGridEdge = g.AtGridEdge && !(g.Epsilon == 0 && len(a.events) == 0)
	return g, nil
}

// Delta returns the smallest delta over the grid such that the composed
// mechanism is (epsilon, delta)-DP.
func (a *Accountant) Delta(epsilon float64) (Guarantee, error) {
	if math.IsNaN(epsilon) || math.IsInf(epsilon, 0) || epsilon < 0 {
		return Guarantee{}, fmt.Errorf("epsilon must be a finite number >= 0, got %g", epsilon)
	}
	g := Guarantee{Epsilon: epsilon}
	var err error
	g.Delta, g.Order, g.Conversion, g.AtGridEdge, err = a.minimise(func(order, rdp float64) (float64, string, error) {
		return DeltaFromRDP(order, rdp, epsilon)
	})
	if err != nil {
		return Guarantee{}, err
	}
	return g, nil
}

// minimise evaluates f at every usable order of the grid (finite composed
// RDP) and returns the smallest value, its order and conversion, and
// whether that order is the first or last usable one (the grid's edge).
func (a *Accountant) minimise(f func(order, rdp float64) (float64, string, error)) (best, order float64, conv string, edge bool, err error) {
	best = math.Inf(1)
	bestIdx, first, last := -1, -1, -1
	for i, o := range a.orders {
		if math.IsInf(a.total[i], 1) {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
		v, c, err := f(o, a.total[i])
		if err != nil {
			return 0, 0, "", false, err
		}
		if v < best {
			best, order, conv, bestIdx = v, o, c, i
		}
	}
	if bestIdx < 0 {
		return 0, 0, "", false, fmt.Errorf("accounting: no usable order in the grid")
	}
	edge = len(a.orders) > 1 && (bestIdx == first || bestIdx == last)
	return best, order, conv, edge, nil
}

func isUnsupported(err error) bool { return errors.Is(err, ErrOrderUnsupported) }

// sameCurve reports whether a and b are the same comparable curve value.
func sameCurve(a, b RDP) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}
