package randomizer

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// NewChecked validates a randomizer's parameters and builds it with [New].
// Its errors name each parameter as the command line spells it (--randomizer,
// --dim, --clip, --sigma, --eps0), so that a command can return them as they
// are: name must be one of [Names]; cfg.Dim ≥ 1; cfg.Radius finite and > 0;
// cfg.Sigma finite and > 0 for "gaussian", cfg.Eps0 finite and > 0 for every
// other randomizer (the field the randomizer does not use is ignored).
func NewChecked(name string, cfg Config) (Randomizer, error) {
	if name == "" {
		return nil, fmt.Errorf("--randomizer is required (one of %s)", strings.Join(Names, ", "))
	}
	if cfg.Dim < 1 {
		return nil, fmt.Errorf("--dim must be >= 1, got %d", cfg.Dim)
	}
	if !(cfg.Radius > 0) || math.IsInf(cfg.Radius, 0) {
		return nil, fmt.Errorf("--clip must be finite and > 0, got %g", cfg.Radius)
	}
	if name == "gaussian" {
		if !(cfg.Sigma > 0) || math.IsInf(cfg.Sigma, 0) {
			return nil, fmt.Errorf("--sigma must be finite and > 0 for the gaussian randomizer, got %g", cfg.Sigma)
		}
	} else if !(cfg.Eps0 > 0) || math.IsInf(cfg.Eps0, 0) {
		return nil, fmt.Errorf("--eps0 must be finite and > 0, got %g", cfg.Eps0)
	}
	r, err := New(name, cfg)
	if err != nil {
		return nil, fmt.Errorf("--randomizer %s: %w", name, err)
	}
	return r, nil
}

// ParseVector parses "v1,...,vD", a comma-separated input vector, and checks
// that it has dim finite entries. Its errors name the parameters --input
// and --dim.
func ParseVector(s string, dim int) ([]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--input is required (comma-separated numbers)")
	}
	parts := strings.Split(s, ",")
	if len(parts) != dim {
		return nil, fmt.Errorf("--input has %d values, --dim is %d", len(parts), dim)
	}
	x := make([]float64, dim)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("--input value %d (%q) is not a finite number", i+1, p)
		}
		x[i] = v
	}
	return x, nil
}

// Sample clips x onto r's input ball (in place) and calls emit with the
// decoded estimate of each of n independent reports of it, drawn from src:
// a Monte Carlo view of r's output distribution, whose mean tends to the
// clipped x. emit's slice is reused between calls; an error from emit
// stops the sampling and is returned.
func Sample(r Randomizer, x []float64, src Source, n int, emit func(decoded []float64) error) error {
	Clip(r.Norm(), x, r.Radius())
	z := make([]float64, r.Dim())
	for range n {
		rep, err := r.Randomize(x, src)
		if err != nil {
			return err
		}
		clear(z)
		if err := r.AddDecoded(rep, 1, z); err != nil {
			return err
		}
		if err := emit(z); err != nil {
			return err
		}
	}
	return nil
}

// AuditAny audits r by the strongest method it supports: exactly ([Audit])
// when it is [Discrete], refusing a dimension above [MaxAuditDim], and
// analytically ([AuditBound]) when it is [Bounded]. A randomizer that is
// neither (gaussian) is not pure LDP and has no log-ratio to audit: it is
// refused. Errors name the parameters --dim and --randomizer.
func AuditAny(r Randomizer) (AuditResult, error) {
	switch rr := r.(type) {
	case Discrete:
		if r.Dim() > MaxAuditDim {
			return AuditResult{}, fmt.Errorf("--dim must be <= %d for the exact audit of --randomizer %s, got %d", MaxAuditDim, r.Name(), r.Dim())
		}
		return Audit(rr)
	case Bounded:
		return AuditBound(rr), nil
	default:
		return AuditResult{}, fmt.Errorf("--randomizer %s is not pure LDP and has no log-ratio to audit (account for it with its sigma)", r.Name())
	}
}
