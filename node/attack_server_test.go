package node

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/statedir"
	"github.com/shuffledp/shuffledp/telemetry"
)

// TestImpostorKeyAtTheServer: a sampled client seals its report to its own
// key pair published under the round's key id, so the shuffler (which
// never opens a report) cannot tell it from an honest one and releases the
// batch, debited. The real server node leaves that report out: it does not
// open with the server's key, it is counted (reports_rejected_total), and
// the step is taken on the honest reports alone (rounds_total 1,
// reports_opened_total k-1), so one misbehaving client cannot stop the run;
// the receipt log holds the batch with the ledger's digest.
func TestImpostorKeyAtTheServer(t *testing.T) {
	store := ledger.NewMemoryStore()
	var srvDir string
	reg := telemetry.NewRegistry()
	metrics, err := telemetry.NewServerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, srvAddr, shAddr, pkiDir, done := startNodesWith(t, store, nodeOptions{
		server: func(c *ServerConfig) { srvDir, c.Metrics = c.Dir, metrics },
	})
	ctx := context.Background()
	tc, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	sconn, err := dial(srvAddr, tc, pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	spec, err := pb.NewServerClient(sconn).GetRun(ctx, &pb.GetRunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	run, _ := runConfigFromPB(spec.Config)
	keys, _ := keyConfigs(spec)
	enr, _ := pki.LoadEnroller(pkiDir)
	conn, err := dial(shAddr, tc, pki.RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	shuf := pb.NewShufflerClient(conn)
	req := &pb.WorkRequest{Run: run.Run}
	for c := range int64(20) {
		req.Clients = append(req.Clients, &pb.ClientCredential{Client: c, Token: enr.Token(c)})
	}
	work, err := workCall(asClient(ctx, enr, 0), shuf, req)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := model.New("logreg", 784, 10)
	honest, _ := protocol.NewHPKESealer(keys[1], run.ReportBytes-protocol.HPKEOverhead)
	evil, _ := protocol.GenerateKey(1)
	impostor, _ := protocol.NewHPKESealer(evil.Config, run.ReportBytes-protocol.HPKEOverhead)
	hc, _ := client.New(run, m, honest)
	ec, _ := client.New(run, m, impostor)
	ds := data.Synthetic(20, 1)
	a, err := work.Recv()
	if err != nil {
		t.Fatal(err)
	}
	round := protocol.Round{ID: a.Round, Model: protocol.Model{Run: a.Model.Run, Version: a.Model.Version, Params: a.Model.Params}}
	st, _ := shuf.Submit(asClient(ctx, enr, 0))
	chunk := &pb.ReportChunk{Run: run.Run, Round: a.Round}
	for i, c := range a.Clients {
		cl := hc
		if i == 0 {
			cl = ec
		}
		s, _, err := cl.Report(&round, client.Example{X: ds.Example(int(c)), Label: ds.Y[c]}, randomizer.NewCryptoSource())
		if err != nil {
			t.Fatal(err)
		}
		chunk.Reports = append(chunk.Reports, &pb.Report{Client: c, Token: enr.Token(c), Sealed: s})
	}
	st.Send(chunk)
	ack, err := st.CloseAndRecv()
	if err != nil || ack.Accepted != int64(len(a.Clients)) {
		t.Fatalf("%v %v", ack, err)
	}
	var got map[string]float64
	for deadline := time.Now().Add(30 * time.Second); ; {
		got = scrape(t, reg)
		if got["shuffledp_server_rounds_total"] >= 1 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("server Train ended before stepping: %v (one bad report must not stop the run)", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the server took no step within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	es, err := store.Entries(ctx, run.Run)
	if err != nil || len(es) != 1 || es[0].Round != a.Round {
		t.Fatalf("ledger %v, %v: want round %d debited (the shuffler cannot tell)", es, err, a.Round)
	}
	rs, err := server.ReadFileReceipts(filepath.Join(srvDir, statedir.ReceiptsFile))
	if err != nil || len(rs) != 1 || rs[0].Round != a.Round || ledger.Digest(rs[0].Digest) != es[0].Digest {
		t.Fatalf("receipts %v, %v; want round %d with the ledger's digest", rs, err, a.Round)
	}
	for _, k := range []string{"shuffledp_server_reports_opened_total", "shuffledp_server_rounds_total"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("metric %s not exposed", k)
		}
	}
	rejected := 0.0
	for k, v := range got {
		if strings.Contains(k, "server_reports_rejected_total") {
			rejected += v
		}
	}
	k := float64(len(a.Clients))
	if rejected != 1 || got["shuffledp_server_reports_opened_total"] != k-1 || got["shuffledp_server_rounds_total"] != 1 {
		t.Fatalf("server metrics: %v rejected (want 1); opened %v (want %v), rounds %v (want 1)", rejected,
			got["shuffledp_server_reports_opened_total"], k-1, got["shuffledp_server_rounds_total"])
	}
}
