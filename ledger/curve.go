package ledger

import (
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
)

// memoCurve is an RDP curve that evaluates its source once per order and
// then answers from memory, so that composing an event the ledger has seen
// before costs a map look-up per order of the grid, however expensive the
// bound (a few ms for `best` at n = 60,000). Its values, and its errors, are
// exactly the source's: an accountant composing it gets the same sums, bit
// for bit, as one composing the source.
type memoCurve struct {
	src accounting.RDP

	mu   sync.Mutex
	vals map[float64]memoValue
}

type memoValue struct {
	v   float64
	err error
}

func newMemoCurve(src accounting.RDP) *memoCurve {
	return &memoCurve{src: src, vals: map[float64]memoValue{}}
}

// Name forwards the source's name.
func (c *memoCurve) Name() string { return c.src.Name() }

// IsLowerBound forwards the source's kind.
func (c *memoCurve) IsLowerBound() bool { return accounting.IsLower(c.src) }

// RDP returns the source's value at order, evaluating it on first use.
func (c *memoCurve) RDP(order float64) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.vals[order]; ok {
		return m.v, m.err
	}
	v, err := c.src.RDP(order)
	c.vals[order] = memoValue{v, err}
	return v, err
}

// winnerCurve is a curve that names the component bound winning at an
// order (accounting.BestCurve).
type winnerCurve interface {
	RDPWinner(order float64) (float64, string, error)
}

// memoWinnerCurve is a memoCurve over a winnerCurve: it forwards RDPWinner
// to the source, so that route.AccountCurves names the winner of "best"
// as it does for the bare curve, memoized too (the ledger names the
// winner of its statement every round).
type memoWinnerCurve struct {
	*memoCurve
	w       winnerCurve
	winners map[float64]memoWinner
}

type memoWinner struct {
	v    float64
	name string
	err  error
}

// RDPWinner returns the source's value and winner at order, evaluating
// them on first use.
func (c memoWinnerCurve) RDPWinner(order float64) (float64, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.winners[order]; ok {
		return m.v, m.name, m.err
	}
	v, name, err := c.w.RDPWinner(order)
	c.winners[order] = memoWinner{v, name, err}
	return v, name, err
}

// memoize returns src memoized: a memoWinnerCurve if src names its winner,
// a *memoCurve otherwise.
func memoize(src accounting.RDP) accounting.RDP {
	m := newMemoCurve(src)
	if w, ok := src.(winnerCurve); ok {
		return memoWinnerCurve{m, w, map[float64]memoWinner{}}
	}
	return m
}
