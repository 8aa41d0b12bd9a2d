package randomizer

import (
	"errors"
	"fmt"
	"math"
)

// Report is one randomizer output in its wire format: a fixed-size byte
// string whose first byte carries the wire-format version and the
// randomizer kind (see wire.go). Reports carry no client identity.
type Report []byte

// Randomizer is a local randomizer: it maps a clipped input vector to a
// compact report and decodes reports into unbiased estimates of the input.
//
// Implementations are safe for concurrent use by multiple goroutines as long
// as each goroutine passes its own Source.
type Randomizer interface {
	// Name is the constructor name: "rr", "krr", "rinf", "r1", "r2",
	// "djw", "privunit" or "gaussian".
	Name() string
	// Dim is the length of the input vector (and of the decoded estimate).
	Dim() int
	// Eps0 is the pure local-DP parameter: for all inputs x, x' and every
	// report y, P[y | x] ≤ e^Eps0 · P[y | x']. The Gaussian randomizer is
	// not pure LDP and returns +Inf; account for it with its Sigma.
	Eps0() float64
	// Norm and Radius describe the input domain: the ball of radius Radius
	// in the norm Norm. Inputs outside it are rejected by Randomize; use
	// Clip first. (For "rr" and "krr" the domain is categorical and Norm is
	// NormNone.)
	Norm() Norm
	Radius() float64
	// ReportSize is the fixed length in bytes of every report.
	ReportSize() int
	// Randomize returns an eps0-LDP report of x (len(x) == Dim()), drawing
	// all randomness from src.
	Randomize(x []float64, src Source) (Report, error)
	// Decode returns the unbiased estimate of the input encoded by rep:
	// E[Decode(Randomize(x))] = x. It rejects malformed reports.
	Decode(rep Report) ([]float64, error)
	// AddDecoded adds scale·Decode(rep) into sum (len(sum) == Dim()) without
	// allocating: O(1) for the 1-sparse reports of R_inf and R_2, O(Dim)
	// for R_1 (a ±Hadamard column, generated on the fly), k-RR, PrivUnit
	// and Gaussian. It rejects malformed reports and leaves sum untouched
	// when it does.
	AddDecoded(rep Report, scale float64, sum []float64) error
}

// Discrete is a randomizer whose output space is finite and whose output
// probabilities are known exactly.
type Discrete interface {
	Randomizer
	// NumOutputs is the size of the output space.
	NumOutputs() int
	// Output returns the report with index i in [0, NumOutputs()).
	Output(i int) Report
	// OutputProbabilities writes into p (len NumOutputs()) the probability
	// of every output given input x, as realised by the implementation
	// (the integer thresholds over 2^64, not the ideal real numbers).
	OutputProbabilities(x []float64, p []float64) error
	// InputGrid returns a set of inputs in the domain that contains the
	// extreme points relevant to the worst-case likelihood ratio, for audits.
	InputGrid() [][]float64
}

// Batcher is implemented by randomizers with a faster way to add many
// decoded reports at once than one AddDecoded call per report.
type Batcher interface {
	AddDecodedBatch(reps []Report, scale float64, sum []float64) error
}

// AddDecodedAll adds scale·Σ Decode(rep) over reps into sum, using the
// randomizer's batch path when it has one (R_1: one fast Walsh–Hadamard
// transform of the signed column counts). reps may be []Report or the
// [][]byte a shuffler returns. If a report is malformed it returns an error
// naming its index; sum then holds the reports before it (the R_1 batch
// path validates all reports first and leaves sum untouched).
func AddDecodedAll[R ~[]byte](r Randomizer, reps []R, scale float64, sum []float64) error {
	if r1, ok := r.(*R1); ok {
		return addDecodedBatchR1(r1, reps, scale, sum)
	}
	for i, rep := range reps {
		if err := r.AddDecoded(Report(rep), scale, sum); err != nil {
			return fmt.Errorf("report %d: %w", i, err)
		}
	}
	return nil
}

// Config holds the parameters of New. Unused fields are ignored by the
// randomizers that do not need them.
type Config struct {
	// Eps0 is the LDP parameter (all but "gaussian"); must be finite and > 0.
	Eps0 float64
	// Dim is the input dimension d ("rr" needs 1; "krr" takes k = Dim ≥ 2).
	Dim int
	// Radius is the clipping radius a of the input ball ("rinf", "r1",
	// "r2", "djw", "privunit", "gaussian"); 0 means 1.
	Radius float64
	// Sigma is the noise multiplier of "gaussian": the noise standard
	// deviation is Sigma·Radius per coordinate.
	Sigma float64
}

// Names lists the constructor names New accepts.
var Names = []string{"rr", "krr", "rinf", "r1", "r2", "djw", "privunit", "gaussian"}

// New returns the randomizer called name with the parameters in cfg.
func New(name string, cfg Config) (Randomizer, error) {
	if cfg.Radius == 0 {
		cfg.Radius = 1
	}
	if !(cfg.Radius > 0) || math.IsInf(cfg.Radius, 0) {
		return nil, fmt.Errorf("radius (clip) must be finite and > 0, got %g", cfg.Radius)
	}
	if cfg.Dim < 1 {
		return nil, fmt.Errorf("dim must be >= 1, got %d", cfg.Dim)
	}
	if name != "gaussian" {
		if err := checkEps0(cfg.Eps0); err != nil {
			return nil, err
		}
	}
	switch name {
	case "rr":
		return NewBinaryRR(cfg.Eps0, cfg.Dim)
	case "krr":
		return NewKRR(cfg.Eps0, cfg.Dim)
	case "rinf":
		return NewRInf(cfg.Eps0, cfg.Dim, cfg.Radius)
	case "r1":
		return NewR1(cfg.Eps0, cfg.Dim, cfg.Radius)
	case "r2":
		return NewR2(cfg.Eps0, cfg.Dim, cfg.Radius)
	case "djw":
		return NewDJW(cfg.Eps0, cfg.Dim, cfg.Radius)
	case "privunit":
		return NewPrivUnit(cfg.Eps0, cfg.Dim, cfg.Radius)
	case "gaussian":
		return NewGaussian(cfg.Sigma, cfg.Dim, cfg.Radius)
	}
	return nil, fmt.Errorf("randomizer must be one of %v, got %q", Names, name)
}

// maxEps0 bounds eps0 so that e^eps0 and the 64-bit thresholds stay
// meaningful (at eps0 = 40 the minority probability is 4e-18 ≈ 2^-58).
const maxEps0 = 40

func checkEps0(eps0 float64) error {
	if !(eps0 > 0) || eps0 > maxEps0 || math.IsNaN(eps0) {
		return fmt.Errorf("eps0 must be in (0, %d], got %g", maxEps0, eps0)
	}
	return nil
}

// ErrDomain is wrapped by the errors Randomize returns for inputs outside
// the randomizer's domain.
var ErrDomain = errors.New("input outside the randomizer's domain")

// ErrMalformed is wrapped by the errors Decode and AddDecoded return for
// reports that are not valid outputs of the randomizer.
var ErrMalformed = errors.New("malformed report")
