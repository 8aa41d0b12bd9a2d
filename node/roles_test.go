package node

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
)

// impostorConn dials addr presenting role's certificate of the deployment
// in pkiDir, verifying nothing (as an impostor would).
func impostorConn(t *testing.T, addr, pkiDir, role string) *grpc.ClientConn {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, role, pki.CertFile(role)), filepath.Join(pkiDir, role, pki.KeyFile(role)))
	if err != nil {
		t.Fatal(err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}
	c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRolesOverGRPC: over the real nodes, each RPC answers only the roles
// rpcRoles allows, and every impostor holding another role's valid
// certificate fails: a client at the server's shuffler-only calls, the
// server's and the shuffler's certificates at the shuffler's client
// service, a "shuffler" or "server" answering with the wrong certificate.
func TestRolesOverGRPC(t *testing.T) {
	_, srvAddr, shAddr, pkiDir, _ := startNodes(t, ledger.NewMemoryStore())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wait := grpc.WaitForReady(true)

	// A client: the run specification yes, the shuffler's calls no.
	cli := pb.NewServerClient(impostorConn(t, srvAddr, pkiDir, pki.RoleClient))
	if _, err := cli.GetRun(ctx, &pb.GetRunRequest{}, wait); err != nil {
		t.Fatalf("client GetRun: %v", err)
	}
	calls := map[string]func() error{
		"GetModel":    func() error { _, err := cli.GetModel(ctx, &pb.GetModelRequest{AfterVersion: -1}); return err },
		"SubmitBatch": func() error { _, err := cli.SubmitBatch(ctx, &pb.Batch{Round: 1}); return err },
		"Stop":        func() error { _, err := cli.Stop(ctx, &pb.StopRequest{}); return err },
	}
	for name, call := range calls {
		err := call()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "is for role shuffler; the peer's role is client") {
			t.Errorf("client calling %s: %v", name, err)
		}
	}
	// The server's and the shuffler's certificates at the shuffler's
	// client service: no handshake.
	for _, role := range []string{pki.RoleServer, pki.RoleShuffler} {
		sh := pb.NewShufflerClient(impostorConn(t, shAddr, pkiDir, role))
		w, err := workCall(ctx, sh, &pb.WorkRequest{Run: "x", Clients: []*pb.ClientCredential{{Client: 0, Token: make([]byte, 32)}}})
		if err == nil {
			_, err = w.Recv()
		}
		if !refusedHandshake(err) {
			t.Errorf("the %s's certificate at the shuffler: %v, want a failed handshake", role, err)
		}
	}
	// The server's certificate at the server's own shuffler-only calls.
	srvAsCaller := pb.NewServerClient(impostorConn(t, srvAddr, pkiDir, pki.RoleServer))
	if _, err := srvAsCaller.GetModel(ctx, &pb.GetModelRequest{}); !refusedHandshake(err) {
		t.Errorf("the server's certificate calling the server: %v, want a failed handshake", err)
	}
	// Diallers: a client dialling the "shuffler" at the server's address,
	// and the server at the shuffler's; the shuffler dialling the "server"
	// at the shuffler's address.
	ctls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	stls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	for _, c := range []struct {
		name, addr, expect, presented string
		tc                            *tls.Config
	}{
		{"client dials a shuffler answering as the server", srvAddr, pki.RoleShuffler, pki.RoleServer, ctls},
		{"client dials a server answering as the shuffler", shAddr, pki.RoleServer, pki.RoleShuffler, ctls},
		{"shuffler dials a server answering as the shuffler", shAddr, pki.RoleServer, pki.RoleShuffler, stls},
	} {
		conn, err := dial(c.addr, c.tc, c.expect)
		if err != nil {
			t.Fatal(err)
		}
		_, err = pb.NewServerClient(conn).GetRun(ctx, &pb.GetRunRequest{})
		conn.Close()
		want := "expected role " + c.expect + ", the peer presented role " + c.presented
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, want)
		}
	}
}

// TestServerKeyMode: the server's HPKE key with group or other permission
// bits is refused, naming the file and its mode.
func TestServerKeyMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFile)
	if _, err := loadOrCreateKey(path); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateKey(path); err != nil {
		t.Fatalf("reload at 0600: %v", err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		os.Chmod(path, mode)
		_, err := loadOrCreateKey(path)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "mode 0"+octal3(mode)) {
			t.Errorf("hpke.key at %#o: %v", mode, err)
		}
	}
}

func octal3(m os.FileMode) string {
	return string([]byte{'0' + byte(m>>6&7), '0' + byte(m>>3&7), '0' + byte(m&7)})
}

// refusedHandshake reports whether err is a call failed by the peer's
// refusal of the TLS handshake (TLS 1.3 reports it after the client's side
// completed: an alert, or the connection closed under a write).
func refusedHandshake(err error) bool {
	if status.Code(err) != codes.Unavailable {
		return false
	}
	for _, s := range []string{"tls: bad certificate", "broken pipe", "connection reset"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// TestLimitListener: connections beyond the limit are closed at once; a
// closed one frees its slot.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newLimitListener(raw, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// dialRead dials and reads for wait: nil if the connection is still
	// open then (the read timed out), else how it ended. A connection that
	// must stay open is read briefly; one that must be closed is given long
	// enough for the listener to run on a busy machine (the close ends the
	// read at once).
	dialRead := func(wait time.Duration) error {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			return err
		}
		t.Cleanup(func() { c.Close() })
		c.SetReadDeadline(time.Now().Add(wait))
		_, err = c.Read(make([]byte, 1))
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return nil
		}
		return err
	}
	for i := range 2 {
		if err := dialRead(300 * time.Millisecond); err != nil {
			t.Fatalf("connection %d within the limit: %v", i, err)
		}
	}
	if err := dialRead(30 * time.Second); err == nil {
		t.Fatal("a third connection stayed open beyond the limit of 2 (30 s)")
	}
	if l.refused.Load() != 1 {
		t.Fatalf("refused %d, want 1", l.refused.Load())
	}
	(<-accepted).Close()
	if err := dialRead(300 * time.Millisecond); err != nil {
		t.Fatalf("after a close: %v", err)
	}
}

// TestReregistrationEndsTheOldStream: a client credential registered again
// on another Work stream takes its client from the first; a stream left
// with no client ends (Aborted) instead of being held open, so one valid
// credential cannot hold many streams. The last registration gets the
// rounds.
func TestReregistrationEndsTheOldStream(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 4, k: 2, rounds: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var streams []grpc.ServerStreamingClient[pb.Assignment]
	for range 20 {
		streams = append(streams, r.work(ctx))
	}
	// The server may handle the registrations in any order: all streams but
	// the one it handled last end with Aborted (after any assignment
	// relayed to them while they held the clients).
	ended := make(chan error, len(streams))
	for _, w := range streams {
		go func() {
			var err error
			for err == nil {
				_, err = w.Recv()
			}
			ended <- err
		}()
	}
	for i := range len(streams) - 1 {
		select {
		case err := <-ended:
			if status.Code(err) != codes.Aborted {
				t.Fatalf("stream ended with %v, want Aborted", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d superseded streams ended", i, len(streams)-1)
		}
	}
	r.sh.mu.Lock()
	held := uniqueWorkers(r.sh.workers)
	r.sh.mu.Unlock()
	if len(held) != 1 {
		t.Fatalf("%d Work streams held for one client range registered %d times, want 1", len(held), len(streams))
	}
	select {
	case err := <-ended:
		t.Fatalf("the last registration's stream ended too: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestMessageLimits: the limits follow the run (an honest batch, chunk and
// model fit, with little room) and no run lifts them past recvCeiling.
func TestMessageLimits(t *testing.T) {
	run := protocol.RunConfig{Dim: 7850, Population: 60000, PerRound: 10000, ReportBytes: 100}
	for _, c := range []struct {
		name        string
		limit, need int
	}{
		{"batch", batchLimit(run), run.PerRound * run.ReportBytes},
		// a Submit chunk, or a pool's Work message (id, token per client)
		{"chunk or work message", reportLimit(run), max(chunkReports*(run.ReportBytes+32+8), registerChunk*(32+10))},
		// the model, and an assignment naming every client
		{"model", modelLimit(run), run.Dim*8 + run.Population*8},
	} {
		if c.limit < c.need || c.limit > 2*c.need+msgMargin {
			t.Errorf("%s: limit %d for a message of %d", c.name, c.limit, c.need)
		}
	}
	huge := protocol.RunConfig{Dim: 1 << 30, Population: 1 << 30, PerRound: 1 << 30, ReportBytes: 1 << 30}
	for _, l := range []int{batchLimit(huge), reportLimit(huge), modelLimit(huge)} {
		if l != recvCeiling {
			t.Errorf("limit %d for a huge run, want the ceiling %d", l, recvCeiling)
		}
	}
}

// asClient adds client c's credential to a call's metadata, as a client
// pool does on Work and Submit.
func asClient(ctx context.Context, enr *pki.Enroller, c int64) context.Context {
	return withCredential(ctx, c, enr.Token(c))
}

// TestCallCredential: a Work or Submit call without a valid credential in
// its metadata is refused when its headers arrive, whatever its message.
func TestCallCredential(t *testing.T) {
	r := newAttackRig(t, rigOptions{n: 4, k: 2, rounds: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := &pb.WorkRequest{Run: r.run.Run, Clients: []*pb.ClientCredential{{Client: 0, Token: r.enr.Token(0)}}}
	for name, cctx := range map[string]context.Context{
		"none":          ctx,
		"forged":        withCredential(ctx, 1, r.enr.Token(2)),
		"malformed id":  metadata.AppendToOutgoingContext(ctx, credClientKey, "x", credTokenKey, string(r.enr.Token(0))),
		"token missing": metadata.AppendToOutgoingContext(ctx, credClientKey, "0"),
	} {
		w, err := workCall(cctx, r.shuf, req, grpc.WaitForReady(true))
		if err == nil {
			_, err = w.Recv()
		}
		if status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("Work, credential %s: %v, want Unauthenticated naming the metadata", name, err)
		}
		st, err := r.shuf.Submit(cctx)
		if err == nil {
			_, err = st.CloseAndRecv()
		}
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("Submit, credential %s: %v, want Unauthenticated", name, err)
		}
	}
	if got := r.sh.Stats().Rejected[RejectUnauthenticated]; got != 8 {
		t.Errorf("%d unauthenticated calls counted, want 8", got)
	}
}
