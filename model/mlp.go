package model

import (
	"fmt"
	"math/rand/v2"
)

// DefaultMLPHidden is the hidden width New uses for "mlp" (784-128-10 on
// MNIST: 101,770 parameters).
const DefaultMLPHidden = 128

// MLP is a one-hidden-layer perceptron: logits = W2 relu(W1 x + b1) + b2,
// trained with softmax cross-entropy. It is a baseline between logistic
// regression and the CNN of Girgis et al. (NeurIPS 2021, Table 1).
//
// Params layout: W1 (hidden x inputDim, row-major), b1 (hidden),
// W2 (classes x hidden, row-major), b2 (classes); NumParams =
// hidden*(inputDim+1) + classes*(hidden+1).
type MLP struct {
	inputDim, hidden, classes int
	params                    []float64
}

// NewMLP returns an MLP initialized from NewInitRNG(DefaultSeed): Glorot
// uniform weights, zero biases (Keras' Dense defaults).
func NewMLP(inputDim, hidden, classes int) (*MLP, error) {
	if inputDim < 1 {
		return nil, fmt.Errorf("inputDim must be >= 1, got %d", inputDim)
	}
	if hidden < 1 {
		return nil, fmt.Errorf("hidden must be >= 1, got %d", hidden)
	}
	if classes < 2 {
		return nil, fmt.Errorf("classes must be >= 2, got %d", classes)
	}
	m := &MLP{inputDim: inputDim, hidden: hidden, classes: classes,
		params: make([]float64, hidden*(inputDim+1)+classes*(hidden+1))}
	m.Init(NewInitRNG(DefaultSeed))
	return m, nil
}

func (m *MLP) split(p []float64) (w1, b1, w2, b2 []float64) {
	d, h, k := m.inputDim, m.hidden, m.classes
	w1, p = p[:h*d], p[h*d:]
	b1, p = p[:h], p[h:]
	w2, b2 = p[:k*h], p[k*h:]
	return
}

// Name returns "mlp".
func (m *MLP) Name() string { return "mlp" }

// NumParams returns hidden*(inputDim+1) + classes*(hidden+1).
func (m *MLP) NumParams() int { return len(m.params) }

// InputDim returns the length of one example.
func (m *MLP) InputDim() int { return m.inputDim }

// NumClasses returns the number of classes.
func (m *MLP) NumClasses() int { return m.classes }

// Params returns the live parameter vector.
func (m *MLP) Params() []float64 { return m.params }

// Init draws Glorot-uniform weights from rng and zeroes the biases.
func (m *MLP) Init(rng *rand.Rand) {
	w1, b1, w2, b2 := m.split(m.params)
	glorotUniform(w1, m.inputDim, m.hidden, rng)
	zero(b1)
	glorotUniform(w2, m.hidden, m.classes, rng)
	zero(b2)
}

// NewWorker returns scratch space for one goroutine.
func (m *MLP) NewWorker() Worker {
	return &mlpWorker{m: m, h: make([]float64, m.hidden), dh: make([]float64, m.hidden),
		logits: make([]float64, m.classes)}
}

type mlpWorker struct {
	m             *MLP
	h, dh, logits []float64
}

func (w *mlpWorker) forward(x, out []float64) {
	m := w.m
	w1, b1, w2, b2 := m.split(m.params)
	d := m.inputDim
	for j := range m.hidden {
		w.h[j] = max(0, dot(w1[j*d:(j+1)*d], x)+b1[j])
	}
	for c := range m.classes {
		out[c] = dot(w2[c*m.hidden:(c+1)*m.hidden], w.h) + b2[c]
	}
}

func (w *mlpWorker) Logits(x []float64, out []float64) { w.forward(x, out) }

func (w *mlpWorker) Gradient(x []float64, label int, grad []float64) float64 {
	m := w.m
	d, h := m.inputDim, m.hidden
	w.forward(x, w.logits)
	loss := softmaxCrossEntropy(w.logits, label, w.logits)
	_, _, w2, _ := m.split(m.params)
	gw1, gb1, gw2, gb2 := m.split(grad)
	zero(w.dh)
	for c, g := range w.logits {
		row := gw2[c*h : (c+1)*h]
		wrow := w2[c*h : (c+1)*h]
		for j, hv := range w.h {
			row[j] = g * hv
			w.dh[j] += g * wrow[j]
		}
		gb2[c] = g
	}
	for j, hv := range w.h {
		g := w.dh[j]
		if hv <= 0 {
			g = 0
		}
		gb1[j] = g
		row := gw1[j*d : (j+1)*d]
		if g == 0 {
			zero(row)
			continue
		}
		for i, v := range x {
			row[i] = g * v
		}
	}
	return loss
}
