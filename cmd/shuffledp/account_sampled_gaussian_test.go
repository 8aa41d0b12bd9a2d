package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/accounting"
	"github.com/shuffledp/shuffledp/route"
	"github.com/shuffledp/shuffledp/sampledgauss"
)

// sampledGaussianJSON is `account --json` for sampled-gaussian.
type sampledGaussianJSON struct {
	Bound      string  `json:"bound"`
	Winner     string  `json:"winning_bound"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Order      float64 `json:"order"`
	Lower      bool    `json:"lower_bound"`
	Conversion string  `json:"conversion"`
	Mechanism  string  `json:"mechanism"`
	N          int64   `json:"n"`
	K          int64   `json:"k"`
	Eps0       float64 `json:"eps0"`
	Rate       float64 `json:"rate"`
	Sigma      float64 `json:"sigma"`
	Steps      int64   `json:"steps"`
}

func accountSampledGaussian(t *testing.T, args ...string) sampledGaussianJSON {
	t.Helper()
	out, err := runAccount(t, append([]string{"--mechanism", "sampled-gaussian", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	var v sampledGaussianJSON
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: not one JSON object: %v\n%s", args, err, out)
	}
	return v
}

// TestAccountSampledGaussianOracle is the acceptance check of the sampled Gaussian:
// `account --mechanism sampled-gaussian` against the 50-digit mpmath
// integration of A_alpha (sampledgauss/testdata/golden.json, independent of
// the series the package sums). On the golden orders of each (q, sigma),
// the oracle's epsilon is the best conversion (accounting.EpsilonFromRDP,
// the Accountant's) of T times the oracle's RDP; the command's must match
// it to 1e-6 relative and never be below it.
func TestAccountSampledGaussianOracle(t *testing.T) {
	b, err := os.ReadFile("../../sampledgauss/testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Points []struct {
			Q     float64 `json:"q"`
			Sigma float64 `json:"sigma"`
			Order float64 `json:"order"`
			Eps   string  `json:"eps"`
		} `json:"points"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	type key struct{ q, sigma float64 }
	curves := map[key]map[float64]float64{}
	for _, p := range g.Points {
		k := key{p.Q, p.Sigma}
		if curves[k] == nil {
			curves[k] = map[float64]float64{}
		}
		v, err := strconv.ParseFloat(p.Eps, 64)
		if err != nil {
			t.Fatal(err)
		}
		curves[k][p.Order] = v
	}
	for _, c := range []struct {
		q, sigma float64
		steps    int64
		delta    float64
	}{
		{0.01, 1, 1000, 1e-5},
		{1e-3, 0.5, 100000, 1e-6},
		{0.1, 5, 500, 1e-5},
		{1e-4, 50, 1000000, 1e-8},
		{0.5, 1, 10, 1e-5},
		{0.01, 2, 1000, 1e-5}, // the large-order grid: 16..256
		{0.3, 10, 200, 1e-5},
	} {
		rdp := curves[key{c.q, c.sigma}]
		if len(rdp) < 5 {
			t.Fatalf("no golden curve for q=%g sigma=%g", c.q, c.sigma)
		}
		var orders []string
		want := math.Inf(1)
		for o, v := range rdp {
			orders = append(orders, strconv.FormatFloat(o, 'g', -1, 64))
			e, _, err := accounting.EpsilonFromRDP(o, float64(c.steps)*v, c.delta)
			if err == nil && e < want {
				want = e
			}
		}
		got := accountSampledGaussian(t, "--bound", "rdp-best", "--rate", strconv.FormatFloat(c.q, 'g', -1, 64), "--sigma", strconv.FormatFloat(c.sigma, 'g', -1, 64),
			"--steps", strconv.FormatInt(c.steps, 10), "--delta", strconv.FormatFloat(c.delta, 'g', -1, 64), "--orders", strings.Join(orders, ","))
		rel := (got.Epsilon - want) / want
		if rel < -1e-12 || rel > 1e-6 {
			t.Errorf("q=%g sigma=%g T=%d delta=%g: account epsilon %.12g, oracle %.12g (rel %.3g)", c.q, c.sigma, c.steps, c.delta, got.Epsilon, want, rel)
		}
		t.Logf("q=%g sigma=%g T=%d: epsilon %.10g at order %g, oracle %.10g (rel %.2g)", c.q, c.sigma, c.steps, got.Epsilon, got.Order, want, rel)
	}
}

// TestAccountSampledGaussianJSON: the JSON contract (epsilon, delta, order,
// bound) with the effective parameters echoed, the same epsilon as the
// Accountant over the default grid, and no assumption note.
func TestAccountSampledGaussianJSON(t *testing.T) {
	// The RDP route of best (best itself is won by the PLD route here:
	// 2.2191 against 2.4172).
	v := accountSampledGaussian(t, "--bound", "rdp-best", "--rate", "0.004", "--sigma", "1.1", "--steps", "14063", "--delta", "1e-5")
	if v.Bound != "rdp-best" || v.Winner != "mtz19" || v.Lower || v.Delta != 1e-5 || !(v.Order > 1) ||
		v.Mechanism != "sampled-gaussian" || v.Rate != 0.004 || v.Sigma != 1.1 || v.Steps != 14063 || v.N != 0 || v.K != 0 || v.Eps0 != 0 {
		t.Errorf("JSON: %+v", v)
	}
	acct, _ := accounting.NewAccountant(accounting.DefaultOrders())
	m, _ := sampledgauss.New(0.004, 1.1)
	_ = acct.Compose(m, 14063)
	g, err := acct.Epsilon(1e-5)
	if err != nil || g.Epsilon != v.Epsilon || g.Order != v.Order {
		t.Errorf("account epsilon %v at order %v; Accountant %+v, %v", v.Epsilon, v.Order, g, err)
	}
	out, err := runAccount(t, "--mechanism", "sampled-gaussian", "--rate", "0.004", "--sigma", "1.1", "--steps", "14063", "--delta", "1e-5")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sampled-gaussian(rate=0.004, sigma=1.1, adjacency=add-remove) steps=14063", "mtz19", "gaussian-cor1", "won by pld", "pld "} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "assumes") {
		t.Errorf("sampled-gaussian rests on no assumption:\n%s", out)
	}
}

// TestAccountSampledGaussianEqualNoise: --n N --k B --client-sigma S is
// rate B/N and sigma sqrt(B) S (the ICLR'23 Fig. 1 comparison), and --k
// with --n alone sets the rate.
func TestAccountSampledGaussianEqualNoise(t *testing.T) {
	t.Parallel() // CPU-bound: beside the package's other parallel tests, on both cores
	a := accountSampledGaussian(t, "--n", "60000", "--k", "60", "--client-sigma", "0.86", "--steps", "3000", "--delta", "1e-5")
	b := accountSampledGaussian(t, "--rate", strconv.FormatFloat(60.0/60000, 'g', -1, 64), "--sigma", strconv.FormatFloat(math.Sqrt(60)*0.86, 'g', -1, 64),
		"--steps", "3000", "--delta", "1e-5")
	if a.Epsilon != b.Epsilon || a.Rate != 60.0/60000 || a.Sigma != math.Sqrt(60)*0.86 || a.N != 60000 {
		t.Errorf("--client-sigma: %+v; explicit rate and sigma: %+v", a, b)
	}
	c := accountSampledGaussian(t, "--n", "60000", "--k", "60", "--sigma", "2", "--steps", "3000", "--delta", "1e-5")
	d := accountSampledGaussian(t, "--rate", "0.001", "--sigma", "2", "--steps", "3000", "--delta", "1e-5")
	if c.Epsilon != d.Epsilon || c.Rate != 0.001 {
		t.Errorf("--k/--n: %+v; --rate: %+v", c, d)
	}
}

func TestAccountSampledGaussianErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--mechanism", "sampled-gaussian", "--sigma", "1"}, "--rate"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "2", "--sigma", "1"}, "--rate"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1"}, "--sigma"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1", "--sigma", "-1"}, "--sigma"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1", "--sigma", "1", "--eps0", "1"}, "--eps0"},
		{[]string{"--mechanism", "sampled-gaussian", "--k", "60", "--sigma", "1"}, "--k"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1", "--k", "60", "--n", "600", "--sigma", "1"}, "--k"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1", "--client-sigma", "1"}, "--client-sigma"},
		{[]string{"--mechanism", "sampled-gaussian", "--n", "600", "--k", "6", "--sigma", "1", "--client-sigma", "1"}, "--client-sigma"},
		{[]string{"--mechanism", "sampled-gaussian", "--n", "600", "--k", "6", "--client-sigma", "-1"}, "--client-sigma"},
		{[]string{"--mechanism", "subsampled-shuffle-gaussian", "--n", "600", "--k", "6", "--client-sigma", "1"}, "--client-sigma"},
		{[]string{"--mechanism", "sampled-gaussian", "--rate", "0.1", "--sigma", "1", "--bound", "iclr23-thm1"}, "--bound"},
	} {
		out, err := runAccount(t, append(c.args, "--json")...)
		if err == nil || !strings.HasPrefix(err.Error(), c.flag) {
			t.Errorf("%v: %v (%s), want an error naming %s", c.args, err, out, c.flag)
		}
	}
}

// TestCalibrateSampledGaussian: --solve sigma and --solve rate meet the
// target, account agrees at the answer, and the answer is tight (one part
// in 1e6 less noise, or more sampling, misses the target).
func TestCalibrateSampledGaussian(t *testing.T) {
	type calJSON struct {
		Value   float64 `json:"value"`
		Epsilon float64 `json:"epsilon"`
		Rate    float64 `json:"rate"`
		Sigma   float64 `json:"sigma"`
		N       int64   `json:"n"`
	}
	for _, c := range []struct {
		args  []string
		solve string
	}{
		{[]string{"--rate", "0.004", "--steps", "14063"}, "sigma"},
		{[]string{"--n", "60000", "--k", "60", "--steps", "3000"}, "sigma"},
		{[]string{"--sigma", "1.1", "--steps", "14063"}, "rate"},
	} {
		// best-no-pld: the first, exact stage of "best" (calibration.TestCalibrateBestPLD
		// covers the PLD stage at small T; PLD at T = 14063 is seconds an
		// evaluation).
		args := append([]string{"--mechanism", "sampled-gaussian", "--delta", "1e-5", "--epsilon", "3", "--solve", c.solve, "--json",
			"--bound", account.BoundBestNoPLD}, c.args...)
		out, err := runCalibrate(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		var r calJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !(r.Epsilon <= 3) || r.Epsilon < 3*(1-1e-4) {
			t.Errorf("%v: epsilon %g at %g, want just below 3", c.args, r.Epsilon, r.Value)
		}
		check := func(rate, sigma float64) float64 {
			v := accountSampledGaussian(t, "--bound", account.BoundBestNoPLD, "--rate", strconv.FormatFloat(rate, 'g', -1, 64), "--sigma", strconv.FormatFloat(sigma, 'g', -1, 64),
				"--steps", c.args[len(c.args)-1], "--delta", "1e-5")
			return v.Epsilon
		}
		if e := check(r.Rate, r.Sigma); e != r.Epsilon {
			t.Errorf("%v: account at rate %g sigma %g gives %g, calibrate %g", c.args, r.Rate, r.Sigma, e, r.Epsilon)
		}
		var worse float64
		if c.solve == "sigma" {
			worse = check(r.Rate, r.Sigma*(1-1e-6))
		} else {
			worse = check(r.Rate*(1+1e-6), r.Sigma)
		}
		if !(worse > 3) {
			t.Errorf("%v: the answer %g is not tight: epsilon %g one part in 1e6 beyond it", c.args, r.Value, worse)
		}
	}
}

// BenchmarkCalibrateSigmaSampledGaussian: the smallest sigma for (3, 1e-5)
// over the TF Privacy MNIST tutorial's 60 epochs (rate 256/60000, 14063
// steps), curve caches cleared.
func BenchmarkCalibrateSigmaSampledGaussian(b *testing.B) {
	benchmarkCalibrate(b, "--mechanism", "sampled-gaussian", "--n", "60000", "--k", "256",
		"--steps", "14063", "--delta", "1e-5", "--epsilon", "3", "--solve", "sigma")
}

// BenchmarkAccountSampledGaussian: one `account --json` (default grid,
// best), curve caches cleared.
func BenchmarkAccountSampledGaussian(b *testing.B) {
	for i := 0; i < b.N; i++ {
		route.ResetCaches()
		cmd := newAccountCmd()
		cmd.SetOut(io.Discard)
		cmd.SetArgs([]string{"--mechanism", "sampled-gaussian", "--rate", "0.004", "--sigma", "1.1", "--steps", "14063", "--delta", "1e-5", "--json"})
		if err := cmd.Execute(); err != nil {
			b.Fatal(err)
		}
	}
}
