package browser

import (
	"bufio"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/calculator"
)

// TestInstalledCalculatorInBrowser: `shuffledp calculator --listen` run as
// an installed binary is (a process started in a directory outside the
// checkout, with no Go toolchain on PATH, so the WebAssembly module cannot
// be built) serves the calculator natively, and the page, in headless
// Chromium, shows the numbers `account --json --bound all` prints.
func TestInstalledCalculatorInBrowser(t *testing.T) {
	chromium := needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := child(nil, "calculator", "--listen", "127.0.0.1:0")
	cmd.Dir = t.TempDir() // no go.mod above it
	env := slices.DeleteFunc(slices.Clone(cmd.Env), func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	cmd.Env = append(env, "PATH="+t.TempDir()) // no go command
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logBuf strings.Builder
	cmd.Stderr = &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("calculator printed no address: %v", err)
	}
	go io.Copy(io.Discard, stdout)
	const prefix = "serving the calculator on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("calculator printed %q, want %q...", line, prefix)
	}
	base := strings.TrimSpace(strings.TrimPrefix(line, prefix))

	bctx := openPage(t, ctx, chromium, base)
	tc := calculatorBrowserCases[0]
	q, err := calculator.ParseQuery(tc.query)
	if err != nil {
		t.Fatal(err)
	}
	page := loadPage(t, bctx, base+"?"+tc.query)
	if page.Status != "done" {
		t.Fatalf("page ended in state %q: %s", page.Status, page.Error)
	}
	checkPageAgainstCLI(t, page, accountJSONForTest(t, q.Args()), tc.interval)
	if !strings.Contains(logBuf.String(), "natively") {
		t.Errorf("the calculator did not say it serves natively: %q", logBuf.String())
	}
}
