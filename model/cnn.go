package model

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Fixed hyperparameters of the CNN of Girgis et al., "Renyi Differential
// Privacy of the Subsampled Shuffle Model in Distributed Learning"
// (NeurIPS 2021), Table 1, which is the MNIST model of the TensorFlow
// Privacy tutorial (Papernot et al., also used by Erlingsson et al. 2020).
const (
	cnnKernel1 = 8 // conv1: 8x8 kernel, stride 2, TF padding 'same'
	cnnStride1 = 2
	cnnKernel2 = 4 // conv2: 4x4 kernel, stride 2, padding 'valid'
	cnnStride2 = 2
	cnnPool    = 2 // both max-pools: 2x2 window, stride 1, padding 'valid'
)

// Activation is the nonlinearity after each hidden layer of the CNN (both
// convolutions and the hidden dense layer).
type Activation int

const (
	// ReLU is max(x, 0), the activation of NeurIPS'21 Table 1 and the TF
	// Privacy tutorial. It is the zero value.
	ReLU Activation = iota
	// Tanh is the hyperbolic tangent, the activation of the authors'
	// released training code (MNIST_dpsgd_norm_infinity.py and
	// MNIST_dpsgd_norm_2.py).
	Tanh
)

// String returns "relu" or "tanh".
func (a Activation) String() string {
	switch a {
	case ReLU:
		return "relu"
	case Tanh:
		return "tanh"
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// CNNConfig sizes the CNN and chooses its activation. The kernels, strides,
// paddings and pools are fixed by the architecture (they are the same in
// Table 1 and in the authors' code); the widths, the activation and the
// input size may vary (tests use small ones).
type CNNConfig struct {
	Height, Width int        // input image, one channel
	Filters1      int        // conv1 output channels (16 in Table 1)
	Filters2      int        // conv2 output channels (32 in Table 1, 16 in the authors' code)
	Hidden        int        // units of the hidden dense layer (32 in Table 1)
	Classes       int        // softmax outputs (10 in Table 1)
	Activation    Activation // ReLU (Table 1, the zero value) or Tanh (the authors' code)
}

// Table1CNN is the configuration of Girgis et al. (NeurIPS 2021), Table 1,
// for 28x28 MNIST: 26,010 parameters (see CNN). New("cnn", 784, 10) builds
// it.
var Table1CNN = CNNConfig{Height: 28, Width: 28, Filters1: 16, Filters2: 32, Hidden: 32, Classes: 10}

// AuthorsCNN is the network of the authors' released training code for
// NeurIPS'21 (repository Antonious-Grigis/Shuffled-Model-of-Differential-
// Privacy-in-Federated-Learning, MNIST_dpsgd_norm_infinity.py and
// MNIST_dpsgd_norm_2.py, class MyModel): Table 1's layers with tanh
// activations and 16 filters in conv2. New("cnn-tanh", 784, 10) builds it.
//
//	Conv2D(16, 8, strides=2, padding='same',  activation='tanh') -> 14x14x16
//	MaxPool2D(2, 1)                                              -> 13x13x16
//	Conv2D(16, 4, strides=2, padding='valid', activation='tanh') ->  5x5x16
//	MaxPool2D(2, 1)                                              ->  4x4x16 = 256
//	Flatten, Dense(32, activation='tanh'), Dense(10)
//
// Keras defaults: Glorot-uniform kernels, zero biases, channels-last.
// Parameters, counted by hand:
//
//	conv1  8*8*1*16 + 16  = 1,040
//	conv2  4*4*16*16 + 16 = 4,112
//	dense1 256*32 + 32    = 8,224
//	dense2 32*10 + 10     =   330
//	total                 = 13,706
//
// The papers state d = 13,170, which no reading of the network gives; it is
// presumably a miscount.
var AuthorsCNN = CNNConfig{Height: 28, Width: 28, Filters1: 16, Filters2: 16, Hidden: 32, Classes: 10, Activation: Tanh}

// CNN is the convolutional network of Girgis et al., "Renyi Differential
// Privacy of the Subsampled Shuffle Model in Distributed Learning"
// (NeurIPS 2021), Table 1 (the TensorFlow Privacy MNIST tutorial model),
// with per-example gradients (Table1CNN; AuthorsCNN has tanh in place of
// every ReLU and 16 filters in conv2):
//
//	input 28x28x1
//	conv1 16 filters 8x8, stride 2, padding 'same'  -> 14x14x16, ReLU
//	max-pool 2x2, stride 1                          -> 13x13x16
//	conv2 32 filters 4x4, stride 2, padding 'valid' ->  5x5x32,  ReLU
//	max-pool 2x2, stride 1                          ->  4x4x32 = 512
//	dense 32, ReLU
//	dense 10, softmax cross-entropy
//
// TensorFlow 'same' padding with stride s gives ceil(n/s) outputs and pads
// max((out-1)*s + k - n, 0) in total, the smaller half before: for conv1,
// out = ceil(28/2) = 14, padding 13*2 + 8 - 28 = 6, i.e. 3 rows/columns of
// zeros on each side. 'valid' gives floor((n-k)/s) + 1: conv2 maps 13 to
// floor(9/2) + 1 = 5 (the 13th row and column are not read).
//
// Parameters (26,010 for Table1CNN):
//
//	conv1  8*8*1*16 + 16  =  1,040
//	conv2  4*4*16*32 + 32 =  8,224
//	dense1 512*32 + 32    = 16,416
//	dense2 32*10 + 10     =    330
//
// The papers' text states d = 13,170, which matches no reading of Table 1
// we found (with 16 filters in conv2, as the arXiv version's table says,
// the count is 13,706); we implement the table of the NeurIPS version and
// the tutorial model, and report 26,010.
//
// Params layout, in this order, all row-major in Keras' layouts: conv1
// kernel [ky][kx][in=1][out], conv1 bias, conv2 kernel [ky][kx][in][out],
// conv2 bias, dense1 kernel [in][out] with inputs in (row, column, channel)
// order (Keras Flatten of NHWC), dense1 bias, dense2 kernel [in][out],
// dense2 bias.
//
// The worker exploits sparsity: MNIST images are ~80% zeros and post-ReLU
// activations are often zero, and every layer is computed as a scatter of
// the non-zero inputs (axpy over output channels), so the cost scales with
// the number of non-zero activations. Four inputs share each pass over an
// output (axpy4, and axpyDot4 in the backward pass), and these kernels run
// as AVX2/FMA Go assembly where the CPU has it (kernels_amd64.s; no cgo;
// build with -tags purego for the portable Go kernels). About 5,800
// per-example gradients per second per core on MNIST (BENCHMARKS.md).
// With tanh (AuthorsCNN) the activations are dense: conv2 then reads every
// input (conv2Dense, conv2BackwardDense in cnn_dense.go) and the pools run
// before tanh; about 6,300 per CPU-second on MNIST.
type CNN struct {
	cfg CNNConfig
	// derived shapes
	o1h, o1w, pad1t, pad1l int // conv1 output and top/left padding
	p1h, p1w               int // pool1 output
	p1hUsed, p1wUsed       int // rows and columns of pool1's output that conv2 reads
	o2h, o2w               int // conv2 output
	p2h, p2w               int // pool2 output
	flat                   int // p2h*p2w*Filters2
	// parameter offsets
	w1, b1, w2, b2, wd1, bd1, wd2, bd2, n int
	params                                []float64
}

// NewCNN returns the Table 1 CNN for height x width single-channel images
// and the given number of classes, initialized from NewInitRNG(DefaultSeed).
// height and width must be at least 13 (so that both max-pools have
// output).
func NewCNN(height, width, classes int) (*CNN, error) {
	cfg := Table1CNN
	cfg.Height, cfg.Width, cfg.Classes = height, width, classes
	return NewCNNWithConfig(cfg)
}

// NewCNNWithConfig returns a CNN with the given sizes, initialized from
// NewInitRNG(DefaultSeed).
func NewCNNWithConfig(cfg CNNConfig) (*CNN, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"filters1", cfg.Filters1}, {"filters2", cfg.Filters2}, {"hidden", cfg.Hidden}} {
		if f.v < 1 {
			return nil, fmt.Errorf("cnn: %s must be >= 1, got %d", f.name, f.v)
		}
	}
	if cfg.Classes < 2 {
		return nil, fmt.Errorf("cnn: classes must be >= 2, got %d", cfg.Classes)
	}
	if cfg.Activation != ReLU && cfg.Activation != Tanh {
		return nil, fmt.Errorf("cnn: activation must be relu or tanh, got %v", cfg.Activation)
	}
	if cfg.Height < 13 || cfg.Width < 13 {
		return nil, fmt.Errorf("cnn: input must be at least 13x13, got height %d width %d", cfg.Height, cfg.Width)
	}
	m := &CNN{cfg: cfg}
	m.o1h, m.pad1t = samePadding(cfg.Height, cnnKernel1, cnnStride1)
	m.o1w, m.pad1l = samePadding(cfg.Width, cnnKernel1, cnnStride1)
	m.p1h, m.p1w = m.o1h-cnnPool+1, m.o1w-cnnPool+1
	m.o2h, m.o2w = (m.p1h-cnnKernel2)/cnnStride2+1, (m.p1w-cnnKernel2)/cnnStride2+1
	m.p1hUsed, m.p1wUsed = (m.o2h-1)*cnnStride2+cnnKernel2, (m.o2w-1)*cnnStride2+cnnKernel2
	m.p2h, m.p2w = m.o2h-cnnPool+1, m.o2w-cnnPool+1
	m.flat = m.p2h * m.p2w * cfg.Filters2
	f1, f2, hd, k := cfg.Filters1, cfg.Filters2, cfg.Hidden, cfg.Classes
	off := 0
	next := func(size int) int { o := off; off += size; return o }
	m.w1 = next(cnnKernel1 * cnnKernel1 * f1)
	m.b1 = next(f1)
	m.w2 = next(cnnKernel2 * cnnKernel2 * f1 * f2)
	m.b2 = next(f2)
	m.wd1 = next(m.flat * hd)
	m.bd1 = next(hd)
	m.wd2 = next(hd * k)
	m.bd2 = next(k)
	m.n = off
	m.params = make([]float64, m.n)
	m.Init(NewInitRNG(DefaultSeed))
	return m, nil
}

// samePadding returns TensorFlow's 'same' output size ceil(n/s) and the
// padding before the first element, floor(total/2) with total =
// max((out-1)*s + k - n, 0).
func samePadding(n, k, s int) (out, before int) {
	out = (n + s - 1) / s
	total := max((out-1)*s+k-n, 0)
	return out, total / 2
}

// Config returns the sizes of the network.
func (m *CNN) Config() CNNConfig { return m.cfg }

// Name returns the name New knows the network by: "cnn" with ReLU
// activations, "cnn-tanh" with tanh.
func (m *CNN) Name() string {
	if m.cfg.Activation == Tanh {
		return "cnn-tanh"
	}
	return "cnn"
}

// NumParams returns the number of parameters (26,010 for Table1CNN, 13,706
// for AuthorsCNN).
func (m *CNN) NumParams() int { return m.n }

// InputDim returns Height*Width.
func (m *CNN) InputDim() int { return m.cfg.Height * m.cfg.Width }

// NumClasses returns the number of classes.
func (m *CNN) NumClasses() int { return m.cfg.Classes }

// Params returns the live parameter vector.
func (m *CNN) Params() []float64 { return m.params }

// Init draws Glorot-uniform kernels (fan-in and fan-out as Keras counts
// them: kernel area times input or output channels) and zeroes the biases,
// Keras' defaults and so the tutorial's.
func (m *CNN) Init(rng *rand.Rand) {
	c := m.cfg
	p := m.params
	k1, k2 := cnnKernel1*cnnKernel1, cnnKernel2*cnnKernel2
	glorotUniform(p[m.w1:m.b1], k1, k1*c.Filters1, rng)
	zero(p[m.b1:m.w2])
	glorotUniform(p[m.w2:m.b2], k2*c.Filters1, k2*c.Filters2, rng)
	zero(p[m.b2:m.wd1])
	glorotUniform(p[m.wd1:m.bd1], m.flat, c.Hidden, rng)
	zero(p[m.bd1:m.wd2])
	glorotUniform(p[m.wd2:m.bd2], c.Hidden, c.Classes, rng)
	zero(p[m.bd2:])
}

// cnnWorker holds one goroutine's activations. Names: a = pre-activation
// conv output (HWC), p = pooled and ReLU'd (HWC), arg = index into a of each
// pooled maximum, d* = gradient of the loss with respect to that buffer.
//
// The forward pass records, for both convolutions, every (non-zero input,
// kernel tap, output position) triple twice: grouped by output position
// (consumed by the forward pass, four inputs per pass over the output
// channels) and grouped by kernel tap (consumed by the backward pass, four
// positions per pass over the tap's weight row).
type cnnWorker struct {
	m            *CNN
	nzIdx        []int32   // non-zero input pixels
	nzVal        []float64 // and their values
	a1, p1       []float64
	arg1         []int64
	a2, p2       []float64
	arg2         []int64
	bad          []uint8   // tanhSlice's scratch
	refs         []tapRef  // dense1's non-zero inputs
	full         []float64 // gradientCoordinateFull's gradient
	h, logits    []float64
	dA1, dP1     []float64
	dA2, dP2, dh []float64

	// conv1: per output position (up to 64 taps each): value, weight
	// offset; per tap (up to o1h*o1w positions each): value, output offset.
	posCnt, tapCnt []int
	posL, tapL     []tapRef
	// conv2: gathered non-zero patch values and weight offsets of the
	// current position (forward); per tap (16*Filters1 taps, up to
	// o2h*o2w positions each): value, dA2 offset, dP1 index (backward).
	gv      []float64
	gk      []int32
	tap2Cnt []int
	tap2L   []tapRef2
	// offset in p1 of each conv2 output position's patch (tanh path)
	pos2Base []int32
}

// tapRef is one recorded (input value, offset) pair of conv1.
type tapRef struct {
	v float64
	o int32
}

// padRefs appends zero entries (value 0, offset 0: adding nothing) up to a
// multiple of four; l must have the capacity.
func padRefs(l []tapRef) []tapRef {
	for len(l)%4 != 0 {
		l = append(l, tapRef{})
	}
	return l
}

// tapRef2 is one recorded input of conv2: value, offset of its output
// position's gradient in dA2, index of the input in dP1.
type tapRef2 struct {
	v    float64
	g, b int32
}

// NewWorker returns scratch space for one goroutine.
func (m *CNN) NewWorker() Worker {
	c := m.cfg
	npos1, npos2 := m.o1h*m.o1w, m.o2h*m.o2w
	taps1, taps2 := cnnKernel1*cnnKernel1, cnnKernel2*cnnKernel2*c.Filters1
	pos2Base := make([]int32, 0, npos2)
	for oy := range m.o2h {
		for ox := range m.o2w {
			pos2Base = append(pos2Base, int32((cnnStride2*oy*m.p1w+cnnStride2*ox)*c.Filters1))
		}
	}
	return &cnnWorker{
		pos2Base: pos2Base,
		m:        m,
		nzIdx:    make([]int32, 0, c.Height*c.Width),
		nzVal:    make([]float64, 0, c.Height*c.Width),
		a1:       make([]float64, npos1*c.Filters1),
		p1:       make([]float64, m.p1h*m.p1w*c.Filters1),
		arg1:     make([]int64, m.p1h*m.p1w*c.Filters1),
		a2:       make([]float64, npos2*c.Filters2),
		p2:       make([]float64, m.flat),
		arg2:     make([]int64, m.flat),
		bad:      make([]uint8, max(m.p1w*c.Filters1, m.flat, c.Hidden)/4+1),
		refs:     make([]tapRef, 0, m.flat),
		h:        make([]float64, c.Hidden),
		logits:   make([]float64, c.Classes),
		dA1:      make([]float64, npos1*c.Filters1),
		dP1:      make([]float64, m.p1h*m.p1w*c.Filters1+1), // +1: sink of padding entries
		dA2:      make([]float64, npos2*c.Filters2),
		dP2:      make([]float64, m.flat),
		dh:       make([]float64, c.Hidden),
		posCnt:   make([]int, npos1),
		posL:     make([]tapRef, npos1*(taps1+3)),
		tapCnt:   make([]int, taps1),
		tapL:     make([]tapRef, taps1*(npos1+3)),
		gv:       make([]float64, 0, taps2+3),
		gk:       make([]int32, 0, taps2+3),
		tap2Cnt:  make([]int, taps2),
		tap2L:    make([]tapRef2, taps2*(npos2+3)),
	}
}

func (w *cnnWorker) Logits(x []float64, out []float64) {
	w.forward(x, false)
	copy(out, w.logits)
}

// forward computes the network's activations and logits at x. With taps
// it also records conv1's inputs per kernel tap (tapL, tapCnt), which only
// conv1's weight gradient reads; without, it lists conv1's inputs only for
// the output positions pool1 reads.
func (w *cnnWorker) forward(x []float64, taps bool) {
	m := w.m
	c := m.cfg
	p := m.params
	f1, f2, hd := c.Filters1, c.Filters2, c.Hidden
	x = x[:c.Height*c.Width]
	npos1 := m.o1h * m.o1w
	taps1 := cnnKernel1 * cnnKernel1
	// Each list has room for 3 zero entries of padding, so that the
	// kernels always take four inputs.
	ps1, ts1 := taps1+3, npos1+3

	// conv1: pixel (iy, ix) meets output (oy, ox) at kernel tap
	// (ky, kx) = (iy+pad-2oy, ix+pad-2ox); list the non-zero pixels' pairs.
	w.nzIdx, w.nzVal = w.nzIdx[:0], w.nzVal[:0]
	for i, v := range x {
		if v != 0 {
			w.nzIdx = append(w.nzIdx, int32(i))
			w.nzVal = append(w.nzVal, v)
		}
	}
	zeroInt(w.posCnt)
	zeroInt(w.tapCnt)
	for n, idx := range w.nzIdx {
		v := w.nzVal[n]
		oy0, oy1, ox0, ox1, ty, tx := m.conv1Range(int(idx))
		if !taps {
			oy1, ox1 = min(oy1, m.p1hUsed), min(ox1, m.p1wUsed)
		}
		for oy := oy0; oy <= oy1; oy++ {
			ky := ty - cnnStride1*oy
			for ox := ox0; ox <= ox1; ox++ {
				tap := ky*cnnKernel1 + tx - cnnStride1*ox
				pos := oy*m.o1w + ox
				i := pos*ps1 + w.posCnt[pos]
				w.posL[i] = tapRef{v, int32(tap * f1)}
				w.posCnt[pos]++
				if taps {
					j := tap*ts1 + w.tapCnt[tap]
					w.tapL[j] = tapRef{v, int32(pos * f1)}
					w.tapCnt[tap]++
				}
			}
		}
	}
	b1 := p[m.b1:m.w2]
	w1 := p[m.w1:m.b1]
	for pos, cnt := range w.posCnt {
		if pos/m.o1w > m.p1hUsed || pos%m.o1w > m.p1wUsed {
			continue // pool1 reads conv1 rows and columns 0..p1hUsed, 0..p1wUsed only
		}
		out := w.a1[pos*f1 : (pos+1)*f1]
		copy(out, b1)
		l := padRefs(w.posL[pos*ps1 : pos*ps1+cnt : (pos+1)*ps1])
		axpy4Refs(out, w1, l) // l has a multiple of four entries
	}
	tanh := c.Activation == Tanh
	if tanh {
		maxPoolTanh(w.a1, w.p1, w.arg1, m.o1h, m.o1w, f1, m.p1hUsed, m.p1wUsed, w.bad)
		w.conv2Dense()
	} else {
		maxPoolReLU(w.a1, w.p1, w.arg1, m.o1h, m.o1w, f1, m.p1hUsed, m.p1wUsed)
		w.conv2Sparse()
	}
	if tanh {
		maxPoolTanh(w.a2, w.p2, w.arg2, m.o2h, m.o2w, f2, m.p2h, m.p2w, w.bad)
	} else {
		maxPoolReLU(w.a2, w.p2, w.arg2, m.o2h, m.o2w, f2, m.p2h, m.p2w)
	}

	// dense1 + activation (four non-zero inputs per pass), dense2.
	copy(w.h, p[m.bd1:m.wd2])
	wd1 := p[m.wd1:m.bd1]
	refs := w.refs[:0]
	for i, v := range w.p2 {
		if v != 0 {
			refs = append(refs, tapRef{v, int32(i * hd)})
		}
	}
	full := len(refs) &^ 3
	axpy4Refs(w.h, wd1, refs[:full]) // the groups of four, in order
	for _, e := range refs[full:] {
		axpy(w.h, e.v, wd1[e.o:int(e.o)+hd])
	}
	if tanh {
		tanhSlice(w.h, w.bad)
	} else {
		for j, v := range w.h {
			w.h[j] = max(v, 0)
		}
	}
	k := c.Classes
	copy(w.logits, p[m.bd2:])
	wd2 := p[m.wd2:m.bd2]
	for j, v := range w.h {
		if v != 0 {
			axpy(w.logits, v, wd2[j*k:(j+1)*k])
		}
	}
}

// conv2Sparse computes conv2 from the rectified (non-negative, often zero)
// pool1 output w.p1 into w.a2 and records its non-zero inputs per kernel
// tap for the backward pass.
func (w *cnnWorker) conv2Sparse() {
	m := w.m
	c := m.cfg
	p := m.params
	f1, f2 := c.Filters1, c.Filters2
	ts2 := m.o2h*m.o2w + 3

	// conv2: per position, gather the patch's non-zero inputs and add four
	// weight rows per pass over the output; record the taps for backward.
	b2 := p[m.b2:m.wd1]
	w2 := p[m.w2:m.b2]
	zeroInt(w.tap2Cnt)
	for oy := range m.o2h {
		for ox := range m.o2w {
			pos := oy*m.o2w + ox
			out := w.a2[pos*f2 : (pos+1)*f2]
			copy(out, b2)
			// Branch-free compaction: every input is written, and the
			// counts advance only for non-zero ones (p1 >= 0, so its bits
			// are non-zero exactly when it is).
			gv, gk := w.gv[:cap(w.gv)], w.gk[:cap(w.gk)]
			n := 0
			for ky := range cnnKernel2 {
				row := cnnStride2*oy + ky
				for kx := range cnnKernel2 {
					base := (row*m.p1w + cnnStride2*ox + kx) * f1
					tap0 := (ky*cnnKernel2 + kx) * f1
					for ci, v := range w.p1[base : base+f1] {
						nz := nonZeroBit(v)
						tap := tap0 + ci
						gv[n], gk[n] = v, int32(tap*f2)
						n += nz
						cnt := w.tap2Cnt[tap]
						w.tap2L[tap*ts2+cnt] = tapRef2{v, int32(pos * f2), int32(base + ci)}
						w.tap2Cnt[tap] = cnt + nz
					}
				}
			}
			for n%4 != 0 {
				gv[n], gk[n] = 0, 0
				n++
			}
			nv, nk := gv[:n], gk[:n]
			j := 0
			for ; j+4 <= len(nv); j += 4 {
				axpy4(out, nv[j], nv[j+1], nv[j+2], nv[j+3],
					w2[nk[j]:], w2[nk[j+1]:], w2[nk[j+2]:], w2[nk[j+3]:])
			}
			for ; j < len(nv); j++ {
				axpy(out, nv[j], w2[nk[j]:int(nk[j])+f2])
			}
		}
	}
}

// conv1Range returns the output rows oy0..oy1 and columns ox0..ox1 that
// input pixel idx contributes to, and its padded coordinates (ty, tx).
func (m *CNN) conv1Range(idx int) (oy0, oy1, ox0, ox1, ty, tx int) {
	ty = idx/m.cfg.Width + m.pad1t
	tx = idx%m.cfg.Width + m.pad1l
	// ky = ty - 2*oy in [0, 8)  <=>  (ty-7)/2 <= oy <= ty/2
	oy0 = max(0, (ty-cnnKernel1+cnnStride1)/cnnStride1)
	oy1 = min(m.o1h-1, ty/cnnStride1)
	ox0 = max(0, (tx-cnnKernel1+cnnStride1)/cnnStride1)
	ox1 = min(m.o1w-1, tx/cnnStride1)
	return
}

// maxPoolReLU computes out = maxpool_{2x2, stride 1}(ReLU(a)) for an HWC
// tensor a of h x w x ch, recording in arg the index into a of each
// window's maximum (the first on ties). It compares the IEEE-754 bit
// patterns of the rectified (hence non-negative) values as integers, which
// orders them like the floats and lets the compiler use conditional moves
// instead of unpredictable branches.
func maxPoolReLU(a, out []float64, arg []int64, h, w, ch, rows, cols int) {
	ow := w - 1
	for y := range rows {
		for x := range cols {
			i00 := (y*w + x) * ch
			i01 := i00 + ch
			i10 := i00 + w*ch
			i11 := i10 + ch
			o := (y*ow + x) * ch
			dst := out[o : o+ch]
			dArg := arg[o : o+ch]
			r00, r01 := a[i00:i00+ch], a[i01:i01+ch]
			r10, r11 := a[i10:i10+ch], a[i11:i11+ch]
			for c := range dst {
				best, bi := reluBits(r00[c]), i00+c
				if v := reluBits(r01[c]); v > best {
					best, bi = v, i01+c
				}
				if v := reluBits(r10[c]); v > best {
					best, bi = v, i10+c
				}
				if v := reluBits(r11[c]); v > best {
					best, bi = v, i11+c
				}
				dst[c] = math.Float64frombits(best)
				dArg[c] = int64(bi)
			}
		}
	}
}

// nonZeroBit returns 1 if v != 0 (either sign of zero counts as zero
// only for +0; callers pass rectified values) and 0 otherwise, without a
// branch.
func nonZeroBit(v float64) int {
	b := math.Float64bits(v)
	return int((b | -b) >> 63)
}

// reluBits returns the bits of max(v, 0) (+0 for negative v and -0).
func reluBits(v float64) uint64 {
	b := math.Float64bits(v)
	return b &^ uint64(int64(b)>>63)
}

func (w *cnnWorker) Gradient(x []float64, label int, grad []float64) float64 {
	m := w.m
	c := m.cfg
	p := m.params
	f1, f2, hd, k := c.Filters1, c.Filters2, c.Hidden, c.Classes
	w.forward(x, true)
	loss := softmaxCrossEntropy(w.logits, label, w.logits) // logits := dL/dlogits
	grad = grad[:m.n]
	zero(grad)

	// dense2
	dl := w.logits
	gwd2 := grad[m.wd2:m.bd2]
	wd2 := p[m.wd2:m.bd2]
	copy(grad[m.bd2:], dl)
	tanh := c.Activation == Tanh
	// The activations' derivatives in terms of their outputs y: ReLU
	// passes the gradient where y > 0 (a zero output passes none), tanh
	// multiplies it by 1 − y² everywhere.
	for j, v := range w.h {
		switch {
		case tanh:
			axpy(gwd2[j*k:(j+1)*k], v, dl)
			w.dh[j] = dot(wd2[j*k:(j+1)*k], dl) * (1 - v*v)
		case v > 0:
			axpy(gwd2[j*k:(j+1)*k], v, dl)
			w.dh[j] = dot(wd2[j*k:(j+1)*k], dl)
		default:
			w.dh[j] = 0
		}
	}
	// dense1
	copy(grad[m.bd1:m.wd2], w.dh)
	gwd1 := grad[m.wd1:m.bd1]
	wd1 := p[m.wd1:m.bd1]
	zero(w.dA2)
	if tanh {
		for i, v := range w.p2 {
			// pool2 + tanh backward: route to the window's maximum.
			w.dA2[w.arg2[i]] += axpyDot(gwd1[i*hd:(i+1)*hd], wd1[i*hd:(i+1)*hd], v, w.dh) * (1 - v*v)
		}
	} else {
		for i, v := range w.p2 {
			if v > 0 {
				axpy(gwd1[i*hd:(i+1)*hd], v, w.dh)
				// pool2 + ReLU backward: route to the window's maximum.
				w.dA2[w.arg2[i]] += dot(wd1[i*hd:(i+1)*hd], w.dh)
			}
		}
	}
	// conv2: per tap, four positions per pass over the weight row (weight
	// gradient and input gradient at once). With ReLU, over the recorded
	// non-zero inputs (a ReLU'd zero passes no gradient back); with tanh,
	// over all inputs (conv2BackwardDense).
	gw2 := grad[m.w2:m.b2]
	gb2 := grad[m.b2:m.wd1]
	w2 := p[m.w2:m.b2]
	npos2 := m.o2h * m.o2w
	ts2 := npos2 + 3
	sink := int32(len(w.dP1) - 1)
	for pos := range npos2 {
		axpy(gb2, 1, w.dA2[pos*f2:(pos+1)*f2])
	}
	zero(w.dP1)
	if tanh {
		w.conv2BackwardDense(gw2, w2)
	} else {
		for tap, cnt := range w.tap2Cnt {
			o := tap * f2
			gwRow, wRow := gw2[o:o+f2], w2[o:o+f2]
			lo := tap * ts2
			l := w.tap2L[lo : lo+cnt : lo+ts2]
			for len(l)%4 != 0 {
				l = append(l, tapRef2{0, 0, sink})
			}
			for len(l) >= 4 {
				s0, s1, s2, s3 := axpyDot4(gwRow, wRow, l[0].v, l[1].v, l[2].v, l[3].v,
					w.dA2[l[0].g:], w.dA2[l[1].g:], w.dA2[l[2].g:], w.dA2[l[3].g:])
				w.dP1[l[0].b] += s0
				w.dP1[l[1].b] += s1
				w.dP1[l[2].b] += s2
				w.dP1[l[3].b] += s3
				l = l[4:]
			}
			for _, e := range l {
				w.dP1[e.b] += axpyDot(gwRow, wRow, e.v, w.dA2[e.g:])
			}
		}
	}
	// pool1 + activation backward
	zero(w.dA1)
	if tanh {
		for i, v := range w.p1 {
			w.dA1[w.arg1[i]] += w.dP1[i] * (1 - v*v)
		}
	} else {
		for i, v := range w.p1 {
			if v > 0 {
				w.dA1[w.arg1[i]] += w.dP1[i]
			}
		}
	}
	// conv1 (no input gradient needed): per tap, four positions per pass.
	gb1 := grad[m.b1:m.w2]
	for o := 0; o < len(w.dA1); o += f1 {
		axpy(gb1, 1, w.dA1[o:o+f1])
	}
	gw1 := grad[m.w1:m.b1]
	ts1 := m.o1h*m.o1w + 3
	for tap, cnt := range w.tapCnt {
		row := gw1[tap*f1 : (tap+1)*f1]
		l := padRefs(w.tapL[tap*ts1 : tap*ts1+cnt : (tap+1)*ts1])
		for len(l) >= 4 {
			axpy4(row, l[0].v, l[1].v, l[2].v, l[3].v, w.dA1[l[0].o:], w.dA1[l[1].o:], w.dA1[l[2].o:], w.dA1[l[3].o:])
			l = l[4:]
		}
		for _, e := range l {
			axpy(row, e.v, w.dA1[e.o:int(e.o)+f1])
		}
	}
	return loss
}
