package node

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// Attack sizes of TestUnauthenticatedCostsNoMemory.
const (
	dosBig         = 250 << 20 // one message
	dosEmptyWork   = 3000      // Work streams without credentials
	dosIdleStreams = 1000      // streams that never send their first message
	dosConns       = 16        // connections the streams are spread over
)

// rssBytes is the process's resident set size (VmRSS).
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestUnauthenticatedCostsNoMemory attacks a server and a shuffler node (in
// this process) from another process: 250 MiB messages from peers without
// a certificate, with a client's certificate at the shuffler's and the
// server's calls, and with the shuffler's at the server; thousands of Work
// streams without any credential; a thousand streams that never send their
// first message. It samples this process's heap and RSS and its goroutines
// throughout and checks that each attack was refused the way it should be,
// that the growth stayed bounded (tens of MiB, not the attack's size), and
// that legitimate clients then complete the run.
func TestUnauthenticatedCostsNoMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns an attacker process")
	}
	_, srvAddr, shAddr, pkiDir, done := startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{
		shuffler: func(c *ShufflerConfig) { c.FirstMessage = 300 * time.Millisecond },
	})
	// Wait until both listen and the shuffler has the run.
	ctls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	conn, err := dial(srvAddr, ctls, pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := pb.NewServerClient(conn).GetRun(ctx, &pb.GetRunRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0, rss0, g0 := int64(ms.HeapInuse), rssBytes(t), runtime.NumGoroutine()
	var mu sync.Mutex
	var heapMax, rssMax int64
	gMax := 0
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			r, g := rssBytes(t), runtime.NumGoroutine()
			mu.Lock()
			heapMax, rssMax, gMax = max(heapMax, int64(m.HeapInuse)), max(rssMax, r), max(gMax, g)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDoSAttacker$", "-test.v")
	cmd.Env = append(os.Environ(), "SHUFFLEDP_DOS_ATTACK=1", "DOS_SERVER="+srvAddr, "DOS_SHUFFLER="+shAddr, "DOS_PKI="+pkiDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("attacker: %v\n%s", err, out.String())
	}
	log := out.String()
	results := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "RESULT "), " = "); ok && strings.HasPrefix(sc.Text(), "RESULT ") {
			results[k] = v
		}
	}
	want := map[string]string{
		"big/no-cert/shuffler":    "Unavailable",
		"big/no-cert/server":      "Unavailable",
		"big/client/server":       "PermissionDenied",
		"big/client/shuffler":     "Unauthenticated",   // no credential in the call's metadata
		"big/credential/shuffler": "ResourceExhausted", // or DeadlineExceeded, below
		"big/shuffler/server":     "ResourceExhausted",
		"work-empty/no-cert":      fmt.Sprintf("Unavailable x%d", 100),
		"work-empty/client":       fmt.Sprintf("Unauthenticated x%d", dosEmptyWork),
		"work-no-credential/":     fmt.Sprintf("Unauthenticated x%d", 100),
		"idle-streams/client":     fmt.Sprintf("DeadlineExceeded x%d", dosIdleStreams),
		"work-empty/server-cert":  fmt.Sprintf("Unavailable x%d", 100),
		"submit-unauthenticated/": "Unauthenticated",
	}
	// Under load the 250 MiB chunk may take longer to marshal than the
	// first-message deadline: refused either way, before it is read.
	if results["big/credential/shuffler"] == "DeadlineExceeded" {
		results["big/credential/shuffler"] = "ResourceExhausted"
	}
	// Likewise an empty Work request that a loaded machine delivers after
	// the first-message deadline is refused with DeadlineExceeded: count
	// both as the refusal.
	if k := "work-empty/client"; results[k] != "" {
		n := 0
		for _, part := range strings.Split(results[k], ", ") {
			code, count, _ := strings.Cut(part, " x")
			c, _ := strconv.Atoi(count)
			if code == "Unauthenticated" || code == "DeadlineExceeded" {
				n += c
			}
		}
		if n == dosEmptyWork {
			results[k] = fmt.Sprintf("Unauthenticated x%d", n)
		}
	}
	for k, v := range want {
		if results[k] != v {
			t.Errorf("%s: %q, want %q\nattacker:\n%s", k, results[k], v, log)
		}
	}
	mu.Lock()
	dHeap, dRSS, dG := heapMax-heap0, rssMax-rss0, gMax-g0
	mu.Unlock()
	t.Logf("attacks took %v; this process's peak growth: heap %.1f MiB, RSS %.1f MiB, goroutines %d", elapsed, float64(dHeap)/(1<<20), float64(dRSS)/(1<<20), dG)
	if dHeap > 48<<20 || dRSS > 96<<20 {
		t.Errorf("peak growth heap %.1f MiB, RSS %.1f MiB under attack; want at most 48 and 96 MiB", float64(dHeap)/(1<<20), float64(dRSS)/(1<<20))
	}
	// Streams per connection are bounded: at most maxStreams handlers (and
	// each its reader) per attacking connection.
	if dG > 3*maxStreams*dosConns+200 {
		t.Errorf("%d more goroutines under attack, want at most %d", dG, 3*maxStreams*dosConns+200)
	}

	// Legitimate clients still complete the run.
	enr, _ := pki.LoadEnroller(pkiDir)
	creds, _ := enr.Enrol(0, 20)
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: ctls, Credentials: creds, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(ctx); err != nil {
		t.Fatalf("legitimate clients after the attacks: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
	if pool.Reports() != 10 {
		t.Fatalf("%d reports accepted, want 10", pool.Reports())
	}
}

// TestDoSAttacker is TestUnauthenticatedCostsNoMemory's attacker process
// (skipped unless started by it). It prints one RESULT line per attack.
func TestDoSAttacker(t *testing.T) {
	if os.Getenv("SHUFFLEDP_DOS_ATTACK") == "" {
		t.Skip("the attacker process of TestUnauthenticatedCostsNoMemory")
	}
	srvAddr, shAddr, pkiDir := os.Getenv("DOS_SERVER"), os.Getenv("DOS_SHUFFLER"), os.Getenv("DOS_PKI")
	t0 := time.Now()
	result := func(k, v string) {
		fmt.Printf("RESULT %s = %s\n", k, v)
		fmt.Printf("%s after %v\n", k, time.Since(t0))
	}
	codeOf := func(err error) string {
		if err == nil {
			return "OK"
		}
		return status.Code(err).String()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	connAs := func(addr, role string) *grpc.ClientConn {
		tc := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}
		if role != "" {
			c, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, role, pki.CertFile(role)), filepath.Join(pkiDir, role, pki.KeyFile(role)))
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{c}
		}
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tc)),
			grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(1<<30)))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	big := make([]byte, dosBig)
	// A client's credential (the attacker stole one client's).
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	cred := withCredential(ctx, 0, enr.Token(0))
	submitBig := func(ctx context.Context, c *grpc.ClientConn) error {
		st, err := pb.NewShufflerClient(c).Submit(ctx)
		if err != nil {
			return err
		}
		if err := st.Send(&pb.ReportChunk{Run: "x", Reports: []*pb.Report{{Client: 0, Token: make([]byte, 32), Sealed: big}}}); err != nil {
			_, err = st.CloseAndRecv()
			return err
		}
		_, err = st.CloseAndRecv()
		return err
	}
	batchBig := func(c *grpc.ClientConn) error {
		_, err := pb.NewServerClient(c).SubmitBatch(ctx, &pb.Batch{Run: "x", Round: 1, ReportBytes: 1, Reports: big})
		return err
	}
	result("big/no-cert/shuffler", codeOf(submitBig(cred, connAs(shAddr, ""))))
	result("big/no-cert/server", codeOf(batchBig(connAs(srvAddr, ""))))
	result("big/client/server", codeOf(batchBig(connAs(srvAddr, pki.RoleClient))))
	result("big/client/shuffler", codeOf(submitBig(ctx, connAs(shAddr, pki.RoleClient))))
	result("big/credential/shuffler", codeOf(submitBig(cred, connAs(shAddr, pki.RoleClient))))
	result("big/shuffler/server", codeOf(batchBig(connAs(srvAddr, pki.RoleShuffler))))
	big = nil
	runtime.GC()

	// Many calls, counted by outcome, spread over connections.
	many := func(n int, conns []*grpc.ClientConn, call func(*grpc.ClientConn) error) string {
		var mu sync.Mutex
		codes := map[string]int{}
		var wg sync.WaitGroup
		sem := make(chan struct{}, 256)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				c := codeOf(call(conns[i%len(conns)]))
				mu.Lock()
				codes[c]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		var parts []string
		for c, k := range codes {
			parts = append(parts, fmt.Sprintf("%s x%d", c, k))
		}
		return strings.Join(parts, ", ")
	}
	conns := func(addr, role string) []*grpc.ClientConn {
		cs := make([]*grpc.ClientConn, dosConns)
		for i := range cs {
			cs[i] = connAs(addr, role)
		}
		return cs
	}
	emptyWorkIn := func(ctx context.Context) func(c *grpc.ClientConn) error {
		return func(c *grpc.ClientConn) error {
			w, err := workCall(ctx, pb.NewShufflerClient(c), &pb.WorkRequest{Run: "x"})
			if err != nil {
				return err
			}
			_, err = w.Recv()
			return err
		}
	}
	emptyWork := emptyWorkIn(cred)
	result("work-empty/no-cert", many(100, conns(shAddr, ""), emptyWork))
	result("work-empty/server-cert", many(100, conns(shAddr, pki.RoleServer), emptyWork))
	result("work-empty/client", many(dosEmptyWork, conns(shAddr, pki.RoleClient), emptyWork))
	result("work-no-credential/", many(100, conns(shAddr, pki.RoleClient), emptyWorkIn(ctx)))
	idle := func(c *grpc.ClientConn) error {
		s, err := c.NewStream(cred, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, pb.Shuffler_Work_FullMethodName)
		if err != nil {
			return err
		}
		return s.RecvMsg(&pb.Assignment{})
	}
	result("idle-streams/client", many(dosIdleStreams, conns(shAddr, pki.RoleClient), idle))
	// A Submit stream whose first chunk carries no valid credential.
	st, err := pb.NewShufflerClient(connAs(shAddr, pki.RoleClient)).Submit(cred)
	if err == nil {
		st.Send(&pb.ReportChunk{Run: "x", Reports: []*pb.Report{{Client: 1, Token: make([]byte, 32), Sealed: make([]byte, 64)}}})
		_, err = st.CloseAndRecv()
	}
	result("submit-unauthenticated/", codeOf(err))
}
