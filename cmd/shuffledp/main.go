// Command shuffledp is the command-line front end of shuffledp: privacy
// accounting for the shuffle model (account, calibrate, figure), local
// randomizers and their audits (randomize, audit), and CLDP-SGD training
// (data, train).
//
// Each subcommand lives in its own file and registers itself on rootCmd in
// an init function.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/shuffledp/shuffledp/cliflag"
	"github.com/shuffledp/shuffledp/internal/cpuprofile"
)

var rootCmd = &cobra.Command{
	Use:   "shuffledp",
	Short: "Differentially private federated learning in the shuffle model",
	Long: `shuffledp accounts for, simulates and trains with differential privacy in the
shuffle model: clients randomize locally (eps0-LDP), a shuffler permutes the
reports, and the accountant bounds the (epsilon, delta) spent over rounds.`,
	SilenceUsage:  true,
	SilenceErrors: true,
}

// exitError is an error that asks for a particular exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errInterrupted is returned by commands stopped by SIGINT/SIGTERM after
// they saved their state; the process exits 130 (128 + SIGINT), as shells
// report an interrupted command.
var errInterrupted = &exitError{code: 130, err: errors.New("interrupted; state saved")}

// usageError marks err as a usage error: an unknown or missing subcommand,
// a stray argument or an unknown flag. The process exits 2, as Go's own
// tools and most Unix commands do for a command line they cannot parse.
func usageError(err error) error {
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &exitError{code: 2, err: err}
}

func main() {
	cliflag.UsageErrors(rootCmd, usageError)
	role := ""
	if len(os.Args) > 1 {
		role = os.Args[1]
	}
	stopProfile, err := cpuprofile.Start(role)
	if err == nil {
		err = rootCmd.Execute()
		if perr := stopProfile(); err == nil && perr != nil {
			err = perr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "shuffledp:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}
