package shuffler

import (
	"errors"
	"fmt"
	"sync"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Dummies supplies the dummy reports a Service puts in the place of sampled
// clients that did not deliver (ServiceConfig.Dummies).
type Dummies interface {
	// Dummy returns a dummy report for the given slot of round r: sealed
	// for r's binding, of the run's report length, indistinguishable from
	// a client's report to everyone but the shuffler.
	Dummy(r protocol.Round, slot int) ([]byte, error)
}

// DummyReports makes dummy reports: the run's own randomizer applied to
// the fixed public input x0 = 0 (the zero gradient, inside every clipping
// ball), with fresh noise, sealed with the sealer a client of the run uses
// (protocol.HPKESealer to the server's key: same length, same header form,
// a fresh random report id). Replacing a client that did not deliver by
// such a report keeps the round a complete k-of-n round for the
// accountant, under the assumptions of docs/proofs/dummy-reports.md:
// (A1) every dummy is a fresh, independent R(x0), which this type
// guarantees when its noise is crypto/rand (randomizer.NewCryptoSource,
// the only choice for a deployment); (A2) dropout independent of the
// other clients' data and of the sample; (A3) the server learns nothing
// that depends on dropout (no dummy count, no early release).
//
// A DummyReports is safe for concurrent use.
type DummyReports struct {
	mu     sync.Mutex
	rand   randomizer.Randomizer
	sealer protocol.Sealer
	noise  randomizer.Source
	x0     []float64
	size   int
}

// NewDummyReports returns the dummy maker of run sealing with sealer (the
// run's sealer for the round's key), drawing noise from noise (nil:
// crypto/rand). It refuses a run without reports to shuffle, a sealer
// whose reports would differ in length from the clients', and a
// randomizer whose domain does not hold the zero vector.
func NewDummyReports(run protocol.RunConfig, sealer protocol.Sealer, noise randomizer.Source) (*DummyReports, error) {
	if run.Randomizer == protocol.RandomizerNone {
		return nil, errors.New("dummy reports: randomizer none sends no reports")
	}
	if sealer == nil {
		return nil, errors.New("dummy reports: a sealer is required")
	}
	r, err := protocol.NewRandomizer(run)
	if err != nil {
		return nil, err
	}
	if got := r.ReportSize() + sealer.Overhead(); got > run.ReportBytes {
		return nil, fmt.Errorf("dummy reports: randomizer %s and sealer give %d bytes, more than the run's %d", run.Randomizer, got, run.ReportBytes)
	}
	if noise == nil {
		noise = randomizer.NewCryptoSource()
	}
	d := &DummyReports{rand: r, sealer: sealer, noise: noise, x0: make([]float64, run.Dim), size: run.ReportBytes}
	if _, err := d.Make(protocol.Round{Model: protocol.Model{Run: run.Run}}); err != nil {
		return nil, fmt.Errorf("dummy reports: randomizer %s and the run's sealer cannot make a report of x0 = 0: %w", run.Randomizer, err)
	}
	return d, nil
}

// Make returns a fresh dummy report sealed for round r.
func (d *DummyReports) Make(r protocol.Round) ([]byte, error) {
	d.mu.Lock()
	rep, err := d.rand.Randomize(d.x0, d.noise)
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("dummy report: %w", err)
	}
	sealed, err := d.sealer.Seal(r.Binding(), rep)
	if err != nil {
		return nil, fmt.Errorf("dummy report: sealing: %w", err)
	}
	if len(sealed) != d.size {
		return nil, fmt.Errorf("dummy report: sealed to %d bytes, the run's reports have %d (the sealer does not pad to the run's length)", len(sealed), d.size)
	}
	return sealed, nil
}

// Dummy implements Dummies: a fresh dummy for every slot.
func (d *DummyReports) Dummy(r protocol.Round, _ int) ([]byte, error) { return d.Make(r) }

// Precompute makes count dummy reports for round r ahead of its release,
// so that releasing a round costs the same time however many clients
// dropped out (the release time must not reveal the number of dummies;
// (A3)). It is constant work per round.
func (d *DummyReports) Precompute(r protocol.Round, count int) ([][]byte, error) {
	out := make([][]byte, count)
	for i := range out {
		var err error
		if out[i], err = d.Make(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
