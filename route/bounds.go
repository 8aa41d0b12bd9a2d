package route

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
)

// Bound describes a bound that turns an event into an RDP curve.
type Bound struct {
	// Name is the --bound value, e.g. "neurips21-upper".
	Name string
	// Description is one line for help texts.
	Description string
	// Lower is true for lower bounds on the RDP curve: they show how tight
	// an RDP upper bound is and guarantee nothing; converted to
	// (epsilon, delta) they are not lower bounds on the mechanism's epsilon
	// either (accounting.KindRDPLower).
	Lower bool
	// Conjecture is true for a bound resting on an unproven claim
	// (IsConjecture): never part of "best", labelled wherever printed.
	Conjecture bool
}

// Bounds returns the bounds applicable to e.Mechanism, "best" last; nil for
// an unknown mechanism. For the LDP mechanisms they are the bounds of
// accounting.BoundNames that accounting.NewBound constructs for the
// mechanism with proper subsampling (k < n), so that a bound added there
// appears here.
func Bounds(e event.Event) []Bound {
	switch {
	case event.IsLDP(e.Mechanism):
		return slices.Clone(ldpBounds(e.Mechanism))
	case event.IsGaussian(e.Mechanism):
		return gaussianBounds(e.Mechanism)
	case e.Mechanism == event.SampledGaussian:
		return sampledGaussianBounds()
	}
	return nil
}

// boundNames returns the names of Bounds(e).
func boundNames(e event.Event) []string {
	var s []string
	for _, b := range Bounds(e) {
		s = append(s, b.Name)
	}
	return s
}

var ldpBoundCache sync.Map // mechanism -> []Bound

// ldpBounds probes accounting.NewBound at a small parameter set with k < n
// (n=4, k=2, eps0=1), where every bound is cheap to construct; a bound the
// mechanism cannot use (ccs21-lower for subsampled-shuffle) is refused there.
func ldpBounds(mech string) []Bound {
	if b, ok := ldpBoundCache.Load(mech); ok {
		return b.([]Bound)
	}
	var out []Bound
	for _, name := range accounting.BoundNames() {
		c, err := accounting.NewBound(mech, name, 4, 2, 1)
		if err != nil {
			continue
		}
		out = append(out, Bound{Name: name, Description: accounting.BoundDescription(name), Lower: accounting.IsLower(c)})
	}
	ldpBoundCache.Store(mech, out)
	return out
}

// Curve returns the per-round RDP curve of e under the named bound; "" or
// "best" is the best PROVEN upper bound: for the LDP mechanisms
// accounting.Best, for the Gaussian mechanisms the pointwise minimum of
// their proven bounds (gaussian.go). BoundBestConjecture opts in to the
// conjectured Gaussian bounds too (for the other mechanisms it is "best").
// The event is validated first. How the adjacency sets the noise
// multiplier of each Gaussian bound: newGaussianCurve.
func Curve(e event.Event, bound string) (accounting.RDP, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if bound == "" {
		bound = accounting.BoundBest
	}
	if event.IsGaussian(e.Mechanism) {
		return gaussianCurve(e, bound)
	}
	if bound == BoundBestConjecture {
		bound = accounting.BoundBest // no conjecture applies to e's mechanism
	}
	if e.Mechanism == event.SampledGaussian {
		return sampledGaussianCurve(e, bound)
	}
	if !slices.Contains(accounting.BoundNames(), bound) {
		return nil, unknownBound(e, bound)
	}
	return accounting.NewBound(e.Mechanism, bound, e.N, e.Reports(), e.Eps0)
}

// UnknownBoundError is the error of Curve for a bound name that does not
// apply to the event's mechanism; Valid lists the names that do.
type UnknownBoundError struct {
	Bound, Mechanism string
	Valid            []string
}

func (err *UnknownBoundError) Error() string {
	return fmt.Sprintf("--bound %q does not apply to --mechanism %s; use one of %s",
		err.Bound, err.Mechanism, strings.Join(err.Valid, ", "))
}

func unknownBound(e event.Event, bound string) error {
	return &UnknownBoundError{Bound: bound, Mechanism: e.Mechanism, Valid: boundNames(e)}
}
