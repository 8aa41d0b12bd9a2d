package randomizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SampleRequest is the question of `shuffledp randomize` (its flags in the
// tags, bound by cliflag.Bind): Samples decoded reports of the input
// vector Input by the randomizer Name.
type SampleRequest struct {
	Name    string  `flag:"randomizer" usage:"local randomizer: one of Names"` // usage computed: FlagUsage
	Eps0    float64 `flag:"eps0" usage:"local DP parameter eps0 > 0 (all but gaussian)"`
	Sigma   float64 `flag:"sigma" usage:"noise multiplier of the gaussian randomizer (noise sd = sigma·clip)"`
	Clip    float64 `flag:"clip" default:"1" usage:"clipping radius: the input is clipped onto the randomizer's ball of this radius"`
	Dim     int     `flag:"dim" usage:"input dimension D"`
	Input   string  `flag:"input" usage:"comma-separated input vector of D numbers"`
	Samples int     `flag:"samples" default:"1" usage:"number of reports to draw"`
	Seed    uint64  `flag:"seed" usage:"seed a PCG generator for reproducible simulation (not private); default crypto/rand"`
}

// FlagUsage implements cliflag.Usager: --randomizer lists Names.
func (*SampleRequest) FlagUsage(name string) string {
	if name == "randomizer" {
		return "local randomizer: " + strings.Join(Names, "|")
	}
	return ""
}

// WriteSamples checks q (errors name the flags), then draws q.Samples
// reports of the clipped input (Sample), from NewSeededSource(q.Seed) when
// seeded and from crypto/rand otherwise, and writes the decoded estimate
// of each as a JSON array of numbers, one a line.
func (q SampleRequest) WriteSamples(out io.Writer, seeded bool) error {
	if q.Samples < 1 {
		return fmt.Errorf("--samples must be >= 1, got %d", q.Samples)
	}
	x, err := ParseVector(q.Input, q.Dim)
	if err != nil {
		return err
	}
	r, err := NewChecked(q.Name, Config{Eps0: q.Eps0, Dim: q.Dim, Radius: q.Clip, Sigma: q.Sigma})
	if err != nil {
		return err
	}
	var src Source = NewCryptoSource()
	if seeded {
		src = NewSeededSource(q.Seed)
	}
	w := bufio.NewWriter(out)
	buf := make([]byte, 0, 32)
	err = Sample(r, x, src, q.Samples, func(z []float64) error {
		w.WriteByte('[')
		for i, v := range z {
			if i > 0 {
				w.WriteByte(',')
			}
			buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
			w.Write(buf)
		}
		_, err := w.WriteString("]\n")
		return err
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

// AuditRequest is the question of `shuffledp audit` (its flags in the
// tags): the audit (AuditAny) of the randomizer Name at Eps0 on the input
// ball of radius Clip in Dim dimensions.
type AuditRequest struct {
	Name string  `flag:"randomizer" usage:"randomizer to audit: one of Names"` // usage computed: FlagUsage
	Eps0 float64 `flag:"eps0" usage:"local DP parameter eps0 > 0"`
	Clip float64 `flag:"clip" default:"1" usage:"radius of the input ball"`
	Dim  int     `flag:"dim" usage:"input dimension D; <= MaxAuditDim for the exact audits"` // usage computed: FlagUsage
}

// FlagUsage implements cliflag.Usager: --randomizer lists Names, --dim
// states MaxAuditDim.
func (*AuditRequest) FlagUsage(name string) string {
	switch name {
	case "randomizer":
		return "randomizer to audit: " + strings.Join(Names, "|")
	case "dim":
		return fmt.Sprintf("input dimension D; <= %d for the exact audits (krr, rinf, r1: at the limit krr takes about 3 s of CPU and 650 MB)", MaxAuditDim)
	}
	return ""
}

// Audit builds q's randomizer (NewChecked; the gaussian one passes its
// check with sigma 1 and AuditAny refuses it) and audits it (AuditAny).
func (q AuditRequest) Audit() (AuditResult, error) {
	r, err := NewChecked(q.Name, Config{Eps0: q.Eps0, Dim: q.Dim, Radius: q.Clip, Sigma: 1})
	if err != nil {
		return AuditResult{}, err
	}
	return AuditAny(r)
}

// WriteJSON writes r as `shuffledp audit --json` prints it: one JSON
// object indented by two spaces.
func (r AuditResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
