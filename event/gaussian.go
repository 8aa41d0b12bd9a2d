package event

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/shufflegauss"
)

// Bounds of the shuffle Gaussian mechanisms (package shufflegauss; ICLR'23
// submission "Shuffle Gaussian mechanism for differential privacy"). All of
// them except gaussian-cor1 inherit Thm 1's worst-case-pair assumption (see
// Assumption).
const (
	BoundICLR23Thm1   = "iclr23-thm1"   // Thm 1, eq. (4), capped by Cor. 1 (shuffle-gaussian)
	BoundGaussianCor1 = "gaussian-cor1" // lambda/(2 sigma^2): no shuffling, no assumption
	BoundICLR23Thm2   = "iclr23-thm2"   // Thm 2, eq. (10) (subsampled-shuffle-gaussian)
	BoundICLR23Eq11   = "iclr23-eq11"   // check-in eq. (11) as a binomial mixture
	BoundICLR23Eq13   = "iclr23-eq13"   // check-in Thm 3, eq. (13)
)

// BoundBestConjecture is the opt-in "best over proven AND conjectured
// bounds": for the shuffle Gaussian mechanisms the minimum over every
// route, the conjectured RDP bounds (Thm 1, Thm 2, eq. (11), eq. (13))
// included; for every other mechanism the same as "best". Pass it wherever
// "best" is passed (Curve, Account, BestWith, a ledger's bound) to opt in;
// a statement it attains by a conjecture is labelled (Result.Conjecture).
// "best" itself is to become the minimum over PROVEN routes only.
const BoundBestConjecture = "best-conjecture"

// IsConjecture reports whether the named bound rests on a conjecture (the
// ICLR'23 Thm 1 worst-case pair): iclr23-thm1, iclr23-thm2, iclr23-eq11,
// iclr23-eq13 and best-conjecture.
func IsConjecture(bound string) bool {
	switch bound {
	case BoundICLR23Thm1, BoundICLR23Thm2, BoundICLR23Eq11, BoundICLR23Eq13, BoundBestConjecture:
		return true
	}
	return false
}

// IsBest reports whether bound asks for a minimum over routes: "" or
// "best", or BoundBestConjecture (the opt-in minimum over proven and
// conjectured bounds).
func IsBest(bound string) bool {
	return bound == "" || bound == accounting.BoundBest || bound == BoundBestConjecture
}

// Assumption states the unproven claim the Gaussian bounds other than
// gaussian-cor1 rest on: Thm 1 of the ICLR'23 submission is the Rényi
// divergence D_lambda(M(D')||M(D)) for the single pair D=(0,...,0),
// D'=(1,0,...,0), which the paper asserts, without a proof we could check,
// to be the worst case over adjacent datasets.
const Assumption = "conjecture (replace-one, numerically checked): ICLR'23 Thm 1's worst-case pair"

// Order grids of the Gaussian mechanisms.
const (
	// gaussianMaxOrder is the largest order of the default grid.
	gaussianMaxOrder = 4096
	// adaptiveMaxOrder is where the check-in and subsampled default grids
	// stop unless the optimum sits at their edge (every check-in order
	// costs one eq. (10) sum per block of k; the subsampled mechanism's
	// inner moments beyond k+1 clients need binary powering).
	adaptiveMaxOrder = 256
)

var gaussianDescriptions = map[string]string{
	BoundICLR23Thm1:      "CONJECTURE (Thm 1's worst-case pair): Thm 1, eq. (4) (shuffle-gaussian)",
	BoundICLR23Thm2:      "CONJECTURE (Thm 1's worst-case pair): Thm 2, eq. (10) (subsampled-shuffle-gaussian)",
	BoundICLR23Eq11:      "CONJECTURE (Thm 1's worst-case pair): eq. (11) as a binomial mixture (checkin-gaussian)",
	BoundICLR23Eq13:      "CONJECTURE (Thm 1's worst-case pair): Thm 3, eq. (13), the Chernoff relaxation of eq. (11)",
	BoundBestConjecture:  "CONJECTURE (opt-in): the minimum over the proven and the conjectured bounds",
	BoundGaussianCor1:    "Cor. 1: lambda/(2 sigma^2), the Gaussian mechanism without shuffling or sampling; no assumption",
	accounting.BoundBest: "at every order the smaller of the mechanism's bound and gaussian-cor1",
}

// gaussianBounds lists the bounds of a Gaussian mechanism: its primary
// bound first, "best" last.
func gaussianBounds(mech string) []Bound {
	var names []string
	switch mech {
	case ShuffleGaussian:
		names = []string{BoundICLR23Thm1, BoundGaussianCor1, BoundBestConjecture, accounting.BoundBest}
	case SubsampledShuffleGaussian:
		names = []string{BoundICLR23Thm2, BoundGaussianCor1, BoundBestConjecture, accounting.BoundBest}
	default:
		names = []string{BoundICLR23Eq11, BoundICLR23Eq13, BoundGaussianCor1, BoundBestConjecture, accounting.BoundBest}
	}
	out := make([]Bound, len(names))
	for i, n := range names {
		out[i] = Bound{Name: n, Description: gaussianDescriptions[n], Conjecture: IsConjecture(n)}
	}
	return out
}

// gaussianCurveKey identifies a curve in gaussianCurves.
type gaussianCurveKey struct {
	e     Event
	bound string
}

// gaussianCurves memoises curves: they cache their moments, so repeated
// evaluations with the same parameters (calibrating the number of rounds,
// or "best" next to its component) cost a table lookup per order.
var gaussianCurves = struct {
	sync.Mutex
	m map[gaussianCurveKey]accounting.RDP
}{m: map[gaussianCurveKey]accounting.RDP{}}

// ResetCaches drops the memoised curves (for benchmarks that time a cold
// start).
func ResetCaches() {
	gaussianCurves.Lock()
	clear(gaussianCurves.m)
	gaussianCurves.Unlock()
	resetSampledGaussianCaches()
}

// gaussianCurve returns the memoised curve of a validated Gaussian event.
func gaussianCurve(e Event, bound string) (accounting.RDP, error) {
	if e.Mechanism == ShuffleGaussian {
		e.K = 0 // k = n and k omitted are the same event
	}
	key := gaussianCurveKey{e: e, bound: bound}
	gaussianCurves.Lock()
	defer gaussianCurves.Unlock()
	if c, ok := gaussianCurves.m[key]; ok {
		return c, nil
	}
	c, err := newGaussianCurve(e, bound)
	if err != nil {
		return nil, err
	}
	if len(gaussianCurves.m) >= 256 { // calibration visits many parameters; bound the memory
		clear(gaussianCurves.m)
	}
	gaussianCurves.m[key] = c
	return c, nil
}

// namedCurve gives a curve the name of the bound it answers (the
// shufflegauss curves are named after their parameters), so that "best"
// reports the winner by bound name.
type namedCurve struct {
	curve accounting.RDP
	name  string
}

func (c namedCurve) Name() string                       { return c.name }
func (c namedCurve) RDP(order float64) (float64, error) { return c.curve.RDP(order) }

// newGaussianCurve builds the curve of bound. "best" is the pointwise
// minimum of the mechanism's primary bound and Cor. 1 (lambda/(2 sigma^2)),
// which holds for all three mechanisms without any assumption: given who
// reports, the output is post-processing of Gaussians whose means differ by
// at most the sensitivity, and the Rényi divergence of a mixture over the
// (data-independent) sampling is at most the largest conditional one (joint
// quasi-convexity).
func newGaussianCurve(e Event, bound string) (accounting.RDP, error) {
	if bound == accounting.BoundBest || bound == BoundBestConjecture {
		primaryName := gaussianBounds(e.Mechanism)[0].Name
		primary, err := newGaussianCurve(e, primaryName)
		if err != nil {
			return nil, err
		}
		return accounting.NewBest(namedCurve{primary, primaryName}, gaussianRDP{sigma: e.Sigma})
	}
	var (
		c   accounting.RDP
		err error
	)
	switch {
	case e.Mechanism == ShuffleGaussian && bound == BoundICLR23Thm1:
		c, err = shufflegauss.NewShuffle(e.Sigma, e.N)
	case bound == BoundGaussianCor1: // valid for all three mechanisms (see above)
		c = gaussianRDP{sigma: e.Sigma}
	case e.Mechanism == SubsampledShuffleGaussian && bound == BoundICLR23Thm2:
		c, err = shufflegauss.NewSubsampled(e.Sigma, e.N, e.K)
	case e.Mechanism == CheckinGaussian && bound == BoundICLR23Eq11:
		c, err = shufflegauss.NewCheckIn(e.Sigma, e.N, e.Rate, shufflegauss.CheckInMixture)
	case e.Mechanism == CheckinGaussian && bound == BoundICLR23Eq13:
		c, err = shufflegauss.NewCheckIn(e.Sigma, e.N, e.Rate, shufflegauss.CheckInChernoff)
	default:
		return nil, e.unknownBound(bound)
	}
	if err != nil {
		return nil, err
	}
	return namedCurve{curve: c, name: bound}, nil
}

// gaussianRDP is Corollary 1 of the ICLR'23 submission: the RDP of the
// Gaussian mechanism without shuffling, lambda/(2 sigma^2) (Mironov 2017,
// Prop. 7), which bounds the shuffled mechanism by post-processing for
// every pair of adjacent datasets, in both directions. It is raised by a
// relative 2^-50 to cover the rounding of the division.
type gaussianRDP struct{ sigma float64 }

func (g gaussianRDP) Name() string { return BoundGaussianCor1 }

func (g gaussianRDP) RDP(order float64) (float64, error) {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return 0, fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	return order / (2 * g.sigma * g.sigma) * (1 + 0x1p-50), nil
}

// gaussianOrders is an order grid of the Gaussian mechanisms: the
// fractional orders of accounting.DefaultOrders below maxOrder and every
// integer from 2 to maxOrder.
func gaussianOrders(maxOrder int) []float64 {
	var o []float64
	for _, a := range accounting.DefaultOrders() {
		if a != math.Trunc(a) && a < float64(maxOrder) {
			o = append(o, a)
		}
	}
	for i := 2; i <= maxOrder; i++ {
		o = append(o, float64(i))
	}
	sort.Float64s(o)
	return o
}

// DefaultOrders returns the order grid `shuffledp account` uses for e when
// --orders is not given: accounting.DefaultOrders for the LDP mechanisms;
// every integer 2..4096 (and the fractional orders below) for
// shuffle-gaussian, whose best order sits just below a sharp transition
// near 2 sigma^2 log n, between the points of a sparse grid; every integer
// 2..256 for subsampled-shuffle-gaussian and checkin-gaussian, which
// Epsilon widens (see wideOrders) when the optimum is at 256.
func (e Event) DefaultOrders() []float64 {
	switch e.Mechanism {
	case ShuffleGaussian:
		return gaussianOrders(gaussianMaxOrder)
	case SubsampledShuffleGaussian, CheckinGaussian:
		return gaussianOrders(adaptiveMaxOrder)
	}
	return accounting.DefaultOrders()
}

// adaptive reports whether e's default grid is widened when the optimum
// sits at its edge.
func (e Event) adaptive() bool {
	return e.Mechanism == SubsampledShuffleGaussian || e.Mechanism == CheckinGaussian
}

// wideOrders is the grid used when the optimum sits at the edge of an
// adaptive default grid: for subsampled-shuffle-gaussian every integer up
// to 4096, for checkin-gaussian the default grid joined with the sparse
// accounting.DefaultOrders (each check-in order costs a sum over blocks of
// k); the default grid otherwise.
func (e Event) wideOrders() []float64 {
	switch e.Mechanism {
	case SubsampledShuffleGaussian:
		return gaussianOrders(gaussianMaxOrder)
	case CheckinGaussian:
		return union(e.DefaultOrders(), accounting.DefaultOrders())
	}
	return e.DefaultOrders()
}

// union returns the sorted union of order grids without duplicates.
func union(grids ...[]float64) []float64 {
	var o []float64
	for _, g := range grids {
		o = append(o, g...)
	}
	sort.Float64s(o)
	return slices.Compact(o)
}
