package site

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/shuffledp/shuffledp/calculator"
)

// TestNativeSiteAnswersAsTheModule: a native site serves the page without
// the module's files, answers POST /api/METHOD with calculator.Call's bytes
// (what the WebAssembly module answers), refuses other methods, verbs and
// oversized bodies, and cannot be written out as static files.
func TestNativeSiteAnswersAsTheModule(t *testing.T) {
	s, err := NewNativeSite()
	if err != nil {
		t.Fatal(err)
	}
	if !s.Native() || s.files[WasmFile] != nil || s.files[WasmExecFile] != nil || s.files["index.html"] == nil {
		t.Fatalf("native site files: %v", s.Files())
	}
	if err := s.WriteDir(t.TempDir()); err == nil {
		t.Error("WriteDir of a native site succeeded")
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	q := "mechanism=subsampled-shuffle&n=10000&k=100&eps0=1&steps=10&delta=1e-6"
	for _, c := range []struct{ method, query, steps string }{
		{calculator.MethodSchema, "", ""},
		{calculator.MethodCompute, q, ""},
		{calculator.MethodCurveSteps, q, ""},
		{calculator.MethodPoint, q, "5"},
		{calculator.MethodCompute, "mechanism=nope", ""},
	} {
		url := srv.URL + "/api/" + c.method
		var steps int64
		if c.steps != "" {
			url += "?steps=" + c.steps
			steps = 5
		}
		resp, err := http.Post(url, "text/plain", strings.NewReader(c.query))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", c.method, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if want := calculator.Call(c.method, c.query, steps); string(body) != want {
			t.Errorf("%s: got %.200s, want %.200s", c.method, body, want)
		}
		if !json.Valid(body) {
			t.Errorf("%s: not JSON", c.method)
		}
	}
	for _, c := range []struct {
		verb, path string
		body       string
		want       int
	}{
		{"GET", "/api/compute", "", 405},
		{"POST", "/api/nope", "", 404},
		{"POST", "/api/point?steps=x", q, 400},
		{"POST", "/api/compute", strings.Repeat("a", maxQuery+1), 413},
		{"POST", "/index.html", "", 405},
	} {
		req, _ := http.NewRequest(c.verb, srv.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.verb, c.path, resp.StatusCode, c.want)
		}
	}
}

// TestModuleSiteHasNoAPI: a site with the module answers no call, so the
// worker of a served or published module site uses the module.
func TestModuleSiteHasNoAPI(t *testing.T) {
	srv := httptest.NewServer(testSite(t).Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/api/schema", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Errorf("a module site answered /api/schema")
	}
}

// TestPublishWithoutGoServesNatively: where the module cannot be built at
// all (no go command on PATH, no source above the working directory: an
// installed binary elsewhere), --listen serves natively and says so,
// while --out fails naming why; --native is refused with --out.
func TestPublishWithoutGoServesNatively(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Chdir(t.TempDir())
	if err := (Publish{Out: t.TempDir()}).Run(context.Background(), io.Discard, io.Discard); !errors.Is(err, ErrNoToolchain) {
		t.Errorf("--out without Go: %v, want ErrNoToolchain", err)
	}
	if err := (Publish{Out: "x", Native: true}).Check(); err == nil {
		t.Error("--native --out accepted")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	w, log := newSyncBuffer(), newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- (Publish{Listen: addr}).Run(ctx, w, log) }()
	// Wait for the event (the line saying it serves), not for time.
	for !strings.Contains(w.String(), "serving the calculator") {
		select {
		case err := <-done:
			t.Fatalf("Run ended: %v (log %q)", err, log.String())
		case <-w.changed:
		}
	}
	if !strings.Contains(log.String(), "natively") {
		t.Errorf("log does not say it serves natively: %q", log.String())
	}
	resp, err := http.Post("http://"+addr+"/api/compute", "text/plain", strings.NewReader("mechanism=subsampled-shuffle&n=10000&k=100&eps0=1&steps=10&delta=1e-6"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"result"`) {
		t.Errorf("compute: %.300s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader, with a
// channel signalled at every write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
