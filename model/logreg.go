package model

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LogReg is multinomial logistic regression (softmax regression):
// logits = W x + b with W a classes x inputDim matrix, trained with
// softmax cross-entropy. It is convex, the setting of the
// privacy-convergence trade-off of CLDP-SGD (Girgis et al., NeurIPS 2021,
// Theorem 3).
//
// Params layout: W row-major (classes*inputDim values), then b (classes).
type LogReg struct {
	inputDim, classes int
	params            []float64
}

// NewLogReg returns a logistic-regression model with zero parameters (the
// usual start for a convex model; Init with any generator also zeroes).
func NewLogReg(inputDim, classes int) (*LogReg, error) {
	if inputDim < 1 {
		return nil, fmt.Errorf("inputDim must be >= 1, got %d", inputDim)
	}
	if classes < 2 {
		return nil, fmt.Errorf("classes must be >= 2, got %d", classes)
	}
	return &LogReg{inputDim: inputDim, classes: classes, params: make([]float64, classes*inputDim+classes)}, nil
}

// Name returns "logreg".
func (m *LogReg) Name() string { return "logreg" }

// NumParams returns classes*(inputDim+1).
func (m *LogReg) NumParams() int { return len(m.params) }

// InputDim returns the length of one example.
func (m *LogReg) InputDim() int { return m.inputDim }

// NumClasses returns the number of classes.
func (m *LogReg) NumClasses() int { return m.classes }

// Params returns the live parameter vector.
func (m *LogReg) Params() []float64 { return m.params }

// Init sets all parameters to zero; rng is not used (the loss is convex,
// so no symmetry needs breaking). It exists so every Model initializes the
// same way.
func (m *LogReg) Init(rng *rand.Rand) { zero(m.params) }

// NewWorker returns scratch space for one goroutine.
func (m *LogReg) NewWorker() Worker {
	return &logRegWorker{m: m, logits: make([]float64, m.classes)}
}

type logRegWorker struct {
	m      *LogReg
	logits []float64
}

func (w *logRegWorker) Logits(x []float64, out []float64) {
	d, p := w.m.inputDim, w.m.params
	b := p[w.m.classes*d:]
	for c := range w.m.classes {
		out[c] = dot(p[c*d:(c+1)*d], x) + b[c]
	}
}

func (w *logRegWorker) Gradient(x []float64, label int, grad []float64) float64 {
	d, k := w.m.inputDim, w.m.classes
	w.Logits(x, w.logits)
	loss := softmaxCrossEntropy(w.logits, label, w.logits) // logits now hold dL/dlogits
	for c := range k {
		g := w.logits[c]
		row := grad[c*d : (c+1)*d]
		for i, v := range x {
			row[i] = g * v
		}
	}
	copy(grad[k*d:], w.logits)
	return loss
}

// GradientCoordinate implements CoordinateWorker: coordinate j of the
// gradient Gradient writes, bit for bit, from the logits alone (no gradient
// vector is written): g_j = (softmax(z) - e_label)_c x_i for j = c*d + i,
// and the c-th entry of softmax(z) - e_label for the bias j = classes*d + c.
// It certifies finiteness when the loss, every dL/dlogit and every input
// entry is finite: each coordinate is then a product of two finite numbers
// of which one lies in [-1, 1].
func (w *logRegWorker) GradientCoordinate(x []float64, label, j int) (gj, loss float64, certified bool) {
	d, k := w.m.inputDim, w.m.classes
	w.Logits(x, w.logits)
	loss = softmaxCrossEntropy(w.logits, label, w.logits)
	if !finite(loss, w.logits, x) {
		return 0, loss, false
	}
	if j >= k*d {
		return w.logits[j-k*d], loss, true
	}
	return w.logits[j/d] * x[j%d], loss, true
}

// finite reports whether loss and every entry of every vector is finite
// (neither NaN nor infinite): the condition under which a single-coordinate
// gradient certifies finiteness.
func finite(loss float64, vs ...[]float64) bool {
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return false
	}
	for _, v := range vs {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
	}
	return true
}
