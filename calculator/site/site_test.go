package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeWasm starts with the WebAssembly magic number; the handler tests need
// no real module (the browser test in cmd/shuffledp builds one).
var fakeWasm = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte{1, 2, 3, 4}, 4096)...)

func testSite(t *testing.T) *Site {
	t.Helper()
	s, err := NewSite(fakeWasm, []byte("// wasm_exec.js"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSite(t *testing.T) {
	if _, err := NewSite([]byte("not wasm"), nil); err == nil {
		t.Error("NewSite accepted a module without the \\0asm magic number")
	}
	want := []string{"calculator.js", "index.html", "style.css", WasmExecFile, WasmFile, "worker.js"}
	slices.Sort(want)
	if got := testSite(t).Files(); !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
}

// TestPageLoadsOnlyItsOwnFiles: every file the page, script and worker
// name is one of the site's (so a published copy needs nothing else),
// loaded by a relative URL, and nothing names another origin.
func TestPageLoadsOnlyItsOwnFiles(t *testing.T) {
	s := testSite(t)
	refs := map[string]string{
		"index.html": `(?:src|href)="`, "worker.js": `importScripts\('|fetch\('`, "calculator.js": `new Worker\('`,
	}
	for name := range refs {
		text := string(s.files[name])
		if strings.Contains(text, "http://") && !strings.Contains(text, "http://www.w3.org/2000/svg") || strings.Contains(text, "https://") {
			t.Errorf("%s names another origin", name)
		}
	}
	for _, ref := range []string{"style.css", "calculator.js", "worker.js", WasmExecFile, WasmFile} {
		found := false
		for name := range refs {
			if strings.Contains(string(s.files[name]), "'"+ref+"'") || strings.Contains(string(s.files[name]), `"`+ref+`"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no file of the page loads %s", ref)
		}
	}
}

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(testSite(t).Handler())
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		gzip         bool
		status       int
		ctype        string
	}{
		{"GET", "/", false, 200, "text/html; charset=utf-8"},
		{"GET", "/?mechanism=shuffle&n=10", false, 200, "text/html; charset=utf-8"},
		{"GET", "/worker.js", false, 200, "text/javascript; charset=utf-8"},
		{"GET", "/style.css", false, 200, "text/css; charset=utf-8"},
		{"GET", "/" + WasmFile, true, 200, "application/wasm"},
		{"HEAD", "/" + WasmFile, false, 200, "application/wasm"},
		{"GET", "/../go.mod", false, 404, ""},
		{"GET", "/static/index.html", false, 404, ""},
		{"POST", "/", false, 405, ""},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		if tc.gzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: status %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
			continue
		}
		if tc.status != 200 {
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != tc.ctype {
			t.Errorf("%s %s: Content-Type %q, want %q", tc.method, tc.path, got, tc.ctype)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s %s: no content security policy", tc.method, tc.path)
		}
		if tc.gzip {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: not compressed for a client that accepts gzip", tc.path)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil || !bytes.Equal(body, fakeWasm) {
				t.Errorf("%s: the gzip body is not the module (%v)", tc.path, err)
			}
		}
		if tc.method == "HEAD" && len(body) != 0 {
			t.Errorf("HEAD %s: %d bytes of body", tc.path, len(body))
		}
	}
}

func TestWriteDir(t *testing.T) {
	s := testSite(t)
	dir := filepath.Join(t.TempDir(), "site")
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range s.Files() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(b, s.files[name]) {
			t.Errorf("%s: written %d bytes, %v; want the site's %d", name, len(b), err, len(s.files[name]))
		}
	}
}

func TestServeStopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- testSite(t).Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
}

func TestFindSourceAndWasmExec(t *testing.T) {
	dir, err := FindSource(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if !declaresModule(filepath.Join(dir, "go.mod")) {
		t.Errorf("FindSource = %s, whose go.mod does not declare %s", dir, ModulePath)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "shuffledp-wasm")); err != nil {
		t.Errorf("FindSource = %s without %s: %v", dir, WasmPackage, err)
	}
	b, err := WasmExec(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("class Go")) && !bytes.Contains(b, []byte("global.Go")) && !bytes.Contains(b, []byte("globalThis.Go")) {
		t.Errorf("wasm_exec.js does not define Go")
	}
}
