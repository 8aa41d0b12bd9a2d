package node

import (
	"errors"
	"log"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
)

// lockedLog is a log destination safe for concurrent writes.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestShufflerRegisterTimeout: a shuffler waiting for --min-connected
// clients logs how many are registered (at start and every
// registerLogEvery) and gives up after RegisterTimeout with an error that
// says how many registered, how many it waited for, and names both flags.
func TestShufflerRegisterTimeout(t *testing.T) {
	old := registerLogEvery
	registerLogEvery = 100 * time.Millisecond
	t.Cleanup(func() { registerLogEvery = old })
	var logs lockedLog
	errc := make(chan error, 1)
	_, srvAddr, shAddr, pkiDir, _ := startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{shufflerErr: errc,
		shuffler: func(c *ShufflerConfig) {
			c.MinConnected, c.RegisterTimeout, c.Log = 12, 700*time.Millisecond, log.New(&logs, "", 0)
		}})
	// 7 of the 20 clients register; the run waits for 12.
	tlsc, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	creds, err := enr.Enrol(0, 7)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tlsc, Credentials: creds, Workers: 1, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	poolErr := make(chan error, 1)
	go func() { poolErr <- pool.Run(t.Context()) }()
	select {
	case err = <-errc:
	case <-time.After(20 * time.Second):
		t.Fatal("the shuffler still waits for clients after 20 s")
	}
	for _, want := range []string{"7 of 20 clients registered within 700ms", "--register-timeout", "the run starts when 12 are", "--min-connected"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("shuffler: %v, want an error containing %q", err, want)
		}
	}
	out := logs.String()
	if !strings.Contains(out, "waiting for clients: 0 of 20 registered, the run starts when 12 are") ||
		!strings.Contains(out, "waiting for clients: 7 of 20 registered") {
		t.Fatalf("log does not say how many are registered:\n%s", out)
	}
	// Its clients are told it went away before the run finished.
	select {
	case err := <-poolErr:
		if err == nil || !strings.Contains(err.Error(), "went away before the run finished") {
			t.Fatalf("pool: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the pool still runs 20 s after its shuffler gave up")
	}
}

// TestServerBatchTimeout: a server whose shuffler never releases a batch
// (here: it waits for clients that never come) stops waiting after
// BatchTimeout with an error wrapping ErrBatchTimeout that names the model
// version and the flag.
func TestServerBatchTimeout(t *testing.T) {
	_, _, _, _, done := startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{
		server: func(c *ServerConfig) { c.BatchTimeout = 500 * time.Millisecond }})
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server still waits for a batch after 20 s")
	}
	if !errors.Is(err, ErrBatchTimeout) || !strings.Contains(err.Error(), "within 500ms of publishing model version 0") ||
		!strings.Contains(err.Error(), "--batch-timeout") {
		t.Fatalf("server: %v, want ErrBatchTimeout naming the model version and --batch-timeout", err)
	}
}
