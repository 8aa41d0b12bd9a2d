package main

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newRandomizeCmd()) }

// randomizeFlags are the flags of randomize.
type randomizeFlags struct {
	name, input       string
	eps0, sigma, clip float64
	dim, samples      int
	seed              uint64
}

func newRandomizeCmd() *cobra.Command {
	var fl randomizeFlags
	cmd := &cobra.Command{
		Use:   "randomize --randomizer R --eps0 E --dim D --input v1,...,vD --samples N",
		Short: "Randomize one input vector N times and print the decoded reports",
		Long:  longHelp("randomize"),
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runRandomize(cmd, &fl) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.name, "randomizer", "", "local randomizer: "+strings.Join(randomizer.Names, "|"))
	f.Float64Var(&fl.eps0, "eps0", 0, "local DP parameter eps0 > 0 (all but gaussian)")
	f.Float64Var(&fl.sigma, "sigma", 0, "noise multiplier of the gaussian randomizer (noise sd = sigma·clip)")
	f.Float64Var(&fl.clip, "clip", 1, "clipping radius: the input is clipped onto the randomizer's ball of this radius")
	f.IntVar(&fl.dim, "dim", 0, "input dimension D")
	f.StringVar(&fl.input, "input", "", "comma-separated input vector of D numbers")
	f.IntVar(&fl.samples, "samples", 1, "number of reports to draw")
	f.Uint64Var(&fl.seed, "seed", 0, "seed a PCG generator for reproducible simulation (not private); default crypto/rand")
	return cmd
}

// runRandomize prints the decoded estimate of each of --samples reports of
// --input as a JSON array, one a line.
func runRandomize(cmd *cobra.Command, fl *randomizeFlags) error {
	if fl.samples < 1 {
		return fmt.Errorf("--samples must be >= 1, got %d", fl.samples)
	}
	x, err := randomizer.ParseVector(fl.input, fl.dim)
	if err != nil {
		return err
	}
	r, err := randomizer.NewChecked(fl.name, randomizer.Config{Eps0: fl.eps0, Dim: fl.dim, Radius: fl.clip, Sigma: fl.sigma})
	if err != nil {
		return err
	}
	var src randomizer.Source
	if cmd.Flags().Changed("seed") {
		src = randomizer.NewSeededSource(fl.seed)
	} else {
		src = randomizer.NewCryptoSource()
	}
	w := bufio.NewWriter(cmd.OutOrStdout())
	buf := make([]byte, 0, 32)
	err = randomizer.Sample(r, x, src, fl.samples, func(z []float64) error {
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
