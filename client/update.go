package client

import (
	"errors"
	"fmt"
	"math"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// ReportUpdate is Report for a client whose update was computed elsewhere
// (a model.External run: the Python API's client function,
// docs/python-federated.md): update, of the run's dimension, takes the
// place of the gradient and goes through the same clip (Algorithm 1, line
// 6), the run's randomizer with noise drawn from noise, and the seal. An
// update of another length, or with a NaN or an infinite entry, is refused
// naming it (Clip would zero a non-finite gradient silently; a caller's
// bug is reported instead). update is not modified.
func (c *Client) ReportUpdate(r *protocol.Round, update []float64, noise randomizer.Source) ([]byte, error) {
	if c.rand == nil {
		return nil, errors.New("client: randomizer none sends clipped gradients, not reports")
	}
	if err := c.load(r); err != nil {
		return nil, err
	}
	if len(update) != c.cfg.Dim {
		return nil, fmt.Errorf("the client update function returned %d values; the model has %d parameters", len(update), c.cfg.Dim)
	}
	for i, x := range update {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("the client update function returned %g at index %d (an update must be finite)", x, i)
		}
	}
	copy(c.grad, update)
	Clip(c.grad, c.cfg.ClipNorm, c.cfg.Clip, c.cfg.ClampLinf)
	rep, err := c.rand.Randomize(c.grad, noise)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	sealed, err := c.sealer.Seal(r.Binding(), rep)
	if err != nil {
		return nil, fmt.Errorf("client: sealing: %w", err)
	}
	return sealed, nil
}
