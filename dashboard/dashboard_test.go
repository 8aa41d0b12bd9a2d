package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/protocol"
)

func fp(x float64) *float64 { return &x }

// TestServerBoardHoldsNoShufflerFigure feeds a server's page everything it
// takes and checks that its state, as the page receives it, holds no dummy
// count, no connected-clients figure and no client identity.
func TestServerBoardHoldsNoShufflerFigure(t *testing.T) {
	b := NewServer(Config{Fields: RunFields(protocol.RunConfig{Run: "r1", Model: "logreg", Dim: 10, Randomizer: "rinf", Eps0: 2,
		ClipNorm: "l2", Clip: 1, Population: 60, PerRound: 10}), Planned: 18, Delta: 1e-5, TargetEpsilon: 8})
	lr := int64(6)
	b.RoundApplied(1, 10, 0, 20*time.Millisecond)
	b.RoundApplied(2, 10, 2, 30*time.Millisecond)
	b.Evaluated(metrics.Record{Round: 2, TestAccuracy: fp(0.5), Epsilon: fp(1.25), Delta: 1e-5, LedgerRounds: &lr})
	b.Error("batch refused: mixed key ids")
	b.Status("stopped (epochs) after round 2")
	data, _ := b.b.snapshot()
	for _, banned := range []string{"dumm", "connected", "sampled", "client_id"} {
		if strings.Contains(strings.ToLower(string(data)), banned) {
			t.Errorf("server state mentions %q: %s", banned, data)
		}
	}
	st := b.State()
	if st.Released != 2 || st.Planned != 18 || *st.Epsilon != 1.25 || st.LedgerRounds != 6 || st.Delta != 1e-5 || st.TargetEpsilon != 8 {
		t.Errorf("state %+v", st)
	}
	if len(st.Rounds) != 2 || st.Rounds[1].Seconds != 0.03 || st.Rounds[1].Reports != 10 || len(st.Evals) != 1 {
		t.Errorf("series: %+v %+v", st.Rounds, st.Evals)
	}
	// The refused reports of round 2 and the refused batch are errors.
	if len(st.Errors) != 2 || !strings.Contains(st.Errors[0].Message, "2 reports did not open") {
		t.Errorf("errors: %+v", st.Errors)
	}
}

// TestShufflerBoard checks the shuffler's figures: per-round dummies, their
// total, the connected clients and the ledger's epsilon after each debit.
func TestShufflerBoard(t *testing.T) {
	b := NewShuffler(Config{Delta: 1e-5})
	b.Ledger(0.5, 3) // resumed: 3 rounds on the ledger
	b.Configure([]Field{{"run", "r1"}}, 4)
	b.Released(10, 2, 58, time.Second, 0.75, 4)
	b.Released(10, 0, 60, time.Second, 0.9, 5)
	b.Connected(59)
	st := b.State()
	if *st.DummiesTotal != 2 || *st.Connected != 59 || st.Released != 5 || *st.Epsilon != 0.9 || st.TargetEpsilon != 4 {
		t.Errorf("state %+v", st)
	}
	if r := st.Rounds[0]; r.Round != 4 || *r.Dummies != 2 || *r.Connected != 58 || *r.Epsilon != 0.75 {
		t.Errorf("round %+v", r)
	}
}

// TestNonFiniteEpsilon: JSON cannot carry Inf; the page shows the epsilon
// as unknown and says why among the errors, never as a number.
func TestNonFiniteEpsilon(t *testing.T) {
	b := NewShuffler(Config{})
	b.Released(10, 0, 10, time.Second, math.Inf(1), 1)
	st := b.State()
	if st.Epsilon != nil || len(st.Errors) != 1 || !strings.Contains(st.Errors[0].Message, "infinite") {
		t.Errorf("state %+v", st)
	}
	s := NewServer(Config{})
	s.Evaluated(metrics.Record{Round: 1, Epsilon: fp(math.Inf(1)), TestAccuracy: fp(math.NaN())})
	if st := s.State(); st.Epsilon != nil || st.Evals[0].Accuracy != nil || len(st.Errors) != 1 {
		t.Errorf("state %+v", st)
	}
}

// TestBounded: series are thinned past MaxPoints (the first and the last
// point kept), errors past MaxErrors dropped oldest first, and a repeated
// error counted rather than stored again.
func TestBounded(t *testing.T) {
	b := NewServer(Config{})
	for r := 1; r <= 5*MaxPoints; r++ {
		b.RoundApplied(r, 1, 0, time.Millisecond)
	}
	st := b.State()
	if n := len(st.Rounds); n > MaxPoints || n < MaxPoints/2 || st.Rounds[0].Round != 1 || st.Rounds[n-1].Round != 5*MaxPoints {
		t.Errorf("%d points, first %d, last %d", n, st.Rounds[0].Round, st.Rounds[n-1].Round)
	}
	for i := 0; i < 3*MaxErrors; i++ {
		b.Error("same")
		b.Error(strings.Repeat("x", i%7+1) + string(rune('a'+i%26)))
	}
	b.Error("last")
	b.Error("last")
	st = b.State()
	if len(st.Errors) != MaxErrors || st.Errors[MaxErrors-1].Message != "last" || st.Errors[MaxErrors-1].Count != 2 {
		t.Errorf("errors: %d, last %+v", len(st.Errors), st.Errors[len(st.Errors)-1])
	}
}

func TestNilBoardsIgnoreCalls(t *testing.T) {
	var s *ServerBoard
	s.RoundApplied(1, 1, 1, time.Second)
	s.Evaluated(metrics.Record{})
	s.Error("x")
	s.Status("x")
	s.Configure(Config{})
	s.Close()
	var h *ShufflerBoard
	h.Released(1, 1, 1, time.Second, 1, 1)
	h.Ledger(1, 1)
	h.Configure(nil, 1)
	h.Connected(1)
	h.Error("x")
	h.Status("x")
	h.Close()
}

func TestCheckOperatorAddr(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		exposed bool
		ok      bool
	}{
		{"", false, true},
		{"127.0.0.1:8080", false, true},
		{"127.3.4.5:0", false, true},
		{"[::1]:8080", false, true},
		{"localhost:8080", false, true},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"10.0.0.5:8080", false, false},
		{"[::]:8080", false, false},
		{"monitor.example:9090", false, false},
		{"10.0.0.5:8080", true, true},
		{":8080", true, true},
		{"no-port", false, false},
	} {
		err := CheckOperatorAddr(tc.addr, "--http", "--expose-dummy-counts", tc.exposed)
		if (err == nil) != tc.ok {
			t.Errorf("CheckOperatorAddr(%q, exposed=%v) = %v, want ok=%v", tc.addr, tc.exposed, err, tc.ok)
		}
		if err != nil && tc.addr != "no-port" && (!strings.Contains(err.Error(), "--expose-dummy-counts") || !strings.Contains(err.Error(), "--http")) {
			t.Errorf("error does not name the flags: %v", err)
		}
	}
}

// TestAssetsSelfContained: the page, its script and its style sheet load
// nothing from another origin, and every answer forbids it (CSP).
func TestAssetsSelfContained(t *testing.T) {
	ts := httptest.NewServer(NewServer(Config{}).Handler())
	defer ts.Close()
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|@import|url\(\s*["']?(https?:)?//`)
	for _, p := range []string{"/", "/app.js", "/style.css", "/state"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s", p, resp.Status)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if m := external.Find(body); m != nil {
			t.Errorf("%s loads from another origin: %q", p, m)
		}
	}
	for _, p := range []string{"/nope", "/assets/index.html"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("%s: %s, want 404", p, resp.Status)
		}
	}
	resp, err := http.Post(ts.URL+"/state", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %s", resp.Status)
	}
}

// readEvents reads server-sent events until EOF: their names and data.
func readEvents(t *testing.T, r io.Reader, max int) (names []string, data []string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var name string
	for sc.Scan() && len(names) < max {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names, data = append(names, name), append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	return names, data
}

// TestServeStreamsLastStateAtClose serves a page, follows its events, and
// stops the server: the stream's last state holds the last update, then an
// "end" event, and Serve returns.
func TestServeStreamsLastStateAtClose(t *testing.T) {
	b := NewServer(Config{Planned: 3})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, b) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	got := make(chan [2][]string, 1)
	go func() { n, d := readEvents(t, resp.Body, 100); got <- [2][]string{n, d} }()
	for r := 1; r <= 3; r++ {
		b.RoundApplied(r, 10, 0, time.Millisecond)
	}
	b.Status("stopped (epochs) after round 3")
	cancel()
	var ev [2][]string
	select {
	case ev = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("stream did not end after the server stopped")
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	names, data := ev[0], ev[1]
	if len(names) < 3 || names[len(names)-1] != "end" || names[0] != "state" {
		t.Fatalf("events %v", names)
	}
	var last State
	if err := json.Unmarshal([]byte(data[len(data)-2]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Released != 3 || last.Status != "stopped (epochs) after round 3" || len(last.Rounds) != 3 {
		t.Errorf("last state: %+v", last)
	}
}

// TestStreamLimit: past MaxStreams open streams, one more is refused with
// 503 (an unauthenticated peer cannot open streams without bound).
func TestStreamLimit(t *testing.T) {
	b := NewShuffler(Config{})
	ts := httptest.NewServer(b.Handler())
	defer ts.Close()
	defer b.Close() // ends the open streams before ts.Close waits for them
	var bodies []io.Closer
	defer func() {
		for _, c := range bodies {
			c.Close()
		}
	}()
	for i := 0; i < MaxStreams; i++ {
		resp, err := http.Get(ts.URL + "/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Fatalf("stream %d: %s", i, resp.Status)
		}
		bodies = append(bodies, resp.Body)
	}
	resp, err := http.Get(ts.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("stream %d: %s, want 503", MaxStreams+1, resp.Status)
	}
}

// TestEpsilonTextRoundsUp: the page shows the ledger's epsilon as every
// table prints it, rounded up at six digits (toPrecision(6) printed
// 0.208173 for 0.2081731, below the guarantee).
func TestEpsilonTextRoundsUp(t *testing.T) {
	b := NewShuffler(Config{Delta: 1e-5})
	b.Released(10, 0, 60, time.Second, 0.2081731, 1)
	if st := b.State(); st.EpsilonText != "0.208174" || st.Rounds[0].EpsilonText != "0.208174" {
		t.Errorf("shuffler: %q, round %q, want 0.208174", st.EpsilonText, st.Rounds[0].EpsilonText)
	}
	s := NewServer(Config{Delta: 1e-5})
	s.Evaluated(metrics.Record{Round: 1, Epsilon: fp(0.2081731), Delta: 1e-5})
	if st := s.State(); st.EpsilonText != "0.208174" || st.Evals[0].EpsilonText != "0.208174" {
		t.Errorf("server: %q, eval %q, want 0.208174", st.EpsilonText, st.Evals[0].EpsilonText)
	}
}
