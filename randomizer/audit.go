package randomizer

import (
	"fmt"
	"math"
)

// AuditResult is the outcome of an exact audit of a discrete randomizer over
// its input grid.
type AuditResult struct {
	Randomizer string  `json:"randomizer"`
	Eps0       float64 `json:"eps0"`
	Dim        int     `json:"dim"`
	Inputs     int     `json:"inputs"`
	Outputs    int     `json:"outputs"`
	// MaxLogRatio is max over outputs y and grid inputs x, x' of
	// |log P[y|x] − log P[y|x']|, from the realised output probabilities.
	MaxLogRatio float64 `json:"max_log_ratio"`
	// MaxBias is max over grid inputs x and coordinates i of
	// |E[Decode(Randomize(x))]_i − x_i|, the expectation computed exactly
	// from the output probabilities (so it measures floating-point rounding
	// only, if decoding is unbiased).
	MaxBias float64 `json:"max_bias"`
	// MaxRelBias is MaxBias divided by the largest decoded magnitude, a
	// scale-free measure: about 1e-16 means unbiased to rounding.
	MaxRelBias float64 `json:"max_rel_bias"`
	// MaxProbSumError is max over grid inputs of |Σ_y P[y|x] − 1|.
	MaxProbSumError float64 `json:"max_prob_sum_error"`
	// OK reports MaxLogRatio ≤ Eps0·(1+1e-12) and MaxRelBias ≤ 1e-9.
	OK bool `json:"ok"`
	// Method is "exact" (enumeration of the output distribution over the
	// input grid, from Audit) or "analytic" (the bound of the construction,
	// from AuditBound; bias is zero by construction and tested
	// statistically in the package tests, not measured).
	Method string `json:"method"`
}

// Bounded is implemented by randomizers with continuous internal
// randomness whose worst-case log-likelihood ratio is known analytically
// from the realised parameters (R_2: the realised hemisphere coin;
// PrivUnit: the realised cap coin and cap mass).
type Bounded interface {
	Randomizer
	// LogRatioBound is sup over inputs x, x' and measurable output sets S
	// of log(P[S|x]/P[S|x']), computed from the realised coin thresholds.
	LogRatioBound() float64
}

// AuditBound reports the analytic worst-case log ratio of a Bounded
// randomizer (Method "analytic"); MaxBias is 0 by the unbiasedness theorem
// of the construction, which the package tests check statistically.
func AuditBound(r Bounded) AuditResult {
	res := AuditResult{Randomizer: r.Name(), Eps0: r.Eps0(), Dim: r.Dim(), Method: "analytic"}
	res.MaxLogRatio = r.LogRatioBound()
	res.OK = res.MaxLogRatio <= res.Eps0*(1+1e-12)
	return res
}

// LogRatioBound is log(t/(2^64 − t)) for the realised hemisphere coin of
// Priv: the density of Priv's output under any two inputs differs by at
// most that factor, and Quan is post-processing.
func (r *R2) LogRatioBound() float64 {
	return math.Log(prob(r.t)) - math.Log(probComplement(r.t))
}

// LogRatioBound is WorstCaseLogRatio.
func (r *PrivUnit) LogRatioBound() float64 { return r.epsBound }

// expecter is implemented by discrete randomizers that can compute
// Σ_y P[y]·Decode(y) faster than one AddDecoded per output (R_1: one FWHT).
type expecter interface {
	expectation(p []float64, mean []float64)
}

// MaxAuditDim is the largest dimension Audit accepts. The input grid holds
// up to 64 vectors of length dim and the output distribution has up to
// 2·dim entries; at dim = MaxAuditDim the costliest audit (krr, 64 one-hot
// inputs of length k) took about 3 s of CPU and 650 MB, rinf and r1 less
// (dim = 1e8 ran past 20 s and 4 GB before it was stopped). The largest
// model trained here has d = 26,010.
const MaxAuditDim = 1 << 20

// Audit computes, exactly from the output probabilities, the worst-case
// log-likelihood ratio and the bias of decoding over r.InputGrid().
//
// The LDP claim audited is: for every output y and inputs x, x',
// P[y|x] ≤ e^eps0·P[y|x']. The unbiasedness claim: Σ_y P[y|x]·Decode(y) = x.
func Audit(r Discrete) (AuditResult, error) {
	if r.Dim() > MaxAuditDim {
		return AuditResult{}, fmt.Errorf("dim must be <= %d for an exact audit, got %d (the audit's time and memory grow with dim)", MaxAuditDim, r.Dim())
	}
	grid := r.InputGrid()
	no := r.NumOutputs()
	res := AuditResult{Randomizer: r.Name(), Eps0: r.Eps0(), Dim: r.Dim(), Inputs: len(grid), Outputs: no, Method: "exact"}
	hiLog := make([]float64, no)
	loLog := make([]float64, no)
	for i := range hiLog {
		hiLog[i], loLog[i] = math.Inf(-1), math.Inf(1)
	}
	ex, fast := r.(expecter)
	// Every output of these randomizers decodes to the same largest
	// magnitude, so a few outputs suffice to find it.
	var maxMag float64
	for y := range min(no, 4) {
		z, err := r.Decode(r.Output(y))
		if err != nil {
			return res, fmt.Errorf("decoding output %d: %w", y, err)
		}
		for _, v := range z {
			maxMag = math.Max(maxMag, math.Abs(v))
		}
	}
	outputs := make([]Report, no)
	for y := range outputs {
		outputs[y] = r.Output(y)
	}
	p := make([]float64, no)
	mean := make([]float64, r.Dim())
	for _, x := range grid {
		if err := r.OutputProbabilities(x, p); err != nil {
			return res, err
		}
		var s float64
		for y, py := range p {
			s += py
			l := math.Log(py)
			hiLog[y] = math.Max(hiLog[y], l)
			loLog[y] = math.Min(loLog[y], l)
		}
		res.MaxProbSumError = math.Max(res.MaxProbSumError, math.Abs(s-1))
		clear(mean)
		if fast {
			ex.expectation(p, mean)
		} else {
			for y, py := range p {
				if err := r.AddDecoded(outputs[y], py, mean); err != nil {
					return res, fmt.Errorf("decoding output %d: %w", y, err)
				}
			}
		}
		for i, m := range mean {
			res.MaxBias = math.Max(res.MaxBias, math.Abs(m-x[i]))
		}
	}
	for y := range no {
		d := hiLog[y] - loLog[y]
		if math.IsNaN(d) { // both -Inf: output impossible under every input
			continue
		}
		res.MaxLogRatio = math.Max(res.MaxLogRatio, d)
	}
	if maxMag > 0 {
		res.MaxRelBias = res.MaxBias / maxMag
	}
	res.OK = res.MaxLogRatio <= res.Eps0*(1+1e-12) && res.MaxRelBias <= 1e-9
	return res, nil
}

// expectation sets mean = Σ_y p_y·Decode(y) = mag·H·(p₊ − p₋) (first d
// coordinates) with one FWHT.
func (r *R1) expectation(p []float64, mean []float64) {
	v := make([]float64, r.D)
	for j := range v {
		v[j] = p[2*j] - p[2*j+1]
	}
	FWHT(v)
	for i := range mean {
		mean[i] = r.mag * v[i]
	}
}

// expectation sets mean_i = (p_i − q)/(P − Q), the k-RR decoding averaged
// over the output distribution p.
func (r *KRR) expectation(p []float64, mean []float64) {
	for i := range mean {
		mean[i] = (p[i] - r.q) / (r.p - r.q)
	}
}
