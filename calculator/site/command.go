package site

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
)

// Publish is `shuffledp calculator` (its flags in the struct tags, bound
// by cliflag.Bind): the calculator built (Build) and either served on
// Listen or written into the directory Out.
type Publish struct {
	Listen string `flag:"listen" usage:"serve the calculator on this address, such as 127.0.0.1:8080"`
	Out    string `flag:"out" usage:"write the calculator's static files into this directory, to publish them"`
	Source string `flag:"source" usage:"the module's source directory to build the WebAssembly module from (default: found from the working directory)"`
	Wasm   string `flag:"wasm" usage:"a built WebAssembly module (cmd/shuffledp-wasm) to use instead of building one"`
	Native bool   `flag:"native" usage:"serve without a WebAssembly module: the page asks this process, which computes with the same code (no Go toolchain or source needed; chosen by itself when --listen cannot build the module)"`
}

// ErrListenOrOut is Check's error: exactly one of Listen and Out is needed.
var ErrListenOrOut = errors.New("give one of --listen ADDR (serve) or --out DIR (write the static files)")

// Check returns ErrListenOrOut unless exactly one of p.Listen and p.Out
// is set.
func (p Publish) Check() error {
	if (p.Listen == "") == (p.Out == "") {
		return ErrListenOrOut
	}
	if p.Native && p.Out != "" {
		return errors.New("--native serves the calculator (--listen): static files (--out) need the WebAssembly module")
	}
	if p.Native && (p.Wasm != "" || p.Source != "") {
		return errors.New("--native builds no WebAssembly module: drop --wasm and --source")
	}
	return nil
}

// Run builds the site (saying so on log when it builds the WebAssembly
// module itself; a native site with p.Native, or when serving and the
// module cannot be built here at all, ErrNoToolchain), then writes it to p.Out or serves it on p.Listen until
// ctx is cancelled, saying which on w.
func (p Publish) Run(ctx context.Context, w, log io.Writer) error {
	if err := p.Check(); err != nil {
		return err
	}
	var (
		s   *Site
		err error
	)
	if p.Native {
		s, err = NewNativeSite()
	} else {
		if p.Wasm == "" {
			fmt.Fprintln(log, "building the WebAssembly module (GOOS=js GOARCH=wasm go build ./cmd/shuffledp-wasm)...")
		}
		s, err = Build(ctx, BuildOptions{Source: p.Source}, p.Wasm)
		if errors.Is(err, ErrNoToolchain) && p.Listen != "" && p.Wasm == "" && p.Source == "" {
			// An installed binary on a machine without Go or the source:
			// serve it all the same, computing in this process.
			fmt.Fprintf(log, "%v\nserving it natively instead: the page asks this process, which runs the same accountant (--native)\n", err)
			s, err = NewNativeSite()
		}
	}
	if err != nil {
		return err
	}
	if p.Out != "" {
		if err := s.WriteDir(p.Out); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %d files to %s\n", len(s.Files()), p.Out)
		return nil
	}
	ln, err := net.Listen("tcp", p.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	fmt.Fprintf(w, "serving the calculator on http://%s/\n", ln.Addr())
	return s.Serve(ctx, ln)
}
