package accounting

import (
	"math"
	"sync"

	"github.com/shuffledp/shuffledp/internal/logmath"
)

// KRR3Lower is a lower bound on the RDP of the subsampled shuffle model (k
// of n sampled without replacement, g = k/n; k == n is the plain shuffle):
// at every order, the largest exact Rényi divergence D_lambda(M(D)||M(D'))
// over these concrete eps0-LDP mechanisms and neighbouring datasets:
//
//   - 3-ary randomized response (the true value with probability
//     e^eps0/(e^eps0+2), each other value with 1/(e^eps0+2)), client 1
//     holding 0 in D and 1 in D', the others all holding 2;
//   - the same with the others all holding 0, in both directions;
//   - binary randomized response with the others holding 0, client 1
//     holding 1 vs 0 (NeurIPS'21 Thm 2's configuration), in both directions.
//
// The shuffled output is the histogram n of the k reports. With the others'
// report distribution p, Mult the Mult(k, p) pmf and
// h_u(n) = sum_y Pr[RR(u) = y] n_y/(k p_y), the outputs on D and D' are
// Mult(n) A(n) and Mult(n) B(n) with A = 1-g+g h_a, B = 1-g+g h_b, so
//
//	E[(M(D)/M(D'))^lambda] - 1 = sum_n Mult(n) B(n) phi(A(n)/B(n)),
//	phi(t) = t^lambda - 1 - lambda(t-1) >= 0,
//
// a sum of non-negative terms (sum Mult A = sum Mult B = 1), so dropping
// terms only lowers it. Which terms matter depends on the order: at high
// orders the sum is dominated by histograms far in the tail of Mult whose
// likelihood ratio A/B is near its largest value (for the plain shuffle of
// binary RR at k = 1000, eps0 = 2, order 256, by a histogram of
// probability 7.5e-56). Histograms are therefore kept by their
// contribution, not by their probability. With s = n0 + n1 ~ Bin(k,
// p0+p1) and n0 | s binomial, the code enumerates for each slice s an
// interval of n0 containing the mode, and keeps order-independent
// summaries of what each slice leaves out on each side (a bound on its
// probability, and the extremes of B and A/B, attained at the ends as both
// are monotone in n0) and of the slices left out (A/B and B are extreme at
// the vertices of the simplex). At each order it bounds the terms left out
// (B phi(t) <= B max(t^lambda, lambda) and, by Taylor,
// <= B lambda(lambda-1)/2 (t-1)^2 max(1, t^(lambda-2))) and enumerates
// more where that bound is largest, until it is below e^-40 of the sum
// kept, or a configuration has 2^24 histograms (3-ary RR at very large k
// and high orders with g near 1). With at most 2^14 histograms per
// configuration (every point of the brute-force oracle) the result is
// exact to about 1e-13 relative before its deliberate downward rounding
// (1e-9). Above that they are grouped by the sign of y = A/B - 1 and |y|
// within a factor e^(1/512), each group replaced by its total weight at
// its weighted mean y rounded toward 0 plus the strong-convexity term
// lam(lam-1)/2 min (1+y)^(lam-2) times its weighted variance (phi is
// convex with that second derivative, and decreases towards t = 1 from
// both sides): still at most the group's sum. Measured against the
// ungrouped sum (eps0 = 0.5 to 4): at n = 1e6, k = 1000 within 1e-11
// relative at every order to 4096 (6.3e-10 at eps0 = 4, order 4096); at
// n = 60000, k = 1e4 within 2.2e-9 to order 256; for the plain shuffle
// (n = k = 300, 1000) within 2e-8 to order 32, 3.4e-6 at 256 and 2.3e-4 at
// 4096. Terms more than e^-50 (over their number) below the largest
// are skipped. Every step
// can only lower the value, so it stays a lower bound. Valid for every
// real order > 1. For eps0 > 700 the configurations are evaluated at
// eps0 = 700 (RR at a smaller eps0 is a post-processing of RR at a larger
// one), and at integer orders Thm 2's configuration also at the true eps0
// (SubsampledShuffleLower, in log space).
//
// This says how tight the upper bounds are; it is not a privacy guarantee.
func KRR3Lower(n, k int64, eps0 float64) (RDP, error) {
	if err := validateShuffle(n, k, eps0); err != nil {
		return nil, err
	}
	return &krr3Lower{n: n, k: k, eps0: eps0}, nil
}

type krr3Lower struct {
	n, k int64
	eps0 float64

	once    sync.Once
	configs []*rrConfig
}

func (b *krr3Lower) Name() string       { return BoundKRR3Lower }
func (b *krr3Lower) IsLowerBound() bool { return true }

func (b *krr3Lower) RDP(order float64) (float64, error) {
	if err := checkOrder(order, false); err != nil {
		return 0, err
	}
	if b.eps0 == 0 {
		return 0, nil
	}
	b.once.Do(b.build)
	best := 0.0
	for _, c := range b.configs {
		if v := rdpFromLowerSum(c.logSum(order), order); v > best {
			best = v
		}
	}
	if b.eps0 > krr3MaxEps0 && order == math.Trunc(order) {
		// Thm 2's configuration at the true eps0 (log space throughout).
		if l, err := SubsampledShuffleLower(b.n, b.k, b.eps0); err == nil {
			if v, err := l.RDP(order); err == nil && v > best {
				best = v
			}
		}
	}
	return finite(best, order, b.Name())
}

const (
	// rrCutStart: histograms whose multinomial probability is within this
	// many nats of the largest are enumerated first.
	rrCutStart = 45
	// rrTailNats: the bound on what the enumeration leaves out must be
	// this many nats below the sum it keeps.
	rrTailNats = 40
	// rrMaxExact: above this many histograms, they are grouped by y.
	rrMaxExact = 1 << 14
	// rrMaxCells: a configuration enumerates no more histograms once it
	// has this many (at first at most half as many: rrCutStart is lowered
	// if needed).
	rrMaxCells = 1 << 24
	// rrGridLn: the groups' ratio of largest to smallest |y| is at most
	// e^rrGridLn; groups more than rrGridSpan e-folds below the largest
	// |y| possible are dropped.
	rrGridLn   = 1.0 / 512
	rrGridSpan = 16
)

// krr3MaxEps0: above it the configurations are evaluated at this eps0.
// k-ary RR at a smaller eps0 is a post-processing of k-ary RR at a larger
// one (a symmetric channel applied to each report, which commutes with
// subsampling and shuffling), so their divergences are no larger and the
// result stays a lower bound. It keeps every probability a normal float64
// (1/(e^eps0+2) >= 3e-305; math.Log is not accurate on subnormals) and
// every likelihood ratio below e^700.
const krr3MaxEps0 = 700

func (b *krr3Lower) build() {
	k, g, e := float64(b.k), float64(b.k)/float64(b.n), math.Min(b.eps0, krr3MaxEps0)
	q3 := math.Exp(-logmath.Log1pExp(logmath.Log(2) - e))    // e^eps0/(e^eps0+2)
	r3 := math.Exp(-math.Ln2 - logmath.Log1pExp(e-math.Ln2)) // 1/(e^eps0+2)
	q2 := math.Exp(-logmath.Log1pExp(-e))                    // e^eps0/(e^eps0+1)
	r2 := math.Exp(-logmath.Log1pExp(e))                     // 1/(e^eps0+1)
	rr3 := func(u int) [3]float64 {
		p := [3]float64{r3, r3, r3}
		p[u] = q3
		return p
	}
	rr2 := func(u int) [3]float64 {
		p := [3]float64{r2, r2, 0}
		p[u] = q2
		return p
	}
	b.configs = []*rrConfig{
		newRRConfig(k, g, rr3(2), rr3(0), rr3(1)),
		newRRConfig(k, g, rr3(0), rr3(0), rr3(1)),
		newRRConfig(k, g, rr3(0), rr3(1), rr3(0)),
		newRRConfig(k, g, rr2(0), rr2(1), rr2(0)),
		newRRConfig(k, g, rr2(0), rr2(0), rr2(1)),
	}
}

// rrConfig is one configuration: the histogram of k reports of randomized
// response with at most 3 outputs, the others reporting with distribution
// p, client 1 with pa (numerator) or pb (denominator). The histogram is
// (n0, n1, n2) with s = n0 + n1 ~ Bin(k, p0+p1) and n0 | s ~ Bin(s,
// p0/(p0+p1)) (binary RR: p2 = 0, s = k). It caches the atoms (log weight
// log(Mult B), y = A/B - 1) of the histograms enumerated so far: for each
// slice s in a window sA..sB, the n0 in lo..hi. An order whose terms left
// out could matter (see logSum) extends the slices and the window.
type rrConfig struct {
	k, g        float64
	p, pa, pb   [3]float64
	logBMax     float64 // log of the largest B over all histograms
	logTMax     float64 // log of the largest A/B over all histograms
	logTMin     float64 // log of the smallest A/B over all histograms
	yPos, yNeg  float64 // the largest y and -y over all histograms
	lRho, l1Rho float64 // log p0/(p0+p1), log p1/(p0+p1)
	lP01, lP2   float64 // log(p0+p1), log p2

	mu     sync.Mutex
	slices []*rrSlice
	sA, sB float64 // the window of slices (sB < sA: none yet)
	cells  int
	capped bool // rrMaxCells histograms enumerated: no more
	exact  rrAtoms
	groups *rrGroups // non-nil once there are more than rrMaxExact atoms
}

// rrSlice holds the enumerated histograms n0 = lo..hi of slice s, and
// order-independent summaries of those left out on each side: the log of
// a bound on their probability, and of the largest B and A/B among them
// (both monotone in n0 within a slice, so attained at an end).
type rrSlice struct {
	s, logP, lo, hi float64
	l, r            rrTail
}

// rrTail summarises histograms left out: the log of a bound on their
// probability, the log of the largest B, and the logs of the smallest and
// largest A/B among them.
type rrTail struct{ mass, lb, ltMin, ltMax, lay float64 }

// newRRTail fills in lay, the log of the largest |y| = |A/B - 1|.
func newRRTail(mass, lb, ltMin, ltMax float64) rrTail {
	ay := math.Max(math.Abs(math.Expm1(ltMax)), math.Abs(math.Expm1(ltMin)))
	return rrTail{mass, lb, ltMin, ltMax, logmath.Log(ay)}
}

func newRRConfig(k, g float64, p, pa, pb [3]float64) *rrConfig {
	c := &rrConfig{k: k, g: g, p: p, pa: pa, pb: pb, sA: 1, sB: 0}
	// A and B are affine in n, so A/B is extreme at a vertex k e_y of the
	// simplex, where h_u = pu[y]/p[y].
	bMax, tMax, tMin := 0.0, 0.0, math.Inf(1)
	for y := range 3 {
		if p[y] == 0 {
			continue
		}
		A := 1 - g + g*pa[y]/p[y]
		B := 1 - g + g*pb[y]/p[y]
		bMax, tMax, tMin = math.Max(bMax, B), math.Max(tMax, A/B), math.Min(tMin, A/B)
	}
	// Rounded outward (these only decide how far to enumerate and how to
	// group).
	c.logBMax = logmath.Log(bMax) + 1e-12
	c.logTMax = logmath.Log(tMax) + 1e-12
	c.logTMin = logmath.Log(tMin) - 1e-12
	c.yPos = math.Max(tMax-1, 0) * (1 + 1e-12)
	c.yNeg = math.Max(1-tMin, 0) * (1 + 1e-12)
	p01 := p[0] + p[1]
	// log rho and log(1-rho), rho = p0/(p0+p1), without forming 1-rho
	// (which cancels when p1 << p0).
	c.lRho, c.l1Rho = logmath.Log(p[0])-logmath.Log(p01), logmath.Log(p[1])-logmath.Log(p01)
	c.lP01, c.lP2 = logmath.Log(p01), logmath.Log(p[2])
	return c
}

// cell returns the log weight log(Mult(n) B(n)) and y = A/B - 1 of the
// histogram (n0, s-n0, k-s) in slice sl, and log B, log(A/B).
func (c *rrConfig) cell(sl *rrSlice, n0 float64) (logW, y, logB, logT float64) {
	return c.cellBin(sl, n0, logmath.LogBinom(sl.s, n0))
}

// cellBin is cell with log C(s, n0) given.
func (c *rrConfig) cellBin(sl *rrSlice, n0, logBin float64) (logW, y, logB, logT float64) {
	k, g, s := c.k, c.g, sl.s
	n := [3]float64{n0, s - n0, k - s}
	ha, hb, d := 0.0, 0.0, 0.0
	for j := range 3 {
		if c.p[j] > 0 {
			f := n[j] / (k * c.p[j])
			ha += c.pa[j] * f
			hb += c.pb[j] * f
			// A - B = g (h_a - h_b), summed term by term (no 1-g+...
			// cancellation).
			d += (c.pa[j] - c.pb[j]) * f
		}
	}
	A, B := 1-g+g*ha, 1-g+g*hb
	logB = logmath.Log(B)
	logM := sl.logP + logBin + n0*c.lRho + (s-n0)*c.l1Rho
	return logM + logB, g * d / B, logB, logmath.Log(A) - logB
}

// logPs returns log Pr[n0 + n1 = s].
func (c *rrConfig) logPs(s float64) float64 {
	if c.p[2] == 0 {
		return 0
	}
	return logmath.LogBinom(c.k, s) + s*c.lP01 + (c.k-s)*c.lP2
}

// addRange enumerates the histograms n0 = a..b of slice sl. log C(s, n0)
// is taken from LogBinom every m = min(64, 1e5/s) histograms and by the
// recurrence C(s, n0) = C(s, n0-1) (s-n0+1)/n0 in between: fewer than m
// roundings of sums of magnitude below s log 2, an absolute error below
// 2 m s 2^-53 <= 3e-11 in the log weight, far below the 1e-9 slack.
func (c *rrConfig) addRange(sl *rrSlice, a, b float64) {
	m := int(math.Max(1, math.Min(64, 1e5/math.Max(1, sl.s))))
	lb := 0.0
	for n0 := a; n0 <= b; n0++ {
		if int(n0-a)%m == 0 {
			lb = logmath.LogBinom(sl.s, n0)
		} else {
			lb += logmath.Log((sl.s - n0 + 1) / n0)
		}
		c.add(sl, n0, lb)
	}
}

// add enumerates the histogram n0 of slice sl, log C(s, n0) = lb.
func (c *rrConfig) add(sl *rrSlice, n0, lb float64) {
	logW, y, _, _ := c.cellBin(sl, n0, lb)
	c.cells++
	// Histograms whose terms cannot be formed in float64 (likelihood
	// ratios beyond 1.8e308, eps0 > 709) are dropped: that only lowers the
	// sum.
	if y == 0 || math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(logW) || math.IsInf(logW, 0) {
		return
	}
	if c.groups == nil && len(c.exact.y) >= rrMaxExact {
		c.groups = newRRGroups(c.yPos, c.yNeg)
		for i := range c.exact.y {
			c.groups.add(c.exact.logW[i], c.exact.y[i])
		}
		c.exact = rrAtoms{}
	}
	if c.groups != nil {
		c.groups.add(logW, y)
	} else {
		c.exact.add(logW, y)
	}
}

// tails recomputes sl's summaries of the histograms left out. The pmf of
// Bin(s, rho) increases up to its mode, which lo..hi contains, so the lo
// histograms left of lo have probability at most lo Bin(lo-1), and
// likewise on the right.
func (c *rrConfig) tails(sl *rrSlice) {
	sl.l, sl.r = rrTail{mass: math.Inf(-1)}, rrTail{mass: math.Inf(-1)}
	side := func(count, end, next float64) rrTail {
		_, _, b0, t0 := c.cell(sl, end)
		w, _, b1, t1 := c.cell(sl, next)
		return newRRTail(logmath.Log(count)+w-b1, math.Max(b0, b1), math.Min(t0, t1), math.Max(t0, t1))
	}
	if sl.lo > 0 {
		sl.l = side(sl.lo, 0, sl.lo-1)
	}
	if sl.hi < sl.s {
		sl.r = side(sl.s-sl.hi, sl.s, sl.hi+1)
	}
}

// piece is the log of a bound on the terms W phi(A/B) = Mult B phi(A/B)
// of the histograms t summarises: with t = A/B, y = t-1,
// phi(t) <= max(t^lam, lam) (t^lam - 1 <= 0 for t < 1) and, by Taylor
// with phi” = lam(lam-1)t^(lam-2), phi(t) <= lam(lam-1)/2 y^2
// max(1, t^(lam-2)) (t^(lam-2) is monotone).
func piece(o rrOrder, t rrTail) float64 {
	if math.IsInf(t.mass, -1) {
		return t.mass
	}
	a := math.Max(o.lam*t.ltMax, o.logLam)
	lt := t.ltMax
	if o.lam < 2 {
		lt = t.ltMin
	}
	b := o.logC2 + 2*t.lay + math.Max(0, (o.lam-2)*lt)
	v := t.mass + t.lb + math.Min(a, b)
	if math.IsNaN(v) {
		return math.Inf(1) // a bound that cannot be formed is no bound
	}
	return v
}

// rrOrder is an order lam with log lam and log(lam(lam-1)/2).
type rrOrder struct{ lam, logLam, logC2 float64 }

func newRROrder(lam float64) rrOrder {
	return rrOrder{lam, logmath.Log(lam), logmath.Log(lam * (lam - 1) / 2)}
}

// outer returns the log of bounds on the probability of the slices below
// sA and above sB (Bin(k, p0+p1) increases up to its mode, which the
// window contains).
func (c *rrConfig) outer() (float64, float64) {
	lo, hi := math.Inf(-1), math.Inf(-1)
	if c.p[2] == 0 {
		return lo, hi // one slice, s = k
	}
	if c.sA > 0 {
		lo = logmath.Log(c.sA) + c.logPs(c.sA-1)
	}
	if c.sB < c.k {
		hi = logmath.Log(c.k-c.sB) + c.logPs(c.sB+1)
	}
	return lo, hi
}

// outerTail summarises slices of probability at most e^mass by the
// extremes over all histograms.
func (c *rrConfig) outerTail(mass float64) rrTail {
	return newRRTail(mass, c.logBMax, c.logTMin, c.logTMax)
}

// newSlice enumerates slice s from n0 = lo to hi.
func (c *rrConfig) newSlice(s, lo, hi float64) *rrSlice {
	sl := &rrSlice{s: s, logP: c.logPs(s), lo: lo, hi: hi}
	c.addRange(sl, lo, hi)
	c.tails(sl)
	c.slices = append(c.slices, sl)
	return sl
}

// grow extends sl on each side while the bound on what it leaves out
// there exceeds e^tau at order lam.
func (c *rrConfig) grow(sl *rrSlice, o rrOrder, tau float64) {
	// In steps of an eighth of the slice's width, at least 1.
	step := func() float64 { return math.Max(1, math.Floor((sl.hi-sl.lo+1)/8)) }
	for sl.lo > 0 && c.cells < rrMaxCells && piece(o, sl.l) > tau {
		lo := math.Max(0, sl.lo-step())
		c.addRange(sl, lo, sl.lo-1)
		sl.lo = lo
		c.tails(sl)
	}
	for sl.hi < sl.s && c.cells < rrMaxCells && piece(o, sl.r) > tau {
		hi := math.Min(sl.s, sl.hi+step())
		c.addRange(sl, sl.hi+1, hi)
		sl.hi = hi
		c.tails(sl)
	}
}

// start enumerates the histograms within rrCutStart nats of the largest
// probability (of s, then of n0 given s).
func (c *rrConfig) start() {
	region := func(cut float64) (sA, sB, cells float64) {
		sA, sB = c.k, c.k
		if c.p[2] > 0 {
			sA, sB = binomRange(c.k, c.lP01, c.lP2, cut)
		}
		for s := sA; s <= sB; s++ {
			lo, hi := binomRange(s, c.lRho, c.l1Rho, cut)
			cells += hi - lo + 1
		}
		return sA, sB, cells
	}
	cut := float64(rrCutStart)
	for _, _, n := region(cut); n > rrMaxCells/2 && cut > 1; _, _, n = region(cut) {
		cut /= 1.5
	}
	c.sA, c.sB, _ = region(cut)
	for s := c.sA; s <= c.sB; s++ {
		lo, hi := binomRange(s, c.lRho, c.l1Rho, cut)
		c.newSlice(s, lo, hi)
	}
}

// logSum returns the log of the sum of the kept terms W phi(1+y) at order
// lam. First it bounds, from the slices' summaries, the terms of the
// histograms left out; while that bound exceeds e^-rrTailNats of the sum,
// it enumerates more histograms where the bound is largest.
func (c *rrConfig) logSum(lam float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sB < c.sA {
		c.start()
	}
	o := newRROrder(lam)
	for {
		s := c.atoms().logSum(lam)
		if c.capped || math.IsInf(s, -1) {
			return s
		}
		oLo, oHi := c.outer()
		np := float64(2*len(c.slices) + 2)
		pLo, pHi := piece(o, c.outerTail(oLo)), piece(o, c.outerTail(oHi))
		worst := math.Max(pLo, pHi)
		for _, sl := range c.slices {
			worst = math.Max(worst, math.Max(piece(o, sl.l), piece(o, sl.r)))
		}
		tau := s - rrTailNats
		if worst+logmath.Log(np) <= tau {
			return s
		}
		tau -= logmath.Log(np)
		before := c.cells
		for _, sl := range c.slices {
			c.grow(sl, o, tau)
		}
		for c.sA > 0 && c.cells < rrMaxCells && pLo > tau {
			c.sA--
			m := math.Min(c.sA, math.Floor((c.sA+1)*math.Exp(c.lRho)))
			c.grow(c.newSlice(c.sA, m, m), o, tau)
			oLo, _ = c.outer()
			pLo = piece(o, c.outerTail(oLo))
		}
		for c.sB < c.k && c.cells < rrMaxCells && pHi > tau {
			c.sB++
			m := math.Min(c.sB, math.Floor((c.sB+1)*math.Exp(c.lRho)))
			c.grow(c.newSlice(c.sB, m, m), o, tau)
			_, oHi = c.outer()
			pHi = piece(o, c.outerTail(oHi))
		}
		// Nothing left to enumerate where the bound is large: every
		// histogram there is enumerated and the bound is not finite.
		c.capped = c.cells >= rrMaxCells || c.cells == before
	}
}

// atoms returns the atoms to sum: the histograms themselves, or their
// groups.
func (c *rrConfig) atoms() *rrAtoms {
	if c.groups == nil {
		return &c.exact
	}
	return c.groups.atoms()
}

// rrAtoms holds log weights log(Mult(n) B(n)), y = A(n)/B(n) - 1 and, for
// bounding terms cheaply, log1p(y) and log|y|; w caches e^(logW - wRef),
// wRef the largest log weight, for the first nW atoms (stale: some atom
// changed since).
type rrAtoms struct {
	logW, y, u, la []float64
	// For groups (see rrGroups.atoms): log of the variance bound (-Inf for
	// single histograms) and logs of the smallest and largest 1+y.
	lv, ltLo, ltHi []float64
	w              []float64
	wRef           float64
	nW             int
	stale          bool
	bnd            []float64 // scratch for logSum
	slow           []int     // scratch for logSum
}

func (a *rrAtoms) add(logW, y float64) {
	a.logW = append(a.logW, logW)
	a.y = append(a.y, y)
	a.u = append(a.u, math.Log1p(y))
	a.la = append(a.la, logmath.Log(math.Abs(y)))
	a.lv = append(a.lv, math.Inf(-1))
	a.ltLo = append(a.ltLo, 0)
	a.ltHi = append(a.ltHi, 0)
}

// varTerm returns log(lam(lam-1)/2 min(1+y)^(lam-2) V) for atom i, the
// strong-convexity part of a group's sum per unit weight (-Inf if none);
// logC2 = log(lam(lam-1)/2).
func (a *rrAtoms) varTerm(i int, lam, logC2 float64) float64 {
	if math.IsInf(a.lv[i], -1) {
		return a.lv[i]
	}
	lt := a.ltLo[i]
	if lam < 2 {
		lt = a.ltHi[i]
	}
	return logC2 + (lam-2)*lt + a.lv[i]
}

// weights brings w up to date.
func (a *rrAtoms) weights() {
	if a.nW == len(a.y) && !a.stale {
		return
	}
	if !a.stale && a.nW > 0 {
		// Only appended: extend unless one of them is above wRef.
		top := math.Inf(-1)
		for _, lw := range a.logW[a.nW:] {
			top = math.Max(top, lw)
		}
		if top <= a.wRef {
			for _, lw := range a.logW[a.nW:] {
				a.w = append(a.w, math.Exp(lw-a.wRef))
			}
			a.nW = len(a.y)
			return
		}
	}
	a.wRef = math.Inf(-1)
	for _, lw := range a.logW {
		a.wRef = math.Max(a.wRef, lw)
	}
	a.w = a.w[:0]
	for _, lw := range a.logW {
		a.w = append(a.w, math.Exp(lw-a.wRef))
	}
	a.nW, a.stale = len(a.y), false
}

// logSum returns log sum W phi(1+y) (-Inf if empty), rounded down by a
// relative 1e-10 (which covers the float64 error of each term and of the
// sums). Terms with log W above wRef - 600 and lam log1p(y) <= 600 are
// summed as e^(logW - wRef) phi in float64 (no term over e^600, the sum
// far from overflow). Of the others, those whose upper bound is more than
// 50 nats below the largest, divided by their number, are skipped:
// together they are below e^-50 of the sum.
func (a *rrAtoms) logSum(lam float64) float64 {
	n := len(a.y)
	if n == 0 {
		return math.Inf(-1)
	}
	a.weights()
	logC2 := logmath.Log(lam * (lam - 1) / 2)
	fast := 0.0
	slow := a.slow[:0]
	for i := range n {
		if a.logW[i]-a.wRef >= -600 && lam*a.u[i] <= 600 {
			t := phi(a.y[i], a.u[i], lam)
			if !math.IsInf(a.lv[i], -1) {
				t += math.Exp(a.varTerm(i, lam, logC2))
			}
			fast += a.w[i] * t
		} else if !math.IsInf(a.logW[i], -1) {
			slow = append(slow, i)
		}
	}
	a.slow = slow
	acc := logmath.NewAccumulator()
	if fast > 0 {
		acc.Add(a.wRef + logmath.Log(fast))
	}
	acc.Add(a.logSumOf(slow, lam))
	v := acc.Value()
	if math.IsInf(v, -1) || math.IsNaN(v) {
		return math.Inf(-1)
	}
	return v + math.Log1p(-1e-10)
}

// logSumOf returns log sum W phi(1+y) over the atoms idx, skipping those
// more than 50 nats (over their number) below the largest.
func (a *rrAtoms) logSumOf(idx []int, lam float64) float64 {
	n := len(idx)
	if n == 0 {
		return math.Inf(-1)
	}
	// log phi(1+y) <= log(lam(lam-1)/2) + 2 log|y| + max(0, (lam-2) log1p(y))
	// (Taylor, phi'' = lam(lam-1)t^(lam-2) monotone), and <= lam log1p(y)
	// for y > 0 (phi(t) <= t^lam), <= log(lam |y|) for y < 0.
	l2, ll := logmath.Log(lam*(lam-1)/2), logmath.Log(lam)
	if cap(a.bnd) < n {
		a.bnd = make([]float64, n)
	}
	bnd := a.bnd[:n]
	top, arg := math.Inf(-1), 0
	for j, i := range idx {
		b := l2 + 2*a.la[i] + math.Max(0, (lam-2)*a.u[i])
		if a.y[i] > 0 {
			b = math.Min(b, lam*a.u[i])
		} else {
			b = math.Min(b, ll+a.la[i])
		}
		b += a.logW[i]
		bnd[j] = b
		if b > top {
			top, arg = b, i
		}
	}
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return math.Inf(-1)
	}
	skip := a.logW[arg] + logPhi(a.y[arg], lam) - 50 - logmath.Log(float64(n))
	// Every term is at most e^top: sum e^(log W - top) phi in float64.
	sum := 0.0
	for j, i := range idx {
		if bnd[j] >= skip {
			sum += scaledPhi(a.logW[i]-top, a.y[i], a.u[i], lam)
			if !math.IsInf(a.lv[i], -1) {
				sum += math.Exp(a.logW[i] - top + a.varTerm(i, lam, l2))
			}
		}
	}
	if sum <= 0 {
		return math.Inf(-1)
	}
	return top + logmath.Log(sum)
}

// phi returns (1+y)^lam - 1 - lam y for y > -1, u = log1p(y) with
// lam u <= 600, real lam > 1, to a relative 1e-13 (see scaledPhi).
func phi(y, u, lam float64) float64 {
	ly := lam * y
	if math.Abs(ly) < 0.01 {
		return phiSeries(y, lam)
	}
	return math.Max(0, math.Expm1(lam*u)-ly)
}

// phiSeries sums the binomial series sum_{j>=2} C(lam, j) y^j for
// |lam y| < 0.01 (terms shrink by |lam y| or |y| each step).
func phiSeries(y, lam float64) float64 {
	sum, term := 0.0, lam*y
	for j := 2.0; j < 400; j++ {
		term *= (lam - j + 1) / j * y
		sum += term
		if math.Abs(term) < 1e-17*math.Abs(sum) {
			break
		}
	}
	return math.Max(0, sum)
}

// scaledPhi returns e^ls phi(1+y) = e^ls ((1+y)^lam - 1 - lam y) for
// y > -1, y != 0, u = log1p(y), real lam > 1, to a relative 1e-13. When
// |lam y| < 0.01 it sums the binomial series sum_{j>=2} C(lam, j) y^j
// (terms shrink by |lam y| or |y| each step); otherwise
// expm1(lam u) - lam y loses at most 2e-16/|lam y| relative.
func scaledPhi(ls, y, u, lam float64) float64 {
	ly := lam * y
	if math.Abs(ly) < 0.01 {
		return math.Exp(ls) * phiSeries(y, lam)
	}
	lu := lam * u
	if lu > 30 {
		return math.Exp(ls+lu) * (1 - math.Exp(-lu)*(1+ly))
	}
	f := math.Expm1(lu) - ly
	if f <= 0 {
		return 0
	}
	return math.Exp(ls) * f
}

// rrGroups groups atoms by the sign of y and floor(log(ymax/|y|)/rrGridLn),
// accumulating, relative to e^ref (the group's first log weight, raised
// when a much larger one comes), the total weight and the weighted sums of
// d and d^2, d = |y| - s0 (s0 the group's first |y|; exact, by Sterbenz,
// as the group's |y| are within a factor e^(1/512)), and the smallest and
// largest |y|. A non-empty group i has its atom at index pos[i] of at
// (pos[i] = -1 while empty), recomputed when the group changes.
type rrGroups struct {
	logY       [2]float64 // log of the largest |y| possible, per sign
	nb         int        // groups per sign
	ref, s0    []float64
	w, wd, wdd []float64
	count      []float64 // terms in the group
	minY, maxY []float64
	pos        []int32
	dirty      []int
	isDty      []bool
	at         rrAtoms
}

func newRRGroups(yPos, yNeg float64) *rrGroups {
	nb := int(rrGridSpan/rrGridLn) + 1
	g := &rrGroups{logY: [2]float64{logmath.Log(yPos), logmath.Log(yNeg)}, nb: nb}
	f := func() []float64 { return make([]float64, 2*nb) }
	g.ref, g.s0, g.w, g.wd, g.wdd, g.count, g.minY, g.maxY = f(), f(), f(), f(), f(), f(), f(), f()
	g.isDty, g.pos = make([]bool, 2*nb), make([]int32, 2*nb)
	for i := range g.w {
		g.ref[i], g.minY[i], g.pos[i] = math.Inf(-1), math.Inf(1), -1
	}
	return g
}

func (g *rrGroups) add(logW, y float64) {
	s := 0
	if y < 0 {
		s = 1
	}
	ay := math.Abs(y)
	la := logmath.Log(ay)
	jf := math.Floor((g.logY[s] - la) / rrGridLn)
	if !(jf < float64(g.nb)) {
		return // dropping a term only lowers the sum
	}
	j := int(math.Max(0, jf))
	i := s*g.nb + j
	switch d := logW - g.ref[i]; {
	case math.IsInf(g.ref[i], -1):
		g.ref[i], g.s0[i] = logW, ay
	case d > 300:
		f := math.Exp(-d)
		g.w[i], g.wd[i], g.wdd[i], g.ref[i] = g.w[i]*f, g.wd[i]*f, g.wdd[i]*f, logW
	}
	// A term below e^-745 of the group's first underflows to 0: dropping
	// it only lowers the sum.
	x := math.Exp(logW - g.ref[i])
	d := ay - g.s0[i]
	g.count[i]++
	g.w[i] += x
	g.wd[i] += x * d
	g.wdd[i] += x * d * d
	g.minY[i], g.maxY[i] = math.Min(g.minY[i], ay), math.Max(g.maxY[i], ay)
	if !g.isDty[i] {
		g.isDty[i] = true
		g.dirty = append(g.dirty, i)
	}
}

// atoms returns one atom per group: its total weight W, rounded down, at
// its weighted mean |y| rounded toward 0 (but not below the group's
// smallest |y|), with the sign of the group, and a lower bound V on the
// weighted variance of y. phi(1+y) is convex in y with second derivative
// lam(lam-1)(1+y)^(lam-2), so the group's sum is at least
// W phi(1+mean) + W lam(lam-1)/2 min(1+y)^(lam-2) V (strong convexity),
// and phi decreases towards y = 0 on each side, so rounding the mean
// toward 0 only lowers it. The roundings cover the float64 error of the
// group's m terms: each within 3 ulps (exp, products), the m-1 additions,
// fewer than m rescalings of 2 ulps: the sums of x and x d^2 within
// 4(m+2) 2^-53 relative, that of x d within 4(m+2) 2^-53 W dmax absolute
// (dmax = largest - smallest |y|).
func (g *rrGroups) atoms() *rrAtoms {
	for _, i := range g.dirty {
		g.isDty[i] = false
		u := 4 * (g.count[i] + 2) * 0x1p-53
		w := g.w[i]
		lw := g.ref[i] + logmath.Log(w) + math.Log1p(-u)
		dmax := g.maxY[i] - g.minY[i]
		md, mdd := g.wd[i]/w, g.wdd[i]/w // within 3u dmax, 3u mdd
		ay := g.s0[i] + md
		ay -= 4*u*dmax + 4*0x1p-53*ay
		ay = math.Max(ay, g.minY[i])
		v := mdd - md*md - 8*u*dmax*dmax
		lv := math.Inf(-1)
		if v > 0 {
			lv = logmath.Log(v)
		}
		y, tLo, tHi := ay, 1+g.minY[i], 1+g.maxY[i]
		if i >= g.nb {
			y, tLo, tHi = -ay, 1-g.maxY[i], 1-g.minY[i]
		}
		if g.pos[i] < 0 {
			g.pos[i] = int32(len(g.at.y))
			g.at.add(lw, y)
		}
		j := g.pos[i]
		g.at.logW[j], g.at.y[j] = lw, y
		g.at.u[j], g.at.la[j] = math.Log1p(y), logmath.Log(ay)
		// Rounded so that t^(lam-2) is rounded down for every lam.
		g.at.lv[j], g.at.ltLo[j], g.at.ltHi[j] = lv, logmath.Log(tLo)-1e-15, logmath.Log(tHi)+1e-15
	}
	if len(g.dirty) > 0 {
		g.at.stale = true
	}
	g.dirty = g.dirty[:0]
	return &g.at
}

// rdpFromLowerSum returns log(1 + e^logS)/(lam-1), rounded down: each term
// of the sum is accurate to far better than 1e-9 relative, so it is first
// shrunk by that.
func rdpFromLowerSum(logS, lam float64) float64 {
	if math.IsInf(logS, -1) {
		return 0
	}
	v := logmath.Log1pExp(logS+math.Log1p(-1e-9)) / (lam - 1)
	return v * (1 - 1e-12)
}

// binomRange returns the integer interval around the mode of Bin(n, p)
// where the log pmf is within cut of its maximum; logP = log p and
// log1mP = log(1-p) are passed separately (no cancellation).
func binomRange(n, logP, log1mP, cut float64) (float64, float64) {
	if math.IsInf(logP, -1) {
		return 0, 0
	}
	if math.IsInf(log1mP, -1) {
		return n, n
	}
	lp := func(x float64) float64 { return logmath.LogBinom(n, x) + x*logP + (n-x)*log1mP }
	mode := math.Min(n, math.Floor((n+1)*math.Exp(logP)))
	top := lp(mode)
	// Log-concave: binary search for each end.
	l, r := 0.0, mode
	for l < r {
		mid := math.Floor((l + r) / 2)
		if lp(mid) >= top-cut {
			r = mid
		} else {
			l = mid + 1
		}
	}
	lo := l
	l, r = mode, n
	for l < r {
		mid := math.Ceil((l + r) / 2)
		if lp(mid) >= top-cut {
			l = mid
		} else {
			r = mid - 1
		}
	}
	return lo, l
}

// logPhi returns log((1+y)^lam - 1 - lam y) for y > -1, y != 0, real
// lam > 1, rounded down by a relative 1e-10 at most. Near y = 0 it sums
// the binomial series sum_{j>=2} C(lam, j) y^j.
func logPhi(y, lam float64) float64 {
	if math.Abs(lam*y) < 0.5 && math.Abs(y) < 0.5 {
		sum, term := 0.0, lam*y
		for j := 2.0; j < 400; j++ {
			term *= (lam - j + 1) / j * y
			sum += term
			if math.Abs(term) < 1e-18*math.Abs(sum) {
				break
			}
		}
		if sum <= 0 {
			return math.Inf(-1)
		}
		return logmath.Log(sum) + math.Log1p(-1e-10)
	}
	u := lam * math.Log1p(y)
	if u > 30 {
		return u + math.Log1p(-math.Exp(-u)*(1+lam*y)) + math.Log1p(-1e-10)
	}
	f := math.Expm1(u) - lam*y
	if f <= 0 {
		return math.Inf(-1)
	}
	return logmath.Log(f) + math.Log1p(-1e-10)
}
