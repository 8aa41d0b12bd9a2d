package node

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/keepalive"

	"github.com/shuffledp/shuffledp/pki"
)

// freezer is a TCP relay that can stop forwarding without closing either
// side: what a peer whose host lost power or whose link was cut looks like
// to the other end (no FIN, no RST; the kernel keeps the socket open).
type freezer struct {
	frozen chan struct{} // closed when frozen
}

func (f *freezer) freeze() { close(f.frozen) }

// relay accepts on lis and forwards each connection to target until frozen.
func (f *freezer) relay(t *testing.T, lis net.Listener, target string) {
	for {
		in, err := lis.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			in.Close()
			return
		}
		t.Cleanup(func() { in.Close(); out.Close() })
		go f.pipe(in, out)
		go f.pipe(out, in)
	}
}

func (f *freezer) pipe(src io.Reader, dst io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-f.frozen:
			<-make(chan struct{}) // hold the bytes: forward nothing, close nothing
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestDialKeepaliveEndsWaitOnVanishedPeer: a connection whose peer goes
// silent without closing (the relay freezes) leaves READY within the
// keepalive's ping interval plus its timeout, so every wait on that peer
// ends with an error instead of the kernel's TCP timeouts. Negative
// control: without keepalive pings the same frozen connection stays READY
// for as long.
func TestDialKeepaliveEndsWaitOnVanishedPeer(t *testing.T) {
	if dialKeepalive.Time <= 0 || dialKeepalive.Timeout <= 0 || !dialKeepalive.PermitWithoutStream {
		t.Fatalf("dialKeepalive %+v: the dialling side must ping, also without a stream", dialKeepalive)
	}
	pkiDir := t.TempDir()
	if err := pki.Init(pkiDir, nil); err != nil {
		t.Fatal(err)
	}
	stls, err := pki.ServerTLS(filepath.Join(pkiDir, pki.RoleServer), pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(serverOptions(stls, serverLimits{recv: specLimit})...)
	slis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(slis)
	t.Cleanup(g.Stop)
	dialTLS, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleShuffler), pki.RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	// gRPC raises a client's ping interval to at least 10 s; the servers'
	// enforcement policy permits that.
	const ping, timeout = 10 * time.Second, time.Second
	within := ping + timeout + 4*time.Second
	for _, tc := range []struct {
		name  string
		ka    keepalive.ClientParameters
		leave bool
	}{
		{"keepalive", keepalive.ClientParameters{Time: ping, Timeout: timeout, PermitWithoutStream: true}, true},
		{"no-keepalive (negative control)", keepalive.ClientParameters{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { plis.Close() })
			f := &freezer{frozen: make(chan struct{})}
			go f.relay(t, plis, slis.Addr().String())
			c, err := dialWith(plis.Addr().String(), dialTLS, pki.RoleServer, tc.ka)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c.Connect()
			for s := c.GetState(); s != connectivity.Ready; s = c.GetState() {
				if !c.WaitForStateChange(ctx, s) {
					t.Fatalf("never ready (state %v)", s)
				}
			}
			f.freeze()
			start := time.Now()
			wctx, wcancel := context.WithTimeout(context.Background(), within)
			defer wcancel()
			left := c.WaitForStateChange(wctx, connectivity.Ready)
			if left != tc.leave {
				t.Fatalf("left READY within %v: %v (after %v), want %v", within, left, time.Since(start).Round(time.Millisecond), tc.leave)
			}
			t.Logf("left READY: %v after %v", left, time.Since(start).Round(time.Millisecond))
		})
	}
}
