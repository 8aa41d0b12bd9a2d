// Package client implements the client role of the shuffle model
// (NeurIPS'21 Algorithm 1, lines 4–8): a client holds one training
// example; given the round's model it computes the gradient of the loss on
// its example, clips it, randomizes it with the run's eps0-LDP randomizer
// and seals the report to the server. What leaves a client is the sealed
// report bytes, nothing else.
//
// A client may hold several examples and take several local steps
// (local.go): its update is then the pseudo-gradient of E full-batch
// gradient steps on its own examples (FedAvg's local training, McMahan et
// al. 2017, Algorithm 1, reported as a gradient), clipped as a whole and
// randomized exactly as a single gradient is.
//
// Randomness is injected: a deployment passes crypto/rand
// (randomizer.NewCryptoSource); a simulation may pass a seeded stream
// (SIMULATION ONLY: seeded noise is predictable from the seed, and
// predictable noise voids the LDP guarantee).
package client

import (
	"errors"
	"fmt"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Example is one client's data: its input and label.
type Example struct {
	X     []float64
	Label int
}

// Client computes clients' reports, one at a time: it holds the scratch of
// the computation (a model.Worker and a gradient buffer) and the run's
// randomizer and sealer, and takes each client's Example per call, so one
// Client serves any number of simulated clients in turn. A Client is not
// safe for concurrent use; distinct Clients are.
type Client struct {
	cfg    protocol.RunConfig
	m      model.Model
	worker model.Worker
	grad   []float64
	rand   randomizer.Randomizer // nil for protocol.RandomizerNone
	sealer protocol.Sealer
	// The Model whose parameters m holds: its version and vector.
	loaded    int64 // -1 before the first round
	loadedVec *float64
	// coord is the one-coordinate path of R_inf with the per-coordinate
	// clamp (coordinate.go); nil where it does not apply.
	coord *coordinatePath
	// local is the update over several examples or local steps
	// (local.go), its scratch allocated on first use.
	local localUpdate
	// one holds Report's example during the call (no allocation).
	one [1]Example
}

// New returns a Client for the run cfg computing with model m (of the run's
// architecture and dimension; its parameters are overwritten by every
// round's Model unless the round's Params are m's own vector, as when an
// in-process simulation shares one model between server and clients) and
// sealing with sealer (nil only for protocol.RandomizerNone).
func New(cfg protocol.RunConfig, m model.Model, sealer protocol.Sealer) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m.Name() != cfg.Model || m.NumParams() != cfg.Dim {
		return nil, fmt.Errorf("model: run uses %s with %d parameters, got %s with %d", cfg.Model, cfg.Dim, m.Name(), m.NumParams())
	}
	c := &Client{cfg: cfg, m: m, worker: m.NewWorker(), grad: make([]float64, cfg.Dim), sealer: sealer, loaded: -1}
	if _, external := m.(*model.External); cfg.LocalSteps > 1 && !external { // an external model's local steps are its caller's
		local, err := model.New(m.Name(), m.InputDim(), m.NumClasses())
		if err != nil {
			return nil, fmt.Errorf("client: the local model: %w", err)
		}
		c.local.model, c.local.worker = local, local.NewWorker()
	}
	if cfg.Randomizer == protocol.RandomizerNone {
		return c, nil
	}
	if sealer == nil {
		return nil, errors.New("client: a sealer is required for a private randomizer")
	}
	r, err := protocol.NewRandomizer(cfg)
	if err != nil {
		return nil, err
	}
	if got := r.ReportSize() + sealer.Overhead(); got != cfg.ReportBytes {
		return nil, fmt.Errorf("report-bytes: run says %d, randomizer %s and sealer give %d", cfg.ReportBytes, cfg.Randomizer, got)
	}
	c.rand = r
	c.coord = newCoordinatePath(cfg, r, c.worker)
	return c, nil
}

// load makes the worker compute at the round's parameters. It copies them
// once per round message (version and vector), not per client; a
// transport must not reuse one vector for other parameters under the same
// version.
func (c *Client) load(r *protocol.Round) error {
	p := r.Model.Params
	if r.Model.Run != c.cfg.Run {
		return fmt.Errorf("client: round of run %q, client of run %q", r.Model.Run, c.cfg.Run)
	}
	if len(p) != c.cfg.Dim {
		return fmt.Errorf("client: round model has %d parameters, run has %d", len(p), c.cfg.Dim)
	}
	own := c.m.Params()
	if &own[0] == &p[0] { // in process, sharing the server's vector
		return nil
	}
	if c.loaded != r.Model.Version || c.loadedVec != &p[0] {
		copy(own, p)
		c.loaded, c.loadedVec = r.Model.Version, &p[0]
	}
	return nil
}

// gradient writes the clipped update of the client holding exs at the
// round's model into c.grad and returns its loss: for one example and one
// step the gradient of its loss, else the local update (local.go).
func (c *Client) gradient(r *protocol.Round, exs []Example) (float64, error) {
	if err := c.prepare(r, exs); err != nil {
		return 0, err
	}
	var loss float64
	if len(exs) == 1 && c.cfg.LocalSteps <= 1 {
		loss = c.worker.Gradient(exs[0].X, exs[0].Label, c.grad)
	} else {
		loss = c.update(exs)
	}
	Clip(c.grad, c.cfg.ClipNorm, c.cfg.Clip, c.cfg.ClampLinf)
	return loss, nil
}

// prepare loads the round's model and checks that every example of exs
// (at least one) fits it.
func (c *Client) prepare(r *protocol.Round, exs []Example) error {
	if err := c.load(r); err != nil {
		return err
	}
	if len(exs) == 0 {
		return errors.New("client: no example: a client holds at least one")
	}
	for _, ex := range exs {
		if len(ex.X) != c.m.InputDim() || ex.Label < 0 || ex.Label >= c.m.NumClasses() {
			return fmt.Errorf("client: example of length %d with label %d does not fit model %s (%d inputs, %d classes)",
				len(ex.X), ex.Label, c.m.Name(), c.m.InputDim(), c.m.NumClasses())
		}
	}
	return nil
}

// Report is Algorithm 1, lines 5–8, for one client holding ex: the
// gradient of the loss at the round's model, clipped, randomized with
// noise drawn from noise, and sealed for the round. It also returns the
// loss on ex, which stays with the client (a simulation may log it; no
// transport carries it). With R_inf and the per-coordinate clamp it
// computes only the gradient coordinate R_inf reads, when the model can
// (coordinate.go): the same report, bit for bit, for the same noise.
func (c *Client) Report(r *protocol.Round, ex Example, noise randomizer.Source) (sealed []byte, loss float64, err error) {
	c.one[0] = ex
	sealed, loss, err = c.ReportExamples(r, c.one[:], noise)
	c.one[0] = Example{}
	return sealed, loss, err
}

// ReportExamples is Report for a client holding the examples exs (at least
// one): its update (the mean gradient of exs, or with RunConfig.LocalSteps
// E > 1 the pseudo-gradient of E local steps: local.go), clipped as a
// whole, randomized and sealed exactly as one gradient is; the loss is the
// mean loss of exs at the round's model. For one example and one step it
// is Report.
func (c *Client) ReportExamples(r *protocol.Round, exs []Example, noise randomizer.Source) (sealed []byte, loss float64, err error) {
	if c.rand == nil {
		return nil, 0, errors.New("client: randomizer none sends clipped gradients (ClippedGradient), not reports")
	}
	if c.coord != nil && len(exs) == 1 && c.cfg.LocalSteps <= 1 {
		return c.reportCoordinate(r, exs[0], noise)
	}
	if loss, err = c.gradient(r, exs); err != nil {
		return nil, 0, err
	}
	rep, err := c.rand.Randomize(c.grad, noise)
	if err != nil {
		return nil, loss, fmt.Errorf("client: %w", err)
	}
	sealed, err = c.sealer.Seal(r.Binding(), rep)
	if err != nil {
		return nil, loss, fmt.Errorf("client: sealing: %w", err)
	}
	return sealed, loss, nil
}

// ClippedGradient is the non-private baseline's client step
// (protocol.RandomizerNone): the clipped gradient of ex at the round's
// model, in the clear, and the loss. The slice is the Client's scratch,
// valid until its next call.
func (c *Client) ClippedGradient(r *protocol.Round, ex Example) ([]float64, float64, error) {
	c.one[0] = ex
	g, loss, err := c.ClippedExamples(r, c.one[:])
	c.one[0] = Example{}
	return g, loss, err
}

// ClippedExamples is ClippedGradient for a client holding the examples exs:
// its update (ReportExamples's), clipped, in the clear, and its loss.
func (c *Client) ClippedExamples(r *protocol.Round, exs []Example) ([]float64, float64, error) {
	if c.rand != nil {
		return nil, 0, fmt.Errorf("client: randomizer %s: the clear gradient must not leave the client", c.cfg.Randomizer)
	}
	loss, err := c.gradient(r, exs)
	return c.grad, loss, err
}
