package ledger

import (
	"math"
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

// warm evaluates the largest integer order of the grid first, as
// event.Epsilon does for the Gaussian curves: they extend their moment
// tables geometrically on demand, so asking for the top order first builds
// a table once.
func (c *memoCurve) warm(orders []float64) {
	for i := len(orders) - 1; i >= 0; i-- {
		if o := orders[i]; o == math.Trunc(o) && o >= 2 && o <= 1<<16 {
			_, _ = c.RDP(o)
			return
		}
	}
}
