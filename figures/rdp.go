package figures

import (
	"fmt"

	"github.com/shuffledp/shuffledp/accounting"
)

// RDPBound is a line computed by the Rényi-DP accountant (package
// accounting): the named per-round RDP curve of the subsampled shuffle
// model, composed over T rounds and converted to (eps, delta) at the best
// order of the default grid.
type RDPBound struct {
	name string
}

// RDPBounds returns the accountant's lines of the papers' figures:
// neurips21-upper (Thm 1), neurips21-lower (Thm 2, a lower bound),
// ccs21+wbk19 (CCS'21 Thm 3.1 at n := k with WBK19 subsampling) and the
// accountant's own best (the minimum over its upper bounds at every order).
func RDPBounds() []Bound {
	return []Bound{
		RDPBound{accounting.BoundNeurIPS21Upper},
		RDPBound{accounting.BoundNeurIPS21Lower},
		RDPBound{accounting.BoundCCS21WBK19},
		RDPBound{accounting.BoundBest},
	}
}

// Label implements Bound. The accountant's best is labelled "rdp-best" so
// that it is not confused with the figure's overall best line.
func (b RDPBound) Label() string {
	if b.name == accounting.BoundBest {
		return "rdp-best"
	}
	return b.name
}

// Upper implements Bound.
func (b RDPBound) Upper() bool { return b.name != accounting.BoundNeurIPS21Lower }

// Epsilon implements Bound.
func (b RDPBound) Epsilon(s Setting) (float64, error) {
	curve, err := accounting.NewBound(accounting.MechanismSubsampledShuffle, b.name, s.N, s.K, s.Eps0)
	if err != nil {
		return 0, err
	}
	if s.Steps == 0 {
		return 0, nil
	}
	acct, err := accounting.NewAccountant(nil)
	if err != nil {
		return 0, err
	}
	if err := acct.Compose64(curve, s.Steps); err != nil {
		return 0, fmt.Errorf("%s: %w", b.name, err)
	}
	g, err := acct.Epsilon(s.Delta)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.name, err)
	}
	return g.Epsilon, nil
}
