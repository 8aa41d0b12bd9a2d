package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lossAt returns the loss of w at (x, label) for the current parameters,
// computed from the logits (independently of Gradient's loss).
func lossAt(m Model, w Worker, x []float64, label int) float64 {
	logits := make([]float64, m.NumClasses())
	w.Logits(x, logits)
	mx := logits[0]
	for _, v := range logits {
		mx = math.Max(mx, v)
	}
	var s float64
	for _, v := range logits {
		s += math.Exp(v - mx)
	}
	return math.Log(s) + mx - logits[label]
}

// checkGradient compares Gradient with central finite differences at the
// coordinates idx (all coordinates when idx is nil).
func checkGradient(t *testing.T, m Model, x []float64, label int, idx []int) {
	t.Helper()
	w := m.NewWorker()
	grad := make([]float64, m.NumParams())
	for i := range grad {
		grad[i] = math.NaN() // Gradient must overwrite every entry
	}
	loss := w.Gradient(x, label, grad)
	if want := lossAt(m, w, x, label); math.Abs(loss-want) > 1e-12*math.Max(1, want) {
		t.Fatalf("%s: Gradient returned loss %.15g, logits give %.15g", m.Name(), loss, want)
	}
	for i, g := range grad {
		if math.IsNaN(g) || math.IsInf(g, 0) {
			t.Fatalf("%s: grad[%d] = %g not written or not finite", m.Name(), i, g)
		}
	}
	if idx == nil {
		idx = make([]int, m.NumParams())
		for i := range idx {
			idx[i] = i
		}
	}
	p := m.Params()
	const h = 1e-6
	for _, i := range idx {
		orig := p[i]
		p[i] = orig + h
		lp := lossAt(m, w, x, label)
		p[i] = orig - h
		lm := lossAt(m, w, x, label)
		p[i] = orig
		fd := (lp - lm) / (2 * h)
		if err := math.Abs(fd - grad[i]); err > 1e-6+1e-5*math.Abs(fd) {
			t.Errorf("%s: d loss / d param[%d]: analytic %.10g, finite difference %.10g", m.Name(), i, grad[i], fd)
		}
	}
}

func randomInput(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

// perturb adds small noise to all parameters so that biases are non-zero and
// every code path (including zero-initialized ones) is exercised.
func perturb(m Model, rng *rand.Rand, scale float64) {
	for i := range m.Params() {
		m.Params()[i] += scale * rng.NormFloat64()
	}
}

func TestLogRegGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := NewLogReg(7, 4)
	if err != nil {
		t.Fatal(err)
	}
	perturb(m, rng, 0.5)
	for label := range 4 {
		checkGradient(t, m, randomInput(rng, 7), label, nil)
	}
}

func TestMLPGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m, err := NewMLP(9, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	perturb(m, rng, 0.1)
	for label := range 3 {
		checkGradient(t, m, randomInput(rng, 9), label, nil)
	}
}

func TestConstructorsRejectBadShapes(t *testing.T) {
	if _, err := NewLogReg(0, 10); err == nil {
		t.Error("NewLogReg(0, 10): want error for inputDim")
	}
	if _, err := NewLogReg(784, 1); err == nil {
		t.Error("NewLogReg(784, 1): want error for classes")
	}
	if _, err := NewMLP(784, 0, 10); err == nil {
		t.Error("NewMLP hidden=0: want error")
	}
	if _, err := New("resnet", 784, 10); err == nil {
		t.Error(`New("resnet"): want error`)
	}
}

func TestParameterCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"logreg", 7850},     // 10*(784+1)
		{"logreg-dct", 7065}, // 9*(784+1)
		{"mlp", 101770},      // 128*785 + 10*129
	} {
		m, err := New(tc.name, 784, 10)
		if err != nil {
			t.Fatal(err)
		}
		if m.NumParams() != tc.want || len(m.Params()) != tc.want {
			t.Errorf("%s: NumParams = %d, len(Params) = %d, want %d", tc.name, m.NumParams(), len(m.Params()), tc.want)
		}
		if m.Name() != tc.name || m.InputDim() != 784 || m.NumClasses() != 10 {
			t.Errorf("%s: Name/InputDim/NumClasses = %q/%d/%d", tc.name, m.Name(), m.InputDim(), m.NumClasses())
		}
	}
}

func TestInitIsDeterministic(t *testing.T) {
	for _, name := range Names {
		a, _ := New(name, 784, 10)
		b, _ := New(name, 784, 10)
		a.Init(NewInitRNG(42))
		b.Init(NewInitRNG(42))
		for i := range a.Params() {
			if a.Params()[i] != b.Params()[i] {
				t.Fatalf("%s: Init(NewInitRNG(42)) differs at %d", name, i)
			}
		}
	}
}

func TestSoftmaxCrossEntropyStable(t *testing.T) {
	logits := []float64{1000, -1000, 0}
	d := make([]float64, 3)
	loss := softmaxCrossEntropy(logits, 1, d)
	if loss != 2000 {
		t.Errorf("loss = %g, want 2000", loss)
	}
	if d[0] != 1 || d[1] != -1 || d[2] != 0 {
		t.Errorf("dlogits = %v, want [1 -1 0]", d)
	}
}
