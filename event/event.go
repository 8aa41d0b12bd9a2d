package event

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Mechanism names, stable: the same strings as the --mechanism values of
// `shuffledp account`, stored in ledgers.
const (
	// SubsampledShuffle: k of n clients sampled without replacement per
	// round, each sends an eps0-LDP report, the reports are shuffled
	// (NeurIPS'21).
	SubsampledShuffle = "subsampled-shuffle"
	// Shuffle: all n clients send an eps0-LDP report, shuffled (CCS'21).
	Shuffle = "shuffle"
	// ShuffleGaussian: all n clients add N(0, sigma^2 I) (sigma in units of
	// the L2 sensitivity), reports shuffled (ICLR'23 submission, Thm 1).
	ShuffleGaussian = "shuffle-gaussian"
	// SubsampledShuffleGaussian: k of n clients sampled without replacement
	// add Gaussian noise, shuffled (ICLR'23 submission, Thm 2).
	SubsampledShuffleGaussian = "subsampled-shuffle-gaussian"
	// CheckinGaussian: each of n clients checks in with probability rate
	// and adds Gaussian noise, shuffled (ICLR'23 submission, eqs. 11, 13).
	CheckinGaussian = "checkin-gaussian"
)

// Mechanisms returns the mechanism names, sorted.
func Mechanisms() []string {
	return []string{CheckinGaussian, SampledGaussian, Shuffle, ShuffleGaussian, SubsampledShuffle, SubsampledShuffleGaussian}
}

// Event is one application of a mechanism with its parameters. A zero field
// is "not used by this mechanism" and JSON omits it (n is always written),
// for example {"mechanism":"subsampled-shuffle","n":60000,"k":10000,"eps0":1.5}.
//
// Fields by mechanism (others must be zero):
//
//	subsampled-shuffle           n, k (1 <= k <= n), eps0 >= 0
//	shuffle                      n, eps0 >= 0 (k zero or n)
//	shuffle-gaussian             n, sigma >= MinSigma (k zero or n)
//	subsampled-shuffle-gaussian  n, k (1 <= k <= n), sigma >= MinSigma
//	checkin-gaussian             n, rate in (0, 1], sigma >= MinSigma
//	sampled-gaussian             rate in (0, 1], sigma >= MinSigma; n optional (sampled_gaussian.go)
//
// Adjacency (adjacency.go) names the neighbouring relation the event's
// epsilon is for: replace-one or zero-out for the shuffle Gaussian
// mechanisms (replace-one is their curve at sigma/2), add-remove or
// zero-out for sampled-gaussian (replace-one is refused), replace-one for
// the eps0-LDP mechanisms. Empty means the legacy meaning of an event
// written before the field existed (EffectiveAdjacency): zero-out for the
// shuffle Gaussian mechanisms, add-remove for sampled-gaussian, so that
// stored ledgers keep their meaning; every producer in this module sets it
// explicitly on the Gaussian events it writes.
type Event struct {
	Mechanism string  `json:"mechanism"`
	N         int64   `json:"n"`
	K         int64   `json:"k,omitempty"`
	Eps0      float64 `json:"eps0,omitempty"`
	Sigma     float64 `json:"sigma,omitempty"`
	Rate      float64 `json:"rate,omitempty"`
	Adjacency string  `json:"adjacency,omitempty"`
}

// Composed is an event applied Count times; rounds compose additively in
// RDP.
type Composed struct {
	Event Event `json:"event"`
	Count int64 `json:"count"`
}

// MinSigma is the smallest noise multiplier Validate accepts: the Gaussian
// curves divide by sigma^2, which overflows float64 below about 1e-154
// (and such a sigma spends an epsilon beyond 1e200 per round anyway).
const MinSigma = 1e-100

// IsGaussian reports whether m is one of the shuffle Gaussian mechanisms
// (ShuffleGaussian, SubsampledShuffleGaussian, CheckinGaussian): noise
// multiplier sigma, no eps0.
func IsGaussian(m string) bool {
	switch m {
	case ShuffleGaussian, SubsampledShuffleGaussian, CheckinGaussian:
		return true
	}
	return false
}

// IsLDP reports whether m is one of the eps0-LDP shuffle mechanisms
// (Shuffle, SubsampledShuffle): those with eps0-LDP reports, and so with the
// approximate-DP baselines.
func IsLDP(m string) bool { return m == Shuffle || m == SubsampledShuffle }

// Validate checks the parameters of e. Errors name the parameter as the
// shuffledp flag (--n, --k, --eps0, --sigma, --rate, --mechanism,
// --adjacency).
func (e Event) Validate() error {
	if e.Mechanism == SampledGaussian {
		if err := e.validateSampledGaussian(); err != nil { // sampled_gaussian.go
			return err
		}
		return e.validateAdjacency()
	}
	if !IsLDP(e.Mechanism) && !IsGaussian(e.Mechanism) {
		return fmt.Errorf("--mechanism must be one of %s, got %q", strings.Join(Mechanisms(), ", "), e.Mechanism)
	}
	if err := e.validateAdjacency(); err != nil {
		return err
	}
	if e.N < 1 {
		return fmt.Errorf("--n must be >= 1, got %d", e.N)
	}
	m := e.Mechanism
	if IsLDP(m) {
		if math.IsNaN(e.Eps0) || math.IsInf(e.Eps0, 0) || e.Eps0 < 0 {
			return fmt.Errorf("--eps0 must be a finite number >= 0, got %g", e.Eps0)
		}
		if e.Sigma != 0 {
			return fmt.Errorf("--sigma is not used by --mechanism %s (eps0-LDP reports: use --eps0)", m)
		}
		if e.Rate != 0 {
			return fmt.Errorf("--rate is not used by --mechanism %s; use --mechanism %s", m, CheckinGaussian)
		}
		if m == Shuffle {
			if e.K != 0 && e.K != e.N {
				return fmt.Errorf("--k is not used by --mechanism %s (all n clients report); omit it", m)
			}
			return nil
		}
		return checkK(e.N, e.K)
	}
	if e.Sigma == 0 {
		return fmt.Errorf("--sigma (noise multiplier) is required for --mechanism %s", m)
	}
	if !(e.Sigma > 0) || math.IsInf(e.Sigma, 0) {
		return fmt.Errorf("--sigma must be positive and finite, got %g", e.Sigma)
	}
	if e.Sigma < MinSigma {
		return fmt.Errorf("--sigma must be >= %g (below, lambda/(2 sigma^2) leaves float64), got %g", MinSigma, e.Sigma)
	}
	if e.Eps0 != 0 {
		return fmt.Errorf("--eps0 is not used by --mechanism %s (Gaussian noise: use --sigma)", m)
	}
	switch m {
	case ShuffleGaussian:
		if e.K != 0 && e.K != e.N {
			return fmt.Errorf("--k is not used by --mechanism %s (all n clients report); omit it", m)
		}
		if e.Rate != 0 {
			return fmt.Errorf("--rate is not used by --mechanism %s; use --mechanism %s", m, CheckinGaussian)
		}
	case SubsampledShuffleGaussian:
		if e.Rate != 0 {
			return fmt.Errorf("--rate is not used by --mechanism %s (k of n sampled without replacement: use --k, or --mechanism %s)", m, CheckinGaussian)
		}
		return checkK(e.N, e.K)
	case CheckinGaussian:
		if e.K != 0 {
			return fmt.Errorf("--k is not used by --mechanism %s (the number of reports is random: use --rate)", m)
		}
		if e.Rate == 0 {
			return fmt.Errorf("--rate (check-in probability) is required for --mechanism %s", m)
		}
		if !(e.Rate > 0 && e.Rate <= 1) {
			return fmt.Errorf("--rate must be in (0, 1], got %g", e.Rate)
		}
	}
	return nil
}

func checkK(n, k int64) error {
	if k < 1 || k > n {
		return fmt.Errorf("--k must satisfy 1 <= k <= n (n=%d), got %d", n, k)
	}
	return nil
}

// Reports returns the number of clients that report per round: k for the
// subsampled mechanisms, n for shuffle and shuffle-gaussian, 0 for check-in
// (random).
func (e Event) Reports() int64 {
	switch e.Mechanism {
	case Shuffle, ShuffleGaussian:
		return e.N
	case CheckinGaussian:
		return 0
	}
	return e.K
}

// Flags formats e as the flags of `shuffledp account` that describe it
// ("--mechanism subsampled-shuffle --n 60000 --k 1000 --eps0 2"), with the
// adjacency of a Gaussian event spelled out (an event stored without one
// has its legacy meaning, which is not account's default).
func (e Event) Flags() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--mechanism %s --n %d", e.Mechanism, e.N)
	if e.K != 0 {
		fmt.Fprintf(&b, " --k %d", e.K)
	}
	if e.Eps0 != 0 {
		fmt.Fprintf(&b, " --eps0 %g", e.Eps0)
	}
	if e.Sigma != 0 {
		fmt.Fprintf(&b, " --sigma %g", e.Sigma)
	}
	if e.Rate != 0 {
		fmt.Fprintf(&b, " --rate %g", e.Rate)
	}
	if e.Sigma != 0 {
		fmt.Fprintf(&b, " --adjacency %s", e.EffectiveAdjacency())
	}
	return b.String()
}

// String formats e as mechanism(parameters), listing the parameters the
// mechanism uses and the adjacency when set:
// "subsampled-shuffle(n=60000, k=10000, eps0=1.5)",
// "checkin-gaussian(n=60000, rate=0.1, sigma=5, adjacency=replace-one)".
func (e Event) String() string {
	if e.Mechanism == SampledGaussian {
		return e.sampledGaussianString()
	}
	var p []string
	add := func(name, v string) { p = append(p, name+"="+v) }
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	add("n", strconv.FormatInt(e.N, 10))
	if e.K != 0 && !(e.K == e.N && (e.Mechanism == Shuffle || e.Mechanism == ShuffleGaussian)) {
		add("k", strconv.FormatInt(e.K, 10))
	}
	if e.Rate != 0 {
		add("rate", g(e.Rate))
	}
	if IsLDP(e.Mechanism) || e.Eps0 != 0 {
		add("eps0", g(e.Eps0))
	}
	if e.Sigma != 0 {
		add("sigma", g(e.Sigma))
	}
	if e.Adjacency != "" {
		add("adjacency", e.Adjacency)
	}
	return e.Mechanism + "(" + strings.Join(p, ", ") + ")"
}

// Parse decodes one event from JSON, refusing unknown fields, and validates
// it.
func Parse(data []byte) (Event, error) {
	var e Event
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, fmt.Errorf("event: %w", err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("event: trailing data after the JSON object")
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}
