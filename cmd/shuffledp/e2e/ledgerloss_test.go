package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/statedir"
)

// lossRun is a networked run long enough (600 rounds) that the test's
// stops and restarts never finish it.
var lossRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "60", "--sample", "10",
	"--eps0", "2", "--epochs", "100", "--eval-every", "50", "--test-size", "50", "--no-progress"}

// waitOutput waits until p's output contains want (false: p exited
// first, or two minutes passed).
func waitOutput(p *netProc, want string) bool {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		if strings.Contains(p.out.String(), want) {
			return true
		}
		select {
		case <-p.done:
			return strings.Contains(p.out.String(), want)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return false
}

// dirFiles is every file of dir but the lock, with its contents.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == statedir.LockFile || e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// TestLostLedgerRefused runs a server, a shuffler and a client process
// until the shuffler has released rounds, stops the shuffler, and then
// restarts it with its ledger removed, emptied, or with a fresh state
// directory (a second shuffler): each refuses to continue, saying which
// ledger cannot show the run's history, and changes nothing in the state
// directory; the server, which has received those rounds, keeps running.
// The shuffler restarted with a backup copy of its own ledger continues
// the run where it was.
func TestLostLedgerRefused(t *testing.T) {
	dir := t.TempDir()
	pkiDir, shufState, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	creds := filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvAddrFile := filepath.Join(dir, "srv.addr")
	srv := startNetProc(t, "server", nil, append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", srvAddrFile,
		"--state", srvState, "--pki", filepath.Join(pkiDir, "server")}, lossRun...)...)
	sa := waitNetAddr(t, srvAddrFile, srv)
	if sa == "" {
		t.Fatalf("server did not start\n%s", srv.out)
	}
	n := 0
	shuffler := func(state string) *netProc {
		n++
		return startNetProc(t, "shuffler", nil, "shuffler", "--listen", "127.0.0.1:0",
			"--addr-file", filepath.Join(dir, "sh"+strconvI(int64(n))+".addr"),
			"--server", sa, "--state", state, "--pki", filepath.Join(pkiDir, "shuffler"), "--release-when-complete")
	}
	sh := shuffler(shufState)
	ha := waitNetAddr(t, filepath.Join(dir, "sh1.addr"), sh)
	if ha == "" {
		t.Fatalf("shuffler did not start\n%s", sh.out)
	}
	cl := startNetProc(t, "client", nil, "client", "--shuffler", ha, "--server", sa, "--clients", "0:60", "--workers", "2",
		"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	if !waitOutput(sh, "round 3 released") {
		t.Fatalf("no round 3 released\nshuffler:\n%s\nserver:\n%s", sh.out, srv.out)
	}
	cl.stop(30 * time.Second)
	sh.stop(30 * time.Second)
	file := filepath.Join(shufState, ledger.FileName)
	backup, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file + "-wal"); err == nil {
		t.Fatalf("the stopped shuffler left %s-wal: the copy would not be the whole ledger", file)
	}
	refusals := []struct {
		name  string
		state string
		setup func()
		want  []string
	}{
		{"ledger removed", shufState, func() { os.Remove(file) }, []string{"the ledger " + file + " is missing", "restore the ledger from a backup"}},
		{"ledger emptied", shufState, func() { os.WriteFile(file, nil, 0o644) }, []string{"the ledger " + file + " is empty (0 bytes)"}},
		{"fresh state directory", filepath.Join(dir, "shuffler2"), func() {}, []string{"the server has received round ", filepath.Join(dir, "shuffler2", ledger.FileName)}},
	}
	for _, r := range refusals {
		r.setup()
		var before map[string][]byte
		if _, err := os.Stat(r.state); err == nil {
			before = dirFiles(t, r.state)
		}
		p := shuffler(r.state)
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			p.stop(5 * time.Second)
			t.Fatalf("%s: the shuffler did not refuse to start\n%s", r.name, p.out)
		}
		out := p.out.String()
		if p.err == nil {
			t.Fatalf("%s: the shuffler exited 0\n%s", r.name, out)
		}
		for _, w := range r.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the shuffler's output does not say %q:\n%s", r.name, w, out)
			}
		}
		if strings.Contains(out, "released:") {
			t.Errorf("%s: the refused shuffler released a round:\n%s", r.name, out)
		}
		if before != nil {
			after := dirFiles(t, r.state)
			if len(after) != len(before) {
				t.Errorf("%s: %d files before, %d after the refused start", r.name, len(before), len(after))
			}
			for name, b := range before {
				if !bytes.Equal(after[name], b) {
					t.Errorf("%s: %s changed by the refused start", r.name, name)
				}
			}
		}
		select {
		case <-srv.done:
			t.Fatalf("%s: the server exited: %v\n%s", r.name, srv.err, srv.out)
		default:
		}
	}
	// The backup restored: the run goes on from the ledger's rounds.
	if err := os.WriteFile(file, backup, 0o644); err != nil {
		t.Fatal(err)
	}
	sh = shuffler(shufState)
	if !waitOutput(sh, "ledger at round ") || strings.Contains(sh.out.String(), "ledger at round 0,") {
		t.Fatalf("restored ledger: the shuffler does not resume from its rounds\n%s", sh.out)
	}
	ha = waitNetAddr(t, filepath.Join(dir, "sh"+strconvI(int64(n))+".addr"), sh)
	cl = startNetProc(t, "client", nil, "client", "--shuffler", ha, "--server", sa, "--clients", "0:60", "--workers", "2",
		"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	if !waitOutput(sh, "released:") {
		t.Fatalf("the restored shuffler released nothing\n%s\nserver:\n%s", sh.out, srv.out)
	}
	for _, p := range []*netProc{cl, sh, srv} {
		p.stop(30 * time.Second)
	}
	if strings.Contains(srv.out.String(), "different entry") {
		t.Fatalf("the server saw a conflicting entry:\n%s", srv.out)
	}
}

// TestSecondShufflerBatchRefused runs a server and two shufflers on it,
// each with its own ledger and a client process: shuffler A takes the
// first model and waits for its clients while B runs rounds 1, 2, ...;
// then A's clients come and A releases its round 1. The server refuses
// that batch (it has recorded another round 1) to A, which exits 1 naming
// the refusal, logs it, and goes on with B's rounds: before, the server's
// loop exited on "a different entry exists for this run and round".
func TestSecondShufflerBatchRefused(t *testing.T) {
	dir := t.TempDir()
	pkiDir := filepath.Join(dir, "pki")
	creds := filepath.Join(dir, "creds.json")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvAddrFile := filepath.Join(dir, "srv.addr")
	srv := startNetProc(t, "server", nil, append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", srvAddrFile,
		"--state", filepath.Join(dir, "server"), "--pki", filepath.Join(pkiDir, "server")}, lossRun...)...)
	sa := waitNetAddr(t, srvAddrFile, srv)
	if sa == "" {
		t.Fatalf("server did not start\n%s", srv.out)
	}
	start := func(name string) (*netProc, string) {
		addr := filepath.Join(dir, name+".addr")
		p := startNetProc(t, "shuffler", nil, "shuffler", "--listen", "127.0.0.1:0", "--addr-file", addr,
			"--server", sa, "--state", filepath.Join(dir, name), "--pki", filepath.Join(pkiDir, "shuffler"), "--release-when-complete")
		ha := waitNetAddr(t, addr, p)
		if ha == "" {
			t.Fatalf("shuffler %s did not start\n%s", name, p.out)
		}
		return p, ha
	}
	clients := func(addr string) *netProc {
		return startNetProc(t, "client", nil, "client", "--shuffler", addr, "--server", sa, "--clients", "0:60", "--workers", "2",
			"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds)
	}
	a, aAddr := start("a")
	if !waitOutput(a, "waiting for clients") { // A holds the first model and passed its checks
		t.Fatalf("shuffler A does not wait for its clients\n%s", a.out)
	}
	b, bAddr := start("b")
	clB := clients(bAddr)
	if !waitOutput(b, "round 2 released") {
		t.Fatalf("shuffler B released no round 2\n%s\nserver:\n%s", b.out, srv.out)
	}
	clA := clients(aAddr)
	select {
	case <-a.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("shuffler A's round 1 was not refused\nA:\n%s\nserver:\n%s", a.out, srv.out)
	}
	if a.err == nil || !strings.Contains(a.out.String(), "contradicts the server's record of the rounds received") {
		t.Fatalf("shuffler A: %v; want it refused by the server\n%s", a.err, a.out)
	}
	if !waitOutput(srv, "batch refused (the run goes on)") {
		t.Fatalf("the server did not log the refusal\n%s", srv.out)
	}
	released := strings.Count(b.out.String(), "released:")
	if !waitOutput(b, "round "+strconvI(int64(released+2))+" released") {
		t.Fatalf("the run did not go on after the refusal\nB:\n%s\nserver:\n%s", b.out, srv.out)
	}
	select {
	case <-srv.done:
		t.Fatalf("the server exited: %v\n%s", srv.err, srv.out)
	default:
	}
	for _, p := range []*netProc{clA, clB, b, srv} {
		p.stop(30 * time.Second)
	}
	if strings.Contains(srv.out.String(), "different entry") {
		t.Fatalf("the server's loop met the conflicting entry:\n%s", srv.out)
	}
}
