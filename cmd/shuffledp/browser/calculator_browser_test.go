package browser

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/calculator"
	"github.com/shuffledp/shuffledp/calculator/site"
	"github.com/shuffledp/shuffledp/internal/clitest"
)

// The calculator's settings checked in a real browser: each is opened by
// its URL (the state restored on load) or entered in the form (the state
// written to the URL), and every epsilon the page shows must be what
// `shuffledp account --json --bound all` prints for the same flags, printed
// to the page's precision.
var calculatorBrowserCases = []struct {
	name     string
	query    string
	viaForm  bool
	interval bool // the page shows a certified interval
}{
	{"subsampled-shuffle", "mechanism=subsampled-shuffle&n=1000&k=100&eps0=1&steps=4&delta=1e-5", false, true},
	{"shuffle-one-round", "mechanism=shuffle&n=100&eps0=1&steps=1&delta=1e-5", true, true},
	{"shuffle-gaussian", "mechanism=shuffle-gaussian&n=10000&sigma=5&steps=100&delta=1e-8", false, false},
	{"subsampled-shuffle-gaussian-zero-out", "mechanism=subsampled-shuffle-gaussian&n=60000&k=600&sigma=2&adjacency=zero-out&steps=50&delta=1e-5", true, false},
	{"checkin-gaussian", "mechanism=checkin-gaussian&n=60000&rate=0.01&sigma=1&steps=20&delta=1e-5", false, false},
	{"sampled-gaussian", "mechanism=sampled-gaussian&rate=0.1&sigma=2&steps=8&delta=1/60000", true, false},
	{"no-rounds", "mechanism=shuffle-gaussian&n=1000&sigma=1&steps=0&delta=1e-5", false, false},
	// The calculator's default (NeurIPS'21 Fig. 2a): its time in the browser
	// is logged (docs/calculator.md, "Speed").
	{"fig2a-default", "mechanism=subsampled-shuffle&n=1000000&k=1000&eps0=2&steps=100000&delta=1e-8", false, true},
}

// calculatorScreenshotCase is the case whose page is saved (the window,
// PNG) to the file SHUFFLEDP_CALCULATOR_SCREENSHOT names, when it is set:
// docs/calculator.png.
const calculatorScreenshotCase = "subsampled-shuffle"

// pageState is what the test reads from the page's DOM (the text shown, and
// the value each number was printed from).
type pageState struct {
	Status     string `json:"status"`
	StatusText string `json:"statusText"` // "Done in 1.2 s." (the page's own time)
	Error      string `json:"error"`
	Search     string `json:"search"`
	Best       struct {
		Text, Value, Bound string
	} `json:"best"`
	Rows []struct {
		Bound, Text, Value, Kind string
	} `json:"rows"`
	Interval *struct {
		Lower, LowerValue, Upper, UpperValue string
	} `json:"interval"`
	Points []struct {
		Steps, Text string
	} `json:"points"`
	Command string `json:"command"`
}

const readPageJS = `(() => {
  const $ = (id) => document.getElementById(id);
  const s = {status: $('status').dataset.state, statusText: $('status').textContent, error: $('error').hidden ? '' : $('error').textContent,
    search: location.search, command: $('command').textContent,
    best: {Text: $('best-epsilon').textContent, Value: $('best-epsilon').dataset.value || '', Bound: $('best-bound').textContent},
    rows: [], interval: null, points: []};
  for (const tr of $('bounds').tBodies[0].rows) {
    const td = tr.cells;
    s.rows.push({Bound: tr.dataset.bound, Text: td[1].textContent, Value: td[1].dataset.value, Kind: td[2].textContent});
  }
  if (!$('interval').hidden) {
    s.interval = {Lower: $('interval-lower').textContent, LowerValue: $('interval-lower').dataset.value,
      Upper: $('interval-upper').textContent, UpperValue: $('interval-upper').dataset.value};
  }
  for (const c of document.querySelectorAll('#curve circle')) {
    s.points.push({Steps: c.dataset.steps, Text: c.dataset.text});
  }
  return JSON.stringify(s);
})()`

// fillFormJS enters a query in the form and presses Compute.
const fillFormJS = `((q) => {
  const p = new URLSearchParams(q);
  const m = document.getElementById('mechanism');
  m.value = p.get('mechanism');
  m.dispatchEvent(new Event('change'));
  for (const [k, v] of p) if (k !== 'mechanism') document.getElementById(k).value = v;
  document.getElementById('compute').click();
  return true;
})`

// findChromium returns the path of a Chromium or Chrome binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startCalculator runs `calculator --listen 127.0.0.1:0` with a module
// built once for the test and returns the page's URL; the process is killed
// when the test ends.
func startCalculator(t *testing.T, ctx context.Context) string {
	t.Helper()
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wasm, err := site.BuildWasm(ctx, site.BuildOptions{Source: root, Output: filepath.Join(t.TempDir(), site.WasmFile)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built the WebAssembly module in %v", time.Since(start).Round(time.Millisecond))
	cmd := child(nil, "calculator", "--listen", "127.0.0.1:0", "--wasm", wasm)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("calculator printed no address: %v (%v)\n%s", err, cmd.Wait(), stderr.String())
	}
	go io.Copy(io.Discard, pr)
	const prefix = "serving the calculator on "
	if !strings.HasPrefix(line, prefix) {
		t.Fatalf("calculator printed %q, want %q...", line, prefix)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// needChromium returns Chromium's path, or skips the test without it
// (fails it when SHUFFLEDP_REQUIRE_BROWSER is set).
func needChromium(t *testing.T) string {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		if os.Getenv("SHUFFLEDP_REQUIRE_BROWSER") != "" {
			t.Fatal("SHUFFLEDP_REQUIRE_BROWSER is set but no chromium is installed (apt-get install chromium)")
		}
		t.Skip("no chromium: install it (apt-get install chromium) or set SHUFFLEDP_REQUIRE_BROWSER=1 to make this a failure")
	}
	return chromium
}

// openPage starts headless Chromium (closed when the test ends) and opens
// base in it; it returns the browser's context.
func openPage(t *testing.T, ctx context.Context, chromium, base string) context.Context {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.WindowSize(900, 1400))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx, chromedp.Navigate(base)); err != nil {
		t.Fatalf("opening %s: %v", base, err)
	}
	return bctx
}

// TestCalculatorInBrowser drives headless Chromium against `calculator
// --listen` and checks the page's numbers against `account --json --bound
// all` for every case of calculatorBrowserCases, and an invalid input's
// error against the command's.
func TestCalculatorInBrowser(t *testing.T) {
	chromium := needChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	base := startCalculator(t, ctx)
	bctx := openPage(t, ctx, chromium, base)
	for _, tc := range calculatorBrowserCases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			q, err := calculator.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			var page pageState
			if tc.viaForm {
				page = formPage(t, bctx, base, tc.query)
				if got, want := strings.TrimPrefix(page.Search, "?"), q.Encode(); got != want {
					t.Errorf("the form wrote the URL query %q, want %q", got, want)
				}
			} else {
				page = loadPage(t, bctx, base+"?"+tc.query)
			}
			if page.Status != "done" {
				t.Fatalf("page ended in state %q: %s", page.Status, page.Error)
			}
			if page.Command != q.Command() {
				t.Errorf("page shows the command %q, want %q", page.Command, q.Command())
			}
			cli := accountJSONForTest(t, q.Args())
			checkPageAgainstCLI(t, page, cli, tc.interval)
			if shot := os.Getenv("SHUFFLEDP_CALCULATOR_SCREENSHOT"); shot != "" && tc.name == calculatorScreenshotCase {
				png, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(shot, png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("%s: best %s by %s, %d bounds, %d curve points, %v in the browser (the page: %q)",
				tc.query, page.Best.Text, page.Best.Bound, len(page.Rows), len(page.Points), time.Since(start).Round(time.Millisecond), page.StatusText)
		})
	}
	t.Run("phone", func(t *testing.T) {
		// Readable on a phone: at 390 CSS pixels (mobile emulation) the
		// page, with a result of the widest mechanism, scrolls only
		// vertically (the table of bounds scrolls inside its box) and its
		// text is not shrunk.
		page := loadPage(t, bctx, base+"?"+calculatorBrowserCases[1].query)
		if page.Status != "done" {
			t.Fatalf("page ended in state %q: %s", page.Status, page.Error)
		}
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844, chromedp.EmulatePortrait, chromedp.EmulateMobile)); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Do(bctx, chromedp.EmulateReset())
		const js = `JSON.stringify({page: document.documentElement.scrollWidth, view: window.innerWidth,
		  font: parseFloat(getComputedStyle(document.body).fontSize),
		  table: getComputedStyle(document.querySelector('.scroll')).overflowX})`
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Page, View int
			Font       float64
			Table      string
		}
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		if m.View > 400 || m.Page > m.View || m.Font < 14 || m.Table != "auto" {
			t.Errorf("at a phone's width: page %d px wide in a %d px viewport (want no wider), font %.0f px (want >= 14), table overflow %q (want auto)", m.Page, m.View, m.Font, m.Table)
		}
	})
	t.Run("invalid-input", func(t *testing.T) {
		q := "mechanism=shuffle&n=10000&eps0=1&steps=1&delta=2"
		page := loadPage(t, bctx, base+"?"+q)
		if page.Status != "error" {
			t.Fatalf("page ended in state %q, want error", page.Status)
		}
		cq, err := calculator.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		_, cliErr := runCmd(t, "account", append(cq.Args(), "--json", "--bound", "all")...)
		var ee *clitest.ExitError
		if !errors.As(cliErr, &ee) || page.Error != ee.Message() {
			t.Errorf("page shows error %q, the command says %v", page.Error, cliErr)
		}
	})
}

// loadPage opens u and waits for the page's answer.
func loadPage(t *testing.T, ctx context.Context, u string) pageState {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	return waitPage(t, ctx)
}

// formPage opens the page without a query, enters query in the form and
// presses Compute.
func formPage(t *testing.T, ctx context.Context, base, query string) pageState {
	t.Helper()
	js := fillFormJS + "(" + jsString(query) + ")"
	if err := chromedp.Do(ctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#field-n"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
		t.Fatal(err)
	}
	return waitPage(t, ctx)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitPage waits until the page is done or has failed, and reads it.
func waitPage(t *testing.T, ctx context.Context) pageState {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#status[data-state="done"], #status[data-state="error"]`))); err != nil {
		t.Fatalf("waiting for the page: %v", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](readPageJS))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}
	var s pageState
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// cliAccount is the part of `account --json --bound all`'s object the
// test compares.
type cliAccount struct {
	Bound  string  `json:"bound"`
	Winner string  `json:"winning_bound"`
	Eps    float64 `json:"epsilon"`
	All    []struct {
		Bound    string    `json:"bound"`
		Epsilon  float64   `json:"epsilon"`
		Kind     string    `json:"kind"`
		Interval []float64 `json:"interval"`
	} `json:"all"`
}

func accountJSONForTest(t *testing.T, args []string) cliAccount {
	t.Helper()
	out, err := runCmd(t, "account", append(args, "--json", "--bound", "all")...)
	if err != nil {
		t.Fatalf("account %v: %v", args, err)
	}
	var c cliAccount
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("account %v printed %q: %v", args, out, err)
	}
	return c
}

// checkPrinted checks that the page printed the CLI's value want as text:
// the page's printing of its own value (value) must be right, and equal to
// the printing of the CLI's value, unless the two values (the module's
// math in WebAssembly is not bit for bit the CLI's) straddle a rounding
// boundary.
func checkPrinted(t *testing.T, what, text, value string, want float64, kind string) {
	t.Helper()
	v, ok := new(big.Float).SetString(value)
	if !ok {
		t.Errorf("%s: the page's value %q is not a number", what, value)
		return
	}
	got, _ := v.Float64()
	if own := calculator.FormatKind(got, kind); text != own {
		t.Errorf("%s: the page printed %s for the value %v, want %s", what, text, got, own)
	}
	rel := math.Abs(got-want) / math.Max(want, 1e-300)
	if kind == accounting.KindCertifiedLower {
		// The certified lower end (the optimistic end of a PLD of shuffled
		// randomized response) moves by up to a few 1e-4 between the module
		// and the command, where every upper bound agrees to about 1e-15:
		// see docs/calculator.md. Both are computed by the same code.
		if rel > certifiedLowerTolerance {
			t.Errorf("%s: the page computed %v, the command %v (relative difference %.3g > %g)", what, got, want, rel, certifiedLowerTolerance)
		} else if rel > 1e-9 {
			t.Logf("%s: the page computed %v, the command %v (relative difference %.3g)", what, got, want, rel)
		}
		return
	}
	if rel > 1e-9 {
		t.Errorf("%s: the page computed %v, the command %v (relative difference %.3g)", what, got, want, rel)
	}
	if cliText := calculator.FormatKind(want, kind); text != cliText {
		if calculator.FormatKind(math.Min(got, want), kind) != calculator.FormatKind(math.Max(got, want), kind) {
			t.Logf("%s: the page printed %s, the command's value %v prints %s: they straddle a rounding boundary", what, text, want, cliText)
			return
		}
		t.Errorf("%s: the page printed %s, the command's value %v prints %s", what, text, want, cliText)
	}
}

// certifiedLowerTolerance bounds the relative difference of the certified
// lower end between the page and the command.
const certifiedLowerTolerance = 1e-3

func checkPageAgainstCLI(t *testing.T, page pageState, cli cliAccount, wantInterval bool) {
	t.Helper()
	checkPrinted(t, "best", page.Best.Text, page.Best.Value, cli.Eps, "upper")
	if want := cmp.Or(cli.Winner, cli.Bound); page.Best.Bound != want {
		t.Errorf("page names %q the best bound, the command %q", page.Best.Bound, want)
	}
	if len(page.Rows) != len(cli.All) {
		t.Fatalf("page shows %d bounds, the command reports %d", len(page.Rows), len(cli.All))
	}
	var interval []float64
	for i, r := range page.Rows {
		c := cli.All[i]
		if r.Bound != c.Bound || r.Kind != c.Kind {
			t.Errorf("row %d: page shows %s (%s), the command %s (%s)", i, r.Bound, r.Kind, c.Bound, c.Kind)
			continue
		}
		checkPrinted(t, r.Bound, r.Text, r.Value, c.Epsilon, c.Kind)
		t.Logf("| %s | %s | %s | %s | %v | %s |", r.Bound, r.Kind, r.Text, r.Value, c.Epsilon, calculator.FormatKind(c.Epsilon, c.Kind))
		if len(c.Interval) == 2 {
			interval = c.Interval
		}
	}
	switch {
	case (page.Interval != nil) != wantInterval || (interval != nil) != wantInterval:
		t.Errorf("interval shown %v, reported by the command %v, want %v", page.Interval != nil, interval != nil, wantInterval)
	case wantInterval:
		checkPrinted(t, "interval lower", page.Interval.Lower, page.Interval.LowerValue, interval[0], "certified-lower")
		checkPrinted(t, "interval upper", page.Interval.Upper, page.Interval.UpperValue, interval[1], "upper")
	}
	steps, err := calculator.ParseCount(paramOf(page.Search, "steps"))
	if err != nil {
		t.Fatal(err)
	}
	want := calculator.CurveSteps(steps, calculator.CurvePoints)
	if len(page.Points) != len(want) {
		t.Fatalf("the curve has %d points, want %d (%v)", len(page.Points), len(want), want)
	}
	if len(want) == 0 {
		return
	}
	if last := page.Points[len(page.Points)-1]; last.Text != page.Best.Text {
		t.Errorf("the curve ends at %s, best is %s", last.Text, page.Best.Text)
	}
	// A point inside the curve is what the command prints at its rounds.
	if len(want) > 2 {
		mid := page.Points[len(want)/2]
		if mid.Steps != fmt.Sprint(want[len(want)/2]) {
			t.Fatalf("curve point %d is at %s rounds, want %d", len(want)/2, mid.Steps, want[len(want)/2])
		}
		out, err := runCmd(t, "account", append(slices.Clone(queryArgs(t, page.Search)), "--json", "--steps", mid.Steps)...)
		if err != nil {
			t.Fatal(err)
		}
		var c cliAccount
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		if got := calculator.FormatUpper(c.Eps); got != mid.Text {
			t.Errorf("the curve shows %s at %s rounds, the command %s", mid.Text, mid.Steps, got)
		}
	}
}

// queryArgs returns the command's flags of the page's query, less --steps.
func queryArgs(t *testing.T, search string) []string {
	t.Helper()
	q, err := calculator.ParseQuery(search)
	if err != nil {
		t.Fatal(err)
	}
	args := q.Args()
	i := slices.Index(args, "--steps")
	return slices.Delete(args, i, i+2)
}

func paramOf(search, key string) string {
	v, _ := url.ParseQuery(strings.TrimPrefix(search, "?"))
	return v.Get(key)
}
