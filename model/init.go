package model

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultSeed seeds the initialization the constructors perform, so that a
// freshly constructed model is the same on every run. Call Init with a
// seeded generator to choose another initialization (simulation only: the
// initial model is public in CLDP-SGD, so it needs no secret randomness).
const DefaultSeed = 1

// NewInitRNG returns the seeded PCG generator the constructors use for
// seed: rand.New(rand.NewPCG(seed, 0x5eed)).
func NewInitRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x5eed))
}

// glorotUniform fills w with draws from U(-a, a), a = sqrt(6/(fanIn+fanOut)):
// the Glorot-Bengio (AISTATS 2010) initialization, Keras' default for Conv2D
// and Dense layers, hence that of the TF Privacy MNIST tutorial model.
func glorotUniform(w []float64, fanIn, fanOut int, rng *rand.Rand) {
	a := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * a
	}
}

func zero(v []float64) {
	for i := range v {
		v[i] = 0
	}
}

// New constructs the model with the given name ("cnn", "cnn-tanh", "mlp",
// "logreg" or "logreg-dct") for examples of inputDim values and the given number of
// classes. "cnn" is Table1CNN (NeurIPS'21 Table 1, ReLU, 26,010 parameters
// on MNIST), "cnn-tanh" is AuthorsCNN (the authors' released code: tanh, 16
// filters in conv2, 13,706 parameters); both need square single-channel
// images (inputDim = s*s). The MLP has one hidden layer of DefaultMLPHidden
// units.
func New(name string, inputDim, classes int) (Model, error) {
	switch name {
	case "logreg":
		return NewLogReg(inputDim, classes)
	case "logreg-dct":
		return NewLogRegDCT(inputDim, classes)
	case "mlp":
		return NewMLP(inputDim, DefaultMLPHidden, classes)
	case "cnn", "cnn-tanh":
		side := int(math.Round(math.Sqrt(float64(inputDim))))
		if side*side != inputDim {
			return nil, fmt.Errorf("model %s needs square single-channel images, but inputDim %d is not a square", name, inputDim)
		}
		cfg := Table1CNN
		if name == "cnn-tanh" {
			cfg = AuthorsCNN
		}
		cfg.Height, cfg.Width, cfg.Classes = side, side, classes
		return NewCNNWithConfig(cfg)
	}
	return nil, fmt.Errorf("model must be one of %v, got %q", Names, name)
}

// Names lists the architectures New accepts.
var Names = []string{"cnn", "cnn-tanh", "mlp", "logreg", "logreg-dct"}
