package node

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
)

// The header floods of TestHeaderFloodCostsBounded, each from a peer
// holding only the client certificate (no credential). Before header lists
// were bounded (gRPC's default, 16 MiB), the first took a server from 44 MB
// to 873 MB and the third a shuffler from 32 MB to 199 MB.
var headerFloods = []struct {
	name   string
	target string // "server" or "shuffler"
	path   string
	conns  int
	// streams per connection, each with header bytes of metadata, its
	// block ended (END_HEADERS) or not (CONTINUATION frames forever).
	streams int
	header  int
	ended   bool
	// expect: what the node must do to every connection ("conn closed":
	// refused as it decodes; "conn set up": an idle connection, its
	// SETTINGS received) or stream ("stream closed": held at most the
	// first-message wait, or refused past maxWaitingClientCalls).
	expect string
}{
	{"getrun-1MiB", "server", pb.Server_GetRun_FullMethodName, 50, maxStreams, 1 << 20, true, "conn closed"},
	{"getrun-held", "server", pb.Server_GetRun_FullMethodName, 50, maxStreams, maxHeaderList - 1024, true, "stream closed"},
	{"getrun-held-300-conns", "server", pb.Server_GetRun_FullMethodName, 300, maxStreams, maxHeaderList - 1024, true, "stream closed"},
	{"work-unended-4MB", "shuffler", pb.Shuffler_Work_FullMethodName, 60, 1, 4 << 20, false, "conn closed"},
	{"idle-conns", "server", "", 1000, 0, 0, true, "conn set up"},
}

// headerFloodBound is the most any flood may make a node hold (peak RSS of
// the process, both nodes in it, over its RSS before the flood).
const headerFloodBound = 64 << 20

// TestHeaderFloodCostsBounded floods a server and a shuffler node (in this
// process) from an attacker process holding only the client certificate:
// 50 connections of 16 GetRun streams with 1 MiB of headers each and no
// request; the same with headers just under the bound, which the server
// must decode and then close within the first-message wait (a unary call
// with no body included); 60 connections each sending a 4 MB header block
// on Work that never ends (CONTINUATION frames without END_HEADERS). Each
// flood's peak RSS and heap growth is measured here; every flood must stay
// under 64 MiB (on gRPC's default 16 MiB header lists and with no deadline
// for a unary request, the first alone took 800 MB), the node must refuse
// or close what it was sent, and legitimate clients then complete the run.
func TestHeaderFloodCostsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns an attacker process")
	}
	_, srvAddr, shAddr, pkiDir, done := startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{
		shuffler: func(c *ShufflerConfig) { c.FirstMessage = time.Second },
		server:   func(c *ServerConfig) { c.FirstMessage = time.Second },
	})
	ctls, _ := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	conn, err := dial(srvAddr, ctls, pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := pb.NewServerClient(conn).GetRun(ctx, &pb.GetRunRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	for _, f := range headerFloods {
		t.Run(f.name, func(t *testing.T) {
			headerFlood(t, f.name, map[string]string{"server": srvAddr, "shuffler": shAddr}[f.target], pkiDir)
		})
	}
	// Legitimate clients still complete the run.
	enr, _ := pki.LoadEnroller(pkiDir)
	creds, _ := enr.Enrol(0, 20)
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: ctls, Credentials: creds, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(ctx); err != nil {
		t.Fatalf("legitimate clients after the floods: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}
}

// headerFlood runs the flood name against the node at addr from an
// attacker process and checks what the node did and its peak growth.
func headerFlood(t *testing.T, name, addr, pkiDir string) {
	var f = headerFloods[0]
	for _, g := range headerFloods {
		if g.name == name {
			f = g
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0, rss0 := int64(ms.HeapInuse), rssBytes(t)
	var heapMax, rssMax atomic.Int64
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heapMax.Store(max(heapMax.Load(), int64(m.HeapInuse)))
		rssMax.Store(max(rssMax.Load(), rssBytes(t)))
	}
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeaderFloodAttacker$", "-test.v")
	cmd.Env = append(os.Environ(), "SHUFFLEDP_FLOOD="+f.name, "FLOOD_ADDR="+addr, "FLOOD_PKI="+pkiDir)
	// The attacker holds its connections open until its stdin closes,
	// after it printed its RESULT: the node is sampled then too.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var out bytes.Buffer
	result := ""
	for sc := bufio.NewScanner(pr); sc.Scan(); {
		out.WriteString(sc.Text() + "\n")
		if v, ok := strings.CutPrefix(sc.Text(), "RESULT "); ok {
			result = v
			sample()
			stdin.Close()
		}
	}
	err = cmd.Wait()
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("%s attacker: %v\n%s", f.name, err, out.String())
	}
	dRSS, dHeap := rssMax.Load()-rss0, heapMax.Load()-heap0
	t.Logf("%s (%s, %d conns x %d streams x %d bytes of headers): %s in %v; peak growth RSS %.1f MiB, heap %.1f MiB (RSS before %.1f MiB)",
		f.name, f.target, f.conns, f.streams, f.header, result, time.Since(start).Round(time.Millisecond),
		float64(dRSS)/(1<<20), float64(dHeap)/(1<<20), float64(rss0)/(1<<20))
	total := f.conns
	if f.expect == "stream closed" {
		total = f.conns * f.streams
	}
	if want := fmt.Sprintf("%s %d of %d", f.expect, total, total); result != want {
		t.Errorf("%s: %q, want %q", f.name, result, want)
	}
	if dRSS > headerFloodBound || dHeap > headerFloodBound {
		t.Errorf("%s: peak growth RSS %.1f MiB, heap %.1f MiB; want at most %d MiB each", f.name, float64(dRSS)/(1<<20), float64(dHeap)/(1<<20), headerFloodBound>>20)
	}
}

// TestHeaderFloodAttacker is TestHeaderFloodCostsBounded's attacker
// process (skipped unless started by it): it runs one flood of
// headerFloods over raw HTTP/2 on TLS with the client certificate, waits
// until the node closed every connection or stream the flood expects it
// to (at most 30 s), prints "RESULT <what> <closed> of <total>" and holds
// its connections until its stdin closes.
func TestHeaderFloodAttacker(t *testing.T) {
	name := os.Getenv("SHUFFLEDP_FLOOD")
	if name == "" {
		t.Skip("the attacker process of TestHeaderFloodCostsBounded")
	}
	addr, pkiDir := os.Getenv("FLOOD_ADDR"), os.Getenv("FLOOD_PKI")
	var f = headerFloods[0]
	for _, g := range headerFloods {
		if g.name == name {
			f = g
		}
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, pki.RoleClient, pki.CertFile(pki.RoleClient)),
		filepath.Join(pkiDir, pki.RoleClient, pki.KeyFile(pki.RoleClient)))
	if err != nil {
		t.Fatal(err)
	}
	// One header block: a gRPC call's headers and f.header bytes of
	// metadata (fields of at most 1 MiB).
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, hf := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":path", f.path}, {":authority", addr},
		{"content-type", "application/grpc"}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: hf[0], Value: hf[1]})
	}
	for left, i := f.header, 0; left > 0; i++ {
		n := min(left, 1<<20)
		enc.WriteField(hpack.HeaderField{Name: fmt.Sprintf("x-pad-%d", i), Value: strings.Repeat("a", n), Sensitive: true})
		left -= n + len("x-pad-") + 32
	}
	frags := chunk(block.Bytes(), 16<<10)
	var closedConns, closedStreams, setUp atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	done := func() {
		if f.expect == "conn closed" && closedConns.Load() == int64(f.conns) ||
			f.expect == "conn set up" && setUp.Load() == int64(f.conns) ||
			f.expect == "stream closed" && closedStreams.Load() == int64(f.conns*f.streams) {
			once.Do(func() { close(all) })
		}
	}
	var wg sync.WaitGroup
	for range f.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true,
				Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
			if err != nil {
				closedConns.Add(1)
				done()
				return
			}
			// The node's frames: count the streams it ends (RST_STREAM, or
			// trailers) until it closes the connection.
			go func() {
				rd := http2.NewFramer(nil, c)
				ended := map[uint32]bool{}
				for {
					fr, err := rd.ReadFrame()
					if err != nil {
						closedConns.Add(1)
						done()
						return
					}
					id := fr.Header().StreamID
					end := false
					switch fr := fr.(type) {
					case *http2.SettingsFrame:
						if !fr.IsAck() {
							setUp.Add(1)
							done()
						}
					case *http2.RSTStreamFrame:
						end = true
					case *http2.HeadersFrame:
						end = fr.StreamEnded()
					}
					if end && id != 0 && !ended[id] {
						ended[id] = true
						closedStreams.Add(1)
						done()
					}
				}
			}()
			c.Write([]byte(http2.ClientPreface))
			w := http2.NewFramer(c, nil)
			w.WriteSettings()
			for s := range f.streams {
				id := uint32(2*s + 1)
				if err := w.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: frags[0],
					EndHeaders: f.ended && len(frags) == 1}); err != nil {
					return
				}
				for i, fr := range frags[1:] {
					if err := w.WriteContinuation(id, f.ended && i == len(frags)-2, fr); err != nil {
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(30 * time.Second):
	}
	n, total := closedConns.Load(), f.conns
	switch f.expect {
	case "stream closed":
		n, total = closedStreams.Load(), f.conns*f.streams
	case "conn set up":
		n = setUp.Load()
	}
	fmt.Printf("RESULT %s %d of %d\n", f.expect, n, total)
	io.Copy(io.Discard, os.Stdin) // hold the connections until the node was sampled
}

// chunk splits b into pieces of at most n bytes.
func chunk(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}
