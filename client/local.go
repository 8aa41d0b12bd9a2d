package client

import "github.com/shuffledp/shuffledp/model"

// localUpdate is the scratch of a client's update over several examples
// or several local steps.
type localUpdate struct {
	// model and worker are the client's own copy of the model, stepped
	// locally (RunConfig.LocalSteps > 1 only; set by New).
	model  model.Model
	worker model.Worker
	// g holds one example's gradient, step one local step's mean gradient.
	g, step []float64
}

// update writes into c.grad the unclipped update of a client holding the
// examples exs (M = len(exs) >= 1) at the round's model w_0 (c.m's
// parameters) and returns the mean loss of exs at w_0.
//
// With E = RunConfig.LocalSteps <= 1 the update is the mean gradient
// (1/M) sum_j grad L(w_0; x_j, y_j). With E > 1 the client takes E
// full-batch gradient steps on its own examples with step size
// eta = RunConfig.LocalLR, w_{e+1} = w_e - eta g_e where g_e is the mean
// gradient at w_e (the local training of FedAvg, McMahan et al., AISTATS
// 2017, Algorithm 1, with one full batch per local epoch), and reports
// the pseudo-gradient
//
//	(w_0 - w_E) / (E eta) = (1/E) sum_{e<E} g_e,
//
// computed as the right-hand side (the same number in exact arithmetic,
// without the cancellation of w_0 - w_E when eta is small), so that the
// server's step on it is a step of the same scale as on a gradient, and at
// E = 1 it is the mean gradient itself. The caller clips the update as a
// whole and randomizes it as one gradient: what a neighbouring data set
// changes is one client's whole update, whatever M and E are. A step that
// overflows leaves a non-finite update, which clipping zeroes.
func (c *Client) update(exs []Example) float64 {
	u := &c.local
	if u.g == nil {
		u.g = make([]float64, c.cfg.Dim)
	}
	steps := max(c.cfg.LocalSteps, 1)
	if steps == 1 {
		return c.meanGradient(c.worker, exs, c.grad)
	}
	if u.step == nil {
		u.step = make([]float64, c.cfg.Dim)
	}
	w := u.model.Params()
	copy(w, c.m.Params())
	clear(c.grad)
	eta := c.cfg.LocalLR
	var loss float64
	for e := range steps {
		l := c.meanGradient(u.worker, exs, u.step)
		if e == 0 {
			loss = l
		}
		for i, v := range u.step {
			c.grad[i] += v
			w[i] -= eta * v
		}
	}
	inv := float64(steps)
	for i := range c.grad {
		c.grad[i] /= inv
	}
	return loss
}

// meanGradient writes the mean gradient of exs at the parameters of w's
// model into dst and returns their mean loss. For one example it is that
// example's gradient, bit for bit.
func (c *Client) meanGradient(w model.Worker, exs []Example, dst []float64) float64 {
	loss := w.Gradient(exs[0].X, exs[0].Label, dst)
	if len(exs) == 1 {
		return loss
	}
	g := c.local.g
	for _, ex := range exs[1:] {
		loss += w.Gradient(ex.X, ex.Label, g)
		for i, v := range g {
			dst[i] += v
		}
	}
	m := float64(len(exs))
	for i := range dst {
		dst[i] /= m
	}
	return loss / m
}
