// Package e2e holds the tests of the shuffledp command that run it as
// separate processes: kill loops at fault points and at instants of rounds,
// networked runs of the three roles, their lifecycle (interrupts, refusals,
// lost peers), churn, shards, certificate validity, `up`, exit statuses. Its
// TestMain builds the binary once (internal/clitest); the command's
// in-process tests stay in cmd/shuffledp, so that neither package comes
// near go test's per-package timeout on a busy machine.
package e2e

import (
	"os/exec"
	"testing"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// child returns the command running `shuffledp args...` in a new process.
func child(env []string, args ...string) *exec.Cmd { return clitest.Command(env, args...) }

// runCmd runs `shuffledp sub args...` to its end and returns its output
// (stdout and stderr) and, on failure, an error carrying its message.
func runCmd(t *testing.T, sub string, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(append([]string{sub}, args...)...)
}
