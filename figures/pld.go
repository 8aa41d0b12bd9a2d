package figures

import (
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// PLDLabel and CertifiedLowerLabel label the PLD curve and the certified
// lower curve of the figures.
const (
	PLDLabel            = "pld"
	CertifiedLowerLabel = "certified-lower"
)

// PLDBound is the PLD route's epsilon (route.PLD: the clone pair's privacy
// loss distribution composed by FFT, pessimistic side): an upper bound.
type PLDBound struct{}

// Label implements Bound.
func (PLDBound) Label() string { return PLDLabel }

// Upper implements Bound.
func (PLDBound) Upper() bool { return true }

// Epsilon implements Bound.
func (PLDBound) Epsilon(s Setting) (float64, error) {
	r, err := route.PLD([]event.Composed{{Event: settingEvent(s), Count: s.Steps}}, s.Delta)
	return r.Upper, err
}

// CertifiedLowerBound is the certified lower end of route.CertifiedInterval:
// the exact epsilon of shuffled binary or 3-ary randomized response on a
// neighbouring pair (optimistic PLD), a true lower bound on the worst case
// of the mechanism, unlike neurips21-lower (a lower bound on the RDP curve
// only).
type CertifiedLowerBound struct{}

// Label implements Bound.
func (CertifiedLowerBound) Label() string { return CertifiedLowerLabel }

// Upper implements Bound: a lower bound.
func (CertifiedLowerBound) Upper() bool { return false }

// Kind is accounting.KindCertifiedLower (the legend says what it bounds).
func (CertifiedLowerBound) Kind() string { return accounting.KindCertifiedLower }

// Epsilon implements Bound.
func (CertifiedLowerBound) Epsilon(s Setting) (float64, error) {
	c, err := route.CertifiedInterval([]event.Composed{{Event: settingEvent(s), Count: s.Steps}}, s.Delta)
	return c.Lower, err
}

func settingEvent(s Setting) event.Event {
	return event.Event{Mechanism: event.SubsampledShuffle, N: s.N, K: s.K, Eps0: s.Eps0}
}

// PLDBounds returns the PLD curve and the certified lower curve.
func PLDBounds() []Bound { return []Bound{PLDBound{}, CertifiedLowerBound{}} }
