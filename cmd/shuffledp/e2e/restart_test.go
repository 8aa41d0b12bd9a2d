package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/server"
	"github.com/shuffledp/shuffledp/statedir"
)

// restartRun is the run of TestServerRestartMidRun: 40 clients, 8 a round,
// 2 epochs (10 planned rounds), an evaluation and checkpoint every 3.
var restartRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "40", "--sample", "8",
	"--eps0", "2", "--epochs", "2", "--eval-every", "3", "--test-size", "50", "--no-progress"}

// scrapeMetric reads the value of a metric (a line "name value") from a
// role's metrics endpoint.
func scrapeMetric(addr, name string) (float64, bool) {
	c := http.Client{Timeout: 200 * time.Millisecond}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// TestServerRestartMidRun kills the server with SIGKILL while a round is
// in flight (its clients delivered round killAt's reports to the
// shuffler, which releases at the round's deadline), and restarts it on
// the same address and state, while the shuffler and both client
// processes keep running. The restarted server resumes from its last
// checkpoint (round 3: an older model than the round's), so it refuses
// the in-flight batch, computed on the model of version killAt-1: the
// shuffler counts it debited and unused and runs the next rounds on the
// server's current model. Every batch the restarted server applies was
// computed on the version it applies it to (the shuffler's release log
// against the server's receipts); the shuffler's ledger holds exactly the
// run's 10 planned rounds, never more, and `ledger show` gives account's
// epsilon for them; the server stops when the shuffler says every planned
// round is debited, and every process exits 0.
func TestServerRestartMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("separate processes, about 30 s")
	}
	const planned, killAt, resumeAt = 10, 5, 3
	dir := t.TempDir()
	pkiDir, shufState, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvAddr := clitest.FreeAddr(t)
	serverArgs := append([]string{"server", "--listen", srvAddr, "--state", srvState, "--pki", filepath.Join(pkiDir, "server")}, restartRun...)
	srv1 := startNetProc(t, "server", nil, serverArgs...)
	shAddrFile := filepath.Join(dir, "sh.addr")
	metricsAddr := clitest.FreeAddr(t)
	sh := startNetProc(t, "shuffler", nil, "shuffler", "--listen", "127.0.0.1:0", "--addr-file", shAddrFile, "--server", srvAddr,
		"--state", shufState, "--pki", filepath.Join(pkiDir, "shuffler"), "--round-timeout", "2s", "--metrics-listen", metricsAddr)
	shAddr := waitNetAddr(t, shAddrFile, sh)
	var clients []*netProc
	for p := range 2 {
		lo, hi := p*20, (p+1)*20
		creds := filepath.Join(dir, fmt.Sprintf("creds-%d.json", p))
		if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", fmt.Sprintf("%d:%d", lo, hi), "--out", creds); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		clients = append(clients, startNetProc(t, "client", nil, "client", "--shuffler", shAddr, "--server", srvAddr,
			"--clients", fmt.Sprintf("%d:%d", lo, hi), "--pki", filepath.Join(pkiDir, "client"), "--credentials", creds))
	}
	dump := func() string {
		var b strings.Builder
		for _, p := range append([]*netProc{srv1, sh}, clients...) {
			fmt.Fprintf(&b, "--- %s:\n%s", p.name, p.out)
		}
		return b.String()
	}
	// The event: the shuffler accepted reports of round killAt (so it
	// relayed the model of version killAt-1) and has not released it: it
	// holds the round until its deadline, 2 s after the relay.
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(5 * time.Millisecond) {
		accepted, _ := scrapeMetric(metricsAddr, "shuffledp_shuffler_reports_accepted_total")
		released, _ := scrapeMetric(metricsAddr, "shuffledp_shuffler_rounds_released_total")
		if accepted > (killAt-1)*8 {
			if released != killAt-1 {
				t.Fatalf("round %d released before the kill (%v rounds released): the test missed the round\n%s", killAt, released, dump())
			}
			break
		}
		select {
		case <-srv1.done:
			t.Fatalf("the server exited before round %d\n%s", killAt, dump())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report of round %d accepted within 2 minutes\n%s", killAt, dump())
		}
	}
	srv1.cmd.Process.Kill()
	<-srv1.done
	if !killedBySIGKILL(srv1.err) {
		t.Fatalf("server: %v, want killed by SIGKILL\n%s", srv1.err, dump())
	}
	before, err := server.ReadFileReceipts(filepath.Join(srvState, statedir.ReceiptsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != killAt-1 {
		t.Fatalf("the server received %d batches before the kill, want %d (the kill was not mid-round)\n%s", len(before), killAt-1, dump())
	}
	srv2 := startNetProc(t, "server", nil, serverArgs...)
	for _, p := range append([]*netProc{srv2, sh}, clients...) {
		select {
		case <-p.done:
		case <-time.After(3 * time.Minute):
			t.Fatalf("%s did not finish within 3 minutes\n%s\n--- restarted server:\n%s", p.name, dump(), srv2.out)
		}
		if p.err != nil {
			t.Fatalf("%s: %v, want exit 0\n%s\n--- restarted server:\n%s", p.name, p.err, dump(), srv2.out)
		}
	}
	out2 := srv2.out.String()
	if !strings.Contains(out2, fmt.Sprintf("resuming at %d)", resumeAt)) {
		t.Fatalf("the restarted server did not resume at round %d:\n%s", resumeAt, out2)
	}
	// The in-flight round: debited, refused, unused.
	if !regexp.MustCompile(fmt.Sprintf(`round %d debited, refused by the server, unused \(model version %d\)`, killAt, killAt-1)).MatchString(sh.out.String()) {
		t.Fatalf("the shuffler did not count round %d unused\n%s", killAt, dump())
	}
	// Every batch the restarted server applied was computed on the
	// version it applied it to: resumeAt, resumeAt+1, ... in the order
	// received.
	versions := map[int64]int64{}
	for _, m := range regexp.MustCompile(`round (\d+) released: .*, model version (\d+),`).FindAllStringSubmatch(sh.out.String(), -1) {
		r, _ := strconv.ParseInt(m[1], 10, 64)
		v, _ := strconv.ParseInt(m[2], 10, 64)
		versions[r] = v
	}
	all, err := server.ReadFileReceipts(filepath.Join(srvState, statedir.ReceiptsFile))
	if err != nil {
		t.Fatal(err)
	}
	after := all[len(before):]
	for j, r := range after {
		if v, ok := versions[r.Round]; !ok || v != int64(resumeAt+j) {
			t.Fatalf("the restarted server applied round %d (computed on model version %d, logged %v) as its step %d from version %d\n%s",
				r.Round, v, ok, j+1, resumeAt+j, sh.out)
		}
	}
	v := readNetState(t, shufState, srvState)
	checkNetInvariants(t, "restart", v, 0)
	// Applied: resumeAt + the rounds the shuffler could still debit.
	applied := resumeAt + len(after)
	if v.rounds != planned || len(after) != planned-killAt {
		t.Fatalf("ledger %d rounds (want the %d planned), the restarted server applied %d (want %d)", v.rounds, planned, len(after), planned-killAt)
	}
	if !strings.Contains(out2, fmt.Sprintf("stopped (rounds-debited) after round %d", applied)) {
		t.Fatalf("restarted server: want stopped (rounds-debited) after round %d\n%s", applied, out2)
	}
	if out, err := runCmd(t, "ledger", "check", "--state", shufState); err != nil {
		t.Fatalf("ledger check: %v\n%s", err, out)
	}
	rounds, eps, _ := clitest.LedgerShow(t, shufState)
	acc, err := runCmd(t, "account", "--bound", "best", "--n", "40", "--k", "8", "--eps0", "2", "--steps", strconv.FormatInt(rounds, 10), "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("account: %v\n%s", err, acc)
	}
	var a struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(acc), &a); err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	if rounds != planned || eps != a.Epsilon {
		t.Fatalf("ledger show: %d rounds, epsilon %v; want %d rounds at account's %v", rounds, eps, planned, a.Epsilon)
	}
	last, _ := lastMetrics(t, filepath.Join(srvState, statedir.MetricsFile))
	if last["round"] != float64(applied) {
		t.Fatalf("server metrics end at %v, want round %d", last["round"], applied)
	}
	if _, err := os.Stat(filepath.Join(srvState, statedir.ReceiptsFile)); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed at round %d, resumed at %d; ledger %d rounds (1 unused), the server applied %d; epsilon %.6f = account",
		killAt, resumeAt, rounds, applied, eps)
}

// serverStopped parses a server process's last "stopped (REASON) after
// round N" line.
func serverStopped(out string) (reason string, round int, ok bool) {
	ms := regexp.MustCompile(`stopped \(([a-z-]+)\) after round (\d+)`).FindAllStringSubmatch(out, -1)
	if len(ms) == 0 {
		return "", 0, false
	}
	m := ms[len(ms)-1]
	round, _ = strconv.Atoi(m[2])
	return m[1], round, true
}

// runEnded reports whether a server's output says the run is over: every
// planned round applied (epochs), or debited by the shuffler, which
// stopped the run (rounds-debited: some debited rounds were lost to a
// crash or refused as stale, and the shuffler debits no more).
func runEnded(out string, planned int) (applied int, ok bool) {
	reason, round, ok := serverStopped(out)
	switch {
	case ok && reason == "epochs" && round == planned:
		return round, true
	case ok && reason == "rounds-debited":
		return round, true
	}
	return 0, false
}
