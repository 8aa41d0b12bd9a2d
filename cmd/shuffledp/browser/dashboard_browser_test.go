package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shuffledp/shuffledp/internal/clitest"
	"github.com/shuffledp/shuffledp/metrics"
)

// browserPath returns Debian's chromium (or another Chrome), or skips the
// test when there is none and SHUFFLEDP_REQUIRE_BROWSER is unset (CI sets
// it, and installs chromium: a missing browser fails there).
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SHUFFLEDP_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium on PATH and SHUFFLEDP_REQUIRE_BROWSER is set (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium; SHUFFLEDP_REQUIRE_BROWSER=1 makes this a failure)")
	return ""
}

// pageFigure is one figure as the page shows it: its text and its exact
// value (data-value).
type pageFigure struct {
	Text  string  `json:"text"`
	Value *string `json:"value"`
}

// pageFigures is what the test reads off a rendered page.
type pageFigures struct {
	Role, Status, Conn                                   string
	Released, Planned, Epsilon, Delta, LedgerRounds      *pageFigure
	Accuracy, DummiesTotal, Connected, Target            *pageFigure
	Evals, Rounds                                        [][]*string
	Errors                                               []string
	Text                                                 string
	ScrollWidth, ClientWidth                             int
	HasDummyCard, HasConnectedCard, HasDummyChart, Ended bool
}

// readPage is the script that reads a page's figures.
const readPage = `JSON.stringify((() => {
  const f = (id) => { const e = document.getElementById(id); return e ? {text: e.textContent, value: e.dataset.value ?? null} : null; };
  const rows = (sel) => [...document.querySelectorAll(sel + " tbody tr")].map((tr) => [...tr.cells].map((td) => td.dataset.value ?? null));
  return {Role: document.getElementById("role").textContent, Status: document.getElementById("status").textContent,
    Conn: document.getElementById("conn").textContent,
    Released: f("released"), Planned: f("planned"), Epsilon: f("epsilon"), Delta: f("delta"), LedgerRounds: f("ledger-rounds"),
    Accuracy: f("accuracy"), DummiesTotal: f("dummies-total"), Connected: f("connected"), Target: f("target"),
    Evals: rows("#evals"), Rounds: rows("#rounds"),
    Errors: [...document.querySelectorAll("#errors li")].map((l) => l.textContent),
    Text: document.body.innerHTML, ScrollWidth: document.documentElement.scrollWidth, ClientWidth: document.documentElement.clientWidth,
    HasDummyCard: !!document.getElementById("dummies-total"), HasConnectedCard: !!document.getElementById("connected"),
    HasDummyChart: !!document.getElementById("chart-dummies"), Ended: document.body.dataset.ended === "true"};
})())`

func readFigures(t *testing.T, ctx context.Context) pageFigures {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](readPage))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	var p pageFigures
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return p
}

// exact parses a figure's exact value.
func exact(t *testing.T, what string, f *pageFigure) float64 {
	t.Helper()
	if f == nil || f.Value == nil {
		t.Fatalf("%s: the page shows no value (%+v)", what, f)
	}
	x, err := strconv.ParseFloat(*f.Value, 64)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	// The text shown is the value to its displayed precision.
	shown, err := strconv.ParseFloat(f.Text, 64)
	if err != nil || math.Abs(shown-x) > 5e-4*math.Abs(x) {
		t.Errorf("%s: shown %q, value %g", what, f.Text, x)
	}
	return x
}

func cell(t *testing.T, what string, c *string) *float64 {
	t.Helper()
	if c == nil {
		return nil
	}
	x, err := strconv.ParseFloat(*c, 64)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return &x
}

func sameFloat(a, b *float64) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// waitEnded waits until the page got its role's last state and the "end"
// of the stream (the role stopped serving).
func waitEnded(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ended, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.body.dataset.ended === "true"`))
		if err != nil {
			t.Fatalf("%s page: %v", name, err)
		}
		if ended {
			return
		}
	}
	t.Fatalf("%s page never received the end of its stream", name)
}

// scrape returns a Prometheus exposition.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDashboardInBrowser runs a short `up` with its dashboards and its
// Prometheus metrics, follows both pages in headless chromium while the run
// goes, and checks what the pages show once the roles stopped serving
// against the run's own records: the server's page against the metrics file
// (every evaluation's round, epsilon, ledger rounds and accuracies) and
// `ledger show` (epsilon, delta, rounds), the shuffler's page against the
// ledger and the dummy count the shuffler printed; that the server's page
// holds no dummy count and no connected clients; that a phone-wide page does
// not scroll sideways. It scrapes both roles' metrics during the run and
// checks that every series deploy/rules.yml uses is exported by its role. It
// writes the screenshots of both pages committed as docs/dashboard.png and
// docs/dashboard-shuffler.png when SHUFFLEDP_UPDATE_SCREENSHOT=1.
func TestDashboardInBrowser(t *testing.T) {
	exe := browserPath(t)
	t0 := time.Now()
	dir := t.TempDir()
	state := filepath.Join(dir, "run")

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1100, 900),
		chromedp.UserDataDir(filepath.Join(dir, "chromium")))...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	// Start the browser before the run, so that the pages open at once.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}

	t.Logf("chromium started in %v", time.Since(t0))
	prom := startPrometheus(t, filepath.Join(dir, "prometheus"))
	t.Logf("prometheus ready at %v", time.Since(t0))
	// 18 rounds released at a 250ms deadline, a fifth of the sampled
	// clients dropping out of each round: dummies on the shuffler's page.
	args := append(append([]string{"up"}, clitest.UpRun...), "--epochs", "3", "--state", state, "--dashboard", "--prometheus",
		"--round-timeout", "250ms", "--dropout", "0.2", "--target-epsilon", "7.5")
	up := child(nil, args...)
	var out syncBuffer
	up.Stdout, up.Stderr = &out, &out
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	upDone := make(chan error, 1)
	go func() { upDone <- up.Wait() }()
	defer func() {
		select {
		case <-upDone:
		default:
			up.Process.Kill()
			<-upDone
		}
	}()
	addr := func(name string) string {
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(state, name)); err == nil && bytes.HasSuffix(b, []byte("\n")) {
				return strings.TrimSpace(string(b))
			}
			select {
			case err := <-upDone:
				upDone <- err
				t.Fatalf("up exited (%v) before writing %s\n%s", err, name, out.String())
			default:
			}
		}
		t.Fatalf("%s never written\n%s", name, out.String())
		return ""
	}
	srvPage, shufPage := addr("server.http-addr"), addr("shuffler.http-addr")
	srvMetrics, shufMetrics, clientMetrics := addr("server.metrics-addr"), addr("shuffler.metrics-addr"), addr("client-0-60.metrics-addr")
	if prom != nil {
		prom.target(t, "shuffledp-server", srvMetrics)
		prom.target(t, "shuffledp-shuffler", shufMetrics)
		prom.target(t, "shuffledp-client", clientMetrics)
	}
	shufCtx, cancelShuf := chromedp.NewContext(ctx)
	defer cancelShuf()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+srvPage+"/")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(shufCtx, chromedp.Navigate("http://"+shufPage+"/")); err != nil {
		t.Fatal(err)
	}
	// Both roles' metrics, while the run goes (they stop with it).
	srvExpo, shufExpo, clientExpo := scrape(t, srvMetrics), scrape(t, shufMetrics), scrape(t, clientMetrics)
	// A client pool exports its health only: no figure of the run (how
	// often its clients were sampled is who was sampled).
	if !strings.Contains(clientExpo, "process_resident_memory_bytes") || strings.Contains(clientExpo, "shuffledp_") {
		t.Errorf("client pool's metrics: want process metrics and no shuffledp_ series:\n%s", clientExpo)
	}

	select {
	case err := <-upDone:
		upDone <- err
		if err != nil {
			t.Fatalf("up: %v\n%s", err, out.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("up did not finish\n%s", out.String())
	}
	t.Logf("up finished at %v", time.Since(t0))
	waitEnded(t, ctx, "server")
	waitEnded(t, shufCtx, "shuffler")
	srv, shuf := readFigures(t, ctx), readFigures(t, shufCtx)

	t.Logf("pages read at %v", time.Since(t0))
	// The run's own records.
	recs, err := metrics.Read(filepath.Join(state, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rounds, eps, delta := clitest.LedgerShow(t, state)
	m := regexp.MustCompile(`shuffler: (\d+) rounds released, \d+ discarded, \d+ reports accepted, \d+ forwarded \((\d+) dummies\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no shuffler summary in\n%s", out.String())
	}
	dummies, _ := strconv.Atoi(m[2])
	last := recs[len(recs)-1]
	t.Logf("run: %d ledger rounds, epsilon %v at delta %v, %d dummies; last record round %d acc %v", rounds, eps, delta, dummies, last.Round, *last.TestAccuracy)

	// The server's page: the metrics file and the ledger.
	if srv.Role != "server" || !strings.HasPrefix(srv.Status, "stopped (epochs) after round 18") {
		t.Errorf("server page: role %q, status %q", srv.Role, srv.Status)
	}
	if got := exact(t, "server released", srv.Released); got != float64(last.Round) || srv.Planned.Text != "18" {
		t.Errorf("server page: %v of %s rounds, metrics file %d of 18", got, srv.Planned.Text, last.Round)
	}
	if got := exact(t, "server epsilon", srv.Epsilon); got != eps || got != *last.Epsilon {
		t.Errorf("server page epsilon %v, ledger %v, metrics file %v", got, eps, *last.Epsilon)
	}
	if got := exact(t, "server delta", srv.Delta); got != delta || got != last.Delta {
		t.Errorf("server page delta %v, ledger %v", got, delta)
	}
	if got := exact(t, "server target", srv.Target); got != 7.5 {
		t.Errorf("server page target %v, want 7.5", got)
	}
	if got := exact(t, "shuffler target", shuf.Target); got != 7.5 {
		t.Errorf("shuffler page target %v, want 7.5", got)
	}
	if got := exact(t, "server ledger rounds", srv.LedgerRounds); got != float64(rounds) {
		t.Errorf("server page ledger rounds %v, ledger %d", got, rounds)
	}
	if got := exact(t, "server accuracy", srv.Accuracy); got != *last.TestAccuracy {
		t.Errorf("server page accuracy %v, metrics file %v", got, *last.TestAccuracy)
	}
	if len(srv.Evals) != len(recs) {
		t.Fatalf("server page: %d evaluations, metrics file %d", len(srv.Evals), len(recs))
	}
	for i, row := range srv.Evals {
		r := recs[i]
		lr := float64(*r.LedgerRounds)
		if got := cell(t, "round", row[0]); got == nil || *got != float64(r.Round) ||
			!sameFloat(cell(t, "epsilon", row[1]), r.Epsilon) || !sameFloat(cell(t, "ledger rounds", row[2]), &lr) ||
			!sameFloat(cell(t, "accuracy", row[3]), r.TestAccuracy) || !sameFloat(cell(t, "ema", row[4]), r.TestAccuracyEMA) {
			t.Errorf("server page evaluation %d differs from the metrics file's record (round %d, epsilon %v, accuracy %v)", i, r.Round, *r.Epsilon, *r.TestAccuracy)
		}
	}
	if len(srv.Rounds) != 18 {
		t.Errorf("server page: %d rounds, want 18", len(srv.Rounds))
	}
	for _, row := range srv.Rounds {
		if len(row) != 3 || *cell(t, "reports", row[1]) != 10 {
			t.Errorf("server round row %v: want round, 10 reports, seconds", row)
		}
	}
	// What the server may not know is not on its page.
	if srv.HasDummyCard || srv.HasConnectedCard || srv.HasDummyChart || strings.Contains(strings.ToLower(srv.Text), "dumm") ||
		strings.Contains(strings.ToLower(srv.Text), "connected") {
		t.Errorf("the server's page shows the shuffler's figures")
	}

	// The shuffler's page: the ledger and the shuffler's own count.
	if shuf.Role != "shuffler" || !strings.HasPrefix(shuf.Status, "finished") {
		t.Errorf("shuffler page: role %q, status %q", shuf.Role, shuf.Status)
	}
	if got := exact(t, "shuffler epsilon", shuf.Epsilon); got != eps {
		t.Errorf("shuffler page epsilon %v, ledger %v", got, eps)
	}
	if got := exact(t, "shuffler released", shuf.Released); got != float64(rounds) {
		t.Errorf("shuffler page released %v, ledger %d", got, rounds)
	}
	if got := exact(t, "shuffler delta", shuf.Delta); got != delta {
		t.Errorf("shuffler page delta %v, ledger %v", got, delta)
	}
	if got := exact(t, "dummies", shuf.DummiesTotal); got != float64(dummies) {
		t.Errorf("shuffler page: %v dummies, the shuffler counted %d", got, dummies)
	}
	sum := 0.0
	for i, row := range shuf.Rounds {
		sum += *cell(t, "dummies", row[4])
		if c := cell(t, "connected", row[5]); c == nil || *c != 60 {
			t.Errorf("shuffler round %d: connected %v, want 60", i+1, row[5])
		}
	}
	if len(shuf.Rounds) != int(rounds) || sum != float64(dummies) {
		t.Errorf("shuffler page: %d rounds summing %v dummies, ledger %d rounds, %d dummies", len(shuf.Rounds), sum, rounds, dummies)
	}
	if lastEps := cell(t, "epsilon", shuf.Rounds[len(shuf.Rounds)-1][3]); lastEps == nil || *lastEps != eps {
		t.Errorf("shuffler page's last round epsilon %v, ledger %v", lastEps, eps)
	}
	if dummies == 0 {
		t.Errorf("no dummies in a run with dropout 0.2: the check above compared zeros")
	}

	// The rules' series, as the roles export them.
	checkRuleSeries(t, filepath.Join(moduleRoot, "deploy", "rules.yml"), map[string]string{"server": srvExpo, "shuffler": shufExpo})

	if prom != nil {
		checkRulesOnRun(t, prom, eps, shuf, recs)
	}

	// Readable on a phone: nothing scrolls sideways at 390 CSS pixels.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	if p := readFigures(t, ctx); p.ScrollWidth > p.ClientWidth+1 {
		t.Errorf("phone-wide page scrolls sideways: %d > %d", p.ScrollWidth, p.ClientWidth)
	}
	for _, shot := range []struct {
		ctx  context.Context
		file string
	}{{ctx, "dashboard.png"}, {shufCtx, "dashboard-shuffler.png"}} {
		if err := chromedp.Do(shot.ctx, chromedp.EmulateViewport(1000, 900)); err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(shot.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG")) || len(png) > 200<<10 {
			t.Errorf("%s: %d bytes, PNG %v; want a PNG under 200 KB", shot.file, len(png), bytes.HasPrefix(png, []byte("\x89PNG")))
		}
		if os.Getenv("SHUFFLEDP_UPDATE_SCREENSHOT") == "1" {
			if err := os.WriteFile(filepath.Join(moduleRoot, "docs", shot.file), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ruleMetric matches the metric names of the module in a PromQL expression.
var ruleMetric = regexp.MustCompile(`\bshuffledp_(server|shuffler)_[a-z_]+\b`)

// ruleLabel matches a label matcher reason="..." after a metric name.
var ruleLabel = regexp.MustCompile(`(shuffledp_[a-z_]+)\{([^}]*)\}`)

// checkRuleSeries checks that every series a rule of path uses is in the
// exposition of its role: the metric (a histogram's _sum, _count or
// _bucket), and for a label matcher name="value", a series with that label.
func checkRuleSeries(t *testing.T, path string, expo map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	used := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		for _, name := range ruleMetric.FindAllString(line, -1) {
			used[name] = true
		}
		for _, m := range ruleLabel.FindAllStringSubmatch(line, -1) {
			role := strings.Split(m[1], "_")[1]
			for _, matcher := range strings.Split(m[2], ",") {
				kv := strings.SplitN(strings.TrimSpace(matcher), "=", 2)
				if len(kv) != 2 || strings.HasPrefix(kv[1], "~") {
					continue
				}
				series := fmt.Sprintf(`%s{%s=%s}`, m[1], kv[0], kv[1])
				if !strings.Contains(expo[role], series) {
					t.Errorf("rule series %s is not exported by the %s", series, role)
				}
			}
		}
	}
	if len(used) < 5 {
		t.Fatalf("%s: only %d metric names found: %v", path, len(used), used)
	}
	for name := range used {
		role := strings.Split(name, "_")[1]
		found := false
		for _, suffix := range []string{"", "_sum", "_count", "_bucket"} {
			base := strings.TrimSuffix(name, suffix)
			if suffix != "" && base == name {
				continue
			}
			if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(base) + `(_sum|_count|_bucket)?[ {]`).MatchString(expo[role]) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("the rules use %s, which the %s does not export", name, role)
		}
	}
	t.Logf("%d metric names of the rules exported by their roles", len(used))
}

// syncBuffer is a bytes.Buffer safe for a child's output and the test's
// reads at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestShufflerOperatorPagesStayOnLoopback: the shuffler refuses --http and
// --metrics-listen beyond loopback (both show its dummy count) unless
// --expose-dummy-counts acknowledges it, before it creates any state.
func TestShufflerOperatorPagesStayOnLoopback(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "shuf")
	for _, flag := range []string{"--http", "--metrics-listen"} {
		for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
			out, err := runCmd(t, "shuffler", "--state", state, "--pki", filepath.Join(dir, "nopki"), "--server", "127.0.0.1:1", flag, addr)
			if err == nil || !strings.Contains(err.Error(), "--expose-dummy-counts") || !strings.Contains(err.Error(), flag) {
				t.Errorf("shuffler %s %s: %v\n%s", flag, addr, err, out)
			}
			if _, serr := os.Stat(state); serr == nil {
				t.Errorf("shuffler %s %s refused but left %s", flag, addr, state)
			}
		}
		// Acknowledged, the address passes this check (and the start fails
		// later, on the missing PKI bundle).
		_, err := runCmd(t, "shuffler", "--state", state, "--pki", filepath.Join(dir, "nopki"), "--server", "127.0.0.1:1", flag, "0.0.0.0:0", "--expose-dummy-counts")
		if err == nil || strings.Contains(err.Error(), "expose-dummy-counts") {
			t.Errorf("shuffler %s 0.0.0.0:0 --expose-dummy-counts: %v, want the PKI error", flag, err)
		}
	}
}

// prometheusServer is Debian's prometheus, started by the test on the
// rules of deploy/rules.yml, scraping the roles listed in its file_sd
// files (written once their addresses are known).
type prometheusServer struct {
	addr, dir string
}

// startPrometheus starts prometheus (scrape and evaluation every 250ms)
// with the jobs shuffledp-server, shuffledp-shuffler and shuffledp-client,
// each reading its targets from DIR/JOB.json. It returns nil when there is
// no prometheus binary and SHUFFLEDP_REQUIRE_PROMTOOL is unset.
func startPrometheus(t *testing.T, dir string) *prometheusServer {
	t.Helper()
	exe, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("SHUFFLEDP_REQUIRE_PROMTOOL") != "" {
			t.Fatal("no prometheus on PATH and SHUFFLEDP_REQUIRE_PROMTOOL is set (apt-get install -y prometheus)")
		}
		t.Log("no prometheus on PATH: the rules are not evaluated against the run")
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules, err := filepath.Abs(filepath.Join(moduleRoot, "deploy", "rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := "global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\n  evaluation_interval: 250ms\nrule_files:\n  - " + rules + "\nscrape_configs:\n"
	for _, job := range []string{"shuffledp-server", "shuffledp-shuffler", "shuffledp-client"} {
		cfg += fmt.Sprintf("  - job_name: %s\n    file_sd_configs:\n      - files: [%q]\n        refresh_interval: 1s\n", job, filepath.Join(dir, job+".json"))
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheusServer{addr: clitest.FreeAddr(t), dir: dir}
	cmd := exec.Command(exe, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+p.addr, "--log.level=warn")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + p.addr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
	}
	t.Fatalf("prometheus did not get ready\n%s", out.String())
	return nil
}

// target points job at addr (a file_sd file, written atomically).
func (p *prometheusServer) target(t *testing.T, job, addr string) {
	t.Helper()
	b, _ := json.Marshal([]map[string]any{{"targets": []string{addr}}})
	tmp := filepath.Join(p.dir, job+".json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(p.dir, job+".json")); err != nil {
		t.Fatal(err)
	}
}

// query returns the values of an instant PromQL query, by their labels'
// JSON.
func (p *prometheusServer) query(t *testing.T, expr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s", expr, err, r.Error)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		k, _ := json.Marshal(s.Metric)
		v, err := strconv.ParseFloat(s.Value[1].(string), 64)
		if err != nil {
			t.Fatal(err)
		}
		out[string(k)] = v
	}
	return out
}

// one returns the single value of a query (ok false when it has none).
func one(t *testing.T, m map[string]float64, what string) (float64, bool) {
	t.Helper()
	if len(m) > 1 {
		t.Fatalf("%s: %d series, want at most 1: %v", what, len(m), m)
	}
	for _, v := range m {
		return v, true
	}
	return 0, false
}

// checkRulesOnRun checks what Prometheus recorded and alerted over the run
// (target epsilon 7.5): every role was scraped; the recorded budget ratios
// are an epsilon of the ledger (the shuffler's page's, after some round;
// the metrics file's, at some evaluation) over the target; the budget
// alert fired if a ratio above 0.9 was recorded, and not otherwise; the
// run, releasing every 250ms, never stalled.
func checkRulesOnRun(t *testing.T, prom *prometheusServer, eps float64, shuf pageFigures, recs []metrics.Record) {
	t.Helper()
	for _, job := range []string{"shuffledp-server", "shuffledp-shuffler", "shuffledp-client"} {
		if v, ok := one(t, prom.query(t, fmt.Sprintf(`max_over_time(up{job=%q}[10m])`, job)), job); !ok || v != 1 {
			t.Errorf("prometheus never scraped %s (up %v, %v)", job, v, ok)
		}
	}
	near := func(x float64, eps []float64) bool {
		for _, e := range eps {
			if math.Abs(x*7.5-e) <= 1e-12*e {
				return true
			}
		}
		return false
	}
	var shufEps []float64
	for _, row := range shuf.Rounds {
		shufEps = append(shufEps, *cell(t, "epsilon", row[3]))
	}
	var srvEps []float64
	for _, r := range recs {
		if r.Epsilon != nil {
			srvEps = append(srvEps, *r.Epsilon)
		}
	}
	for _, c := range []struct {
		role, rec, alert string
		eps              []float64
	}{
		{"shuffler", "shuffledp:shuffler_epsilon_budget_used:ratio", "ShuffledpBudgetNearlySpent", shufEps},
		{"server", "shuffledp:server_epsilon_budget_used:ratio", "ShuffledpServerBudgetNearlySpent", srvEps},
	} {
		ratio, ok := one(t, prom.query(t, "max_over_time("+c.rec+"[10m])"), c.rec)
		fired, _ := one(t, prom.query(t, fmt.Sprintf(`max_over_time(ALERTS{alertname=%q,alertstate="firing"}[10m])`, c.alert)), c.alert)
		t.Logf("%s: largest recorded budget ratio %v (ledger at the end: %v), %s fired: %v", c.role, ratio, eps/7.5, c.alert, fired == 1)
		if !ok && c.role == "shuffler" {
			t.Errorf("no %s recorded over the run", c.rec)
			continue
		}
		if ok && (!near(ratio, c.eps) || ratio > eps/7.5) {
			t.Errorf("%s %v is not an epsilon of the ledger over 7.5 (%v)", c.rec, ratio, c.eps)
		}
		if (ratio > 0.9) != (fired == 1) {
			t.Errorf("%s: ratio %v recorded, alert fired %v", c.alert, ratio, fired == 1)
		}
	}
	if v, ok := one(t, prom.query(t, `max_over_time(ALERTS{alertname="ShuffledpRunStalled",alertstate="firing"}[10m])`), "stall"); ok {
		t.Errorf("ShuffledpRunStalled fired (%v) on a run releasing every 250ms", v)
	}
	if v, ok := one(t, prom.query(t, `max_over_time(shuffledp:shuffler_dummy_ratio:rate10m[10m])`), "dummy ratio"); !ok || !(v > 0 && v <= 1) {
		t.Errorf("dummy ratio recorded %v (%v), want in (0, 1]", v, ok)
	}
}
