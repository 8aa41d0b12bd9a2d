package main

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newRandomizeCmd()) }

func newRandomizeCmd() *cobra.Command {
	var (
		name    string
		eps0    float64
		sigma   float64
		clip    float64
		dim     int
		input   string
		samples int
		seed    uint64
	)
	cmd := &cobra.Command{
		Use:   "randomize --randomizer R --eps0 E --dim D --input v1,...,vD --samples N",
		Short: "Randomize one input vector N times and print the decoded reports",
		Long: `Randomize the input vector N times with a local randomizer and print each
report's unbiased decoding, one per line, as a JSON array of D numbers.

Randomizers: rr (binary randomized response; --dim 1, input 0 or 1), krr
(k-ary randomized response; --dim k, one-hot input), rinf, r1, r2 (Girgis et
al. AISTATS'21; the input is first clipped onto the l_inf, l_1 or l_2 ball of
radius --clip), privunit (PrivUnit2 of Bhowmick et al. 2018, l_2 ball, dim >= 2),
gaussian (adds N(0, (sigma·clip)^2) per coordinate after l_2
clipping; --sigma required, --eps0 ignored).

Randomness comes from crypto/rand unless --seed is given; --seed selects a
seeded PCG generator for reproducible simulation, which is NOT private.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if samples < 1 {
				return fmt.Errorf("--samples must be >= 1, got %d", samples)
			}
			x, err := parseVector(input, dim)
			if err != nil {
				return err
			}
			r, err := newRandomizerFromFlags(name, eps0, sigma, clip, dim)
			if err != nil {
				return err
			}
			randomizer.Clip(r.Norm(), x, r.Radius())
			var src randomizer.Source
			if cmd.Flags().Changed("seed") {
				src = randomizer.NewSeededSource(seed)
			} else {
				src = randomizer.NewCryptoSource()
			}
			w := bufio.NewWriter(cmd.OutOrStdout())
			z := make([]float64, dim)
			buf := make([]byte, 0, 32)
			for range samples {
				rep, err := r.Randomize(x, src)
				if err != nil {
					return err
				}
				clear(z)
				if err := r.AddDecoded(rep, 1, z); err != nil {
					return err
				}
				w.WriteByte('[')
				for i, v := range z {
					if i > 0 {
						w.WriteByte(',')
					}
					buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
					w.Write(buf)
				}
				w.WriteString("]\n")
			}
			return w.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "randomizer", "", "local randomizer: "+strings.Join(randomizer.Names, "|"))
	f.Float64Var(&eps0, "eps0", 0, "local DP parameter eps0 > 0 (all but gaussian)")
	f.Float64Var(&sigma, "sigma", 0, "noise multiplier of the gaussian randomizer (noise sd = sigma·clip)")
	f.Float64Var(&clip, "clip", 1, "clipping radius: the input is clipped onto the randomizer's ball of this radius")
	f.IntVar(&dim, "dim", 0, "input dimension D")
	f.StringVar(&input, "input", "", "comma-separated input vector of D numbers")
	f.IntVar(&samples, "samples", 1, "number of reports to draw")
	f.Uint64Var(&seed, "seed", 0, "seed a PCG generator for reproducible simulation (not private); default crypto/rand")
	return cmd
}

// newRandomizerFromFlags validates the shared randomizer flags.
func newRandomizerFromFlags(name string, eps0, sigma, clip float64, dim int) (randomizer.Randomizer, error) {
	if name == "" {
		return nil, fmt.Errorf("--randomizer is required (one of %s)", strings.Join(randomizer.Names, ", "))
	}
	if dim < 1 {
		return nil, fmt.Errorf("--dim must be >= 1, got %d", dim)
	}
	if !(clip > 0) || math.IsInf(clip, 0) {
		return nil, fmt.Errorf("--clip must be finite and > 0, got %g", clip)
	}
	if name == "gaussian" {
		if !(sigma > 0) || math.IsInf(sigma, 0) {
			return nil, fmt.Errorf("--sigma must be finite and > 0 for the gaussian randomizer, got %g", sigma)
		}
	} else if !(eps0 > 0) || math.IsInf(eps0, 0) {
		return nil, fmt.Errorf("--eps0 must be finite and > 0, got %g", eps0)
	}
	r, err := randomizer.New(name, randomizer.Config{Eps0: eps0, Dim: dim, Radius: clip, Sigma: sigma})
	if err != nil {
		return nil, fmt.Errorf("--randomizer %s: %w", name, err)
	}
	return r, nil
}

// parseVector parses "v1,...,vD" and checks it has dim finite entries.
func parseVector(s string, dim int) ([]float64, error) {
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
