// Package account answers the question of `shuffledp account`: the
// (epsilon, delta) spent by --steps rounds of one mechanism (the
// subsampled shuffle model of NeurIPS'21 Thm 1, one shuffle (CCS'21), the
// shuffle Gaussian mechanisms of the ICLR'23 submission, and the sampled
// Gaussian mechanism of central DP-SGD, Mironov, Talwar and Zhang 2019),
// by one named bound or by every applicable bound side by side.
//
// A Request holds the command's parameters, named as its flags; Evaluate
// returns its rows; Answer.Output is the object `shuffledp account --json`
// prints, and EvaluateJSON maps a JSON request to exactly those bytes (for
// the shared library of the Python package and the WebAssembly
// calculator). The bounds themselves are package route's (RDP curves, the
// best over every route, PLD, the certified interval) and package
// approxdp's (the approximate-DP baselines); each round's event is built
// by event.RoundEvent, as the simulation and the shuffler's ledger build
// theirs.
package account

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/route"
)

// BoundAll is the Request.Bound that asks for every applicable bound side
// by side (the command's default without --json).
const BoundAll = "all"

// Request is one accounting question: the flags of `shuffledp account`
// (and `calibrate`), each field's flag, default (those of Defaults) and
// help text in its struct tags, bound by cliflag.Bind; --mechanism's
// usage lists event.Mechanisms (FlagUsage).
type Request struct {
	// Mechanism is one of event.Mechanisms.
	Mechanism string `flag:"mechanism" default:"subsampled-shuffle" usage:"mechanism: one of event.Mechanisms"`
	// Bound is the bound to report (BoundNames lists them); BoundAll asks
	// for every bound side by side.
	Bound string `flag:"bound" default:"best" usage:"bound to report (see above)"`
	N     int64  `flag:"n" kind:"count" default:"1000000" usage:"number of clients n (1e6 notation accepted)"`
	K     int64  `flag:"k" kind:"count" default:"1000" usage:"clients sampled per round k"`
	// Rate is the sampling probability of the check-in and sampled
	// Gaussian mechanisms; 0 if not given.
	Rate float64 `flag:"rate" usage:"check-in probability per client and round (checkin-gaussian)"`
	Eps0 float64 `flag:"eps0" default:"2" usage:"LDP parameter eps0 of each client's randomizer (LDP mechanisms)"`
	// Sigma is the noise multiplier of the Gaussian mechanisms; 0 if not
	// given.
	Sigma float64 `flag:"sigma" usage:"noise multiplier sigma (Gaussian mechanisms)"`
	Steps int64   `flag:"steps" kind:"count" default:"100000" usage:"number of rounds T"`
	Delta float64 `flag:"delta" kind:"fraction" default:"1e-8" usage:"target delta in (0,1); a quotient such as 1/60000 is accepted. The default, 1e-8 (the papers' figures), differs from the 1e-5 of train, up and the shuffler (and so of a run's ledger): pass --delta 1e-5 to compare with a run; the output names the delta used"`
	// Orders is the RDP order grid; it is used only when "orders" is
	// given (otherwise each bound's default grid).
	Orders []float64
	// Given reports whether the parameter of that flag name ("k", "eps0",
	// "client-sigma", ...) was set by the caller: a parameter the
	// mechanism does not use is passed on only when given, so that
	// event.Validate names it, and sampled-gaussian derives its rate from
	// --k and --n only when both are given. Nil means: a parameter is
	// given when its field is not zero.
	Given func(flag string) bool

	// ClientSigma is --client-sigma (sampled-gaussian): the per-client
	// noise multiplier of a shuffle-model run, so that sigma = sqrt(k) *
	// ClientSigma.
	ClientSigma float64 `flag:"client-sigma" usage:"sampled-gaussian: per-client sigma of a shuffle-model run with --k clients; sigma = sqrt(k) * client-sigma"`
	// Adjacency is --adjacency; "" means event.DefaultAdjacency of the
	// mechanism (replace-one; add-remove for sampled-gaussian).
	Adjacency string `flag:"adjacency" usage:"neighbouring datasets the epsilon is for: replace-one (one client's gradient replaced by any other, up to 2C apart; the default, and the only one of the LDP mechanisms), zero-out (replaced by zero: the ICLR'23 paper's convention; the Gaussian curve at sigma instead of sigma/2) or add-remove (sampled-gaussian's default; same numbers as zero-out there)"`
}

// Defaults is the request of `shuffledp account` without flags: the
// setting of NeurIPS'21 Fig. 2a (subsampled shuffle, n = 10^6, k = 1000,
// eps0 = 2, 10^5 rounds, delta = 1e-8) under the bound best, with no
// parameter given.
func Defaults() Request {
	return Request{Mechanism: accounting.MechanismSubsampledShuffle, Bound: accounting.BoundBest,
		N: 1000000, K: 1000, Eps0: 2, Steps: 100000, Delta: 1e-8, Given: func(string) bool { return false }}
}

// given is r.Given(flag), or for a nil Given whether the field is not zero.
func (r Request) given(flag string) bool {
	if r.Given != nil {
		return r.Given(flag)
	}
	switch flag {
	case "mechanism":
		return r.Mechanism != ""
	case "bound":
		return r.Bound != ""
	case "n":
		return r.N != 0
	case "k":
		return r.K != 0
	case "rate":
		return r.Rate != 0
	case "eps0":
		return r.Eps0 != 0
	case "sigma":
		return r.Sigma != 0
	case "client-sigma":
		return r.ClientSigma != 0
	case "steps":
		return r.Steps != 0
	case "delta":
		return r.Delta != 0
	case "orders":
		return r.Orders != nil
	case "adjacency":
		return r.Adjacency != ""
	}
	return false
}

// Validate checks the parameters every mechanism shares (n, steps, delta,
// eps0); the event checks the rest. Errors name the flag.
func (r Request) Validate() error {
	switch {
	case r.N < 1:
		return fmt.Errorf("--n must be >= 1, got %d", r.N)
	case r.Steps < 0:
		return fmt.Errorf("--steps must be >= 0, got %d", r.Steps)
	case !(r.Delta > 0 && r.Delta < 1):
		return fmt.Errorf("--delta must be in (0,1), got %g", r.Delta)
	case math.IsNaN(r.Eps0) || math.IsInf(r.Eps0, 0) || r.Eps0 < 0:
		return fmt.Errorf("--eps0 must be a finite number >= 0, got %g", r.Eps0)
	}
	return nil
}

// Row is one (epsilon, delta) statement from one bound: a line of
// `account` output.
type Row struct {
	Bound   string  `json:"bound"`
	Winner  string  `json:"winning_bound,omitempty"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Order   float64 `json:"order,omitempty"` // 0 for bounds not derived from RDP
	// Lower is kept for existing readers: true when Epsilon is not a
	// guarantee, that is for the lower kinds: an RDP lower bound (Kind
	// "rdp-lower", which is not a lower bound on epsilon either) and the
	// certified lower end (Kind "certified-lower"). Read Kind, Upper and
	// LowerEnd instead.
	Lower bool `json:"lower_bound"`
	// Upper is the row's upper bound on epsilon (a guarantee): Epsilon
	// for kind "upper", the interval's upper end for the certified row;
	// null for an RDP lower bound, which guarantees nothing, and for an
	// infinite upper end, UpperNote saying why (JSON has no infinity).
	Upper     *float64 `json:"upper"`
	UpperNote string   `json:"upper_note,omitempty"`
	// LowerEnd is the row's lower bound on epsilon: the certified lower
	// end (the exact epsilon of Witness); null for every other row (an
	// RDP lower bound is not a lower bound on epsilon).
	LowerEnd *float64 `json:"lower"`
	// Kind is "upper" (a guarantee), "rdp-lower" (a lower bound on the RDP
	// curve, converted: neither a guarantee nor a lower bound on epsilon)
	// or "certified-lower" (the exact epsilon of a concrete mechanism: a
	// true lower bound on the worst case).
	Kind string `json:"kind"`
	// PLDOptimistic and PLDGrid are set for the pld bound: the optimistic
	// end of the PLD interval (below the dominating pairs' epsilon; the
	// guarantee is Epsilon, the pessimistic end) and the loss grid width.
	PLDOptimistic float64 `json:"pld_optimistic,omitempty"`
	PLDGrid       float64 `json:"pld_grid,omitempty"`
	// Interval, Ratio, UpperBound and Witness are set for the certified
	// bound: [certified lower, best upper], upper/lower, the bound attaining
	// the upper end and the mechanism whose exact epsilon is the lower end.
	// Ratio is null when the lower end is 0 (RatioNote says so); Witness
	// is empty then (no witness has a positive epsilon).
	Interval   []float64 `json:"interval,omitempty"`
	Ratio      *float64  `json:"ratio,omitempty"`
	RatioNote  string    `json:"ratio_note,omitempty"`
	UpperBound string    `json:"upper_bound,omitempty"`
	Witness    string    `json:"witness,omitempty"`
	// Routes lists, for "best", every route it compared (the winner
	// included), each with its epsilon and the bound that attains it.
	Routes     []route.RouteResult `json:"routes,omitempty"`
	AtGridEdge bool                `json:"at_grid_edge,omitempty"`
	Conversion string              `json:"conversion,omitempty"`
	// Conjecture is true when Epsilon rests on a conjecture (a shuffle
	// Gaussian bound of route.IsConjecture attains it): not a proven
	// guarantee. Never set for "best".
	Conjecture bool   `json:"conjecture,omitempty"`
	Note       string `json:"note,omitempty"`
}

// EffectiveKind returns r.Kind, or its value from Lower for a row built
// without it (Rows leaves Kind empty except for the certified row;
// Evaluate sets it).
func (r Row) EffectiveKind() string {
	switch {
	case r.Kind != "":
		return r.Kind
	case r.Lower:
		return accounting.KindRDPLower
	}
	return accounting.KindUpper
}

// CheckRow refuses a row that is not a valid statement: an epsilon that
// is NaN, infinite or negative, or an interval that is not one.
func CheckRow(r Row) error {
	if math.IsNaN(r.Epsilon) || math.IsInf(r.Epsilon, 0) || r.Epsilon < 0 {
		return fmt.Errorf("%s: internal error: epsilon %g is not a finite non-negative number", r.Bound, r.Epsilon)
	}
	if len(r.Interval) == 2 && !(r.Interval[0] >= 0 && r.Interval[0] <= r.Interval[1]) {
		return fmt.Errorf("%s: internal error: interval %v is not an interval of epsilons", r.Bound, r.Interval)
	}
	return nil
}

// Ends sets what r states in explicit fields for a reader of the JSON:
// Kind (EffectiveKind), Lower (true for the lower kinds), Upper and
// LowerEnd (each null where the row states no such bound, an infinite
// upper end null with UpperNote), and a null Ratio with RatioNote where
// the lower end is 0. Evaluate calls it on every row.
func (r *Row) Ends() {
	r.Kind = r.EffectiveKind()
	r.Lower = r.Kind != accounting.KindUpper
	r.Upper, r.LowerEnd, r.UpperNote = nil, nil, ""
	finite := func(x float64) *float64 {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		return &x
	}
	switch r.Kind {
	case accounting.KindUpper:
		r.Upper = finite(r.Epsilon)
	case accounting.KindCertifiedLower:
		r.LowerEnd = finite(r.Epsilon)
		if len(r.Interval) == 2 {
			if r.Upper = finite(r.Interval[1]); r.Upper == nil {
				r.UpperNote = "no finite upper bound applies"
			}
		}
	}
	if r.Kind == accounting.KindUpper && r.Upper == nil {
		r.UpperNote = "no finite upper bound applies"
	}
	if r.Ratio != nil && r.Interval != nil && r.Interval[0] == 0 {
		r.Ratio = nil
	}
	if len(r.Interval) == 2 && r.Ratio == nil {
		r.RatioNote = "no ratio: the certified lower end is 0"
	}
}

// Answer is Evaluate's result: the request, its rows (one, or with
// BoundAll one per applicable bound) and the bounds skipped at these
// parameters, each with the reason.
type Answer struct {
	Request Request
	Rows    []Row
	Skipped []string
}

// Evaluate answers req as `shuffledp account` does: the shared
// parameters are validated, the rows computed (Rows), each row's Kind set
// and every row checked (CheckRow). Errors name the flag of the parameter
// at fault.
func Evaluate(req Request) (Answer, error) {
	if err := req.Validate(); err != nil {
		return Answer{}, err
	}
	rows, skipped, err := Rows(req)
	if err != nil {
		return Answer{}, err
	}
	for i := range rows {
		rows[i].Ends()
		if err := CheckRow(rows[i]); err != nil {
			return Answer{}, err
		}
	}
	return Answer{Request: req, Rows: rows, Skipped: skipped}, nil
}

// Output is the object `shuffledp account --json` prints: the main row
// (best's when several), the event's parameters the mechanism used, the
// number of rounds, every row when there are several, and warnings (an
// optimal order at the edge of the grid, a bound skipped).
type Output struct {
	Row
	event.Event          // mechanism, n, k, eps0, sigma, rate, adjacency
	Steps       int64    `json:"steps"`
	All         []Row    `json:"all,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
}

// Output is the JSON object of a: it echoes only the parameters the
// mechanism used (k for the subsampled mechanisms, n for shuffle; eps0
// for the LDP ones; sigma and rate for the Gaussian ones; for
// sampled-gaussian the effective rate and sigma).
func (a Answer) Output() Output {
	req, rows := a.Request, a.Rows
	o := Output{Event: event.Event{Mechanism: req.Mechanism, N: req.N, Sigma: req.Sigma, Rate: req.Rate}, Steps: req.Steps}
	switch {
	case req.Mechanism == accounting.MechanismShuffle:
		o.K = req.N
	case req.Mechanism == accounting.MechanismSubsampledShuffle || req.given("k"):
		o.K = req.K
	}
	if !req.given("sigma") {
		o.Eps0 = req.Eps0
	}
	o.Adjacency = req.Event().EffectiveAdjacency()
	if len(rows) > 0 {
		o.Row = rows[0]
	}
	if len(rows) > 1 {
		o.All = rows
		for _, r := range rows {
			if r.Bound == accounting.BoundBest {
				o.Row = r
			}
		}
	}
	for _, r := range rows {
		if r.AtGridEdge {
			o.Warnings = append(o.Warnings, fmt.Sprintf("%s: optimal order %g is at the edge of the grid", r.Bound, r.Order))
		}
	}
	o.Warnings = append(o.Warnings, a.Skipped...)
	if req.Mechanism == event.SampledGaussian {
		o.Event = req.Event() // the effective rate and sigma (sampled_gaussian.go)
	}
	return o
}

// WriteJSON writes a.Output() as `shuffledp account --json` does: indented
// by two spaces, one trailing newline.
func (a Answer) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a.Output())
}

// Event returns the privacy event of one round that the request describes,
// built by event.RoundEvent with the mechanism named (event.Round's
// Mechanism). A parameter the mechanism does not use is set only when
// given, so that event.Validate names it; an unvalidated event is returned
// when RoundEvent refuses the request (Rows reports the error). A Gaussian
// event always carries its adjacency (Adjacency, default
// event.DefaultAdjacency); an LDP event only when Adjacency is given.
func (r Request) Event() event.Event {
	e, _ := r.roundEvent()
	return e
}

// roundEvent is Event with RoundEvent's error.
func (r Request) roundEvent() (event.Event, error) {
	rd := r.round()
	e, err := event.RoundEvent(rd)
	if err != nil {
		return event.Event{Mechanism: rd.Mechanism, N: rd.N, K: rd.Reports, Eps0: rd.Eps0, Sigma: rd.Sigma,
			Rate: rd.Rate, Adjacency: rd.Adjacency}, err
	}
	return e, nil
}

// round is the request's round configuration, the mechanism named.
func (r Request) round() event.Round {
	if r.Mechanism == event.SampledGaussian {
		rd := r.sampledGaussianRound() // sampled_gaussian.go
		rd.Adjacency = r.adjacency()
		return rd
	}
	rd := event.Round{Mechanism: r.Mechanism, N: r.N, Sigma: r.Sigma, Rate: r.Rate}
	if event.IsGaussian(r.Mechanism) || r.Adjacency != "" {
		rd.Adjacency = r.adjacency()
	}
	if r.Mechanism == event.SubsampledShuffle || r.Mechanism == event.SubsampledShuffleGaussian || r.given("k") {
		rd.Reports = r.K
	}
	if r.Mechanism == event.Shuffle || r.Mechanism == event.SubsampledShuffle || r.given("eps0") {
		rd.Eps0 = r.Eps0
	}
	return rd
}

// adjacency is Adjacency, or the mechanism's default.
func (r Request) adjacency() string {
	if r.Adjacency != "" {
		return r.Adjacency
	}
	return event.DefaultAdjacency(r.Mechanism)
}

// errNotApplicable is wrapped by a baseline that does not apply to the
// request (then BoundAll skips it silently).
var errNotApplicable = errors.New("bound does not apply to this mechanism")
