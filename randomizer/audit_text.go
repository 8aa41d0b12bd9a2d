package randomizer

import (
	"fmt"
	"io"
)

// WriteText writes res as aligned text, one quantity a line, ending with
// the verdict ("ok" or "FAILED"): the report of `shuffledp audit`. clip is
// the radius of the input ball the randomizer was built with.
func (res AuditResult) WriteText(w io.Writer, clip float64) error {
	p := &errWriter{w: w}
	p.printf("randomizer       %s (eps0 = %g, dim = %d, clip = %g)\n", res.Randomizer, res.Eps0, res.Dim, clip)
	if res.Method == "exact" {
		p.printf("input grid       %d inputs, %d outputs (exact enumeration)\n", res.Inputs, res.Outputs)
		p.printf("max log-ratio    %.17g  (eps0 - max = %.3g)\n", res.MaxLogRatio, res.Eps0-res.MaxLogRatio)
		p.printf("max bias         %.3g  (relative to the decoded magnitude: %.3g)\n", res.MaxBias, res.MaxRelBias)
		p.printf("prob. sum error  %.3g\n", res.MaxProbSumError)
	} else {
		p.printf("method           analytic bound of the construction (continuous internal randomness)\n")
		p.printf("max log-ratio    %.17g  (eps0 - max = %.3g)\n", res.MaxLogRatio, res.Eps0-res.MaxLogRatio)
		p.printf("bias             0 by construction (tested statistically, not measured here)\n")
	}
	verdict := "ok"
	if !res.OK {
		verdict = "FAILED"
	}
	p.printf("verdict          %s\n", verdict)
	return p.err
}

// Err returns nil when res passed and otherwise an error stating the
// log-ratio against eps0 and the relative bias.
func (res AuditResult) Err() error {
	if res.OK {
		return nil
	}
	return fmt.Errorf("audit failed: max log-ratio %.17g vs eps0 %g, relative bias %g", res.MaxLogRatio, res.Eps0, res.MaxRelBias)
}

// errWriter keeps the first write error of a sequence of prints.
type errWriter struct {
	w   io.Writer
	err error
}

func (p *errWriter) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}
