package node

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/dashboard"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/shuffler"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

// conflictRig is a server process's loop and node in a test (20 rounds
// planned), and batch, which makes a batch of a round of valid reports (a
// shuffler's dummies, sealed to the round).
type conflictRig struct {
	loop   *serverLoop
	srv    *Server
	run    protocol.RunConfig
	pkiDir string
	reg    *prometheus.Registry
	board  *dashboard.ServerBoard
	batch  func(round int64) *pb.Batch
	ctx    context.Context
}

func newConflictRig(t *testing.T) *conflictRig {
	t.Helper()
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	if err := pki.Init(pkiDir, nil); err != nil {
		t.Fatal(err)
	}
	stls, err := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := training.ParseLRSchedule("0.3")
	if err != nil {
		t.Fatal(err)
	}
	// 20 clients, 5 a round, 5 epochs: 20 rounds, more than the test uses.
	cfg := training.Config{Clients: 20, Sample: 5, Randomizer: "rinf", Clip: 0.01, Eps0: 2, Delta: 1e-5, Epochs: 5, LR: lr, Seed: 1, Workers: 1}
	reg := telemetry.NewRegistry()
	metrics, err := telemetry.NewServerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	board := dashboard.NewServer(dashboard.Config{})
	scfg := ServerConfig{Dir: filepath.Join(dir, "server"), Dataset: Dataset{Name: "synthetic", Seed: 1}, TLS: stls,
		Metrics: metrics, Dashboard: board, BatchTimeout: 10 * time.Minute}
	m, err := model.New("logreg", 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	loop, err := newServerLoop(ctx, cfg, scfg, m, data.Synthetic(50, 2))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := loop.train(ctx, training.Hooks{})
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the loop ended with %v", err)
		}
		loop.Close()
	})
	srv := loop.srv
	spec, _ := srv.GetRun(ctx, nil)
	run, err := runConfigFromPB(spec.Config)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyConfigs(spec)
	if err != nil {
		t.Fatal(err)
	}
	kc := keys[srv.key.Config.ID]
	sealer, err := protocol.NewHPKESealer(kc, run.ReportBytes-protocol.HPKEOverhead)
	if err != nil {
		t.Fatal(err)
	}
	maker, err := shuffler.NewDummyReports(run, sealer, nil)
	if err != nil {
		t.Fatal(err)
	}
	// batch returns a batch of round of fresh reports (a shuffler's
	// dummies: valid reports of the run, sealed to the round), computed on
	// the model the server publishes now (it waits for one).
	batch := func(round int64) *pb.Batch {
		m, err := srv.GetModel(ctx, &pb.GetModelRequest{Run: run.Run, AfterVersion: -1})
		if err != nil {
			t.Fatal(err)
		}
		b := &pb.Batch{Run: run.Run, Round: round, ReportBytes: int64(run.ReportBytes), ModelVersion: m.Version}
		for range run.PerRound {
			rep, err := maker.Make(protocol.Round{ID: round, Model: protocol.Model{Run: run.Run}})
			if err != nil {
				t.Fatal(err)
			}
			b.Reports = append(b.Reports, rep...)
		}
		return b
	}
	return &conflictRig{loop: loop, srv: srv, run: run, pkiDir: pkiDir, reg: reg, board: board, batch: batch, ctx: ctx}
}

// TestServerRefusesConflictingBatch: a batch that contradicts the
// server's record of the rounds received — a recorded round with other
// reports (a second shuffler's "round 1"), or a round below the last
// recorded — is refused to its sender (FailedPrecondition), counted under
// the closed label "conflict", shown among the dashboard's errors, and
// the run goes on: the loop takes the next good batch. The recorded batch
// forwarded again is refused as computed on a model whose batch was taken
// (Aborted: never applied twice), not as a conflict, and every model tells
// the shuffler the last round received.
func TestServerRefusesConflictingBatch(t *testing.T) {
	rig := newConflictRig(t)
	ctx, srv, run, batch, reg, board, loop := rig.ctx, rig.srv, rig.run, rig.batch, rig.reg, rig.board, rig.loop
	submit := func(b *pb.Batch) error {
		t.Helper()
		_, err := srv.SubmitBatch(ctx, b)
		return err
	}
	refused := func(what string, b *pb.Batch, want string) {
		t.Helper()
		err := submit(b)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v; want FailedPrecondition saying %q", what, err, want)
		}
	}
	first := batch(1)
	if err := submit(first); err != nil {
		t.Fatalf("round 1: %v", err)
	}
	refused("another batch of round 1", batch(1), "round 1 of run")
	if err := submit(first); status.Code(err) != codes.Aborted {
		t.Fatalf("round 1's batch forwarded again: %v, want Aborted (its model's batch was taken)", err)
	}
	if err := submit(batch(3)); err != nil {
		t.Fatalf("round 3: %v", err)
	}
	refused("round 2 after round 3", batch(2), "is below round 3")
	if err := submit(batch(4)); err != nil {
		t.Fatalf("round 4 after the refusals: %v", err)
	}
	// The loop has recorded round 4 before it publishes the next model
	// (version 3: rounds 1, 3 and 4 applied, each once).
	mdl, err := srv.GetModel(ctx, &pb.GetModelRequest{Run: run.Run, AfterVersion: 2})
	if err != nil {
		t.Fatal(err)
	}
	if mdl.LastRound != 4 {
		t.Fatalf("model version %d tells last round %d, want 4", mdl.Version, mdl.LastRound)
	}
	if n := counterValue(t, reg, "shuffledp_server_batches_rejected_total", "reason", "conflict"); n != 2 {
		t.Fatalf("batches refused as conflict: %v, want 2", n)
	}
	var shown int
	for _, e := range board.State().Errors {
		if strings.Contains(e.Message, "batch refused") && strings.Contains(e.Message, ErrConflictingBatch.Error()) {
			shown++
		}
	}
	if shown != 2 {
		t.Fatalf("dashboard errors %+v: want the 2 refusals", board.State().Errors)
	}
	if rec := loop.session.Ledger().LastRound(); rec != 4 {
		t.Fatalf("the server's ledger ends at round %d, want 4", rec)
	}
}

// counterValue is the value of the counter name{label="value"} in reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q} in the registry", name, label, value)
	return 0
}

// TestShufflerBehindServerRefuses: a shuffler whose ledger has not debited
// the rounds the server has received (a second shuffler on a fresh ledger,
// or the first after its ledger was lost) refuses at the first model,
// wrapping ErrLedgerHistory, before it debits anything; the server's run
// goes on.
func TestShufflerBehindServerRefuses(t *testing.T) {
	rig := newConflictRig(t)
	for r := int64(1); r <= 2; r++ {
		if _, err := rig.srv.SubmitBatch(rig.ctx, rig.batch(r)); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	slis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go rig.srv.Serve(slis)
	shTLS, _ := pki.ServerTLS(filepath.Join(rig.pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	dialTLS, _ := pki.ClientTLS(filepath.Join(rig.pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	enr, err := pki.LoadEnroller(rig.pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	store := ledger.NewMemoryStore()
	sh, err := NewShuffler(ShufflerConfig{Server: slis.Addr().String(), ServerTLS: dialTLS, TLS: shTLS, Enroller: enr,
		Store: store, Delta: 1e-5, RoundTimeout: time.Minute, MinConnected: 1})
	if err != nil {
		t.Fatal(err)
	}
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = sh.Run(rig.ctx, hlis)
	if !errors.Is(err, ErrLedgerHistory) || !strings.Contains(err.Error(), "the server has received round ") {
		t.Fatalf("shuffler on a fresh ledger: %v; want ErrLedgerHistory naming the server's round", err)
	}
	if es, _ := store.Entries(rig.ctx, rig.run.Run); len(es) != 0 {
		t.Fatalf("the refused shuffler debited %d rounds", len(es))
	}
	if _, err := rig.srv.SubmitBatch(rig.ctx, rig.batch(3)); err != nil {
		t.Fatalf("the server's run does not go on: %v", err)
	}
}
