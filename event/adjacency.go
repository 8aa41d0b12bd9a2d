package event

import (
	"fmt"
	"slices"
	"strings"
)

// Adjacency relations of Event.Adjacency: which pairs of datasets an
// epsilon is stated for. The clients' gradients are clipped to l2 norm at
// most C and the Gaussian noise is N(0, C^2 sigma^2 I), so sigma is in
// units of C.
const (
	// AdjacencyReplaceOne: the datasets differ in one client's input,
	// replaced by any other input of the domain. Two clipped gradients are
	// up to 2C apart. The eps0-LDP mechanisms are bounded for it natively;
	// for the shuffle Gaussian mechanisms it is the default of every
	// producer (shuffledp account and train, the networked shuffler).
	AdjacencyReplaceOne = "replace-one"
	// AdjacencyZeroOut: one client's input is replaced by zero (the
	// datasets' sums differ by at most C). It is the relation of the
	// ICLR'23 submission's Thm 1 pair (0,...,0) vs (1,0,...,0) in units of
	// sigma, so the paper's own numbers are zero-out numbers.
	AdjacencyZeroOut = "zero-out"
	// AdjacencyAddRemove: one client (record) is added or removed, the
	// relation of the sampled Gaussian mechanism of DP-SGD (MTZ19) and its
	// default. The sums differ by at most C, as for zero-out, and MTZ19's
	// curve bounds both.
	AdjacencyAddRemove = "add-remove"
)

// Adjacencies returns the adjacency names, sorted.
func Adjacencies() []string {
	return []string{AdjacencyAddRemove, AdjacencyReplaceOne, AdjacencyZeroOut}
}

// DefaultAdjacency is the adjacency new events of mechanism carry when the
// user names none (the --adjacency default): add-remove for
// sampled-gaussian, replace-one for every other mechanism.
func DefaultAdjacency(mechanism string) string {
	if mechanism == SampledGaussian {
		return AdjacencyAddRemove
	}
	return AdjacencyReplaceOne
}

// EffectiveAdjacency is the relation e's curve is for: e.Adjacency, or, if
// it is empty, the legacy meaning of an event written before the field
// existed: zero-out for the shuffle Gaussian mechanisms (their curves were
// evaluated at sigma as given), add-remove for sampled-gaussian,
// replace-one for the eps0-LDP mechanisms. "" for an unknown mechanism.
func (e Event) EffectiveAdjacency() string {
	switch {
	case e.Adjacency != "":
		return e.Adjacency
	case IsGaussian(e.Mechanism):
		return AdjacencyZeroOut
	case e.Mechanism == SampledGaussian:
		return AdjacencyAddRemove
	case IsLDP(e.Mechanism):
		return AdjacencyReplaceOne
	}
	return ""
}

// validateAdjacency checks e.Adjacency against the mechanism (known to be
// valid). Errors name the flag --adjacency.
func (e Event) validateAdjacency() error {
	a := e.Adjacency
	if a == "" {
		return nil
	}
	if !slices.Contains(Adjacencies(), a) {
		return fmt.Errorf("--adjacency must be one of %s, got %q", strings.Join(Adjacencies(), ", "), a)
	}
	switch {
	case IsLDP(e.Mechanism) && a != AdjacencyReplaceOne:
		return fmt.Errorf("--adjacency %s does not apply to --mechanism %s: eps0-LDP reports are bounded for replace-one adjacency (any report's input replaced by any other); omit it or give %s",
			a, e.Mechanism, AdjacencyReplaceOne)
	case IsGaussian(e.Mechanism) && a == AdjacencyAddRemove:
		return fmt.Errorf("--adjacency %s does not apply to --mechanism %s: its bound is for a fixed population of n clients; use %s (any gradient replaced by any other, the default) or %s (replaced by zero, the ICLR'23 paper's convention)",
			a, e.Mechanism, AdjacencyReplaceOne, AdjacencyZeroOut)
	case e.Mechanism == SampledGaussian && a == AdjacencyReplaceOne:
		return fmt.Errorf("--adjacency %s is not supported by --mechanism %s: under Poisson sampling the replace-one pair is a mixture over whether the changed client is sampled in which both datasets contribute, not the add-remove mixture at sigma/2, and MTZ19's curve does not bound it; use %s (the default) or %s",
			a, SampledGaussian, AdjacencyAddRemove, AdjacencyZeroOut)
	}
	return nil
}

// ComposedAdjacency is the relation a composition of events is stated for
// (route.Result.Adjacency): their common EffectiveAdjacency, or zero-out when
// they differ; "" for no events. Every
// curve bounds zero-out pairs: a replace-one curve covers every pair within
// 2C, the zero-out pairs among them (0 lies in the clipped domain), and
// MTZ19's add-remove curve is also the zero-out one (replacing a record by
// zero removes its contribution to the sum).
func ComposedAdjacency(events []Composed) string {
	var a string
	for i, c := range events {
		ea := c.Event.EffectiveAdjacency()
		if i > 0 && ea != a {
			return AdjacencyZeroOut
		}
		a = ea
	}
	return a
}
