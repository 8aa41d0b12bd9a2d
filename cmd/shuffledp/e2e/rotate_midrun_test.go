package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/pki"
)

// TestRotateMidRun: a run by hand (server, shuffler, client processes)
// whose shuffler is stopped after round 2, given a new key and certificate
// with `pki rotate --role shuffler --revoke` on the operator's directory
// and restarted on the same address with its rotated bundle. The clients
// reconnect to it (same authority, new certificate), the run finishes, the
// shuffler's ledger continues where it was (no round debited twice, the 6
// planned rounds, epsilon = account for them), and the rotation changed
// nothing but the shuffler's key, certificate and the revocation list.
func TestRotateMidRun(t *testing.T) {
	dir := t.TempDir()
	pkiDir, state, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	creds := filepath.Join(dir, "creds.json")
	for _, args := range [][]string{{"init", "--dir", pkiDir}, {"enrol", "--dir", pkiDir, "--clients", "0:60", "--out", creds}} {
		if out, err := runCmd(t, "pki", args...); err != nil {
			t.Fatalf("pki %v: %v\n%s", args, err, out)
		}
	}
	srv := startNetProc(t, "server", nil, append([]string{"server", "--listen", "127.0.0.1:0", "--addr-file", filepath.Join(dir, "srv.addr"),
		"--state", srvState, "--pki", filepath.Join(pkiDir, "server"), "--epochs", "1"}, clitest.UpRun...)...)
	srvAddr := waitFile(t, filepath.Join(dir, "srv.addr"), srv.cmd, srv.out.b)
	shAddr := clitest.FreeAddr(t)
	shuffler := func() *netProc {
		return startNetProc(t, "shuffler", nil, "shuffler", "--listen", shAddr, "--server", srvAddr, "--state", state,
			"--pki", filepath.Join(pkiDir, "shuffler"), "--round-timeout", "300ms")
	}
	sh := shuffler()
	cl := startNetProc(t, "client", nil, "client", "--shuffler", shAddr, "--server", srvAddr, "--clients", "0:60", "--workers", "2",
		"--pki", filepath.Join(pkiDir, "client"), "--credentials", creds, "--connect-timeout", "30s")
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && !strings.Contains(sh.out.String(), "round 2 released") {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(sh.out.String(), "round 2 released") {
		t.Fatalf("no round 2:\n%s", sh.out)
	}
	sh.stop(10 * time.Second)
	before := snapshotFiles(t, pkiDir)
	if out, err := runCmd(t, "pki", "rotate", "--dir", pkiDir, "--role", "shuffler", "--revoke"); err != nil {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	for f, v := range snapshotFiles(t, pkiDir) {
		changed := before[f] != v
		want := f == "shuffler/shuffler.pem" || f == "shuffler/shuffler.key" || strings.HasSuffix(f, pki.RevokedFile)
		if changed != want {
			t.Errorf("rotation: %s changed %v, want %v", f, changed, want)
		}
	}
	sh2 := shuffler()
	for _, p := range []*netProc{srv, sh2, cl} {
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s still running:\nserver:\n%s\nshuffler:\n%s\nclient:\n%s", p.name, srv.out, sh2.out, cl.out)
		}
		if p.err != nil {
			t.Fatalf("%s: %v\nserver:\n%s\nshuffler (before):\n%s\nshuffler (after):\n%s\nclient:\n%s", p.name, p.err, srv.out, sh.out, sh2.out, cl.out)
		}
	}
	applied, ended := runEnded(srv.out.String(), 6)
	if !ended {
		t.Fatalf("server output:\n%s", srv.out)
	}
	rounds, eps, _ := clitest.LedgerShow(t, state)
	// The ledger holds the 6 planned rounds, never more: a batch debited
	// when the shuffler was stopped is charged, never released, and the
	// run then stops one round short (rounds-debited).
	if want := upAccountEpsilon(t, strconv.FormatInt(rounds, 10)); rounds != 6 || applied < 5 || eps != want {
		t.Fatalf("ledger show: %d rounds (the server applied %d), epsilon %v; account over them %v", rounds, applied, eps, want)
	}
	if strings.Contains(sh2.out.String(), "round 1 released") || strings.Contains(sh2.out.String(), "round 2 released") {
		t.Fatalf("the restarted shuffler reused a round id:\n%s", sh2.out)
	}
}

// snapshotFiles returns the contents of every file under dir.
func snapshotFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = string(b)
		}
		return nil
	})
	return m
}
