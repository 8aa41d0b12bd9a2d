package site

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublish writes the site of a prebuilt module (no build: nothing is
// said on the log) and checks that exactly one of --listen and --out is
// required.
func TestPublish(t *testing.T) {
	for _, p := range []Publish{{}, {Listen: "127.0.0.1:0", Out: "x"}} {
		if err := p.Check(); err != ErrListenOrOut {
			t.Errorf("%+v: Check = %v, want ErrListenOrOut", p, err)
		}
		if err := p.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{}); err != ErrListenOrOut {
			t.Errorf("%+v: Run = %v, want ErrListenOrOut", p, err)
		}
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(wasm, fakeWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "site")
	var w, log bytes.Buffer
	if err := (Publish{Out: out, Wasm: wasm}).Run(context.Background(), &w, &log); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 || !strings.HasPrefix(w.String(), "wrote ") || !strings.HasSuffix(w.String(), " files to "+out+"\n") {
		t.Errorf("said %q, logged %q", w.String(), log.String())
	}
	if _, err := os.Stat(filepath.Join(out, WasmFile)); err != nil {
		t.Error(err)
	}
}
