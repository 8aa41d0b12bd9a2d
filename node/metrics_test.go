package node

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/telemetry"
	"github.com/shuffledp/shuffledp/training"
)

// TestReasonLabels: every rejection reason of the shuffler node has its
// own label in telemetry's closed set (none folds into "other").
func TestReasonLabels(t *testing.T) {
	seen := map[telemetry.Reason]Reason{}
	for _, r := range Reasons {
		l := r.Label()
		if l == telemetry.ReasonOther {
			t.Errorf("reason %s has no metrics label", r)
		}
		if string(l) != string(r) {
			t.Errorf("reason %s is labelled %s", r, l)
		}
		if prev, ok := seen[l]; ok {
			t.Errorf("reasons %s and %s share label %s", prev, r, l)
		}
		seen[l] = r
		found := false
		for _, a := range telemetry.ReportReasons {
			found = found || a == l
		}
		if !found {
			t.Errorf("label %s is not in telemetry.ReportReasons", l)
		}
	}
	if Reason("client-chosen").Label() != telemetry.ReasonOther {
		t.Error("an unknown reason is not labelled other")
	}
}

// scrape serves reg over HTTP on a loopback port, as `--metrics-listen`
// does, fetches /metrics once and parses the text exposition into
// "name{labels}" -> value.
func scrape(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- telemetry.Serve(ctx, ln, reg) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("telemetry.Serve: %v", err)
		}
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("exposition line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetricsMatchStatsAndLedger runs two rounds (20 clients, 5 a round)
// with both nodes' metrics on, one forged credential on the way, scrapes
// /metrics over HTTP and checks every counter against node.Stats, the
// client pool and the shuffler's durable ledger.
func TestMetricsMatchStatsAndLedger(t *testing.T) {
	ctx := context.Background()
	store := ledger.NewMemoryStore()
	shReg, srvReg := telemetry.NewRegistry(), telemetry.NewRegistry()
	shM, err := telemetry.NewShufflerMetrics(shReg)
	if err != nil {
		t.Fatal(err)
	}
	srvM, err := telemetry.NewServerMetrics(srvReg)
	if err != nil {
		t.Fatal(err)
	}
	sh, srvAddr, shAddr, pkiDir, done := startNodesWith(t, store, nodeOptions{
		shuffler: func(c *ShufflerConfig) { c.Metrics = shM },
		server:   func(c *ServerConfig) { c.Metrics = srvM },
	})
	tc, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
	if err != nil {
		t.Fatal(err)
	}
	enr, err := pki.LoadEnroller(pkiDir)
	if err != nil {
		t.Fatal(err)
	}
	// A forged credential: client 3 with client 4's token.
	conn, err := dial(shAddr, tc, pki.RoleShuffler)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sconn, err := dial(srvAddr, tc, pki.RoleServer)
	if err != nil {
		t.Fatal(err)
	}
	defer sconn.Close()
	spec, err := pb.NewServerClient(sconn).GetRun(ctx, &pb.GetRunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := workCall(asClient(ctx, enr, 0), pb.NewShufflerClient(conn), &pb.WorkRequest{Run: spec.Config.Run,
		Clients: []*pb.ClientCredential{{Client: 3, Token: enr.Token(4)}}})
	if err == nil {
		_, err = bad.Recv()
	}
	if err == nil {
		t.Fatal("forged credential accepted")
	}

	creds, err := enr.Enrol(0, 20)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tc, Credentials: creds, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("server: %v", err)
	}

	st := sh.Stats()
	sum, err := ledger.Summarize(ctx, store, spec.Config.Run, spec.Delta, false)
	if err != nil {
		t.Fatal(err)
	}
	if st.Released != 2 || sum.Rounds != 2 {
		t.Fatalf("stats %+v, ledger %d rounds: want 2 released rounds", st, sum.Rounds)
	}
	m := scrape(t, shReg)
	want := map[string]float64{
		"shuffledp_shuffler_rounds_released_total":  float64(st.Released),
		"shuffledp_shuffler_reports_accepted_total": float64(st.Accepted),
		"shuffledp_shuffler_batch_size_sum":         float64(st.Forwarded),
		"shuffledp_shuffler_batch_size_count":       float64(st.Released),
		"shuffledp_shuffler_round_seconds_count":    float64(st.Released),
		"shuffledp_shuffler_ledger_rounds":          float64(sum.Rounds),
		"shuffledp_shuffler_epsilon_spent":          sum.Epsilon,
	}
	var discarded float64
	for _, r := range telemetry.RoundReasons {
		discarded += m[fmt.Sprintf(`shuffledp_shuffler_rounds_discarded_total{reason="%s"}`, r)]
	}
	if discarded != float64(st.Discarded) {
		t.Errorf("rounds discarded: metrics %g, stats %d", discarded, st.Discarded)
	}
	for _, r := range Reasons {
		want[fmt.Sprintf(`shuffledp_shuffler_reports_rejected_total{reason="%s"}`, r.Label())] = float64(st.Rejected[r])
	}
	if st.Rejected[RejectUnauthenticated] != 1 {
		t.Errorf("unauthenticated rejections %d, want 1", st.Rejected[RejectUnauthenticated])
	}
	// Server: two batches aggregated, every forwarded report opened, the
	// last evaluation's accuracy exported.
	sm := scrape(t, srvReg)
	for k, v := range map[string]float64{
		"shuffledp_server_rounds_total":         float64(st.Released),
		"shuffledp_server_reports_opened_total": float64(st.Forwarded),
		"shuffledp_server_batch_size_sum":       float64(st.Forwarded),
		"shuffledp_server_round_seconds_count":  float64(st.Released),
	} {
		want["server "+k] = v
		m["server "+k] = sm[k]
	}
	for k, v := range want {
		got, ok := m[k]
		if !ok {
			t.Errorf("exposition lacks %s", k)
			continue
		}
		if got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	acc, ok := sm[`shuffledp_server_test_accuracy{params="raw"}`]
	if !ok || acc < 0 || acc > 1 {
		t.Errorf("server test accuracy %v (present %v)", acc, ok)
	}
	if pool.Reports() != st.Accepted {
		t.Errorf("pool %d reports accepted, shuffler %d", pool.Reports(), st.Accepted)
	}
}

// TestShufflerOwnsBudget: the shuffler refuses a run whose specification
// (from the untrusted server) has another delta or a higher target epsilon
// than its own, naming the flag; a lower target of the server's is kept.
func TestShufflerOwnsBudget(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		srvDelta, srvTarget  float64
		ownDelta, ownTarget  float64
		wantErr, wantInError string
	}{
		{name: "delta differs", srvDelta: 1e-5, ownDelta: 1e-6, wantErr: "delta", wantInError: "--delta is 1e-06"},
		{name: "server target above", srvDelta: 1e-5, srvTarget: 50, ownDelta: 1e-5, ownTarget: 10, wantErr: "target-epsilon", wantInError: "target epsilon 50"},
		{name: "server without target", srvDelta: 1e-5, ownDelta: 1e-5, ownTarget: 10, wantErr: "target-epsilon", wantInError: "no target epsilon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errc := make(chan error, 1)
			startNodesWith(t, ledger.NewMemoryStore(), nodeOptions{
				train:       func(c *training.Config) { c.Delta, c.TargetEpsilon = tc.srvDelta, tc.srvTarget },
				shuffler:    func(c *ShufflerConfig) { c.Delta, c.TargetEpsilon = tc.ownDelta, tc.ownTarget },
				shufflerErr: errc,
			})
			err := <-errc
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr+":") || !strings.Contains(err.Error(), tc.wantInError) {
				t.Fatalf("Run: %v; want an error naming %s and %q", err, tc.wantErr, tc.wantInError)
			}
		})
	}
	s := &Shuffler{cfg: ShufflerConfig{Delta: 1e-5, TargetEpsilon: 10}}
	for _, c := range []struct{ server, want float64 }{{3, 3}, {10, 10}} {
		got, err := s.budgetParams(&pb.RunSpec{Delta: 1e-5, TargetEpsilon: c.server})
		if err != nil || got != c.want {
			t.Errorf("server target %g: ledger target %g, %v; want %g", c.server, got, err, c.want)
		}
	}
	s.cfg.TargetEpsilon = 0
	if got, err := s.budgetParams(&pb.RunSpec{Delta: 1e-5, TargetEpsilon: 4}); err != nil || got != 4 {
		t.Errorf("no own target, server's 4: ledger target %g, %v; want 4", got, err)
	}
	for _, bad := range []ShufflerConfig{{Delta: 0}, {Delta: 1}, {Delta: 1e-5, TargetEpsilon: -1}} {
		bad.TLS, bad.ServerTLS, bad.Enroller, bad.Store = tlsStub(), tlsStub(), &pki.Enroller{}, ledger.NewMemoryStore()
		_, err := NewShuffler(bad)
		name := "delta"
		if bad.TargetEpsilon < 0 {
			name = "target-epsilon"
		}
		if err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("NewShuffler(delta %g, target %g): %v; want an error naming %s", bad.Delta, bad.TargetEpsilon, err, name)
		}
	}
}

// tlsStub is a listener configuration that passes NewServer's and
// NewShuffler's check (it refuses every peer).
func tlsStub() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, ClientAuth: tls.RequestClientCert, ClientCAs: x509.NewCertPool(),
		VerifyConnection: func(tls.ConnectionState) error { return errors.New("stub") }}
}

// TestShufflerRefusesAnotherBound: the shuffler's ledger is the budget's
// authority, so a server's run of another bound (best against the opt-in
// best-conjecture, either way) is refused naming --bound; an older server
// publishing none is a best run.
func TestShufflerRefusesAnotherBound(t *testing.T) {
	for _, c := range []struct {
		own, server string
		ok          bool
	}{
		{"best", "", true}, {"", "best", true}, {"best-conjecture", "best-conjecture", true},
		{"best", "best-conjecture", false}, {"best-conjecture", "", false},
	} {
		s := &Shuffler{cfg: ShufflerConfig{Delta: 1e-5, Bound: c.own}}
		_, err := s.budgetParams(&pb.RunSpec{Delta: 1e-5, Bound: c.server})
		if c.ok != (err == nil) || (err != nil && (!strings.HasPrefix(err.Error(), "bound:") || !strings.Contains(err.Error(), "--bound"))) {
			t.Errorf("own bound %q, server's %q: %v", c.own, c.server, err)
		}
	}
}
