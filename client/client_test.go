package client

import (
	"math"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

func logReg(t *testing.T, dim, classes int) *model.LogReg {
	t.Helper()
	m, err := model.NewLogReg(dim, classes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Params() {
		m.Params()[i] = 0.1 * float64(i%5-2)
	}
	return m
}

func runConfig(t *testing.T, m model.Model, rand, norm string, clip float64) protocol.RunConfig {
	t.Helper()
	cfg := protocol.RunConfig{Run: "test", Model: m.Name(), Dim: m.NumParams(), Randomizer: rand, ClipNorm: norm,
		Clip: clip, Eps0: 2, Population: 10, PerRound: 5, MinBatch: 5}
	if rand != protocol.RandomizerNone {
		r, err := protocol.NewRandomizer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ReportBytes = r.ReportSize()
	}
	return cfg
}

// TestReportUnbiased: the decoding of a client's report is an unbiased
// estimate of its clipped gradient, for every randomizer (the mean of
// 20,000 decoded reports is within 5 standard errors of the clipped
// gradient in every coordinate; seeded, so deterministic).
func TestReportUnbiased(t *testing.T) {
	ex := Example{X: []float64{1, -2, 0.5}, Label: 1}
	for _, tc := range []struct {
		rand, norm string
		clip       float64
	}{
		{"rinf", protocol.NormLInf, 0.05},
		{"r1", protocol.NormL1, 0.2},
		{"r2", protocol.NormL2, 0.1},
		{"privunit", protocol.NormL2, 0.1},
		{"r2", protocol.NormL1, 0.1}, // a smaller ball than the domain
	} {
		t.Run(tc.rand+"-"+tc.norm, func(t *testing.T) {
			m := logReg(t, 3, 2)
			cfg := runConfig(t, m, tc.rand, tc.norm, tc.clip)
			c, err := New(cfg, m, protocol.Plaintext{})
			if err != nil {
				t.Fatal(err)
			}
			round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}

			// The clipped gradient, computed independently.
			want := make([]float64, m.NumParams())
			m.NewWorker().Gradient(ex.X, ex.Label, want)
			Clip(want, tc.norm, tc.clip, false)

			dec, err := protocol.NewRandomizer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const n = 20000
			src := randomizer.NewSeededSource(42)
			sum := make([]float64, len(want))
			sumSq := make([]float64, len(want))
			one := make([]float64, len(want))
			for range n {
				rep, _, err := c.Report(round, ex, src)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep) != cfg.ReportBytes {
					t.Fatalf("report of %d bytes, run says %d", len(rep), cfg.ReportBytes)
				}
				clear(one)
				if err := randomizer.AddDecodedAll(dec, [][]byte{rep}, 1, one); err != nil {
					t.Fatal(err)
				}
				for i, v := range one {
					sum[i] += v
					sumSq[i] += v * v
				}
			}
			for i := range want {
				mean := sum[i] / n
				se := math.Sqrt((sumSq[i]/n - mean*mean) / n)
				if math.Abs(mean-want[i]) > 5*se+1e-12 {
					t.Errorf("coordinate %d: mean decoding %.5f, clipped gradient %.5f (standard error %.5f)", i, mean, want[i], se)
				}
			}
		})
	}
}

// TestClientLoadsRoundModel: a client with its own model computes at the
// round's parameters (not its own), and its report equals that of a client
// sharing the publisher's vector, given the same noise.
func TestClientLoadsRoundModel(t *testing.T) {
	server := logReg(t, 3, 2)
	own, err := model.NewLogReg(3, 2) // zero parameters
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, server, "r2", protocol.NormL2, 0.1)
	shared, err := New(cfg, server, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := New(cfg, own, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 3, Model: protocol.Model{Run: "test", Version: 7, Params: server.Params()}}
	ex := Example{X: []float64{0.3, 0.2, -1}, Label: 0}
	a, la, err := shared.Report(round, ex, randomizer.NewSeededSource(1))
	if err != nil {
		t.Fatal(err)
	}
	b, lb, err := remote.Report(round, ex, randomizer.NewSeededSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) || la != lb {
		t.Fatalf("client with its own model: report %x loss %g; sharing the server's: %x loss %g", b, lb, a, la)
	}
	for i, v := range own.Params() {
		if v != server.Params()[i] {
			t.Fatalf("parameter %d: client holds %g, round has %g", i, v, server.Params()[i])
		}
	}
}

// recordingSealer records the bindings it seals for and prefixes a byte.
type recordingSealer struct{ got []protocol.Binding }

func (s *recordingSealer) Seal(b protocol.Binding, r []byte) ([]byte, error) {
	s.got = append(s.got, b)
	return append([]byte{0xAA}, r...), nil
}
func (s *recordingSealer) Overhead() int { return 1 }

func TestReportSealedForRound(t *testing.T) {
	m := logReg(t, 3, 2)
	cfg := runConfig(t, m, "rinf", protocol.NormLInf, 0.1)
	cfg.ReportBytes++
	s := &recordingSealer{}
	c, err := New(cfg, m, s)
	if err != nil {
		t.Fatal(err)
	}
	round := &protocol.Round{ID: 9, Model: protocol.Model{Run: "test", Params: m.Params()}}
	rep, _, err := c.Report(round, Example{X: []float64{1, 2, 3}, Label: 1}, randomizer.NewSeededSource(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep) != cfg.ReportBytes || rep[0] != 0xAA || len(s.got) != 1 || s.got[0] != (protocol.Binding{Run: "test", Round: 9}) {
		t.Fatalf("report %x sealed for %v; want %d bytes sealed for {test 9}", rep, s.got, cfg.ReportBytes)
	}
}

func TestClientRefuses(t *testing.T) {
	m := logReg(t, 3, 2)
	private := runConfig(t, m, "rinf", protocol.NormLInf, 0.1)
	none := runConfig(t, m, protocol.RandomizerNone, protocol.NormL2, 1)
	round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Params: m.Params()}}
	ex := Example{X: []float64{1, 2, 3}, Label: 1}
	src := randomizer.NewSeededSource(1)
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"wrong model", func() error {
			other, _ := model.NewLogReg(4, 2)
			_, err := New(private, other, protocol.Plaintext{})
			return err
		}, "model"},
		{"report length", func() error {
			c := private
			c.ReportBytes++
			_, err := New(c, m, protocol.Plaintext{})
			return err
		}, "report-bytes"},
		{"no sealer", func() error { _, err := New(private, m, nil); return err }, "sealer"},
		{"invalid config", func() error { c := private; c.Eps0 = -1; _, err := New(c, m, protocol.Plaintext{}); return err }, "eps0"},
		{"clear gradient of a private run", func() error {
			c, _ := New(private, m, protocol.Plaintext{})
			_, _, err := c.ClippedGradient(round, ex)
			return err
		}, "must not leave"},
		{"report without randomizer", func() error {
			c, _ := New(none, m, nil)
			_, _, err := c.Report(round, ex, src)
			return err
		}, "none"},
		{"round of another run", func() error {
			c, _ := New(private, m, protocol.Plaintext{})
			r := *round
			r.Model.Run = "other"
			_, _, err := c.Report(&r, ex, src)
			return err
		}, "run"},
		{"round model of another size", func() error {
			c, _ := New(private, m, protocol.Plaintext{})
			r := *round
			r.Model.Params = r.Model.Params[:3]
			_, _, err := c.Report(&r, ex, src)
			return err
		}, "parameters"},
		{"example of another size", func() error {
			c, _ := New(private, m, protocol.Plaintext{})
			_, _, err := c.Report(round, Example{X: []float64{1}, Label: 0}, src)
			return err
		}, "does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestClientReloadsNewVector: a round message with the same version but a
// new parameter vector (a restarted server) is loaded again.
func TestClientReloadsNewVector(t *testing.T) {
	pub := logReg(t, 3, 2)
	own, err := model.NewLogReg(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := runConfig(t, pub, "rinf", protocol.NormLInf, 0.1)
	c, err := New(cfg, own, protocol.Plaintext{})
	if err != nil {
		t.Fatal(err)
	}
	ex := Example{X: []float64{1, 2, 3}, Label: 1}
	for _, scale := range []float64{1, -2} {
		p := make([]float64, pub.NumParams())
		for i := range p {
			p[i] = scale * pub.Params()[i]
		}
		round := &protocol.Round{ID: 1, Model: protocol.Model{Run: "test", Version: 4, Params: p}}
		if _, _, err := c.Report(round, ex, randomizer.NewSeededSource(1)); err != nil {
			t.Fatal(err)
		}
		for i, v := range own.Params() {
			if v != p[i] {
				t.Fatalf("scale %g: parameter %d is %g, round has %g", scale, i, v, p[i])
			}
		}
	}
}
