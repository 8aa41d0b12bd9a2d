package node

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shuffledp/shuffledp/event"
	"github.com/shuffledp/shuffledp/ledger"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/pki"
	pb "github.com/shuffledp/shuffledp/proto/shuffledp/v1"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/training"
)

// TestGaussianOverTheNetwork runs randomizer gaussian with k of n sampled
// and with shuffled check-in through a server node, a shuffler node and a
// ClientPool (crypto/rand noise; the shuffler's check-in coins), and checks
// that every debit on the shuffler's ledger is the event the accountant
// prices for that mechanism: subsampled-shuffle-gaussian (n, k = the batch,
// sigma) and checkin-gaussian (n, rate, sigma), and that every batch holds
// one report per client drawn: the pools' reports plus the shuffler's
// dummies. Under check-in with dropout (one pool's clients never deliver,
// the other's with probability 1/2) the selected clients that did not
// deliver are padded with dummies: the rounds are released and debited as
// check-in rounds, and the batches are exactly the pools' reports plus the
// dummies.
func TestGaussianOverTheNetwork(t *testing.T) {
	const sigma = 4
	for _, tc := range []struct {
		name    string
		train   func(*training.Config)
		want    func(reports int) event.Event
		rounds  int
		dropout [2]float64
	}{
		{"gaussian k of n", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerGaussian, 0, sigma, 1
		}, func(k int) event.Event {
			return event.Event{Mechanism: event.SubsampledShuffleGaussian, N: 20, K: int64(k), Sigma: sigma, Adjacency: event.AdjacencyReplaceOne}
		}, 2, [2]float64{}},
		{"gaussian check-in, zero-out", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerGaussian, 0, sigma, 1
			c.Participation, c.Rate, c.Sample = training.ParticipationCheckIn, 0.9, 0
			c.Adjacency = event.AdjacencyZeroOut
			c.Epochs = 1.8 // expected batch 18: 2 rounds
		}, func(int) event.Event {
			return event.Event{Mechanism: event.CheckinGaussian, N: 20, Rate: 0.9, Sigma: sigma, Adjacency: event.AdjacencyZeroOut}
		}, 2, [2]float64{}},
		{"gaussian check-in, dropout", func(c *training.Config) {
			c.Randomizer, c.Eps0, c.Sigma, c.Clip = training.RandomizerGaussian, 0, sigma, 1
			c.Participation, c.Rate, c.Sample = training.ParticipationCheckIn, 0.9, 0
			c.Epochs = 1.8
		}, func(int) event.Event {
			return event.Event{Mechanism: event.CheckinGaussian, N: 20, Rate: 0.9, Sigma: sigma, Adjacency: event.AdjacencyReplaceOne}
		}, 2, [2]float64{1, 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := ledger.NewMemoryStore()
			var probe training.Config
			tc.train(&probe)
			// The shuffler pins the relation it debits for (its
			// --adjacency): a zero-out run needs a zero-out shuffler.
			shufflerAdj := func(c *ShufflerConfig) {
				c.Adjacency = probe.Adjacency
				if tc.dropout != [2]float64{} { // released at a short deadline
					c.RoundTimeout, c.ReleaseWhenComplete = 400*time.Millisecond, false
				}
			}
			sh, srvAddr, shAddr, pkiDir, done := startNodesWith(t, store, nodeOptions{train: tc.train, shuffler: shufflerAdj})
			tlsc, err := pki.ClientTLS(filepath.Join(pkiDir, pki.RoleClient), pki.RoleClient)
			if err != nil {
				t.Fatal(err)
			}
			enr, err := pki.LoadEnroller(pkiDir)
			if err != nil {
				t.Fatal(err)
			}
			// Two pools.
			errs := make(chan error, 2)
			var pools []*ClientPool
			for i, r := range [][2]int64{{0, 7}, {7, 20}} {
				creds, err := enr.Enrol(r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				pool, err := NewClientPool(ClientPoolConfig{Shuffler: shAddr, Server: srvAddr, TLS: tlsc, Credentials: creds, Workers: 1,
					Dropout: tc.dropout[i]})
				if err != nil {
					t.Fatal(err)
				}
				pools = append(pools, pool)
				go func() { errs <- pool.Run(ctx) }()
			}
			for range pools {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatalf("server: %v", err)
			}
			runs, err := store.Runs(ctx)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs %v, %v", runs, err)
			}
			entries, err := store.Entries(ctx, runs[0])
			if err != nil {
				t.Fatal(err)
			}
			st := sh.Stats()
			if len(entries) != tc.rounds || st.Released != int64(tc.rounds) || st.Discarded != 0 {
				t.Fatalf("%d ledger entries, stats %+v; want %d rounds released", len(entries), st, tc.rounds)
			}
			var reports int64
			for _, e := range entries {
				if e.Event != tc.want(e.Reports) {
					t.Errorf("round %d: event %+v, want %+v", e.Round, e.Event, tc.want(e.Reports))
				}
				reports += int64(e.Reports)
			}
			if got := pools[0].Reports() + pools[1].Reports(); got+st.Dummies != reports || reports != st.Forwarded {
				t.Errorf("pools %d reports accepted, %d dummies, ledger %d, forwarded %d", got, st.Dummies, reports, st.Forwarded)
			}
			if tc.dropout[0] == 1 && st.Dummies < int64(pools[0].Dropped()) {
				t.Errorf("%d dummies for %d clients that dropped out", st.Dummies, pools[0].Dropped())
			}
			if tc.dropout[0] == 1 && (pools[0].Reports() != 0 || pools[0].Dropped() == 0) {
				t.Errorf("pool 0 with dropout 1: %d reports, %d dropped", pools[0].Reports(), pools[0].Dropped())
			}
		})
	}
}

// TestCentralGaussianRefused: central-gaussian stays off the network (its
// clients would send raw gradients to the untrusted server), by name.
func TestCentralGaussianRefused(t *testing.T) {
	lr, _ := training.ParseLRSchedule("0.3")
	m, _ := model.New("logreg", 784, 10)
	_, err := newServerLoop(context.Background(), training.Config{Clients: 20, Sample: 5,
		Randomizer: training.RandomizerCentralGaussian, Sigma: 1, Clip: 1, Delta: 1e-5, Epochs: 1, LR: lr},
		ServerConfig{Dir: t.TempDir(), Dataset: Dataset{Name: "synthetic"}, TLS: tlsStub()}, m, nil)
	if err == nil || !strings.Contains(err.Error(), "central-gaussian") || !strings.Contains(err.Error(), "raw gradient") {
		t.Fatalf("NewServer(central-gaussian): %v", err)
	}
}

// TestSameRunConfig: the client pool's check that the configuration the
// shuffler debits for is the server's names the first differing field.
func TestSameRunConfig(t *testing.T) {
	base := runConfigToPB(protocol.RunConfig{Run: "r", Randomizer: "rinf", Eps0: 2, Population: 20, PerRound: 5, Dim: 7})
	if d := sameRunConfig(base, runConfigToPB(protocol.RunConfig{Run: "r", Randomizer: "rinf", Eps0: 2, Population: 20, PerRound: 5, Dim: 7})); d != "" {
		t.Errorf("equal configs differ in %s", d)
	}
	for _, tc := range []struct {
		change func(*pb.RunConfig)
		field  string
	}{
		{func(c *pb.RunConfig) { c.Eps0 = 8 }, "eps0"},
		{func(c *pb.RunConfig) { c.PerRound = 4 }, "per_round"},
		{func(c *pb.RunConfig) { c.Randomizer = "r1" }, "randomizer"},
		{func(c *pb.RunConfig) { c.Sigma = 0.5 }, "sigma"},
		{func(c *pb.RunConfig) { c.Participation, c.Rate = "checkin", 0.5 }, "participation"},
		{func(c *pb.RunConfig) { c.Adjacency = "zero-out" }, "adjacency"},
	} {
		other := runConfigToPB(protocol.RunConfig{Run: "r", Randomizer: "rinf", Eps0: 2, Population: 20, PerRound: 5, Dim: 7})
		tc.change(other)
		if d := sameRunConfig(base, other); !strings.HasPrefix(d, tc.field+" ") {
			t.Errorf("config changed in %s: reported %q", tc.field, d)
		}
	}
	if d := sameRunConfig(base, nil); !strings.HasPrefix(d, "config") {
		t.Errorf("no relayed config: %q", d)
	}
}

// TestRunConfigAdjacency: a Gaussian run configuration must name a valid
// adjacency for the event the shuffler debits (a server that names none is
// older than the node); the other randomizers carry none.
func TestRunConfigAdjacency(t *testing.T) {
	gauss := protocol.RunConfig{Run: "r", Model: "logreg", Dim: 7, Randomizer: protocol.RandomizerGaussian, ClipNorm: protocol.NormL2,
		Clip: 1, Sigma: 2, Population: 20, PerRound: 5, MinBatch: 1, ReportBytes: 100}
	for _, tc := range []struct {
		adjacency string
		ok        bool
	}{
		{event.AdjacencyReplaceOne, true},
		{event.AdjacencyZeroOut, true},
		{"", false},
		{event.AdjacencyAddRemove, false},
		{"swap", false},
	} {
		c := gauss
		c.Adjacency = tc.adjacency
		got, err := runConfigFromPB(runConfigToPB(c))
		switch {
		case tc.ok && (err != nil || got != c):
			t.Errorf("adjacency %q: %+v, %v", tc.adjacency, got, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "adjacency")):
			t.Errorf("adjacency %q: error %v, want one naming adjacency", tc.adjacency, err)
		}
	}
	ldp := gauss
	ldp.Randomizer, ldp.Sigma, ldp.Eps0, ldp.Adjacency = "rinf", 0, 1, event.AdjacencyReplaceOne
	if _, err := runConfigFromPB(runConfigToPB(ldp)); err == nil || !strings.Contains(err.Error(), "adjacency") {
		t.Errorf("rinf with an adjacency: %v, want an error naming adjacency", err)
	}
}
