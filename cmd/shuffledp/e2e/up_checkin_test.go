package e2e

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

// TestUpCheckInDropout runs a networked check-in run with `up` and the
// --dropout simulation (refused for check-in runs before the shuffler drew
// the coins): the shuffler selects the clients, pads each selected client
// that ignored its round with a dummy, and the run finishes; every client
// that dropped out got a dummy, the forwarded reports are the accepted ones
// plus the dummies, and `ledger show` gives account's checkin-gaussian
// epsilon for the rounds debited.
func TestUpCheckInDropout(t *testing.T) {
	state := filepath.Join(t.TempDir(), "run")
	out, err := child(nil, "up", "--dataset", "synthetic", "--model", "logreg", "--clients", "60", "--randomizer", "gaussian",
		"--sigma", "2", "--clip", "1", "--participation", "checkin", "--rate", "0.6", "--epochs", "2", "--eval-every", "2",
		"--no-progress", "--round-timeout", "1s", "--dropout", "0.3", "--state", state, "--client-processes", "2").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "up: run finished") {
		t.Fatalf("up: %v\n%s", err, out)
	}
	sum := regexp.MustCompile(`(\d+) rounds released, 0 discarded, (\d+) reports accepted, (\d+) forwarded \((\d+) dummies\)`).FindStringSubmatch(string(out))
	if sum == nil {
		t.Fatalf("no shuffler summary:\n%s", out)
	}
	n := make([]int, 4)
	for i := range n {
		n[i], _ = strconv.Atoi(sum[i+1])
	}
	dropped := 0
	for _, m := range regexp.MustCompile(`(\d+) sampled clients ignored their round`).FindAllStringSubmatch(string(out), -1) {
		d, _ := strconv.Atoi(m[1])
		dropped += d
	}
	if n[1]+n[3] != n[2] || n[3] < dropped || dropped == 0 {
		t.Fatalf("%d accepted + %d dummies for %d forwarded; %d dropped out\n%s", n[1], n[3], n[2], dropped, out)
	}
	rounds, eps, _ := clitest.LedgerShow(t, state)
	acc, err := runCmd(t, "account", "--bound", "best", "--mechanism", "checkin-gaussian", "--n", "60", "--rate", "0.6", "--sigma", "2",
		"--adjacency", "replace-one", "--steps", strconv.FormatInt(rounds, 10), "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("account: %v\n%s", err, acc)
	}
	var a struct {
		Epsilon float64 `json:"epsilon"`
	}
	if err := json.Unmarshal([]byte(acc), &a); err != nil {
		t.Fatalf("%v\n%s", err, acc)
	}
	if rounds != int64(n[0]) || rounds < 4 || eps != a.Epsilon || !(eps > 0) {
		t.Fatalf("ledger show: %d rounds, epsilon %v; shuffler released %d; account %v", rounds, eps, n[0], a.Epsilon)
	}
}
