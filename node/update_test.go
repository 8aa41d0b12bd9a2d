package node

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	"github.com/shuffledp/shuffledp/training"
)

// externalNodes starts startNodes' run (2 rounds of 5 of 20 clients) over
// an external model of 6 parameters, the server stepping theta - mean,
// with the shuffler's first-message wait set to firstMessage.
func externalNodes(t *testing.T, firstMessage time.Duration) (srvAddr, shAddr, pkiDir string, done chan error, means *atomic.Int64) {
	t.Helper()
	m, err := model.NewExternal(make([]float64, 6))
	if err != nil {
		t.Fatal(err)
	}
	means = &atomic.Int64{}
	step := func(theta, mean, next []float64) error {
		means.Add(1)
		for i := range next {
			next[i] = theta[i] - mean[i]
		}
		return nil
	}
	_, srvAddr, shAddr, pkiDir, done = startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{
		model: m, loop: []training.Option{training.WithExternal(step, nil)},
		shuffler: func(c *ShufflerConfig) { c.FirstMessage = firstMessage },
	})
	return srvAddr, shAddr, pkiDir, done, means
}

// TestPoolUpdateSlowerThanFirstMessage: a client update function slower
// than the shuffler's wait for a Submit stream's first message (the first
// call of a Python function that loads its data) does not lose the round:
// the pool opens the stream when its first chunk is ready. Every call gets
// one client of the pool's range and the model's parameters.
func TestPoolUpdateSlowerThanFirstMessage(t *testing.T) {
	srvAddr, shAddr, pkiDir, done, means := externalNodes(t, 300*time.Millisecond)
	tc, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	enr, _ := pki.LoadEnroller(pkiDir)
	creds, err := enr.Enrol(0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	update := func(c int64, examples []int, params, update []float64) error {
		if len(examples) != 1 || examples[0] != int(c) {
			t.Errorf("client %d holds examples %v, want [%d] (index partition, one example each)", c, examples, c)
		}
		if calls.Add(1) == 1 {
			time.Sleep(time.Second) // beyond the first-message wait
		}
		if c < 0 || c >= 20 || len(params) != 6 || len(update) != 6 {
			t.Errorf("update of client %d with %d parameters into %d", c, len(params), len(update))
		}
		update[c%6] = 0.001
		return nil
	}
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tc, Credentials: creds, Workers: 1, Update: update})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	if calls.Load() != 10 || pool.Reports() != 10 || means.Load() != 2 {
		t.Fatalf("%d updates, %d reports, %d server steps; want 10, 10, 2", calls.Load(), pool.Reports(), means.Load())
	}
}

// A pool without an update function refuses an external run, and one with
// an update function a run of a Go model, naming what is missing.
func TestPoolUpdateFunctionMatchesTheModel(t *testing.T) {
	srvAddr, shAddr, pkiDir, _, _ := externalNodes(t, 0)
	tc, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	enr, _ := pki.LoadEnroller(pkiDir)
	creds, _ := enr.Enrol(0, 20)
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tc, Credentials: creds, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "need an update function") {
		t.Fatalf("a pool without an update function on an external run: %v", err)
	}
	_, srvAddr2, shAddr2, pkiDir2, _ := startNodes(t, ledger.NewMemoryStore())
	tc2, _ := pki.ClientTLS(filepath.Join(pkiDir2, pki.RoleClient), pki.RoleClient)
	enr2, _ := pki.LoadEnroller(pkiDir2)
	creds2, _ := enr2.Enrol(0, 20)
	pool, err = NewClientPool(ClientPoolConfig{Shuffler: shAddr2, Server: srvAddr2, TLS: tc2, Credentials: creds2, Workers: 1,
		Update: func(int64, []int, []float64, []float64) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "serves a run of the external model") {
		t.Fatalf("a pool with an update function on a logreg run: %v", err)
	}
}
