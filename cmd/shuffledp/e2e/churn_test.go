package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/ledger"
)

// churnRun: 20 clients, 5 a round, 6 epochs (24 rounds) of logistic
// regression on synthetic data, each round released at a 400 ms deadline.
var churnRun = []string{"--dataset", "synthetic", "--model", "logreg", "--clients", "20", "--sample", "5",
	"--eps0", "2", "--epochs", "6", "--eval-every", "4", "--test-size", "50", "--no-progress"}

const (
	churnRounds = 24
	churnN      = 20
	churnK      = 5
)

// supervised is one role the churn supervisor keeps running: it restarts
// the process whenever it exits, until stopped.
type supervised struct {
	name string
	args []string

	mu       sync.Mutex
	cur      *netProc
	outs     []*lockedWriter // every incarnation's output
	restarts int
	kills    int
}

func (s *supervised) start(t *testing.T) {
	p := startNetProc(t, s.name, nil, s.args...)
	s.mu.Lock()
	s.cur, s.outs = p, append(s.outs, p.out)
	s.mu.Unlock()
}

func (s *supervised) proc() *netProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// kill sends SIGKILL to the current incarnation.
func (s *supervised) kill() {
	s.mu.Lock()
	p := s.cur
	s.kills++
	s.mu.Unlock()
	p.cmd.Process.Kill()
}

func (s *supervised) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, o := range s.outs {
		fmt.Fprintf(&b, "--- %s incarnation %d ---\n%s", s.name, i, o.String())
	}
	return b.String()
}

// TestChurn runs a networked run as separate processes under a supervisor
// that restarts any process that exits: four client processes (five
// clients each, --dropout 0.1), killed with SIGKILL at random throughout,
// and the shuffler and the server each killed with SIGKILL twice. The
// shuffler releases every round at its deadline with dummy reports for the
// sampled clients that did not deliver (killed, restarting, dropped out).
// The run must finish (every planned round applied, or debited: the
// shuffler debits no more than the planned rounds, those lost to a kill
// included, and then stops the run); every round the ledger debited is a
// complete round of k reports (no discard); no round or batch is debited
// twice; every batch the server received is one the shuffler debited, with
// its digest, and of k reports; `ledger show` reports account's epsilon
// for the ledger's rounds; the shuffler's metrics count the dummies it
// logged.
func TestChurn(t *testing.T) {
	start := time.Now()
	dir := t.TempDir()
	pkiDir, shufState, srvState := filepath.Join(dir, "pki"), filepath.Join(dir, "shuffler"), filepath.Join(dir, "server")
	if out, err := runCmd(t, "pki", "init", "--dir", pkiDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	srvAddr, shAddr, metricsAddr := clitest.FreeAddr(t), clitest.FreeAddr(t), clitest.FreeAddr(t)
	roles := []*supervised{
		{name: "server", args: append([]string{"server", "--listen", srvAddr, "--state", srvState, "--pki", filepath.Join(pkiDir, "server")}, churnRun...)},
		{name: "shuffler", args: []string{"shuffler", "--listen", shAddr, "--server", srvAddr, "--state", shufState, "--pki", filepath.Join(pkiDir, "shuffler"),
			"--round-timeout", "400ms", "--min-connected", "10", "--metrics-listen", metricsAddr}},
	}
	for p := range 4 {
		lo, hi := p*churnN/4, (p+1)*churnN/4
		creds := filepath.Join(dir, fmt.Sprintf("creds-%d.json", p))
		if out, err := runCmd(t, "pki", "enrol", "--dir", pkiDir, "--clients", fmt.Sprintf("%d:%d", lo, hi), "--out", creds); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		roles = append(roles, &supervised{name: fmt.Sprintf("client %d:%d", lo, hi), args: []string{"client", "--shuffler", shAddr,
			"--server", srvAddr, "--clients", fmt.Sprintf("%d:%d", lo, hi), "--pki", filepath.Join(pkiDir, "client"),
			"--credentials", creds, "--dropout", "0.1"}})
	}
	srv, sh, clients := roles[0], roles[1], roles[2:]
	dump := func() string {
		var b strings.Builder
		for _, r := range roles {
			b.WriteString(r.output())
		}
		return b.String()
	}
	for _, r := range roles {
		r.start(t)
	}

	// The supervisor: restart whatever exits (the server only if it did
	// not finish the run), kill a random client every two to four rounds
	// (counted in the server's receipts: progress, not a clock, so that a
	// fast machine sees as many kills as a busy one), and kill the shuffler
	// and the server twice each as the run progresses.
	rng := rand.New(rand.NewPCG(22, 6))
	finished, applied := false, 0
	nextClientKill := 1 // receipts at the server
	roleKills := []struct {
		after int // receipts at the server
		who   *supervised
	}{{3, sh}, {7, srv}, {12, sh}, {17, srv}}
	var maxDummies []float64 // per shuffler incarnation: the largest scraped dummy count
	deadline := time.Now().Add(5 * time.Minute)
	for !finished {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish within 5 minutes\n%s", dump())
		}
		time.Sleep(50 * time.Millisecond)
		if p := srv.proc(); chanClosed(p.done) {
			if n, ok := runEnded(p.out.String(), churnRounds); p.err == nil && ok {
				finished, applied = true, n
				break
			}
			srv.restarts++
			srv.start(t)
		}
		for _, r := range roles[1:] {
			p := r.proc()
			if !chanClosed(p.done) {
				continue
			}
			if r == sh && p.err == nil && (strings.Contains(p.out.String(), "the server finished the run") ||
				strings.Contains(p.out.String(), "planned; stopping the run")) {
				continue // the run is over; the server is exiting
			}
			r.restarts++
			r.start(t)
		}
		if v, ok := scrapeDummies(metricsAddr); ok {
			inc := len(sh.outs) - 1
			for len(maxDummies) <= inc {
				maxDummies = append(maxDummies, 0)
			}
			maxDummies[inc] = max(maxDummies[inc], v)
		}
		receipts := countLines(filepath.Join(srvState, "receipts.jsonl"))
		if receipts >= nextClientKill {
			clients[rng.IntN(len(clients))].kill()
			nextClientKill = receipts + 2 + rng.IntN(3) // 24 rounds: at least 6 kills
		}
		if len(roleKills) > 0 {
			if n := receipts; n >= roleKills[0].after {
				roleKills[0].who.kill()
				roleKills = roleKills[1:]
			}
		}
	}
	if len(roleKills) > 0 {
		t.Fatalf("the run finished before %d planned kills of the shuffler or the server\n%s", len(roleKills), dump())
	}
	// The shuffler and the clients finish once told (a client killed just
	// now may be restarting: give it the grace period, then stop it).
	for _, r := range roles[1:] {
		p := r.proc()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			p.stop(5 * time.Second)
		}
	}
	elapsed := time.Since(start)

	v := readNetState(t, shufState, srvState)
	checkNetInvariants(t, "churn", v, 0)
	if out, err := runCmd(t, "ledger", "check", "--state", shufState); err != nil {
		t.Fatalf("ledger check: %v\n%s", err, out)
	}
	// Every debit is a complete round of k of n.
	es := ledgerEntries(t, shufState)
	for _, e := range es {
		if e.Reports != churnK || e.Event.K != churnK || e.Event.N != churnN {
			t.Fatalf("round %d debited as %v with %d reports; want a complete round of %d of %d", e.Round, e.Event, e.Reports, churnK, churnN)
		}
	}
	for _, r := range v.received {
		if r.Reports != churnK {
			t.Fatalf("the server received round %d with %d reports, want %d", r.Round, r.Reports, churnK)
		}
	}
	// The ledger holds the planned rounds, never more: those lost to a
	// kill (debited, not applied) are charged, and the shuffler then
	// stops the run short of them (rounds-debited).
	rounds, eps, _ := clitest.LedgerShow(t, shufState)
	if rounds != v.rounds || rounds != churnRounds {
		t.Fatalf("ledger show: %d rounds; read %d; want the %d planned", rounds, v.rounds, churnRounds)
	}
	want := churnAccount(t, rounds)
	if eps != want {
		t.Fatalf("ledger show epsilon %v over %d rounds, account %v", eps, rounds, want)
	}
	last, _ := lastMetrics(t, filepath.Join(srvState, "metrics.jsonl"))
	if last["round"] != float64(applied) {
		t.Fatalf("server metrics end at %v, want round %d (its last line)", last["round"], applied)
	}
	// Dummies: each shuffler incarnation's log says how many each released
	// round held; its metric counted them (never more than it logged,
	// and some in total).
	released := regexp.MustCompile(`round (\d+) released: (\d+) reports \((\d+) dummies\)`)
	logged, releasedRounds := 0, 0
	sh.mu.Lock()
	outs := append([]*lockedWriter(nil), sh.outs...)
	sh.mu.Unlock()
	for i, o := range outs {
		inc := 0
		for _, m := range released.FindAllStringSubmatch(o.String(), -1) {
			if m[2] != strconv.Itoa(churnK) {
				t.Fatalf("shuffler logged a batch of %s reports: %s", m[2], m[0])
			}
			d, _ := strconv.Atoi(m[3])
			inc += d
			releasedRounds++
		}
		if i < len(maxDummies) && maxDummies[i] > float64(inc) {
			t.Fatalf("shuffler incarnation %d: metric counted %v dummies, its log %d", i, maxDummies[i], inc)
		}
		logged += inc
	}
	scraped := 0.0
	for _, m := range maxDummies {
		scraped += m
	}
	if logged == 0 || scraped == 0 {
		t.Fatalf("no dummies (logged %d, metric %v): the churn did not make dropouts\n%s", logged, scraped, dump())
	}
	clientKills, clientRestarts := 0, 0
	for _, c := range clients {
		clientKills += c.kills
		clientRestarts += c.restarts
	}
	if sh.kills != 2 || srv.kills != 2 || clientKills < 5 {
		t.Fatalf("kills: shuffler %d, server %d, clients %d", sh.kills, srv.kills, clientKills)
	}
	t.Logf("churn: %v; %d rounds applied, ledger %d rounds (%d released in the shuffler logs), %d receipts; %d dummies logged, %v counted by the metric (scraped); kills: shuffler %d, server %d, clients %d; restarts: shuffler %d, server %d, clients %d; epsilon %.6f = account %.6f",
		elapsed.Round(time.Millisecond), applied, rounds, releasedRounds, len(v.received), logged, scraped,
		sh.kills, srv.kills, clientKills, sh.restarts, srv.restarts, clientRestarts, eps, want)
}

func chanClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// scrapeDummies reads shuffledp_shuffler_dummy_reports_total from the
// shuffler's metrics endpoint.
func scrapeDummies(addr string) (float64, bool) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "shuffledp_shuffler_dummy_reports_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	io.Copy(io.Discard, resp.Body)
	return 0, false
}

// countLines counts complete lines of a file (0 if it does not exist).
func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

func ledgerEntries(t *testing.T, state string) []ledger.Entry {
	t.Helper()
	ctx := context.Background()
	st, err := ledger.OpenSQLite(ctx, filepath.Join(state, ledger.FileName), ledger.SQLiteOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	es, err := st.Entries(ctx, runs[0])
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// churnAccount is `shuffledp account` for rounds of the churn run, by
// best as the ledger states it (every route; at most 64 rounds, so exactly).
func churnAccount(t *testing.T, rounds int64) float64 {
	t.Helper()
	acc, err := runCmd(t, "account", "--bound", "best", "--n", strconv.Itoa(churnN), "--k", strconv.Itoa(churnK), "--eps0", "2",
		"--steps", strconv.FormatInt(rounds, 10), "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("account: %v\n%s", err, acc)
	}
	var a struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(acc), &a); err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	return a.Epsilon
}
