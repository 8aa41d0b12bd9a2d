package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ExternalName is the architecture name of an External model: the name a
// run whose model arithmetic lives outside this module publishes
// (protocol.RunConfig.Model).
const ExternalName = "external"

// External is a model whose arithmetic is done elsewhere (the Python API's
// callbacks, docs/python-federated.md): this module holds only its flat
// parameter vector, which the server publishes, checkpoints and replaces
// with the caller's next parameters every round. It has no inputs, no
// classes and no worker: a client's update and an evaluation come from the
// caller, never from a Worker (NewWorker returns one that panics).
type External struct {
	params []float64
}

// NewExternal returns an External model whose parameters are a copy of
// theta0 (the caller's theta_0: Init leaves them as they are). theta0 must
// be non-empty and finite.
func NewExternal(theta0 []float64) (*External, error) {
	if len(theta0) == 0 {
		return nil, errors.New("external model: the initial parameters are empty")
	}
	for i, x := range theta0 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("external model: initial parameter %d is %g (must be finite)", i, x)
		}
	}
	return &External{params: append([]float64(nil), theta0...)}, nil
}

// Name returns ExternalName.
func (m *External) Name() string { return ExternalName }

// NumParams returns the length of the parameter vector.
func (m *External) NumParams() int { return len(m.params) }

// InputDim returns 0: the examples are the caller's.
func (m *External) InputDim() int { return 0 }

// NumClasses returns 0: the labels are the caller's.
func (m *External) NumClasses() int { return 0 }

// Params returns the live parameter vector.
func (m *External) Params() []float64 { return m.params }

// Init does nothing: the initial parameters are the caller's theta_0.
func (m *External) Init(*rand.Rand) {}

// NewWorker returns a worker that panics if used: an external model's
// gradients and logits are computed by the caller.
func (m *External) NewWorker() Worker { return externalWorker{} }

type externalWorker struct{}

func (externalWorker) Gradient([]float64, int, []float64) float64 {
	panic("model: an external model's gradients are computed by its caller")
}

func (externalWorker) Logits([]float64, []float64) {
	panic("model: an external model's logits are computed by its caller")
}
