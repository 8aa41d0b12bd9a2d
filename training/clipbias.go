package training

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/shuffledp/shuffledp/client"
	"github.com/shuffledp/shuffledp/data"
	"github.com/shuffledp/shuffledp/metrics"
	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// MeasureClipBias is the SIMULATION-ONLY diagnostic of train
// --clip-diagnostic (metrics.ClipBias): it computes the gradient g_i of
// each of the first n examples of train at m's current parameters, clips
// it as the clients do (client.Clip with norm, clip and clamp) to x_i, and
// compares the mean clipped gradient x with the training loss's gradient
// g = mean g_i. It reads clear per-example gradients, so no deployment may
// compute it; it draws no randomness and leaves m unchanged. Sums run in
// fixed chunks added in order, so the result does not depend on workers
// (>= 1 goroutines). NoiseNorm is left nil (it depends on the randomizer:
// Trainer fills it for R_inf).
func MeasureClipBias(m model.Model, train *data.Dataset, n int, norm string, clip float64, clamp bool, workers int) metrics.ClipBias {
	n = min(n, train.N)
	d := m.NumParams()
	nChunks := (n + evalChunk - 1) / evalChunk
	type part struct {
		g, x           []float64
		clippedClients int64
		clamped        int64
		sq             float64
	}
	parts := make([]part, nChunks)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(workers, nChunks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := m.NewWorker()
			gi := make([]float64, d)
			xi := make([]float64, d)
			for {
				c := int(next.Add(1) - 1)
				if c >= nChunks {
					return
				}
				p := part{g: make([]float64, d), x: make([]float64, d)}
				for i := c * evalChunk; i < min(n, (c+1)*evalChunk); i++ {
					w.Gradient(train.Example(i), train.Y[i], gi)
					copy(xi, gi)
					client.Clip(xi, norm, clip, clamp)
					changed := false
					for j, v := range gi {
						if math.Abs(v) > clip {
							p.clamped++
						}
						if xi[j] != v {
							changed = true
						}
						p.g[j] += v
						p.x[j] += xi[j]
						p.sq += xi[j] * xi[j]
					}
					if changed {
						p.clippedClients++
					}
				}
				parts[c] = p
			}
		}()
	}
	wg.Wait()
	g := make([]float64, d)
	x := make([]float64, d)
	var clippedClients, clamped int64
	var sq float64
	for _, p := range parts {
		for j := range g {
			g[j] += p.g[j]
			x[j] += p.x[j]
		}
		clippedClients += p.clippedClients
		clamped += p.clamped
		sq += p.sq
	}
	inv := 1 / float64(n)
	var gg, xx, gx float64
	for j := range g {
		g[j] *= inv
		x[j] *= inv
		gg += g[j] * g[j]
		xx += x[j] * x[j]
		gx += g[j] * x[j]
	}
	r := metrics.ClipBias{
		Clients:            n,
		ClippedClients:     float64(clippedClients) * inv,
		ClampedCoordinates: float64(clamped) * inv / float64(d),
		TrueNorm:           math.Sqrt(gg),
		ClippedNorm:        math.Sqrt(xx),
		MeanClippedSq:      sq * inv,
	}
	if gg > 0 && xx > 0 {
		r.Cosine = gx / math.Sqrt(gg*xx)
		r.Bias = math.Sqrt(max(0, 1-r.Cosine*r.Cosine))
	}
	if lr, ok := m.(*model.LogReg); ok {
		centre(g, lr.InputDim(), lr.NumClasses())
		centre(x, lr.InputDim(), lr.NumClasses())
		gg, xx, gx = 0, 0, 0
		for j := range g {
			gg += g[j] * g[j]
			xx += x[j] * x[j]
			gx += g[j] * x[j]
		}
		cn := math.Sqrt(xx)
		r.CentredNorm = &cn
		if gg > 0 && xx > 0 {
			cc := gx / math.Sqrt(gg*xx)
			r.CentredCosine = &cc
		}
	}
	return r
}

// centre removes from v, logistic regression's parameter layout (W, a
// classes x dim matrix row-major, then the classes biases), the component
// common to all classes: the mean over classes of every column of W and
// of the biases. Softmax predictions are invariant along it.
func centre(v []float64, dim, classes int) {
	for j := range dim + 1 {
		at := func(c int) *float64 {
			if j == dim {
				return &v[classes*dim+c]
			}
			return &v[c*dim+j]
		}
		var s float64
		for c := range classes {
			s += *at(c)
		}
		s /= float64(classes)
		for c := range classes {
			*at(c) -= s
		}
	}
}

// clipBias fills rec.ClipBias with MeasureClipBias on the training clients
// when the run asks for it (Config.ClipDiagnostic; simulation only).
func (t *Trainer) clipBias(rec *metrics.Record) error {
	if !t.cfg.ClipDiagnostic || t.train == nil {
		return nil
	}
	cb := MeasureClipBias(t.model, t.train, t.cfg.Clients, t.cfg.ClipNorm, t.cfg.Clip, t.cfg.ClampLinf, t.cfg.Workers)
	if t.cfg.Randomizer == RandomizerRInf {
		r, err := protocol.NewRandomizer(t.run)
		if err != nil {
			return err
		}
		cb.NoiseNorm = rinfNoiseNorm(r, cb.MeanClippedSq, t.cfg.Sample)
	}
	rec.ClipBias = &cb
	return nil
}

// rinfNoiseNorm is metrics.ClipBias.NoiseNorm of R_inf's reports of
// magnitude mag (randomizer.RInf.Magnitude) averaged over k clients.
func rinfNoiseNorm(r randomizer.Randomizer, meanClippedSq float64, k int) *float64 {
	ri, ok := r.(*randomizer.RInf)
	if !ok {
		return nil
	}
	v := math.Sqrt(max(0, ri.Magnitude()*ri.Magnitude()-meanClippedSq) / float64(k))
	return &v
}
