package route

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/internal/logmath"
	"github.com/shuffledp/shuffledp/shufflegauss"
)

// Bounds of the shuffle Gaussian mechanisms. The PROVEN ones hold for
// every pair of adjacent datasets (docs/proofs/shuffle-gaussian.md); "best"
// is their pointwise minimum. The CONJECTURE ones (package shufflegauss;
// ICLR'23 submission "Shuffle Gaussian mechanism for differential
// privacy", Thm 1, Thm 2, eq. (11), eq. (13)) rest on Thm 1's claim that
// D=(0..0), D'=(1,0..0) is the worst-case pair: FALSE at sigma under
// zero-out (n=2, sigma=1, order 2: D_2 = 0.951458 for the pair (x,-x) vs
// (0,-x), |x|=1, against Thm 1's 0.620115), unrefuted under replace-one
// (the curves at sigma/2), where it is a numerically checked conjecture.
// They are evaluated at sigma/2 under both adjacencies (every zero-out
// pair is a replace-one pair) and are never part of "best"; they enter
// only BoundBestConjecture, or when asked for by name.
const (
	BoundICLR23Thm1   = "iclr23-thm1"   // conjecture: Thm 1, eq. (4), capped by Cor. 1 (shuffle-gaussian)
	BoundGaussianCor1 = "gaussian-cor1" // proven: lambda/(2 sigma^2) at the sensitivity (no shuffling)
	BoundICLR23Thm2   = "iclr23-thm2"   // conjecture: Thm 2, eq. (10) (subsampled-shuffle-gaussian)
	BoundICLR23Eq11   = "iclr23-eq11"   // conjecture: check-in eq. (11) as a binomial mixture
	BoundICLR23Eq13   = "iclr23-eq13"   // conjecture: check-in Thm 3, eq. (13)
	// BoundWBK19Cor1 (proven, subsampled-shuffle-gaussian): WBK19 Thm 9
	// (subsampling k of n without replacement, replace-one) over Cor. 1's
	// curve at sigma/2 (the Gaussian vector of the k reports, sensitivity
	// 2C), for both adjacencies.
	BoundWBK19Cor1 = "wbk19-cor1"
	// BoundCheckinSlot (proven, checkin-gaussian): the Rényi divergence of
	// the changed client's slot (absent with probability 1-rate, else its
	// Gaussian report), log(1 - p + p e^{lambda(lambda-1)/(2 s^2)})/(lambda-1),
	// s = sigma (zero-out) or sigma/2 (replace-one).
	BoundCheckinSlot = "checkin-slot"
	// BoundBestConjecture is the opt-in "best over proven AND conjectured
	// bounds": for the shuffle Gaussian mechanisms the pointwise minimum of
	// every RDP bound above, compared (BestWith) with the proven PLD route;
	// for every other mechanism the same as "best". A statement under it is
	// labelled a conjecture (Result.Conjecture) whenever a conjecture bound
	// attains it. Pass it wherever "best" is passed (Curve, Account, BestWith,
	// a ledger's bound) to opt in.
	BoundBestConjecture = "best-conjecture"
)

// Assumption states the unproven claim the conjecture bounds rest on
// (Result.Assumption, and the note of `shuffledp account`).
const Assumption = "conjecture (replace-one, numerically checked): ICLR'23 Thm 1's worst-case pair"

// IsConjecture reports whether the named bound rests on a conjecture (the
// ICLR'23 Thm 1 worst-case pair): iclr23-thm1, iclr23-thm2, iclr23-eq11,
// iclr23-eq13 and best-conjecture. Every other bound is proven.
func IsConjecture(bound string) bool {
	switch bound {
	case BoundICLR23Thm1, BoundICLR23Thm2, BoundICLR23Eq11, BoundICLR23Eq13, BoundBestConjecture:
		return true
	}
	return false
}

// IsBest reports whether bound asks for a minimum over routes: "" or
// "best" (proven routes only), or BoundBestConjecture (the opt-in minimum
// over proven and conjectured bounds).
func IsBest(bound string) bool {
	return bound == "" || bound == accounting.BoundBest || bound == BoundBestConjecture
}

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
	BoundICLR23Thm1:      "CONJECTURE (replace-one, numerically checked; at sigma/2 for both adjacencies): Thm 1, eq. (4) (shuffle-gaussian)",
	BoundICLR23Thm2:      "CONJECTURE (replace-one, numerically checked; at sigma/2 for both adjacencies): Thm 2, eq. (10) (subsampled-shuffle-gaussian)",
	BoundICLR23Eq11:      "CONJECTURE (replace-one, numerically checked; at sigma/2 for both adjacencies): eq. (11) as a binomial mixture (checkin-gaussian)",
	BoundICLR23Eq13:      "CONJECTURE (replace-one, numerically checked; at sigma/2 for both adjacencies): Thm 3, eq. (13), the Chernoff relaxation of eq. (11)",
	BoundGaussianCor1:    "proven: Cor. 1, lambda/(2 s^2), the Gaussian mechanism without shuffling (s = sigma zero-out, sigma/2 replace-one)",
	BoundWBK19Cor1:       "proven: WBK19 Thm 9 (k of n without replacement) over Cor. 1 at sigma/2, both adjacencies",
	BoundCheckinSlot:     "proven: the changed client's slot, log(1-p+p e^{lambda(lambda-1)/(2 s^2)})/(lambda-1)",
	accounting.BoundBest: "at every order the smallest PROVEN bound (conjectures excluded)",
	BoundBestConjecture:  "CONJECTURE (opt-in): at every order the smallest of the proven and the conjectured bounds",
}

// provenGaussianBounds lists the proven RDP bounds of a Gaussian mechanism.
func provenGaussianBounds(mech string) []string {
	switch mech {
	case event.ShuffleGaussian:
		return []string{BoundGaussianCor1}
	case event.SubsampledShuffleGaussian:
		return []string{BoundGaussianCor1, BoundWBK19Cor1}
	}
	return []string{BoundGaussianCor1, BoundCheckinSlot}
}

// conjectureGaussianBounds lists the conjectured RDP bounds of a Gaussian
// mechanism.
func conjectureGaussianBounds(mech string) []string {
	switch mech {
	case event.ShuffleGaussian:
		return []string{BoundICLR23Thm1}
	case event.SubsampledShuffleGaussian:
		return []string{BoundICLR23Thm2}
	}
	return []string{BoundICLR23Eq11, BoundICLR23Eq13}
}

// gaussianBounds lists the bounds of a Gaussian mechanism: the proven ones,
// the conjectures, best-conjecture, and "best" last.
func gaussianBounds(mech string) []Bound {
	names := append(provenGaussianBounds(mech), conjectureGaussianBounds(mech)...)
	names = append(names, BoundBestConjecture, accounting.BoundBest)
	out := make([]Bound, len(names))
	for i, n := range names {
		out[i] = Bound{Name: n, Description: gaussianDescriptions[n], Conjecture: IsConjecture(n)}
	}
	return out
}

// gaussianCurveKey identifies a curve in gaussianCurves.
type gaussianCurveKey struct {
	e     event.Event
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
func gaussianCurve(e event.Event, bound string) (accounting.RDP, error) {
	if e.Mechanism == event.ShuffleGaussian {
		e.K = 0 // k = n and k omitted are the same event
	}
	e.Adjacency = e.EffectiveAdjacency()
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

// How the adjacency enters the Gaussian curves (newGaussianCurve; the relations are package event's, adjacency.go): under
// zero-out the changed client's clipped input moves by at most C (the unit
// of sigma), under replace-one by at most 2C, so a bound on the Gaussian
// report of the changed client alone (Cor. 1, the check-in slot, the
// Gaussian PLD pair) is evaluated at sigma under zero-out and at sigma/2
// under replace-one. The WOR subsampled bounds compare the changed client
// with another sampled client, up to 2C apart under either relation:
// sigma/2 for both. The ICLR'23 conjectures (Thm 1's worst-case pair) are
// evaluated at sigma/2 for both relations: at sigma they are refuted under
// zero-out (docs/proofs/shuffle-gaussian.md), and every zero-out pair is a
// replace-one pair (0 lies in the clipped domain), so zero-out may use
// whatever replace-one uses.

// newGaussianCurve builds the curve of bound for e (Adjacency set to its
// effective relation). "best" is the pointwise minimum of the proven
// bounds; best-conjecture adds the conjectures. Every component is named
// after its bound, so that "best" reports the winner by bound name.
//
// Sensitivity: under zero-out one client's input moves by at most C, under
// replace-one by at most 2C. A proven bound that only compares the changed
// client's Gaussian report with itself (Cor. 1, the check-in slot) is
// evaluated at s = sigma (zero-out) or sigma/2 (replace-one). The WOR
// subsampling bound compares the changed client with another sampled
// client (up to 2C apart under either adjacency): sigma/2 for both. The
// conjectures are stated for the replace-one pair at sigma/2, and a
// zero-out pair is a replace-one pair: sigma/2 for both (at sigma under
// zero-out Thm 1 is refuted, docs/proofs/shuffle-gaussian.md).
func newGaussianCurve(e event.Event, bound string) (accounting.RDP, error) {
	var parts []string
	switch bound {
	case accounting.BoundBest:
		parts = provenGaussianBounds(e.Mechanism)
	case BoundBestConjecture:
		parts = append(provenGaussianBounds(e.Mechanism), conjectureGaussianBounds(e.Mechanism)...)
	}
	if parts != nil {
		curves := make([]accounting.RDP, len(parts))
		for i, p := range parts {
			c, err := newGaussianCurve(e, p)
			if err != nil {
				return nil, err
			}
			curves[i] = c
		}
		return accounting.NewBest(curves...)
	}
	half := e.Sigma / 2 // exact in float64
	own := e.Sigma      // the changed client against itself
	if e.Adjacency == event.AdjacencyReplaceOne {
		own = half
	}
	var (
		c   accounting.RDP
		err error
	)
	switch {
	case bound == BoundGaussianCor1: // valid for all three mechanisms (see gaussianRDP)
		c = gaussianRDP{sigma: own}
	case e.Mechanism == event.SubsampledShuffleGaussian && bound == BoundWBK19Cor1:
		c, err = accounting.SubsampledWBK19(gaussianRDP{sigma: half}, math.Inf(1), float64(e.K)/float64(e.N))
	case e.Mechanism == event.CheckinGaussian && bound == BoundCheckinSlot:
		c = checkinSlotRDP{sigma: own, rate: e.Rate}
	case e.Mechanism == event.ShuffleGaussian && bound == BoundICLR23Thm1:
		c, err = shufflegauss.NewShuffle(half, e.N)
	case e.Mechanism == event.SubsampledShuffleGaussian && bound == BoundICLR23Thm2:
		c, err = shufflegauss.NewSubsampled(half, e.N, e.K)
	case e.Mechanism == event.CheckinGaussian && bound == BoundICLR23Eq11:
		c, err = shufflegauss.NewCheckIn(half, e.N, e.Rate, shufflegauss.CheckInMixture)
	case e.Mechanism == event.CheckinGaussian && bound == BoundICLR23Eq13:
		c, err = shufflegauss.NewCheckIn(half, e.N, e.Rate, shufflegauss.CheckInChernoff)
	default:
		return nil, unknownBound(e, bound)
	}
	if err != nil {
		return nil, err
	}
	return namedCurve{curve: c, name: bound}, nil
}

// gaussianRDP is Corollary 1 of the ICLR'23 submission: the RDP of the
// Gaussian mechanism without shuffling, lambda/(2 sigma^2) (Mironov 2017,
// Prop. 7), sigma in units of the sensitivity. It bounds the shuffled
// mechanism by post-processing for every pair of adjacent datasets, in both
// directions: given who reports (data-independent), the output is a
// post-processing of the vector of reports, which differs in the changed
// client's Gaussian report only; the Rényi divergence of a mixture over
// the sampling is at most the largest conditional one (joint
// quasi-convexity). It is raised by a relative 2^-50 to cover the rounding
// of the division.
type gaussianRDP struct{ sigma float64 }

func (g gaussianRDP) Name() string { return BoundGaussianCor1 }

func (g gaussianRDP) RDP(order float64) (float64, error) {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return 0, fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	return order / (2 * g.sigma * g.sigma) * (1 + 0x1p-50), nil
}

// checkinSlotRDP is the Rényi divergence of the check-in mechanism's
// dominating pair (docs/proofs/shuffle-gaussian.md, "check-in"): the
// changed client's slot is absent with probability 1-p and N(x, s^2)
// otherwise, the other slots are the same in both datasets, and the
// output is a post-processing of the slots. For the pair
// (p N(1, s^2) + (1-p) bot, p N(0, s^2) + (1-p) bot), in both orders,
//
//	D_lambda = log(1 - p + p e^{lambda(lambda-1)/(2 s^2)})/(lambda-1).
//
// Computed in log space, raised by a relative 2^-40 (the rounding of
// log1p, exp and the sums).
type checkinSlotRDP struct{ sigma, rate float64 }

func (c checkinSlotRDP) Name() string { return BoundCheckinSlot }

func (c checkinSlotRDP) RDP(order float64) (float64, error) {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return 0, fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	x := order * (order - 1) / (2 * c.sigma * c.sigma)
	var l float64
	if c.rate == 1 {
		l = x
	} else {
		l = logmath.LogAddExp(math.Log1p(-c.rate), math.Log(c.rate)+x)
	}
	v := l / (order - 1) * (1 + 0x1p-40)
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%s: order %g: RDP %g is not finite", BoundCheckinSlot, order, v)
	}
	return v, nil
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
func DefaultOrders(e event.Event) []float64 {
	switch e.Mechanism {
	case event.ShuffleGaussian:
		return gaussianOrders(gaussianMaxOrder)
	case event.SubsampledShuffleGaussian, event.CheckinGaussian:
		return gaussianOrders(adaptiveMaxOrder)
	}
	return accounting.DefaultOrders()
}

// adaptiveGrid reports whether e's default grid is widened when the optimum
// sits at its edge.
func adaptiveGrid(e event.Event) bool {
	return e.Mechanism == event.SubsampledShuffleGaussian || e.Mechanism == event.CheckinGaussian
}

// wideOrders is the grid used when the optimum sits at the edge of an
// adaptive default grid: for subsampled-shuffle-gaussian every integer up
// to 4096, for checkin-gaussian the default grid joined with the sparse
// accounting.DefaultOrders (each check-in order costs a sum over blocks of
// k); the default grid otherwise.
func wideOrders(e event.Event) []float64 {
	switch e.Mechanism {
	case event.SubsampledShuffleGaussian:
		return gaussianOrders(gaussianMaxOrder)
	case event.CheckinGaussian:
		return union(DefaultOrders(e), accounting.DefaultOrders())
	}
	return DefaultOrders(e)
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
