package accounting

import (
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// Bound names, stable: the CLI and scripts depend on them.
const (
	BoundNeurIPS21Upper = "neurips21-upper"
	BoundNeurIPS21Lower = "neurips21-lower"
	BoundCCS21Upper1    = "ccs21-upper1"
	BoundCCS21Upper2    = "ccs21-upper2"
	BoundCCS21Lower     = "ccs21-lower"
	BoundCCS21WBK19     = "ccs21+wbk19"
	BoundPureDP         = "pure-dp"
	BoundClonesRDP      = "clones-rdp"
	BoundKRR3Lower      = "krr3-lower"
	BoundBest           = "best"
)

// PureDP is the RDP implied by pure DP: a shuffled eps0-LDP randomizer is
// eps0-DP (one client's report changes by a factor e^eps0 at most), and
// sampling k of n without replacement makes it eps'-DP with
// eps' = log(1 + gamma (e^eps0 - 1)) (Balle, Barthe, Gaboardi 2018, Thm 9,
// substitution neighbours). eps'-DP implies (lambda, min(eps', lambda eps'^2/2))-RDP
// for every lambda > 1 (Bun, Steinke 2016, Prop. 3.3). Weak for large k, it
// wins only for tiny populations or very small eps0.
func PureDP(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	gamma := float64(k) / float64(n)
	e := math.Log1p(gamma * math.Expm1(eps0))
	if eps0 > 30 { // log(1 - gamma + gamma e^eps0) without overflow
		e = logmath.LogAddExp(math.Log1p(-gamma), logmath.Log(gamma)+eps0)
	}
	return &pureDP{eps: e}, nil
}

type pureDP struct{ eps float64 }

func (p *pureDP) Name() string { return BoundPureDP }
func (p *pureDP) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	return finite(conservative(math.Min(p.eps, order*p.eps*p.eps/2)), order, p.Name())
}

// BestCurve is the pointwise minimum of several valid upper bounds: at every
// order it takes the smallest bound that holds there. Winner reports which.
type BestCurve struct {
	parts []RDP
}

// NewBest combines upper-bound curves; lower bounds are rejected.
func NewBest(parts ...RDP) (*BestCurve, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("best: no curves")
	}
	for _, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("best: nil curve")
		}
		if IsLower(p) {
			return nil, fmt.Errorf("best: %s is a lower bound", p.Name())
		}
	}
	return &BestCurve{parts: parts}, nil
}

// Best returns the best valid upper bound for the subsampled shuffle model
// (k of n sampled per round, eps0-LDP): the minimum at every order of
// the clone-pair bound (ClonesRDP), NeurIPS'21 Thm 1, the ccs21+wbk19
// baseline and the pure-DP bound, and when k = n (no subsampling) also
// CCS'21 Thms 3.1 and 3.3.
func Best(n, k int64, eps0 float64) (*BestCurve, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	var parts []RDP
	cl, _ := ClonesRDP(n, k, eps0)
	up, _ := SubsampledShuffleUpper(n, k, eps0)
	parts = append(parts, cl, up)
	if k == n {
		u1, _ := ShuffleUpper1(n, eps0)
		u2, _ := ShuffleUpper2(n, eps0)
		parts = append(parts, u1, u2)
	} else {
		w, _ := CCS21WBK19(n, k, eps0)
		parts = append(parts, w)
	}
	p, _ := PureDP(n, k, eps0)
	parts = append(parts, p)
	return NewBest(parts...)
}

// Name returns "best".
func (b *BestCurve) Name() string { return BoundBest }

// RDP returns the smallest component bound valid at order.
func (b *BestCurve) RDP(order float64) (float64, error) {
	v, _, err := b.RDPWinner(order)
	return v, err
}

// RDPWinner is RDP together with the name of the winning component.
func (b *BestCurve) RDPWinner(order float64) (float64, string, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, "", err
	}
	best, name := math.Inf(1), ""
	for _, p := range b.parts {
		v, err := p.RDP(order)
		if err != nil {
			if isUnsupported(err) {
				continue
			}
			return 0, "", err
		}
		if v < best {
			best, name = v, p.Name()
		}
	}
	if name == "" {
		return 0, "", fmt.Errorf("best at order %g: %w by every component", order, ErrOrderUnsupported)
	}
	return best, name, nil
}

// Parts returns the component curves.
func (b *BestCurve) Parts() []RDP { return append([]RDP(nil), b.parts...) }

// Mechanism names accepted by NewBound.
const (
	MechanismShuffle           = "shuffle"
	MechanismSubsampledShuffle = "subsampled-shuffle"
)

// NewBound returns the named RDP curve for a mechanism: "shuffle" (n clients
// all reporting, k ignored) or "subsampled-shuffle" (k of n per round).
// For the subsampled mechanism, ccs21-upper1/2 are CCS'21 evaluated at n := k
// (valid since subsampling never hurts privacy, but loose), and ccs21-lower
// is refused (it is not a lower bound there: use neurips21-lower).
func NewBound(mechanism, bound string, n, k int64, eps0 float64) (RDP, error) {
	switch mechanism {
	case MechanismShuffle:
		k = n
	case MechanismSubsampledShuffle:
	default:
		return nil, fmt.Errorf("mechanism must be %q or %q, got %q", MechanismShuffle, MechanismSubsampledShuffle, mechanism)
	}
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	switch bound {
	case BoundNeurIPS21Upper:
		return SubsampledShuffleUpper(n, k, eps0)
	case BoundNeurIPS21Lower:
		return SubsampledShuffleLower(n, k, eps0)
	case BoundCCS21Upper1:
		return ShuffleUpper1(k, eps0)
	case BoundCCS21Upper2:
		return ShuffleUpper2(k, eps0)
	case BoundCCS21Lower:
		if k != n {
			return nil, fmt.Errorf("bound %s is a lower bound for --mechanism shuffle only; use %s", bound, BoundNeurIPS21Lower)
		}
		return ShuffleLower(n, eps0)
	case BoundCCS21WBK19:
		return CCS21WBK19(n, k, eps0)
	case BoundPureDP:
		return PureDP(n, k, eps0)
	case BoundClonesRDP:
		return ClonesRDP(n, k, eps0)
	case BoundKRR3Lower:
		return KRR3Lower(n, k, eps0)
	case BoundBest:
		return Best(n, k, eps0)
	}
	return nil, fmt.Errorf("bound %q unknown; want one of %v", bound, BoundNames())
}

// BoundNames lists the RDP bounds NewBound accepts.
func BoundNames() []string {
	return []string{BoundNeurIPS21Upper, BoundNeurIPS21Lower, BoundCCS21Upper1, BoundCCS21Upper2,
		BoundCCS21Lower, BoundCCS21WBK19, BoundPureDP, BoundClonesRDP, BoundKRR3Lower, BoundBest}
}
