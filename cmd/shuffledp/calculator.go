package main

import (
	"errors"
	"fmt"
	"net"

	"github.com/shuffledp/shuffledp/calculator/site"
	"github.com/spf13/cobra"
)

func init() { rootCmd.AddCommand(newCalculatorCmd()) }

// newCalculatorCmd is `shuffledp calculator`: the in-browser privacy
// calculator (package calculator), served or written out as static files.
func newCalculatorCmd() *cobra.Command {
	var listen, out, wasm string
	var opts site.BuildOptions
	cmd := &cobra.Command{
		Use:   "calculator",
		Short: "Serve the in-browser privacy calculator, or write it out as static files",
		Long:  longHelp("calculator"),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (listen == "") == (out == "") {
				return usageError(errors.New("give one of --listen ADDR (serve) or --out DIR (write the static files)"))
			}
			ctx, stop := signalContext(commandContext(cmd))
			defer stop()
			if wasm == "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "building the WebAssembly module (GOOS=js GOARCH=wasm go build ./cmd/shuffledp-wasm)...")
			}
			s, err := site.Build(ctx, opts, wasm)
			if err != nil {
				return err
			}
			if out != "" {
				if err := s.WriteDir(out); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files to %s\n", len(s.Files()), out)
				return nil
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving the calculator on http://%s/\n", ln.Addr())
			return s.Serve(ctx, ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "", "serve the calculator on this address, such as 127.0.0.1:8080")
	f.StringVar(&out, "out", "", "write the calculator's static files into this directory, to publish them")
	f.StringVar(&opts.Source, "source", "", "the module's source directory to build the WebAssembly module from (default: found from the working directory)")
	f.StringVar(&wasm, "wasm", "", "a built WebAssembly module (cmd/shuffledp-wasm) to use instead of building one")
	return cmd
}
