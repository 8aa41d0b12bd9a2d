package federated

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/pki"
)

// roleEnv, when set to a directory, makes the test binary a launcher of
// roles (TestMain): it runs `ROLE FLAGS` with the test's model, writing
// what the functions saw under that directory.
const roleEnv = "SHUFFLEDP_FEDERATED_TEST_DIR"

// badEnv makes the test's client update function return a wrong value:
// "nan" (a NaN at index 1) or "short" (one value too few).
const badEnv = "SHUFFLEDP_FEDERATED_TEST_BAD"

// wstar is the test model's optimum: every client's update is
// theta - wstar, the gradient of |theta - wstar|^2 / 2.
var wstar = []float64{0.3, -0.2, 0.1, 0}

func TestMain(m *testing.M) {
	if dir := os.Getenv(roleEnv); dir != "" {
		if err := runTestRole(dir, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "role:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runTestRole runs one role of the test's deployment with the test model.
func runTestRole(dir string, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		return errors.New("no role")
	}
	log, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s-%d.log", args[0], os.Getpid())), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	switch args[0] {
	case "server":
		m := ServerModel{
			Theta0: make([]float64, len(wstar)),
			Update: func(theta, mean, next []float64) error {
				fmt.Fprintf(log, "mean %d\n", len(mean))
				for i := range next {
					next[i] = theta[i] - 0.5*mean[i]
				}
				return nil
			},
			Evaluate: func(theta []float64) (e trainingEvaluation, err error) {
				var d float64
				for i := range theta {
					d += (theta[i] - wstar[i]) * (theta[i] - wstar[i])
				}
				e.Accuracy, e.Loss = 1/(1+math.Sqrt(d)), d
				return e, nil
			},
		}
		_, err := RunServer(ctx, args[1:], m, os.Stderr)
		return err
	case "shuffler":
		return RunShuffler(ctx, args[1:], os.Stderr)
	case "client":
		lo, hi := clientRange(args[1:])
		return RunClients(ctx, args[1:], func(c int64, examples []int, params, update []float64) error {
			fmt.Fprintf(log, "client %d of %d:%d params %d\n", c, lo, hi, len(params))
			fmt.Fprintf(log, "examples %d %v\n", c, examples)
			for i := range update {
				update[i] = params[i] - wstar[i]
			}
			switch os.Getenv(badEnv) {
			case "nan":
				update[1] = math.NaN()
			case "short":
				return errors.New("returned 3 values; the model has 4 parameters")
			}
			return nil
		}, os.Stderr)
	}
	return fmt.Errorf("unknown role %q", args[0])
}

// clientRange returns the --clients LO:HI of a client's flags.
func clientRange(args []string) (int64, int64) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--clients="); ok {
			lo, hi, _ := pki.ParseRange("clients", v)
			return lo, hi
		}
	}
	return -1, -1
}

// up runs Up with the test binary as the launcher; it returns Up's error
// and the directory of the functions' logs.
func up(t *testing.T, state string, extra ...string) (error, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv(roleEnv, dir)
	args := append([]string{"--state=" + state, "--clients=12", "--sample=4", "--epochs=1", "--randomizer=r2", "--eps0=4",
		"--clip=1", "--eval-every=1", "--release-when-complete", "--client-processes=2", "--dataset=synthetic"}, extra...)
	var out strings.Builder
	err = Up(context.Background(), args, Launcher{Command: []string{exe}}, &lockedWriter{w: &out})
	t.Logf("up's output:\n%s", out.String())
	return err, dir
}

// TestUpWithCallbacks runs a whole deployment whose roles are started by
// a launcher (this test binary) with the caller's functions: 3 rounds of
// 4 of 12 clients in two client processes. The client function is called
// for clients of its own process's range only, with the model's length;
// the server function gets the mean (the model's length) once per round;
// the metrics' last epsilon is the shuffler ledger's, as `ledger show`
// reads it; a second Up finds the run finished.
func TestUpWithCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	state := filepath.Join(t.TempDir(), "run")
	err, dir := up(t, state)
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var means, clients int
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var c, lo, hi int64
			var n int
			switch {
			case line == "":
			case strings.HasPrefix(line, "examples "):
				if want := fmt.Sprintf("examples %d [%d]", clientOf(line), clientOf(line)); line != want {
					t.Errorf("client function: %q, want %q (index partition)", line, want)
				}
			case strings.HasPrefix(line, "mean "):
				if line != "mean 4" {
					t.Errorf("server function: %q", line)
				}
				means++
			case strings.HasPrefix(line, "client "):
				if _, err := fmt.Sscanf(line, "client %d of %d:%d params %d", &c, &lo, &hi, &n); err != nil || c < lo || c >= hi || n != 4 {
					t.Errorf("client function: %q (a client outside its process's range, or parameters of another length)", line)
				}
				clients++
			default:
				t.Errorf("unexpected line %q", line)
			}
		}
	}
	if means != 3 || clients != 12 {
		t.Errorf("the server function ran %d times (want 3 rounds), the client function %d (want 3 x 4)", means, clients)
	}
	recs := readMetrics(t, filepath.Join(state, "metrics.jsonl"))
	last := recs[len(recs)-1]
	if last.Round != 3 || last.Epsilon == nil || last.TestAccuracy == nil || last.Model != "external" {
		t.Fatalf("last record %+v", last)
	}
	if len(recs) != 4 {
		t.Errorf("%d evaluations, want rounds 0 to 3", len(recs))
	}
	for _, r := range recs {
		if r.TestAccuracy == nil || !(*r.TestAccuracy > 0 && *r.TestAccuracy <= 1) {
			t.Errorf("round %d: test accuracy %v, not the evaluation function's 1/(1+|theta-w*|)", r.Round, r.TestAccuracy)
		}
	}
	if *recs[0].TestAccuracy != 1/(1+math.Sqrt(0.3*0.3+0.2*0.2+0.1*0.1)) {
		t.Errorf("round 0: test accuracy %v, not the evaluation function's at theta_0 = 0", *recs[0].TestAccuracy)
	}
	rep, err := ledger.Show{Source: ledger.Source{Dir: state}, Accountant: ledger.AccountantLedger}.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rounds != 3 || rep.Epsilon != *last.Epsilon {
		t.Fatalf("ledger show: %d rounds, epsilon %v; metrics: epsilon %v", rep.Rounds, rep.Epsilon, *last.Epsilon)
	}
	if err, _ := up(t, state); err != nil {
		t.Fatalf("a finished run's second up: %v", err)
	}
}

// clientOf is the client of an "examples C [...]" line.
func clientOf(line string) int {
	var c int
	fmt.Sscanf(line, "examples %d", &c)
	return c
}

// TestUpExamplesPerClient: with --examples-per-client 3 --partition iid
// the client function of client c gets the 3 examples the partition deals
// c: the same every round, distinct, disjoint from every other client's,
// within the population of 12*3.
func TestUpExamplesPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	err, dir := up(t, filepath.Join(t.TempDir(), "run"), "--examples-per-client=3", "--partition=iid")
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	held := map[int]string{}
	owner := map[string]int{}
	for _, f := range logs {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "examples ") {
				continue
			}
			c := clientOf(line)
			ex := line[strings.Index(line, "["):]
			if prev, ok := held[c]; ok && prev != ex {
				t.Errorf("client %d held %s, then %s", c, prev, ex)
			}
			held[c] = ex
			fields := strings.Fields(strings.Trim(ex, "[]"))
			if len(fields) != 3 {
				t.Errorf("client %d holds %s, want 3 examples", c, ex)
			}
			for _, e := range fields {
				n, _ := strconv.Atoi(e)
				if o, ok := owner[e]; (ok && o != c) || n < 0 || n >= 36 {
					t.Errorf("example %s of client %d: also client %d's, or outside the population of 36", e, c, o)
				}
				owner[e] = c
			}
		}
	}
	if len(held) == 0 {
		t.Fatal("no client function call logged")
	}
}

// TestUpRefusesBadUpdates: a client function returning a NaN or failing
// stops the run with an error naming the client update function; no
// round is debited.
func TestUpRefusesBadUpdates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, bad := range []string{"nan", "short"} {
		t.Run(bad, func(t *testing.T) {
			t.Setenv(badEnv, bad)
			state := filepath.Join(t.TempDir(), "run")
			var out strings.Builder
			exe, _ := os.Executable()
			t.Setenv(roleEnv, t.TempDir())
			err := Up(context.Background(), []string{"--state=" + state, "--clients=4", "--sample=2", "--epochs=1", "--randomizer=rinf",
				"--release-when-complete", "--dataset=synthetic"}, Launcher{Command: []string{exe}}, &lockedWriter{w: &out})
			if err == nil {
				t.Fatal("a bad client update function did not stop the run")
			}
			want := map[string]string{"nan": "the client update function returned NaN at index 1", "short": "returned 3 values; the model has 4 parameters"}[bad]
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("up: %v; output does not contain %q:\n%s", err, want, out.String())
			}
		})
	}
}

// TestRolesRefuse: the roles refuse what the Python API does not offer,
// naming the flag or the function.
func TestRolesRefuse(t *testing.T) {
	ctx := context.Background()
	if _, err := RunServer(ctx, []string{"--model=cnn"}, ServerModel{Theta0: []float64{0}, Update: func(_, _, _ []float64) error { return nil }}, nil); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("server --model cnn: %v", err)
	}
	if _, err := RunServer(ctx, nil, ServerModel{Theta0: []float64{0}}, nil); err == nil || !strings.Contains(err.Error(), "server update function") {
		t.Errorf("server without an update function: %v", err)
	}
	if err := RunClients(ctx, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "client update function") {
		t.Errorf("client without an update function: %v", err)
	}
	if err := RunShuffler(ctx, []string{"--no-such-flag"}, nil); err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Errorf("shuffler --no-such-flag: %v", err)
	}
	if err := Up(ctx, []string{"--state=x", "--model=mlp"}, Launcher{Command: []string{"/bin/true"}}, nil); err == nil || !strings.HasPrefix(err.Error(), "model") {
		t.Errorf("up --model mlp: %v", err)
	}
	if err := Up(ctx, []string{"--model=external"}, Launcher{Command: []string{"/bin/true"}}, nil); err == nil || !strings.HasPrefix(err.Error(), "state is required") {
		t.Errorf("up without --state: %v", err)
	}
}

func readMetrics(t *testing.T, path string) []metrics.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []metrics.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r metrics.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		t.Fatal("no metrics")
	}
	return recs
}
