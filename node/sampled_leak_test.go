package node

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// splitServer is an untrusted server that publishes a second key config
// (id 2) to the shuffler only and asks for rounds sealed to it, and counts
// the clients' GetRun calls: a client pool that asked again when a round
// names a key it does not know would tell it that the pool was sampled.
type splitServer struct {
	pb.UnimplementedServerServer
	full, clients *pb.RunSpec
	mu            sync.Mutex
	clientGetRuns int
	models        int
}

func (f *splitServer) GetRun(ctx context.Context, _ *pb.GetRunRequest) (*pb.RunSpec, error) {
	p, _ := peer.FromContext(ctx)
	if pki.PeerRole(p.AuthInfo.(credentials.TLSInfo).State) == pki.RoleClient {
		f.mu.Lock()
		f.clientGetRuns++
		f.mu.Unlock()
		return f.clients, nil
	}
	return f.full, nil
}

func (f *splitServer) GetModel(ctx context.Context, req *pb.GetModelRequest) (*pb.Model, error) {
	f.mu.Lock()
	f.models++
	f.mu.Unlock()
	return &pb.Model{Run: f.full.Config.Run, Version: req.AfterVersion + 1, Params: make([]float64, f.full.Config.Dim), KeyId: 2}, nil
}

// SubmitBatch takes the rounds the shuffler releases (every sampled pool
// refuses to report, so each holds dummies only).
func (f *splitServer) SubmitBatch(context.Context, *pb.Batch) (*pb.BatchAck, error) {
	return &pb.BatchAck{}, nil
}

// TestSampledPoolsStaySilent: a client pool fetches the run specification
// once, at start, whether or not its clients are sampled; a round sealed to
// a key it was not given is refused without asking the server again.
func TestSampledPoolsStaySilent(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		t.Fatal(err)
	}
	k1, _ := protocol.GenerateKey(1)
	k2, _ := protocol.GenerateKey(2)
	kc1, _ := k1.Config.MarshalBinary()
	kc2, _ := k2.Config.MarshalBinary()
	r, err := protocol.NewRandomizer(protocol.RunConfig{Randomizer: "rinf", Eps0: 2, Dim: 7850, Clip: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	run := &pb.RunConfig{Run: "split", Model: "logreg", Dim: 7850, Randomizer: "rinf", ClipNorm: protocol.NormL2, Clip: 0.01,
		Eps0: 2, Population: 4, PerRound: 2, MinBatch: 2, ReportBytes: int64(r.ReportSize() + protocol.HPKEOverhead)}
	ds := &pb.Dataset{Name: "synthetic", Seed: 1}
	fs := &splitServer{full: &pb.RunSpec{Config: run, KeyConfigs: [][]byte{kc1, kc2}, Delta: 1e-5, Dataset: ds},
		clients: &pb.RunSpec{Config: run, KeyConfigs: [][]byte{kc1}, Delta: 1e-5, Dataset: ds}}
	stls, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	g := grpc.NewServer(serverOptions(stls, serverLimits{recv: specLimit})...)
	pb.RegisterServerServer(g, fs)
	slis, _ := net.Listen("tcp", "127.0.0.1:0")
	go g.Serve(slis)
	t.Cleanup(g.Stop)

	shTLS, _ := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	dialTLS, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	enr, _ := pki.LoadEnroller(pkiDir)
	sh, err := NewShuffler(ShufflerConfig{Server: slis.Addr().String(), ServerTLS: dialTLS, TLS: shTLS, Enroller: enr,
		Store: ledger.NewMemoryStore(), Delta: 1e-5, RoundTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	hlis, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sh.Run(ctx, hlis)

	ctls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	creds, _ := enr.Enrol(0, 4)
	var pools sync.WaitGroup
	for _, rg := range [][2]int64{{0, 2}, {2, 4}} {
		p, err := NewClientPool(ClientPoolConfig{Shuffler: hlis.Addr().String(), Server: slis.Addr().String(), TLS: ctls,
			Credentials: creds, Lo: rg[0], Hi: rg[1], Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		pools.Add(1)
		go func() { defer pools.Done(); p.Run(ctx) }()
	}
	// Let a few rounds be relayed (each sampled pool refuses it; the round
	// is released at its deadline with dummies).
	deadline := time.Now().Add(20 * time.Second)
	for sh.Stats().RoundsOpened < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := sh.Stats().RoundsOpened; n < 3 {
		t.Fatalf("%d rounds opened", n)
	}
	cancel()
	pools.Wait()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.clientGetRuns != 2 {
		t.Fatalf("the clients called GetRun %d times over %d rounds, want 2 (once per pool, at start)", fs.clientGetRuns, sh.Stats().RoundsOpened)
	}
}
