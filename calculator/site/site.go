// Package site builds and serves the in-browser privacy calculator: the
// embedded page (static/), the accountant compiled to WebAssembly from
// cmd/shuffledp-wasm (package calculator's logic) and Go's wasm_exec.js,
// served over HTTP (Site.Serve) or written out as static files
// (Site.WriteDir) for publishing.
package site

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shuffledp/shuffledp/calculator"
)

// static holds the page: index.html, its script, the worker that runs the
// accountant, and the style sheet. The WebAssembly module and Go's
// wasm_exec.js are added by Build (they are built, not committed).
//
//go:embed static
var static embed.FS

// File names of the built parts of the site.
const (
	WasmFile     = "shuffledp.wasm"
	WasmExecFile = "wasm_exec.js"
)

// ModulePath is the module whose cmd/shuffledp-wasm BuildWasm compiles.
const ModulePath = "github.com/shuffledp/shuffledp"

// WasmPackage is the package of the accountant's WebAssembly module.
const WasmPackage = "./cmd/shuffledp-wasm"

// BuildOptions say where BuildWasm finds the source and the go command,
// and where it writes the module.
type BuildOptions struct {
	// Source is the module's root directory; "" finds it (FindSource).
	Source string
	// Output is the path of the .wasm file to write; "" means
	// shuffledp.wasm in the user's cache directory (os.UserCacheDir).
	Output string
	// Go is the go command; "" means "go" from PATH.
	Go string
}

func (o BuildOptions) goCmd() string {
	if o.Go != "" {
		return o.Go
	}
	return "go"
}

// FindSource returns the root directory of this module's source: the first
// directory from the working directory upwards whose go.mod declares
// ModulePath, or else, for a binary built from a released module version,
// that version's directory in the module cache (go mod download). The
// error says to pass the directory explicitly.
func FindSource(ctx context.Context, goCmd string) (string, error) {
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if declaresModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == ModulePath && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		cmd := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", ModulePath+"@"+bi.Main.Version)
		out, err := cmd.Output()
		if err == nil {
			var m struct{ Dir string }
			if json.Unmarshal(out, &m) == nil && m.Dir != "" {
				return m.Dir, nil
			}
		}
	}
	return "", fmt.Errorf("%w: cannot find the source of %s (needed to build the WebAssembly module): run from inside its checkout, or give its directory (--source), or a built module (--wasm)", ErrNoToolchain, ModulePath)
}

// declaresModule reports whether the go.mod file at p declares ModulePath.
func declaresModule(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == ModulePath
		}
	}
	return false
}

// BuildWasm compiles the accountant (WasmPackage) with GOOS=js GOARCH=wasm
// and returns the path of the module it wrote. The go command's build
// cache makes a rebuild of unchanged source quick.
func BuildWasm(ctx context.Context, opts BuildOptions) (string, error) {
	src := opts.Source
	if src == "" {
		var err error
		if src, err = FindSource(ctx, opts.goCmd()); err != nil {
			return "", err
		}
	}
	out := opts.Output
	if out == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory for the WebAssembly module: %w", err)
		}
		out = filepath.Join(cache, "shuffledp", "calculator", WasmFile)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, opts.goCmd(), "build", "-trimpath", "-ldflags=-s -w", "-o", out, WasmPackage)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("%w: %w", ErrNoToolchain, err)
		}
		return "", fmt.Errorf("building the WebAssembly module in %s: %w\n%s", src, err, msg)
	}
	return out, nil
}

// WasmExec returns Go's JavaScript support for WebAssembly (wasm_exec.js)
// from the toolchain of goCmd: $GOROOT/lib/wasm (Go 1.24 and later) or
// $GOROOT/misc/wasm. It must come from the toolchain that built the module.
func WasmExec(ctx context.Context, goCmd string) ([]byte, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "GOROOT").Output()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("%w: %w", ErrNoToolchain, err)
		}
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	var errs []error
	for _, dir := range []string{"lib/wasm", "misc/wasm"} {
		b, err := os.ReadFile(filepath.Join(root, dir, WasmExecFile))
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("no %s in the Go toolchain at %s: %w", WasmExecFile, root, errors.Join(errs...))
}

// Site is the calculator's files, ready to serve or to write out.
type Site struct {
	files map[string][]byte // by name, without a leading slash
	gz    map[string][]byte // gzip of the larger files
	// native: no WebAssembly module; the page's worker asks the serving
	// process (POST /api/METHOD, calculator.Call) instead.
	native bool
	slots  chan struct{} // bounds the native computations running at once
}

// ErrNoToolchain wraps the errors of building the WebAssembly module that
// mean it cannot be built here at all (no source of the module, no go
// command), as opposed to a build that failed: an installed binary on a
// machine without Go. Publish serves natively then.
var ErrNoToolchain = errors.New("the WebAssembly module cannot be built here")

// NewNativeSite returns the site of the embedded page without a WebAssembly
// module: its worker finds no shuffledp.wasm and posts its calls to the
// serving process instead (Handler: POST /api/METHOD), which answers them
// with calculator.Call, the same function the module runs, so every number
// is the same. It needs neither the module's source nor a Go toolchain, so
// an installed binary serves the calculator from any directory; it cannot
// be written out as static files (WriteDir refuses).
func NewNativeSite() (*Site, error) {
	s, err := newSite(nil)
	if err != nil {
		return nil, err
	}
	s.native = true
	s.slots = make(chan struct{}, runtime.GOMAXPROCS(0))
	return s, nil
}

// Native reports whether the site answers the page's calls itself.
func (s *Site) Native() bool { return s.native }

// NewSite returns the site of the embedded page with the given WebAssembly
// module and wasm_exec.js.
func NewSite(wasm, wasmExec []byte) (*Site, error) {
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return nil, errors.New("the WebAssembly module does not start with \\0asm")
	}
	return newSite(map[string][]byte{WasmFile: wasm, WasmExecFile: wasmExec})
}

// newSite returns the site of the embedded page and the built files.
func newSite(built map[string][]byte) (*Site, error) {
	s := &Site{files: map[string][]byte{}, gz: map[string][]byte{}}
	for name, b := range built {
		s.files[name] = b
	}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		s.files[strings.TrimPrefix(p, "static/")] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	for name, b := range s.files {
		if len(b) < 4096 {
			continue
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		s.gz[name] = buf.Bytes()
	}
	return s, nil
}

// Build builds the WebAssembly module (BuildWasm) or, if wasmPath is not
// empty, reads that prebuilt one, and returns the site.
func Build(ctx context.Context, opts BuildOptions, wasmPath string) (*Site, error) {
	if wasmPath == "" {
		var err error
		if wasmPath, err = BuildWasm(ctx, opts); err != nil {
			return nil, err
		}
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return nil, err
	}
	exec, err := WasmExec(ctx, opts.goCmd())
	if err != nil {
		return nil, err
	}
	return NewSite(wasm, exec)
}

// Files returns the site's file names, sorted.
func (s *Site) Files() []string {
	var names []string
	for n := range s.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// WriteDir writes the site's files into dir (created if missing), ready to
// publish on any static web host: the page loads everything else by
// relative URL.
func (s *Site) WriteDir(dir string) error {
	if s.native {
		return errors.New("a native calculator cannot be written out as static files: its page needs the serving process; " +
			"build the WebAssembly module (run from the module's source with a Go toolchain, or give --wasm)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range s.files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// contentSecurityPolicy allows only the site's own files: no inline
// script, no other origin; 'wasm-unsafe-eval' lets the worker compile the
// module.
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; " +
	"style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".wasm": "application/wasm",
	".png":  "image/png",
	".svg":  "image/svg+xml",
}

// Handler serves the site: GET and HEAD of its files ("/" is index.html),
// gzip-compressed where the browser accepts it, with a content security
// policy that admits nothing from elsewhere.
func (s *Site) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if method, ok := strings.CutPrefix(r.URL.Path, "/api/"); ok && s.native {
			s.serveCall(w, r, method)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" {
			name = "index.html"
		}
		b, ok := s.files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", contentTypes[path.Ext(name)])
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		h.Add("Vary", "Accept-Encoding")
		if z, ok := s.gz[name]; ok && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			b = z
		}
		h.Set("Content-Length", fmt.Sprint(len(b)))
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}

// maxQuery bounds a native call's request body: a page state is a query
// string of a dozen short parameters.
const maxQuery = 16 << 10

// serveCall answers one of the page's calls in native mode: POST
// /api/METHOD with the page state (a query string) as the body and, for
// MethodPoint, ?steps=T; the answer is calculator.Call's JSON. At most
// GOMAXPROCS calls compute at once; a call waiting for a slot gives up
// when its request ends.
func (s *Site) serveCall(w http.ResponseWriter, r *http.Request, method string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !slices.Contains(calculator.Methods(), method) {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxQuery))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var steps int64
	if method == calculator.MethodPoint {
		if steps, err = strconv.ParseInt(r.URL.Query().Get("steps"), 10, 64); err != nil {
			http.Error(w, "steps: not an integer", http.StatusBadRequest)
			return
		}
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-r.Context().Done():
		return
	}
	answer := calculator.Call(method, string(body), steps)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	io.WriteString(w, answer)
}

// Serve serves the site on ln until ctx is done, then shuts the server
// down. Its timeouts bound what a slow or idle connection holds.
func (s *Site) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
		return nil
	}
}
