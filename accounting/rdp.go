// Package accounting bounds the privacy of the shuffle model with Rényi
// differential privacy (RDP): per-round RDP curves of the shuffle and
// subsampled-shuffle models, their composition over rounds, and conversion
// to (epsilon, delta)-DP.
//
// A mechanism is an RDP curve: order -> epsilon of one invocation, an upper
// bound unless the curve says it is a lower bound. The Accountant composes
// curves (heterogeneous rounds compose by adding per-order values) and
// converts the total to (epsilon, delta) at the best order of its grid.
package accounting

import (
	"errors"
	"fmt"
	"math"
)

// ErrOrderUnsupported is wrapped by errors from RDP curves evaluated at an
// order where the theorem behind them does not hold (for example a
// non-integer order for a bound proved for integer orders only).
var ErrOrderUnsupported = errors.New("order not supported by this bound")

// RDP is the Rényi-DP curve of one invocation of a mechanism.
type RDP interface {
	// Name identifies the bound, e.g. "neurips21-upper".
	Name() string
	// RDP returns epsilon(order) for one invocation. The error wraps
	// ErrOrderUnsupported where the bound does not hold at that order.
	RDP(order float64) (float64, error)
}

// LowerBound is implemented by curves that are lower bounds on the RDP of a
// mechanism (they show how tight an RDP upper bound is; they are not privacy
// guarantees). The Accountant refuses to compose them with upper bounds.
//
// Converted to (epsilon, delta) by EpsilonFromRDP, such a curve gives a
// lower bound on what the RDP route can certify, NOT a lower bound on the
// mechanism's epsilon: the conversion only over-estimates, so the converted
// value can exceed the mechanism's exact epsilon (RDPLowerNote). Label such
// values KindRDPLower.
type LowerBound interface {
	IsLowerBound() bool
}

// Kinds of an epsilon a bound reports, for labels (CLI, JSON, figures).
const (
	// KindUpper: a valid upper bound on the mechanism's epsilon (a
	// guarantee).
	KindUpper = "upper"
	// KindRDPLower: a lower bound on the RDP curve converted to
	// (epsilon, delta): a lower bound on what the RDP route can certify,
	// neither a guarantee nor a lower bound on the mechanism's epsilon.
	KindRDPLower = "rdp-lower"
	// KindCertifiedLower: the exact epsilon of a concrete mechanism and
	// neighbouring pair (rounded down): a true lower bound on the worst
	// case.
	KindCertifiedLower = "certified-lower"
)

// RDPLowerNote explains KindRDPLower in one line.
const RDPLowerNote = "lower bound on the RDP curve, converted: not a guarantee, and not a lower bound on epsilon"

// IsLower reports whether the curve declares itself a lower bound.
func IsLower(m RDP) bool {
	lb, ok := m.(LowerBound)
	return ok && lb.IsLowerBound()
}

// checkOrder validates a Rényi order: finite and > 1; with integer set, it
// must also be an integer (the theorem is proved for integer orders only).
func checkOrder(order float64, integer bool) error {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	if integer && order != math.Trunc(order) {
		return fmt.Errorf("order %g: %w (integer orders only)", order, ErrOrderUnsupported)
	}
	return nil
}
