package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/calculator/site"
)

// TestCalculatorOut: --out writes the site's files (here around a stand-in
// module: the browser test builds the real one); giving neither or both of
// --listen and --out is a usage error (exit status 2).
func TestCalculatorOut(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "fake.wasm")
	if err := os.WriteFile(wasm, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "site")
	got, err := runCmd(t, newCalculatorCmd, "--out", out, "--wasm", wasm)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "wrote 6 files to "+out) {
		t.Errorf("calculator --out printed %q", got)
	}
	for _, name := range []string{"index.html", "calculator.js", "worker.js", "style.css", site.WasmExecFile, site.WasmFile} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("--out wrote no %s: %v", name, err)
		}
	}
	for _, args := range [][]string{{}, {"--out", out, "--listen", "127.0.0.1:0", "--wasm", wasm}} {
		_, err := runCmd(t, newCalculatorCmd, args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("calculator %v = %v, want a usage error", args, err)
		}
	}
	if _, err := runCmd(t, newCalculatorCmd, "--out", filepath.Join(dir, "x"), "--wasm", filepath.Join(dir, "missing.wasm")); err == nil {
		t.Error("calculator --wasm with a missing file succeeded")
	}
}
