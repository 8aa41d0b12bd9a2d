// Package browser holds the tests of the shuffledp command that drive its
// pages in headless Chromium (the privacy calculator, served with a module
// built for the test and natively by an installed binary; the dashboards of
// a run of `up`). They skip without Chromium unless
// SHUFFLEDP_REQUIRE_BROWSER is set. Its TestMain builds the binary once
// (internal/clitest).
package browser

import (
	"os/exec"
	"testing"

	"github.com/shuffledp/shuffledp/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }

// moduleRoot is the module's directory, relative to this package's (where
// go test runs its tests).
const moduleRoot = "../../.."

// child returns the command running `shuffledp args...` in a new process.
func child(env []string, args ...string) *exec.Cmd { return clitest.Command(env, args...) }

// runCmd runs `shuffledp sub args...` to its end and returns its output
// (stdout and stderr) and, on failure, an error carrying its message.
func runCmd(t *testing.T, sub string, args ...string) (string, error) {
	t.Helper()
	return clitest.Run(append([]string{sub}, args...)...)
}
