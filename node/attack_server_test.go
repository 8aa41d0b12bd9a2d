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
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

// TestImpostorKeyAtTheServer: a sampled client seals its report to its own
// key pair published under the round's key id, so the shuffler (which
// never opens a report) cannot tell it from an honest one and releases the
// batch, debited. The real server node refuses it: the report does not
// open with the server's key, it is counted (reports_rejected_total), and
// no step is taken on the batch (rounds_total and reports_opened_total
// stay 0); the receipt log holds the batch with the ledger's digest.
//
// Not a liveness guarantee: today the refused batch ends the server's
// Train with the open error (server.Receive refuses the whole batch), so
// one sampled client with a forged report stops the run; see the report
// of issue 14 (NETATTACK). This test pins the safety half only.
func TestImpostorKeyAtTheServer(t *testing.T) {
	store := ledger.NewMemoryStore()
	var srvDir string
	reg := telemetry.NewRegistry()
	metrics, err := telemetry.NewServerMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	_, srvAddr, shAddr, pkiDir, done := startNodesWith(t, store, nodeOptions{
		server: func(c *ServerConfig) { srvDir, c.Metrics = c.Session.Dir, metrics },
	})
	ctx := context.Background()
	tc, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.CAFile), "", "")
	sconn, err := dial(srvAddr, tc)
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
	conn, err := dial(shAddr, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	shuf := pb.NewShufflerClient(conn)
	req := &pb.WorkRequest{Run: run.Run}
	for c := range int64(20) {
		req.Clients = append(req.Clients, &pb.ClientCredential{Client: c, Token: enr.Token(c)})
	}
	work, err := shuf.Work(ctx, req)
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
	st, _ := shuf.Submit(ctx)
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
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "does not open") {
			t.Fatalf("server Train: %v, want the batch refused (a report does not open)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server neither stepped nor refused within 30 s")
	}
	es, err := store.Entries(ctx, run.Run)
	if err != nil || len(es) != 1 || es[0].Round != a.Round {
		t.Fatalf("ledger %v, %v: want round %d debited (the shuffler cannot tell)", es, err, a.Round)
	}
	rs, err := server.ReadFileReceipts(filepath.Join(srvDir, training.ReceiptsFile))
	if err != nil || len(rs) != 1 || rs[0].Round != a.Round || ledger.Digest(rs[0].Digest) != es[0].Digest {
		t.Fatalf("receipts %v, %v; want round %d with the ledger's digest", rs, err, a.Round)
	}
	got := scrape(t, reg)
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
	if rejected != 1 || got["shuffledp_server_reports_opened_total"] != 0 || got["shuffledp_server_rounds_total"] != 0 {
		t.Fatalf("server metrics: %v rejected (want 1); opened %v, rounds %v (want 0)", rejected,
			got["shuffledp_server_reports_opened_total"], got["shuffledp_server_rounds_total"])
	}
}
