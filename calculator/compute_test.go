package calculator

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/account"
	"github.com/shuffledp/shuffledp/event"
)

func TestParseQuery(t *testing.T) {
	q, err := ParseQuery("?delta=1/60000&steps=1e3&mechanism=shuffle&n=1e4&eps0=0.5")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := q.Encode(), "mechanism=shuffle&n=1e4&eps0=0.5&steps=1e3&delta=1%2F60000"; got != want {
		t.Errorf("Encode = %q, want %q", got, want)
	}
	if got, want := strings.Join(q.Args(), " "), "--mechanism shuffle --n 1e4 --eps0 0.5 --steps 1e3 --delta 1/60000"; got != want {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if q2, err := ParseQuery(q.Encode()); err != nil || q2.Encode() != q.Encode() {
		t.Errorf("ParseQuery(Encode) = %v, %v: not the same state", q2, err)
	}
	if got := q.WithSteps(7).Values[ParamSteps]; got != "7" || q.Values[ParamSteps] != "1e3" {
		t.Errorf("WithSteps: %q (and the original %q)", got, q.Values[ParamSteps])
	}
	// An empty adjacency is the mechanism's default: left out.
	q, err = ParseQuery("mechanism=shuffle-gaussian&n=10&sigma=1&adjacency=&steps=1&delta=1e-5")
	if err != nil || q.Encode() != "mechanism=shuffle-gaussian&n=10&sigma=1&steps=1&delta=1e-5" {
		t.Errorf("empty adjacency: %q, %v", q.Encode(), err)
	}
}

func TestParseQueryErrors(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"", `mechanism "" is not one of`},
		{"mechanism=nope", `mechanism "nope" is not one of`},
		{"mechanism=shuffle&n=10&eps0=1&steps=1", "delta is missing"},
		{"mechanism=shuffle&n=10&eps0=1&steps=1&delta=1e-5&k=3", `parameter "k" is not used by mechanism shuffle`},
		{"mechanism=shuffle&n=10&n=11&eps0=1&steps=1&delta=1e-5", "n is given 2 times"},
		{"mechanism=shuffle&mechanism=shuffle&n=10&eps0=1&steps=1&delta=1e-5", "mechanism is given 2 times"},
		{"mechanism=shuffle&n=1.5&eps0=1&steps=1&delta=1e-5", `n: "1.5" is not an integer`},
		{"mechanism=shuffle&n=10&eps0=x&steps=1&delta=1e-5", "eps0:"},
		{"mechanism=shuffle&n=10&eps0=Inf&steps=1&delta=1e-5", "eps0: not a finite number"},
		{"mechanism=shuffle&n=10&eps0=1&steps=1&delta=1/0", "delta: not a number or a quotient"},
		{"mechanism=shuffle-gaussian&n=10&sigma=1&adjacency=sideways&steps=1&delta=1e-5", `adjacency: "sideways" is not one of`},
		{"mechanism=shuffle&n=10&eps0=1&steps=1&delta=%zz", "query string:"},
	} {
		_, err := ParseQuery(tc.query)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseQuery(%q) = %v, want an error containing %q", tc.query, err, tc.want)
		}
	}
}

// TestComputeIsAccount checks that Compute hands the accountant the
// question the command line asks: its Account is the bytes of
// account.Evaluate for a Request built field by field from the flags (not
// through ParseQuery's JSON), its rows are the object's rows printed in
// their kind's direction, and the interval is the certified row's.
func TestComputeIsAccount(t *testing.T) {
	for _, tc := range []struct {
		query string
		req   account.Request
		given []string
	}{
		{"mechanism=shuffle&n=50&eps0=1&steps=2&delta=1e-5",
			account.Request{Mechanism: "shuffle", N: 50, Eps0: 1, Steps: 2, Delta: 1e-5}, []string{"n", "eps0", "steps", "delta"}},
		{"mechanism=shuffle-gaussian&n=1e4&sigma=5&steps=100&delta=1e-8",
			account.Request{Mechanism: "shuffle-gaussian", N: 10000, Sigma: 5, Steps: 100, Delta: 1e-8}, []string{"n", "sigma", "steps", "delta"}},
		{"mechanism=subsampled-shuffle-gaussian&n=60000&k=600&sigma=2&adjacency=zero-out&steps=50&delta=1/60000",
			account.Request{Mechanism: "subsampled-shuffle-gaussian", N: 60000, K: 600, Sigma: 2, Adjacency: "zero-out", Steps: 50, Delta: 1.0 / 60000},
			[]string{"n", "k", "sigma", "adjacency", "steps", "delta"}},
	} {
		q, err := ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Compute(q)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		req := account.Defaults()
		req.Mechanism, req.Bound, req.Adjacency = tc.req.Mechanism, account.BoundAll, tc.req.Adjacency
		req.N, req.K, req.Eps0, req.Sigma, req.Steps, req.Delta = tc.req.N, tc.req.K, tc.req.Eps0, tc.req.Sigma, tc.req.Steps, tc.req.Delta
		given := append([]string{"mechanism", "bound"}, tc.given...)
		req.Given = func(flag string) bool { return slices.Contains(given, flag) }
		a, err := account.Evaluate(req)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := a.WriteJSON(&want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(res.Account, want.Bytes()) {
			t.Errorf("%s: Compute's account object\n%s\nwant\n%s", tc.query, res.Account, want.Bytes())
		}
		if len(res.Rows) != len(a.Rows) {
			t.Fatalf("%s: %d rows, want %d", tc.query, len(res.Rows), len(a.Rows))
		}
		for i, r := range res.Rows {
			w := a.Rows[i]
			if r.Bound != w.Bound || r.Epsilon != w.Epsilon || r.Kind != w.Kind || r.Text != FormatKind(w.Epsilon, w.Kind) {
				t.Errorf("%s: row %d = %+v, want %s %v %s", tc.query, i, r, w.Bound, w.Epsilon, w.Kind)
			}
			if len(w.Interval) == 2 && (res.Interval == nil || res.Interval.Lower != w.Interval[0] || res.Interval.Upper != w.Interval[1]) {
				t.Errorf("%s: interval %+v, want %v", tc.query, res.Interval, w.Interval)
			}
		}
		if res.Best.Bound != "best" || res.Command != "shuffledp account --json --bound all "+strings.Join(q.Args(), " ") {
			t.Errorf("%s: best %q, command %q", tc.query, res.Best.Bound, res.Command)
		}
		// The curve's last point is best at the same rounds.
		steps, _ := ParseCount(q.Values[ParamSteps])
		p, err := Point(q, steps)
		if err != nil || p.Epsilon != res.Best.Epsilon || p.Bound != res.Best.Winner {
			t.Errorf("%s: Point at %d rounds = %+v, %v; best %v by %s", tc.query, steps, p, err, res.Best.Epsilon, res.Best.Winner)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Error(err)
		}
	}
}

// TestComputeErrorIsAccounts: an input the query accepts but the
// accountant refuses gets the accountant's error, as on the command line.
func TestComputeErrorIsAccounts(t *testing.T) {
	q, err := ParseQuery("mechanism=shuffle&n=10&eps0=1&steps=1&delta=2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Compute(q)
	if err == nil || err.Error() != "--delta must be in (0,1), got 2" {
		t.Errorf("Compute = %v, want the accountant's --delta error", err)
	}
}

func TestCurveSteps(t *testing.T) {
	for _, tc := range []struct {
		steps  int64
		points int
	}{{0, 12}, {1, 12}, {2, 12}, {10, 12}, {100, 12}, {100000, 12}, {1 << 40, 12}, {50, 1}} {
		ts := CurveSteps(tc.steps, tc.points)
		if tc.steps < 1 {
			if len(ts) != 0 {
				t.Errorf("CurveSteps(%d) = %v, want none", tc.steps, ts)
			}
			continue
		}
		if len(ts) == 0 || ts[len(ts)-1] != tc.steps || len(ts) > tc.points || (tc.points > 1 && ts[0] != 1) {
			t.Errorf("CurveSteps(%d, %d) = %v: want 1 first, %d last, at most %d", tc.steps, tc.points, ts, tc.steps, tc.points)
		}
		for i := 1; i < len(ts); i++ {
			if ts[i] <= ts[i-1] {
				t.Errorf("CurveSteps(%d, %d) = %v: not increasing", tc.steps, tc.points, ts)
			}
		}
	}
}

func TestSchemaCoversEveryMechanism(t *testing.T) {
	s := DefaultSchema()
	names := map[string]bool{}
	for _, f := range s.Fields {
		names[f.Name] = true
	}
	for _, m := range s.Mechanisms {
		for _, f := range m.Fields {
			if !names[f] {
				t.Errorf("%s takes %q, which has no field", m.Name, f)
			}
		}
	}
	for _, m := range event.Mechanisms() {
		if _, ok := findMechanism(m); !ok {
			t.Errorf("mechanism %s of the accountant is not in the page's menu", m)
		}
	}
	if _, ok := findMechanism(s.Default); !ok {
		t.Errorf("default mechanism %q is not in the menu", s.Default)
	}
}

// TestComputeLowerZero: where the certified lower end is 0 (n = 3, k = 1,
// delta = 0.1) the accountant's JSON carries a null ratio (it used to fail
// with +Inf), and the page says there is no ratio and no witness instead
// of printing 0.00 and an empty name.
func TestComputeLowerZero(t *testing.T) {
	q, err := ParseQuery("mechanism=subsampled-shuffle&n=3&k=1&eps0=0.5&steps=1&delta=0.1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compute(q)
	if err != nil {
		t.Fatal(err)
	}
	iv := res.Interval
	if iv == nil || iv.Lower != 0 || iv.Ratio != nil || !strings.Contains(iv.RatioText, "lower end is 0") || !strings.Contains(iv.Witness, "no witness") {
		t.Errorf("interval %+v", iv)
	}
}
