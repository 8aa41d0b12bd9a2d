package model

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LogRegDCT is multinomial logistic regression written in a fixed
// orthonormal basis of the logits' sum-zero subspace: logits z = H u with
// u = V [x; s], where H is the classes x (classes-1) matrix of the DCT-II
// basis vectors without the constant one (H[c][a] = sqrt(2/K) cos(pi (2c+1)
// (a+1) / (2K)), K = classes: orthonormal columns, each orthogonal to the
// all-ones vector), V is the (classes-1) x (inputDim+1) parameter matrix and
// s = 1/sqrt(inputDim) is the constant input that carries the intercepts.
//
// It is the same family of classifiers as LogReg: softmax is invariant to
// adding one number to every logit, and H V [x; s] ranges over every
// W x + b up to that common shift (W = H V[:, :inputDim], b = s H V[:, inputDim]),
// so the two have the same losses and minima. What differs is the
// coordinate system of the gradient a client clips: LogReg's gradient is
// (softmax(z) - e_y) x^T, one row per class, in which the true class's
// residual -(1 - p_y) dominates one row and the clamp of R_inf cuts it
// most; here it is (H^T (softmax(z) - e_y)) [x; s]^T, the residual spread
// over classes-1 rows by the DCT, with no row for the common shift the
// loss ignores (d = (classes-1)(inputDim+1): 2,925 against LogReg's 3,250
// on 324 features). The basis and s are fixed functions of the shape, not
// of any data, so the choice costs no privacy.
//
// Params layout: V row-major, (classes-1) rows of inputDim+1 values (the
// last one the intercept's weight).
type LogRegDCT struct {
	inputDim, classes int
	basis             []float64 // H, classes x (classes-1), row-major
	scale             float64   // s, the constant input
	params            []float64
}

// NewLogRegDCT returns LogRegDCT with zero parameters.
func NewLogRegDCT(inputDim, classes int) (*LogRegDCT, error) {
	if inputDim < 1 {
		return nil, fmt.Errorf("inputDim must be >= 1, got %d", inputDim)
	}
	if classes < 2 {
		return nil, fmt.Errorf("classes must be >= 2, got %d", classes)
	}
	return &LogRegDCT{inputDim: inputDim, classes: classes, basis: DCTSumZeroBasis(classes),
		scale: 1 / math.Sqrt(float64(inputDim)), params: make([]float64, (classes-1)*(inputDim+1))}, nil
}

// DCTSumZeroBasis returns the k x (k-1) matrix, row-major, whose column a
// is the DCT-II basis vector a+1 of length k: sqrt(2/k) cos(pi (2c+1)(a+1)
// / (2k)) in row c. Its columns are orthonormal and orthogonal to the
// all-ones vector (the DCT's constant vector, left out).
func DCTSumZeroBasis(k int) []float64 {
	h := make([]float64, k*(k-1))
	f := math.Sqrt(2 / float64(k))
	for c := range k {
		for a := range k - 1 {
			h[c*(k-1)+a] = f * math.Cos(math.Pi*float64((2*c+1)*(a+1))/float64(2*k))
		}
	}
	return h
}

// Name returns "logreg-dct".
func (m *LogRegDCT) Name() string { return "logreg-dct" }

// NumParams returns (classes-1)*(inputDim+1).
func (m *LogRegDCT) NumParams() int { return len(m.params) }

// InputDim returns the length of one example.
func (m *LogRegDCT) InputDim() int { return m.inputDim }

// NumClasses returns the number of classes.
func (m *LogRegDCT) NumClasses() int { return m.classes }

// Params returns the live parameter vector.
func (m *LogRegDCT) Params() []float64 { return m.params }

// Basis returns H (row-major, classes x (classes-1)) and the constant
// input s.
func (m *LogRegDCT) Basis() ([]float64, float64) { return m.basis, m.scale }

// Init sets all parameters to zero, as LogReg's; rng is not used.
func (m *LogRegDCT) Init(rng *rand.Rand) { zero(m.params) }

// NewWorker returns scratch space for one goroutine.
func (m *LogRegDCT) NewWorker() Worker {
	return &logRegDCTWorker{m: m, u: make([]float64, m.classes-1), logits: make([]float64, m.classes)}
}

type logRegDCTWorker struct {
	m         *LogRegDCT
	u, logits []float64
}

func (w *logRegDCTWorker) Logits(x []float64, out []float64) {
	d, k1, p := w.m.inputDim, w.m.classes-1, w.m.params
	for a := range k1 {
		row := p[a*(d+1) : (a+1)*(d+1)]
		w.u[a] = dot(row[:d], x) + row[d]*w.m.scale
	}
	for c := range w.m.classes {
		h := w.m.basis[c*k1 : (c+1)*k1]
		var z float64
		for a, v := range w.u {
			z += h[a] * v
		}
		out[c] = z
	}
}

// residual returns q_a = sum_c H[c][a] r_c for the residual r in dz (the
// same sum, in the same order, for Gradient and GradientCoordinate).
func (w *logRegDCTWorker) residual(dz []float64, a int) float64 {
	k1 := w.m.classes - 1
	var q float64
	for c, r := range dz {
		q += w.m.basis[c*k1+a] * r
	}
	return q
}

func (w *logRegDCTWorker) Gradient(x []float64, label int, grad []float64) float64 {
	d := w.m.inputDim
	w.Logits(x, w.logits)
	loss := softmaxCrossEntropy(w.logits, label, w.logits) // logits now hold dL/dz
	for a := range w.m.classes - 1 {
		q := w.residual(w.logits, a)
		row := grad[a*(d+1) : (a+1)*(d+1)]
		for i, v := range x {
			row[i] = q * v
		}
		row[d] = q * w.m.scale
	}
	return loss
}

// GradientCoordinate implements CoordinateWorker: coordinate j of the
// gradient Gradient writes, bit for bit, from the logits alone: q_a x_i for
// j = a*(inputDim+1) + i, q_a s for the intercept i = inputDim. It
// certifies finiteness as LogReg's does: the loss, every dL/dz and every
// input entry finite (then |q_a| <= sqrt(2) and every coordinate is finite).
func (w *logRegDCTWorker) GradientCoordinate(x []float64, label, j int) (gj, loss float64, certified bool) {
	d := w.m.inputDim
	w.Logits(x, w.logits)
	loss = softmaxCrossEntropy(w.logits, label, w.logits)
	if !finite(loss, w.logits, x) {
		return 0, loss, false
	}
	a, i := j/(d+1), j%(d+1)
	q := w.residual(w.logits, a)
	if i == d {
		return q * w.m.scale, loss, true
	}
	return q * x[i], loss, true
}
