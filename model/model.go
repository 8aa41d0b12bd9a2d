// Package model provides classifiers whose parameters live in one flat
// float64 vector and which compute per-example gradients, as CLDP-SGD needs:
// every client clips, randomizes and reports the gradient of its own example.
package model

import "math/rand/v2"

// Model is a differentiable classifier trained with cross-entropy loss.
//
// All parameters live in one flat vector (Params) so that clipping,
// randomizing, averaging and projection act on it directly.
type Model interface {
	// Name identifies the architecture, e.g. "cnn", "mlp", "logreg".
	Name() string
	// NumParams is the length of the parameter vector.
	NumParams() int
	// InputDim is the length of one input example (784 for MNIST).
	InputDim() int
	// NumClasses is the number of labels.
	NumClasses() int
	// Params returns the live parameter vector; updating it in place
	// updates the model.
	Params() []float64
	// Init re-initializes the parameters deterministically from rng
	// (seeded generators only: the initial model of CLDP-SGD is public).
	// Constructors already initialize from NewInitRNG(DefaultSeed).
	Init(rng *rand.Rand)
	// NewWorker returns scratch space for one goroutine. A Worker is not
	// safe for concurrent use; distinct Workers are, as long as Params is
	// not written while they run.
	NewWorker() Worker
}

// Worker computes per-example gradients and predictions with its own
// scratch buffers.
type Worker interface {
	// Gradient writes the gradient of the cross-entropy loss at one example
	// (x of length InputDim, label in [0, NumClasses)) with respect to
	// Params into grad (length NumParams, overwritten) and returns the loss.
	Gradient(x []float64, label int, grad []float64) float64
	// Logits writes the NumClasses logits of x into out.
	Logits(x []float64, out []float64)
}
