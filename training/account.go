package training

import (
	"fmt"
	"math"
	"sort"

	"github.com/shuffledp/shuffledp/accounting"
)

// subsampledShuffleCurve returns the per-round RDP curve the ledger
// composes for n clients, k sampled per round (without replacement) and an
// eps0-LDP randomizer: accounting.Best, at every order the smallest valid
// upper bound among NeurIPS'21 Theorem 1, the CCS'21 Thm 3.1 + WBK19
// subsampling baseline and the pure-DP bound (and CCS'21 Thms 3.1/3.3 when
// k = n).
func subsampledShuffleCurve(n, k int, eps0 float64) (accounting.RDP, error) {
	return accounting.Best(int64(n), int64(k), eps0)
}

// tabulatedCurve is an RDP curve evaluated once on the accountant's default
// order grid (a few ms for the best bound at n = 60,000), so that the
// ledger's two accountants, and a ledger rebuilt on resume, do not evaluate
// it again. Its values are exactly the underlying curve's at those orders;
// other orders are reported unsupported, never interpolated.
type tabulatedCurve struct {
	src    accounting.RDP
	orders []float64 // sorted
	values []float64 // +Inf where src does not support the order
}

func tabulate(src accounting.RDP) (*tabulatedCurve, error) {
	orders := accounting.DefaultOrders()
	sort.Float64s(orders)
	values, err := accounting.EvaluateCurve(src, orders)
	if err != nil {
		return nil, err
	}
	return &tabulatedCurve{src: src, orders: orders, values: values}, nil
}

func (c *tabulatedCurve) Name() string { return c.src.Name() }

func (c *tabulatedCurve) RDP(order float64) (float64, error) {
	i := sort.SearchFloat64s(c.orders, order)
	if i == len(c.orders) || c.orders[i] != order || math.IsInf(c.values[i], 1) {
		return 0, fmt.Errorf("order %g: %w (not on the tabulated grid)", order, accounting.ErrOrderUnsupported)
	}
	return c.values[i], nil
}

// IsLowerBound forwards the underlying curve's kind.
func (c *tabulatedCurve) IsLowerBound() bool { return accounting.IsLower(c.src) }
