package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/shufflegauss"
)

// Shuffle Gaussian mechanisms for `shuffledp account` (package
// shufflegauss; ICLR'23 submission "Shuffle Gaussian mechanism for
// differential privacy"):
//
//	shuffle-gaussian             Thm 1 (eq. 4), all n clients, shuffled
//	subsampled-shuffle-gaussian  Thm 2 (eq. 10), k of n sampled per round
//	checkin-gaussian             eq. (11) (binomial mixture) or eq. (13),
//	                             each client checks in with probability rate
//
// All of them inherit Theorem 1's worst-case-pair assumption (see
// gaussianAccountHelp), except the gaussian-cor1 row, which is the RDP of
// the Gaussian mechanism without shuffling.
const (
	mechShuffleGaussian           = "shuffle-gaussian"
	mechSubsampledShuffleGaussian = "subsampled-shuffle-gaussian"
	mechCheckInGaussian           = "checkin-gaussian"

	boundICLR23Thm1   = "iclr23-thm1"   // Thm 1, eq. (4), capped by Cor. 1
	boundGaussianCor1 = "gaussian-cor1" // lambda/(2 sigma^2): no shuffling, no assumption
	boundICLR23Thm2   = "iclr23-thm2"   // Thm 2, eq. (10)
	boundICLR23Eq11   = "iclr23-eq11"   // check-in eq. (11) as a binomial mixture
	boundICLR23Eq13   = "iclr23-eq13"   // check-in Thm 3, eq. (13)

	// gaussianMaxOrder is the largest order of the default grid of the
	// Gaussian mechanisms.
	gaussianMaxOrder = 4096
	// checkInFirstMaxOrder is where the check-in and subsampled default
	// grids stop unless the optimum sits at their edge (every check-in order
	// costs one eq. (10) sum per block of k; the subsampled mechanism's
	// inner moments beyond k+1 clients need binary powering).
	checkInFirstMaxOrder = 256
)

const gaussianAccountHelp = `
Shuffle Gaussian mechanisms (ICLR'23 submission "Shuffle Gaussian mechanism for
differential privacy"; --sigma is the noise multiplier in units of the L2
sensitivity; --eps0 is not used):
  shuffle-gaussian             all --n clients add N(0, sigma^2 I), reports shuffled
  subsampled-shuffle-gaussian  --k of --n clients sampled per round (no replacement)
  checkin-gaussian             each of --n clients checks in with probability --rate
Bounds (--bound; "all" shows every applicable one):
  iclr23-thm1    Thm 1, eq. (4), exact at every integer order (shuffle-gaussian)
  iclr23-thm2    Thm 2, eq. (10) (subsampled-shuffle-gaussian)
  iclr23-eq11    eq. (11) as a binomial mixture, a rigorous upper bound on it
                 (checkin-gaussian)
  iclr23-eq13    Thm 3, eq. (13), the Chernoff relaxation of eq. (11)
  gaussian-cor1  Cor. 1: lambda/(2 sigma^2), the Gaussian mechanism without
                 shuffling or sampling; valid for all three mechanisms and
                 needs no assumption
  best           (default) at every order the smaller of the mechanism's
                 bound above (thm1, thm2 or eq11) and gaussian-cor1
Default orders: every integer 2..4096 (the best order of Thm 1 sits just below a
sharp transition near 2 sigma^2 log n, between the points of a sparse grid); for
subsampled-shuffle-gaussian every integer 2..256, widened to every integer up to
4096 when the optimum is at 256; for checkin-gaussian every integer 2..256,
widened to the sparse grid up to 4096 when the optimum is at 256.
ASSUMPTION: Thm 1 is the Rényi divergence D_lambda(M(D')||M(D)) for the single
pair D=(0,...,0), D'=(1,0,...,0). The paper asserts, without a proof we could
check, that this pair and direction are the worst case over adjacent datasets.
Every epsilon of these mechanisms except gaussian-cor1 (and "best" when it is
won by gaussian-cor1) is only as strong as that claim.
`

// Registered during package variable initialisation, before account.go's
// init builds the --mechanism flag help from accountMechanisms.
var _ = registerGaussianMechanisms()

func registerGaussianMechanisms() bool {
	for _, m := range []string{mechShuffleGaussian, mechSubsampledShuffleGaussian, mechCheckInGaussian} {
		accountMechanisms[m] = accountGaussian
	}
	accountHelp = append(accountHelp, gaussianAccountHelp)
	return true
}

// isGaussianMechanism reports whether name is one of the shuffle Gaussian
// mechanisms.
func isGaussianMechanism(name string) bool {
	switch name {
	case mechShuffleGaussian, mechSubsampledShuffleGaussian, mechCheckInGaussian:
		return true
	}
	return false
}

// gaussianBounds lists the bounds applicable to a Gaussian mechanism, "best"
// last.
func gaussianBounds(mech string) []string {
	switch mech {
	case mechShuffleGaussian:
		return []string{boundICLR23Thm1, boundGaussianCor1, accounting.BoundBest}
	case mechSubsampledShuffleGaussian:
		return []string{boundICLR23Thm2, boundGaussianCor1, accounting.BoundBest}
	default:
		return []string{boundICLR23Eq11, boundICLR23Eq13, boundGaussianCor1, accounting.BoundBest}
	}
}

// validateGaussianRequest checks the flags of a Gaussian mechanism and
// returns the number of clients sampled per round (k; n for shuffle-gaussian,
// 0 for check-in).
func validateGaussianRequest(req accountRequest) (int64, error) {
	mech := req.Mechanism
	if !req.Given("sigma") {
		return 0, fmt.Errorf("--sigma (noise multiplier) is required for --mechanism %s", mech)
	}
	if !(req.Sigma > 0) || math.IsInf(req.Sigma, 0) {
		return 0, fmt.Errorf("--sigma must be positive and finite, got %g", req.Sigma)
	}
	if req.Given("eps0") {
		return 0, fmt.Errorf("--eps0 is not used by --mechanism %s (Gaussian noise: use --sigma)", mech)
	}
	switch mech {
	case mechShuffleGaussian:
		if req.Given("k") && req.K != req.N {
			return 0, fmt.Errorf("--k is not used by --mechanism %s (all n clients report); omit it", mech)
		}
		if req.Given("rate") {
			return 0, fmt.Errorf("--rate is not used by --mechanism %s; use --mechanism %s", mech, mechCheckInGaussian)
		}
		return req.N, nil
	case mechSubsampledShuffleGaussian:
		if req.Given("rate") {
			return 0, fmt.Errorf("--rate is not used by --mechanism %s (k of n sampled without replacement: use --k, or --mechanism %s)", mech, mechCheckInGaussian)
		}
		if req.K < 1 || req.K > req.N {
			return 0, fmt.Errorf("--k must satisfy 1 <= k <= n (n=%d), got %d", req.N, req.K)
		}
		return req.K, nil
	case mechCheckInGaussian:
		if req.Given("k") {
			return 0, fmt.Errorf("--k is not used by --mechanism %s (the number of reports is random: use --rate)", mech)
		}
		if !req.Given("rate") {
			return 0, fmt.Errorf("--rate (check-in probability) is required for --mechanism %s", mech)
		}
		if !(req.Rate > 0 && req.Rate <= 1) {
			return 0, fmt.Errorf("--rate must be in (0, 1], got %g", req.Rate)
		}
		return 0, nil
	}
	return 0, fmt.Errorf("--mechanism %q is not a Gaussian mechanism", mech)
}

// gaussianCurveKey identifies a curve in gaussianCurves.
type gaussianCurveKey struct {
	mech, bound string
	sigma, rate float64
	n, k        int64
}

// gaussianCurves memoises curves: they cache their moments, so repeated
// evaluations with the same parameters (calibrating --steps, or "best"
// next to its component) cost a table lookup per order.
var gaussianCurves = struct {
	sync.Mutex
	m map[gaussianCurveKey]accounting.RDP
}{m: map[gaussianCurveKey]accounting.RDP{}}

// gaussianCurve returns the RDP curve of bound for the request's Gaussian
// mechanism, validated by validateGaussianRequest; k is its return value.
func gaussianCurve(req accountRequest, bound string, k int64) (accounting.RDP, error) {
	key := gaussianCurveKey{mech: req.Mechanism, bound: bound, sigma: req.Sigma, rate: req.Rate, n: req.N, k: k}
	gaussianCurves.Lock()
	defer gaussianCurves.Unlock()
	if c, ok := gaussianCurves.m[key]; ok {
		return c, nil
	}
	c, err := newGaussianCurve(req, bound, k)
	if err != nil {
		return nil, err
	}
	if len(gaussianCurves.m) >= 256 { // calibration visits many parameters; bound the memory
		clear(gaussianCurves.m)
	}
	gaussianCurves.m[key] = c
	return c, nil
}

// namedCurve gives a curve the name of the --bound it answers (the
// shufflegauss curves are named after their parameters), so that "best"
// reports the winner by bound name.
type namedCurve struct {
	curve accounting.RDP
	name  string
}

func (c namedCurve) Name() string                       { return c.name }
func (c namedCurve) RDP(order float64) (float64, error) { return c.curve.RDP(order) }

// newGaussianCurve builds the curve of bound (see gaussianCurve). "best" is
// the pointwise minimum of the mechanism's primary bound and Cor. 1
// (lambda/(2 sigma^2)), which holds for all three mechanisms without any
// assumption: given who reports, the output is post-processing of Gaussians
// whose means differ by at most the sensitivity, and the Rényi divergence of
// a mixture over the (data-independent) sampling is at most the largest
// conditional one (joint quasi-convexity).
func newGaussianCurve(req accountRequest, bound string, k int64) (accounting.RDP, error) {
	if bound == accounting.BoundBest {
		primaryName := gaussianBounds(req.Mechanism)[0]
		primary, err := newGaussianCurve(req, primaryName, k)
		if err != nil {
			return nil, err
		}
		return accounting.NewBest(namedCurve{primary, primaryName}, gaussianRDP{sigma: req.Sigma})
	}
	var (
		c   accounting.RDP
		err error
	)
	switch {
	case req.Mechanism == mechShuffleGaussian && bound == boundICLR23Thm1:
		c, err = shufflegauss.NewShuffle(req.Sigma, req.N)
	case bound == boundGaussianCor1: // valid for all three mechanisms (see above)
		c = gaussianRDP{sigma: req.Sigma}
	case req.Mechanism == mechSubsampledShuffleGaussian && bound == boundICLR23Thm2:
		c, err = shufflegauss.NewSubsampled(req.Sigma, req.N, k)
	case req.Mechanism == mechCheckInGaussian && bound == boundICLR23Eq11:
		c, err = shufflegauss.NewCheckIn(req.Sigma, req.N, req.Rate, shufflegauss.CheckInMixture)
	case req.Mechanism == mechCheckInGaussian && bound == boundICLR23Eq13:
		c, err = shufflegauss.NewCheckIn(req.Sigma, req.N, req.Rate, shufflegauss.CheckInChernoff)
	default:
		return nil, fmt.Errorf("--bound %q does not apply to --mechanism %s; use one of %s",
			bound, req.Mechanism, strings.Join(append(gaussianBounds(req.Mechanism), "all"), ", "))
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// gaussianRDP is Corollary 1 of the ICLR'23 submission: the RDP of the
// Gaussian mechanism without shuffling, lambda/(2 sigma^2) (Mironov 2017,
// Prop. 7), which bounds the shuffled mechanism by post-processing for
// every pair of adjacent datasets, in both directions.
type gaussianRDP struct{ sigma float64 }

func (g gaussianRDP) Name() string { return boundGaussianCor1 }

func (g gaussianRDP) RDP(order float64) (float64, error) {
	if math.IsNaN(order) || math.IsInf(order, 0) || order <= 1 {
		return 0, fmt.Errorf("order must be a finite number > 1, got %g", order)
	}
	return order / (2 * g.sigma * g.sigma) * (1 + 0x1p-50), nil
}

// gaussianDefaultOrders is the default order grid of the Gaussian
// mechanisms: the fractional orders of accounting.DefaultOrders and every
// integer from 2 to maxOrder.
func gaussianDefaultOrders(maxOrder int) []float64 {
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

// accountGaussian answers `account --mechanism shuffle-gaussian|
// subsampled-shuffle-gaussian|checkin-gaussian`.
func accountGaussian(req accountRequest) ([]accountRow, error) {
	k, err := validateGaussianRequest(req)
	if err != nil {
		return nil, err
	}
	bounds := []string{req.Bound}
	if req.Bound == "all" {
		bounds = gaussianBounds(req.Mechanism)
	}
	rows := make([]accountRow, 0, len(bounds))
	for _, b := range bounds {
		curve, err := gaussianCurve(req, b, k)
		if err != nil {
			return nil, err
		}
		row, err := gaussianRow(req, b, curve)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// gaussianRow composes curve over req.Steps rounds and converts to
// (epsilon, req.Delta) on the order grid: --orders if given, else the
// default grid of the mechanism.
func gaussianRow(req accountRequest, bound string, curve accounting.RDP) (accountRow, error) {
	row := accountRow{Bound: bound, Delta: req.Delta}
	const assumption = "(assumes Thm 1's worst-case pair)"
	if bound != boundGaussianCor1 {
		row.Note = assumption
	}
	if req.Steps == 0 {
		row.Note = "no rounds: nothing spent"
		return row, nil
	}
	orders := req.Orders
	adaptive := false
	if !req.Given("orders") {
		max := gaussianMaxOrder
		if req.Mechanism == mechCheckInGaussian || req.Mechanism == mechSubsampledShuffleGaussian {
			max, adaptive = checkInFirstMaxOrder, true
		}
		orders = gaussianDefaultOrders(max)
	}
	g, err := composeGaussian(curve, orders, req.Steps, req.Delta)
	if err != nil {
		return accountRow{}, fmt.Errorf("%s: %w", bound, err)
	}
	if adaptive && g.Order == checkInFirstMaxOrder {
		// The optimum is at the edge: widen, for check-in to the sparse grid
		// up to 4096 (each check-in order costs a sum over blocks of k), for
		// the subsampled mechanism to every integer order up to 4096.
		var wide []float64
		if req.Mechanism == mechSubsampledShuffleGaussian {
			wide = gaussianDefaultOrders(gaussianMaxOrder)
		} else {
			wide = append(orders, accounting.DefaultOrders()...)
			sort.Float64s(wide)
			wide = dedupOrders(wide)
		}
		if g, err = composeGaussian(curve, wide, req.Steps, req.Delta); err != nil {
			return accountRow{}, fmt.Errorf("%s: %w", bound, err)
		}
	}
	row.Epsilon, row.Order, row.AtGridEdge, row.Conversion = g.Epsilon, g.Order, g.AtGridEdge, g.Conversion
	if b, ok := curve.(*accounting.BestCurve); ok {
		if _, row.Winner, err = b.RDPWinner(g.Order); err != nil {
			return accountRow{}, fmt.Errorf("%s: %w", bound, err)
		}
		if row.Winner == boundGaussianCor1 {
			row.Note = "" // Cor. 1 needs no assumption
		}
	}
	return row, nil
}

func composeGaussian(curve accounting.RDP, orders []float64, steps int64, delta float64) (accounting.Guarantee, error) {
	// Evaluate the largest integer order first: the curves extend their
	// moment tables geometrically on demand, and (below n+1 clients) each
	// extension recomputes the table, so asking for the top order first
	// builds it once instead of about twice.
	for i := len(orders) - 1; i >= 0; i-- {
		if o := orders[i]; o == math.Trunc(o) && o >= 2 && o <= 1<<16 {
			_, _ = curve.RDP(o) // warm-up only; Compose64 reports errors
			break
		}
	}
	acct, err := accounting.NewAccountant(orders)
	if err != nil {
		return accounting.Guarantee{}, err
	}
	if err := acct.Compose64(curve, steps); err != nil {
		return accounting.Guarantee{}, err
	}
	return acct.Epsilon(delta)
}

func dedupOrders(sorted []float64) []float64 {
	out := sorted[:0]
	for i, v := range sorted {
		if i == 0 || v != sorted[i-1] {
			out = append(out, v)
		}
	}
	return out
}
