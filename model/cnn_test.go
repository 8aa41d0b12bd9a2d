package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTable1CNNShapesAndParameterCount(t *testing.T) {
	m, err := NewCNN(28, 28, 10)
	if err != nil {
		t.Fatal(err)
	}
	// TF 'same', stride 2: ceil(28/2) = 14 with padding (13*2+8-28)/2 = 3.
	if m.o1h != 14 || m.o1w != 14 || m.pad1t != 3 || m.pad1l != 3 {
		t.Errorf("conv1 output %dx%d pad %d,%d; want 14x14 pad 3,3", m.o1h, m.o1w, m.pad1t, m.pad1l)
	}
	if m.p1h != 13 || m.o2h != 5 || m.p2h != 4 || m.flat != 512 {
		t.Errorf("pool1 %d, conv2 %d, pool2 %d, flat %d; want 13, 5, 4, 512", m.p1h, m.o2h, m.p2h, m.flat)
	}
	const want = 8*8*1*16 + 16 + 4*4*16*32 + 32 + 512*32 + 32 + 32*10 + 10
	if want != 26010 || m.NumParams() != want || len(m.Params()) != want {
		t.Errorf("NumParams = %d, want %d = 26,010", m.NumParams(), want)
	}
	if m.InputDim() != 784 || m.NumClasses() != 10 || m.Name() != "cnn" {
		t.Errorf("InputDim/NumClasses/Name = %d/%d/%q", m.InputDim(), m.NumClasses(), m.Name())
	}
	via, err := New("cnn", 784, 10)
	if err != nil || via.NumParams() != 26010 {
		t.Errorf(`New("cnn", 784, 10): %v`, err)
	}
}

// TestAuthorsCNNShapesAndParameterCount pins the network of the authors'
// released code (AuthorsCNN): tanh, 16 filters in both convolutions,
// d = 13,706.
func TestAuthorsCNNShapesAndParameterCount(t *testing.T) {
	mm, err := New("cnn-tanh", 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.(*CNN)
	if m.o1h != 14 || m.o1w != 14 || m.pad1t != 3 || m.pad1l != 3 || m.p1h != 13 || m.o2h != 5 || m.p2h != 4 || m.flat != 256 {
		t.Errorf("conv1 %d pad %d, pool1 %d, conv2 %d, pool2 %d, flat %d; want 14 pad 3, 13, 5, 4, 256",
			m.o1h, m.pad1t, m.p1h, m.o2h, m.p2h, m.flat)
	}
	const want = 8*8*1*16 + 16 + 4*4*16*16 + 16 + 256*32 + 32 + 32*10 + 10
	if want != 13706 || m.NumParams() != want || len(m.Params()) != want {
		t.Errorf("NumParams = %d, want %d = 13,706", m.NumParams(), want)
	}
	if m.Name() != "cnn-tanh" || m.Config() != AuthorsCNN || m.Config().Activation.String() != "tanh" {
		t.Errorf("Name %q, Config %+v", m.Name(), m.Config())
	}
	// Keras defaults: zero biases, Glorot-uniform kernels within
	// ±sqrt(6/(fan_in+fan_out)) (conv2: fan_in = fan_out = 4*4*16).
	p := m.Params()
	for _, b := range [][2]int{{m.b1, m.w2}, {m.b2, m.wd1}, {m.bd1, m.wd2}, {m.bd2, m.n}} {
		if !allZero(p[b[0]:b[1]]) {
			t.Errorf("bias block [%d, %d) not zero at initialization", b[0], b[1])
		}
	}
	lim := math.Sqrt(6.0 / (256 + 256))
	var mx float64
	for _, v := range p[m.w2:m.b2] {
		mx = math.Max(mx, math.Abs(v))
	}
	if mx > lim || mx < 0.99*lim {
		t.Errorf("conv2 kernel max |w| = %g, want just below %g", mx, lim)
	}
}

func TestSamePaddingMatchesTensorFlow(t *testing.T) {
	// (n, k, s) -> (ceil(n/s), floor(max((out-1)s+k-n, 0)/2))
	for _, c := range []struct{ n, k, s, out, before int }{
		{28, 8, 2, 14, 3}, {13, 8, 2, 7, 3}, {27, 8, 2, 14, 3}, {5, 3, 1, 5, 1}, {4, 2, 2, 2, 0}, {6, 4, 2, 3, 1},
	} {
		out, before := samePadding(c.n, c.k, c.s)
		if out != c.out || before != c.before {
			t.Errorf("samePadding(%d,%d,%d) = %d,%d want %d,%d", c.n, c.k, c.s, out, before, c.out, c.before)
		}
	}
}

// sparseImage returns an image whose pixels are zero with probability 0.6
// (MNIST-like sparsity) and uniform in (0, 1] otherwise.
func sparseImage(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		if rng.Float64() < 0.4 {
			x[i] = 1 - rng.Float64()
		}
	}
	return x
}

func smallCNN(t *testing.T, h, w int) *CNN {
	t.Helper()
	return smallCNNAct(t, h, w, ReLU)
}

func smallCNNAct(t *testing.T, h, w int, act Activation) *CNN {
	t.Helper()
	m, err := NewCNNWithConfig(CNNConfig{Height: h, Width: w, Filters1: 3, Filters2: 4, Hidden: 5, Classes: 3, Activation: act})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCNNGradientFiniteDifferencesAllParams(t *testing.T) {
	for _, act := range []Activation{ReLU, Tanh} {
		rng := rand.New(rand.NewPCG(5, 6))
		// 13x13 and 16x15 (odd/even sizes exercise asymmetric 'same' padding).
		for _, hw := range [][2]int{{13, 13}, {16, 15}} {
			m := smallCNNAct(t, hw[0], hw[1], act)
			perturb(m, rng, 0.05)
			for label := range 3 {
				checkGradient(t, m, sparseImage(rng, m.InputDim()), label, nil)
			}
		}
	}
}

func TestTable1CNNGradientFiniteDifferencesSampled(t *testing.T) {
	for _, name := range []string{"cnn", "cnn-tanh"} {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			fullCNNGradientSampled(t, rng, name, 0.01, sparseImage(rng, 784))
		})
	}
}

// TestAuthorsCNNGradientAtInitialization checks the tanh network at its
// Glorot initialization with zero biases: every all-zero patch of the image
// then gives an exactly zero activation (tanh(0) = 0), which, unlike a ReLU
// zero, must still pass gradient (tanh'(0) = 1).
func TestAuthorsCNNGradientAtInitialization(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	x := centredImage(rng, 28, 8, 20)
	fullCNNGradientSampled(t, rng, "cnn-tanh", 0, x)
	// The check has teeth only if some activations are exactly zero.
	m, _ := New("cnn-tanh", 784, 10)
	w := m.NewWorker().(*cnnWorker)
	w.forward(x, true)
	zeros := 0
	for i, v := range w.p1 { // the entries conv2 reads
		pos := i / m.(*CNN).cfg.Filters1
		if v == 0 && pos/w.m.p1w < w.m.p1hUsed && pos%w.m.p1w < w.m.p1wUsed {
			zeros++
		}
	}
	if zeros == 0 {
		t.Fatal("no exactly-zero pool1 activation: the test would be vacuous")
	}
}

// centredImage returns a side x side image that is zero outside the box
// [lo, hi)², with uniform pixels in (0, 1] inside (60% of them non-zero).
func centredImage(rng *rand.Rand, side, lo, hi int) []float64 {
	x := make([]float64, side*side)
	for y := lo; y < hi; y++ {
		for i := lo; i < hi; i++ {
			if rng.Float64() < 0.6 {
				x[y*side+i] = 1 - rng.Float64()
			}
		}
	}
	return x
}

// fullCNNGradientSampled checks 40 random coordinates from each of the
// eight parameter blocks of the 28x28 network name at input x (label 7)
// against finite differences, after perturbing the parameters by noise of
// the given scale.
func fullCNNGradientSampled(t *testing.T, rng *rand.Rand, name string, scale float64, x []float64) {
	mm, err := New(name, 784, 10)
	if err != nil {
		t.Fatal(err)
	}
	m := mm.(*CNN)
	perturb(m, rng, scale)
	// 40 random coordinates from each of the eight parameter blocks.
	blocks := []int{m.w1, m.b1, m.w2, m.b2, m.wd1, m.bd1, m.wd2, m.bd2, m.n}
	var idx []int
	for b := 0; b+1 < len(blocks); b++ {
		for range 40 {
			idx = append(idx, blocks[b]+rng.IntN(blocks[b+1]-blocks[b]))
		}
	}
	checkGradient(t, m, x, 7, idx)
}

func TestCNNMatchesNaiveBaseline(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	full := func(name string) *CNN {
		m, err := New(name, 784, 10)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*CNN)
	}
	for _, tc := range []struct {
		m       *CNN
		perturb bool // else zero biases, and exact zeros in every layer
	}{
		{smallCNN(t, 14, 17), true}, {full("cnn"), true},
		{smallCNNAct(t, 14, 17, Tanh), true}, {full("cnn-tanh"), true}, {full("cnn-tanh"), false},
	} {
		m := tc.m
		if tc.perturb {
			perturb(m, rng, 0.02)
		}
		w := m.NewWorker()
		g := make([]float64, m.NumParams())
		gn := make([]float64, m.NumParams())
		for trial := range 5 {
			x := sparseImage(rng, m.InputDim())
			if trial == 0 {
				x = randomInput(rng, m.InputDim()) // dense input too
			}
			if !tc.perturb {
				x = centredImage(rng, m.cfg.Height, 8, 20)
			}
			label := rng.IntN(m.NumClasses())
			l := w.Gradient(x, label, g)
			ln := naiveCNNGradient(m, x, label, gn)
			if math.Abs(l-ln) > 1e-12*math.Max(1, ln) {
				t.Fatalf("loss %.15g, naive %.15g", l, ln)
			}
			blocks := []int{m.w1, m.b1, m.w2, m.b2, m.wd1, m.bd1, m.wd2, m.bd2, m.n}
			for b := 0; b+1 < len(blocks); b++ {
				if allZero(g[blocks[b]:blocks[b+1]]) {
					t.Fatalf("trial %d: gradient block %d is all zero; the check would be vacuous", trial, b)
				}
			}
			for i := range g {
				if math.Abs(g[i]-gn[i]) > 1e-12+1e-10*math.Abs(gn[i]) {
					t.Fatalf("%dx%d trial %d: grad[%d] = %.15g, naive %.15g", m.cfg.Height, m.cfg.Width, trial, i, g[i], gn[i])
				}
			}
		}
	}
}

func TestCNNWorkerReuseAndLogits(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m, _ := NewCNN(28, 28, 10)
	w := m.NewWorker()
	x1, x2 := sparseImage(rng, 784), sparseImage(rng, 784)
	g1 := make([]float64, m.NumParams())
	g2 := make([]float64, m.NumParams())
	g1b := make([]float64, m.NumParams())
	w.Gradient(x1, 3, g1)
	w.Gradient(x2, 4, g2)
	w.Gradient(x1, 3, g1b)
	for i := range g1 {
		if g1[i] != g1b[i] {
			t.Fatalf("worker state leaks between examples at %d", i)
		}
	}
	l1, l2 := make([]float64, 10), make([]float64, 10)
	w.Logits(x1, l1)
	m.NewWorker().Logits(x1, l2)
	for i := range l1 {
		if l1[i] != l2[i] {
			t.Fatalf("Logits differ between workers")
		}
	}
}

func TestNewCNNRejectsBadConfig(t *testing.T) {
	for _, cfg := range []CNNConfig{
		{Height: 12, Width: 28, Filters1: 16, Filters2: 32, Hidden: 32, Classes: 10},
		{Height: 28, Width: 28, Filters1: 0, Filters2: 32, Hidden: 32, Classes: 10},
		{Height: 28, Width: 28, Filters1: 16, Filters2: 32, Hidden: 32, Classes: 1},
		{Height: 28, Width: 28, Filters1: 16, Filters2: 32, Hidden: 32, Classes: 10, Activation: 7},
	} {
		if _, err := NewCNNWithConfig(cfg); err == nil {
			t.Errorf("%+v: want error", cfg)
		}
	}
	if _, err := New("cnn", 783, 10); err == nil {
		t.Error("non-square inputDim: want error")
	}
}
