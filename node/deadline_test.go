package node

import (
	"context"
	"errors"
	"log"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/training"
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
			c.MinConnected, c.RegisterTimeout, c.Log = 12, 2*time.Second, log.New(&logs, "", 0)
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
	for _, want := range []string{"7 of 20 clients registered within 2s", "--register-timeout", "the run starts when 12 are", "--min-connected"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("shuffler: %v, want an error containing %q", err, want)
		}
	}
	out := logs.String()
	// The first line comes at once (0 of 20, or 7 if the pool was quicker),
	// then one every registerLogEvery.
	if !strings.Contains(out, "of 20 registered, the run starts when 12 are (--min-connected; waiting up to 2s, --register-timeout)") ||
		!strings.Contains(out, "waiting for clients: 7 of 20 registered, the run starts when 12 are (") {
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

// TestMinConnectedLateJoin: with MinConnected 7 of 20 the first round opens
// once 7 clients are registered (the log says so); rounds sample k of the
// 20 whether or not they are connected, the unconnected sampled clients
// get dummies, every batch is k reports; a pool that connects later
// delivers in the rounds after it registered.
func TestMinConnectedLateJoin(t *testing.T) {
	var logs lockedLog
	store := ledger.NewMemoryStore()
	sh, srvAddr, shAddr, pkiDir, done := startNodesWith(t, store, nodeOptions{
		train: func(c *training.Config) { c.Epochs = 3 }, // 12 rounds of 5 of 20
		shuffler: func(c *ShufflerConfig) {
			c.MinConnected, c.RoundTimeout, c.ReleaseWhenComplete, c.Log = 7, 300*time.Millisecond, false, log.New(&logs, "", 0)
		}})
	tlsc, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	pool := func(lo, hi int64) *ClientPool {
		creds, err := enr.Enrol(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tlsc, Credentials: creds, Workers: 1, ConnectTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	early, late := pool(0, 7), pool(7, 20)
	errs := make(chan error, 2)
	go func() { errs <- early.Run(t.Context()) }()
	deadline := time.Now().Add(30 * time.Second)
	for sh.Stats().Released < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if sh.Stats().Released < 3 {
		t.Fatalf("no 3 rounds released with 7 of 20 clients registered: %+v\n%s", sh.Stats(), logs.String())
	}
	joinedAt := sh.Stats().Released
	go func() { errs <- late.Run(t.Context()) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := sh.Stats()
	if !strings.Contains(logs.String(), "7 of 20 clients registered (the run starts at 7); starting") {
		t.Errorf("log does not say the run started at 7 of 20:\n%s", logs.String())
	}
	if st.Released != 12 || st.Forwarded != 12*5 || st.Dummies == 0 || st.Discarded != 0 {
		t.Fatalf("stats %+v: want 12 rounds of 5 reports, some dummies, none discarded", st)
	}
	if early.Reports()+late.Reports()+st.Dummies != st.Forwarded {
		t.Errorf("reports %d + %d and %d dummies for %d forwarded", early.Reports(), late.Reports(), st.Dummies, st.Forwarded)
	}
	if late.Reports() == 0 {
		t.Errorf("the pool that joined after round %d never delivered", joinedAt)
	}
	runs, _ := store.Runs(t.Context())
	entries, _ := store.Entries(t.Context(), runs[0])
	for _, e := range entries {
		if e.Reports != 5 {
			t.Errorf("round %d debited with %d reports, want 5", e.Round, e.Reports)
		}
	}
}

// stuckServer is a server whose GetModel never answers (alive, but it
// publishes no next model).
type stuckServer struct{ pb.ServerClient }

func (stuckServer) GetModel(ctx context.Context, _ *pb.GetModelRequest, _ ...grpc.CallOption) (*pb.Model, error) {
	<-ctx.Done()
	return nil, status.FromContextError(ctx.Err()).Err()
}

// TestShufflerModelTimeout: a shuffler whose server publishes no next
// model stops waiting after ModelTimeout with an error naming the server's
// address, the version it waited after and the flag; a cancelled shuffler
// is not reported as a timeout.
func TestShufflerModelTimeout(t *testing.T) {
	s := &Shuffler{cfg: ShufflerConfig{Server: "srv.example:7060", ModelTimeout: 200 * time.Millisecond}}
	s.run = protocol.RunConfig{Run: "r", Dim: 4, Population: 10}
	s.local = s.run
	start := time.Now()
	_, err := s.getModel(t.Context(), stuckServer{}, 7)
	if err == nil || !strings.Contains(err.Error(), "the server at srv.example:7060 published no model after version 7 within 200ms (--model-timeout)") {
		t.Fatalf("getModel: %v", err)
	}
	if took := time.Since(start); took > 30*time.Second { // 200 ms, on a machine however busy
		t.Fatalf("gave up after %v", took)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	s.cfg.ModelTimeout = time.Hour
	if _, err := s.getModel(ctx, stuckServer{}, 7); err == nil || strings.Contains(err.Error(), "--model-timeout") {
		t.Fatalf("cancelled getModel: %v", err)
	}
}
