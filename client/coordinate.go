package client

import (
	"fmt"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// coordinatePath computes a client's R_inf report from one coordinate of
// its gradient, when the run clamps coordinate-wise (ClampLinf) and the
// model's worker can compute a single coordinate (model.CoordinateWorker).
//
// Why the report is the same, bit for bit and in distribution: Report
// computes g = ∇L, clamps it, x = ClipLinf(g, C), and randomizes x with
// R_inf, which draws j from the noise stream, then reads only x_j and
// draws its sign coin (randomizer.RInf.DrawIndex). ClipLinf maps each
// coordinate on its own, x_j = min(max(g_j, −C), C), unless g has a NaN
// entry, when it zeroes all of them. This path draws j first from the same
// stream, asks the worker for g_j alone — bit-identical to Gradient's
// (model.CoordinateWorker) and certified only when every coordinate of
// Gradient's g is finite, so that no NaN can zero the vector — clamps it
// the same way and finishes R_inf with x_j (RandomizeCoordinate). Where
// the worker cannot certify finiteness, it computes the whole gradient
// and clips it as Report does, and reads x_j from it. Either way the
// report, the noise consumed and the loss are those of Report's full
// path, so privacy, semantics and a seeded run's results are unchanged.
// With ScaleLinf (no clamp) x_j depends on max|g|, so the full path is
// kept there.
type coordinatePath struct {
	rinf   *randomizer.RInf
	worker model.CoordinateWorker
}

// newCoordinatePath returns the path for a run with randomizer r and a
// client computing with worker, or nil where it does not apply.
func newCoordinatePath(cfg protocol.RunConfig, r randomizer.Randomizer, worker model.Worker) *coordinatePath {
	ri, ok := r.(*randomizer.RInf)
	cw, okw := worker.(model.CoordinateWorker)
	if !ok || !okw || !cfg.ClampLinf || ri.Radius() != cfg.Clip {
		return nil
	}
	return &coordinatePath{rinf: ri, worker: cw}
}

// clampCoordinate is ClipLinf's map of one finite coordinate.
func clampCoordinate(v, c float64) float64 {
	if v > c {
		return c
	} else if v < -c {
		return -c
	}
	return v
}

// reportCoordinate is Report through the coordinate path.
func (c *Client) reportCoordinate(r *protocol.Round, ex Example, noise randomizer.Source) (sealed []byte, loss float64, err error) {
	c.one[0] = ex
	err = c.prepare(r, c.one[:])
	c.one[0] = Example{}
	if err != nil {
		return nil, 0, err
	}
	j := c.coord.rinf.DrawIndex(noise)
	gj, loss, certified := c.coord.worker.GradientCoordinate(ex.X, ex.Label, j)
	if certified {
		gj = clampCoordinate(gj, c.cfg.Clip)
	} else {
		loss = c.worker.Gradient(ex.X, ex.Label, c.grad)
		Clip(c.grad, c.cfg.ClipNorm, c.cfg.Clip, c.cfg.ClampLinf)
		gj = c.grad[j]
	}
	rep, err := c.coord.rinf.RandomizeCoordinate(j, gj, noise)
	if err != nil {
		return nil, loss, fmt.Errorf("client: %w", err)
	}
	sealed, err = c.sealer.Seal(r.Binding(), rep)
	if err != nil {
		return nil, loss, fmt.Errorf("client: sealing: %w", err)
	}
	return sealed, loss, nil
}
