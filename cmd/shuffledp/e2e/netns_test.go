package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

// The three-host test's private network: a bridge in its own namespace
// and one host namespace per role, each with one address on the bridge.
const (
	netnsServerIP   = "10.77.0.3"
	netnsShufflerIP = "10.77.0.2"
	netnsClientIP   = "10.77.0.1"
)

// netnsAvailable reports why network namespaces cannot be used here ("" if
// they can): the test needs root and a working `ip netns`.
func netnsAvailable() string {
	if os.Geteuid() != 0 {
		return "needs root (ip netns)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "needs the ip command (Debian: apt-get install iproute2)"
	}
	name := fmt.Sprintf("sdpprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return fmt.Sprintf("ip netns add failed: %v: %s", err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "netns", "del", name).Run()
	return ""
}

// ipRun runs `ip args...` and fails the test on error.
func ipRun(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// addNetns creates a network namespace, deleted (with its interfaces) when
// the test ends, whatever its outcome.
func addNetns(t *testing.T, name string) {
	t.Helper()
	ipRun(t, "netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, bytes.TrimSpace(out))
		}
	})
	ipRun(t, "-n", name, "link", "set", "lo", "up")
}

// copyFiles copies names from src to dst (created), keeping permissions:
// what an operator copies to one machine.
func copyFiles(t *testing.T, src, dst string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		in, err := os.Open(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := in.Stat()
		out, err := os.OpenFile(filepath.Join(dst, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(out, in)
		in.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestThreeHostsNetns is the README's "Three machines" deployment on one
// machine: a client host, a shuffler host and a server host, each a network
// namespace with a private address on a bridge (itself in a fourth
// namespace, so no packet touches the machine's own network stack). The
// server's and the shuffler's certificates carry those addresses as SANs;
// each host gets only the files the README lists for it; the server,
// shuffler and two client processes (this test binary as shuffledp) run
// inside their namespaces via `ip netns exec`; the run trains 6 rounds on
// synthetic data and `ledger show --json` on the shuffler's state equals
// `account`. The namespaces are deleted at the end, also on failure.
//
// Skipped unless root with a working `ip netns`; SHUFFLEDP_REQUIRE_NETNS=1
// (set by .ci/run) makes that a failure.
func TestThreeHostsNetns(t *testing.T) {
	if why := netnsAvailable(); why != "" {
		if os.Getenv("SHUFFLEDP_REQUIRE_NETNS") == "1" {
			t.Fatalf("SHUFFLEDP_REQUIRE_NETNS=1 but: %s", why)
		}
		t.Skipf("three-host test skipped: %s (SHUFFLEDP_REQUIRE_NETNS=1 makes this a failure)", why)
	}
	pfx := fmt.Sprintf("sdp%d", os.Getpid())
	lan := pfx + "-lan"
	addNetns(t, lan)
	ipRun(t, "-n", lan, "link", "add", "br0", "type", "bridge")
	ipRun(t, "-n", lan, "link", "set", "br0", "up")
	hosts := map[string]string{"srv": netnsServerIP, "shf": netnsShufflerIP, "cli": netnsClientIP}
	for _, h := range []string{"srv", "shf", "cli"} {
		ns := pfx + "-" + h
		addNetns(t, ns)
		ipRun(t, "-n", lan, "link", "add", "p-"+h, "type", "veth", "peer", "name", "eth0", "netns", ns)
		ipRun(t, "-n", lan, "link", "set", "p-"+h, "master", "br0", "up")
		ipRun(t, "-n", ns, "addr", "add", hosts[h]+"/24", "dev", "eth0")
		ipRun(t, "-n", ns, "link", "set", "eth0", "up")
	}

	dir := t.TempDir()
	// On the operator's trusted machine: the deployment's PKI, with the
	// hosts' addresses in the server's and the shuffler's certificates,
	// one bundle per host; the client credentials are enrolled there too.
	// Each host is given its bundle only (ca.key and the operator's copy
	// of clients.key never leave the operator).
	opDir := filepath.Join(dir, "operator")
	os.MkdirAll(opDir, 0o700)
	pkiDir := filepath.Join(opDir, "pki")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir, "--hosts", netnsServerIP+","+netnsShufflerIP); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvPKI := filepath.Join(dir, "srv", "certs")
	copyFiles(t, filepath.Join(pkiDir, "server"), srvPKI, "ca.pem", "server.pem", "server.key")
	shfPKI := filepath.Join(dir, "shf", "pki")
	copyFiles(t, filepath.Join(pkiDir, "shuffler"), shfPKI, "ca.pem", "shuffler.pem", "shuffler.key", "clients.key")
	cliDir := filepath.Join(dir, "cli")
	copyFiles(t, filepath.Join(pkiDir, "client"), cliDir, "ca.pem", "client.pem", "client.key")
	for _, r := range []string{"0:30", "30:60"} {
		out := filepath.Join(cliDir, "clients-"+strings.Replace(r, ":", "-", 1)+".json")
		if o, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", r, "--out", out); err != nil {
			t.Fatalf("%v\n%s", err, o)
		}
	}

	start := func(host string, args ...string) (*exec.Cmd, *bytes.Buffer) {
		c := exec.Command("ip", append([]string{"netns", "exec", pfx + "-" + host, clitest.Exe}, args...)...)
		c.Env = os.Environ()
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // before the namespaces go (cleanups run last first)
			if c.ProcessState == nil {
				c.Process.Kill()
				c.Wait()
			}
		})
		return c, &out
	}
	srvAddr, shfAddr := netnsServerIP+":7060", netnsShufflerIP+":7061"
	srvArgs := append([]string{"server", "--listen", srvAddr, "--addr-file", filepath.Join(dir, "srv", "addr"),
		"--state", filepath.Join(dir, "srv", "state"), "--pki", srvPKI, "--epochs", "1"}, clitest.UpRun...)
	srv, srvOut := start("srv", srvArgs...)
	waitFile(t, filepath.Join(dir, "srv", "addr"), srv, srvOut)
	shfState := filepath.Join(dir, "shf", "state")
	shf, shfOut := start("shf", "shuffler", "--listen", shfAddr, "--addr-file", filepath.Join(dir, "shf", "addr"),
		"--server", srvAddr, "--state", shfState, "--pki", shfPKI, "--delta", "1e-5", "--release-when-complete")
	waitFile(t, filepath.Join(dir, "shf", "addr"), shf, shfOut)
	var clients []*exec.Cmd
	var clientOut []*bytes.Buffer
	for _, r := range []string{"0:30", "30:60"} {
		c, out := start("cli", "client", "--shuffler", shfAddr, "--server", srvAddr, "--clients", r, "--workers", "1",
			"--pki", cliDir, "--credentials", filepath.Join(cliDir, "clients-"+strings.Replace(r, ":", "-", 1)+".json"))
		clients, clientOut = append(clients, c), append(clientOut, out)
	}
	dump := func() string {
		return fmt.Sprintf("server:\n%s\nshuffler:\n%s\nclients 0:30:\n%s\nclients 30:60:\n%s", srvOut, shfOut, clientOut[0], clientOut[1])
	}
	timer := time.AfterFunc(3*time.Minute, func() { // a hung run fails instead of reaching the test timeout
		for _, c := range append([]*exec.Cmd{srv, shf}, clients...) {
			c.Process.Kill()
		}
	})
	defer timer.Stop()
	for _, c := range append([]*exec.Cmd{srv, shf}, clients...) {
		if err := c.Wait(); err != nil {
			t.Fatalf("%s: %v\n%s", c.Args[4], err, dump())
		}
	}
	if !strings.Contains(srvOut.String(), "stopped (epochs) after round 6") {
		t.Fatalf("the server did not finish 6 rounds\n%s", dump())
	}
	if !strings.Contains(shfOut.String(), "listening on "+shfAddr) {
		t.Fatalf("the shuffler did not listen on its host's address\n%s", dump())
	}
	rounds, eps, delta := clitest.LedgerShow(t, shfState)
	if want := upAccountEpsilon(t, "6"); rounds != 6 || eps != want || delta != 1e-5 {
		t.Fatalf("ledger show: %d rounds, epsilon %v at delta %g; account over 6 rounds %v\n%s", rounds, eps, delta, want, dump())
	}
}
