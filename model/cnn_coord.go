package model

import "math"

// GradientCoordinate implements CoordinateWorker: one coordinate of the
// per-example gradient of the CNN, equal bit for bit to grad[j] after
// Gradient(x, label, grad), at the cost of the forward pass plus a small
// part of the backward pass.
//
// What each coordinate needs (f1, f2 the filters, hd the hidden units, k
// the classes; dl = dL/dlogits, dh = dL/dh, dA2 and dA1 the gradients at
// the conv outputs before pooling):
//
//	dense2 bias c        dl[c]
//	dense2 weight (r,c)  h[r]·dl[c]
//	dense1 bias o        dh[o]
//	dense1 weight (i,o)  p2[i]·dh[o]
//	conv2 bias o         sum over positions of dA2[·, o]
//	conv2 weight (t,o)   sum over positions of p1[t's input]·dA2[·, o]
//	conv1 bias o         sum over positions of dA1[·, o]
//	conv1 weight (t,o)   sum over non-zero pixels of x·dA1[·, o]
//
// dA1 in channel o needs the conv2 input gradient dP1 in channel o only:
// the 16 conv2 taps with input channel o, 4x4 of the f1·f2 weight rows. So
// the dense coordinates (62% of the authors' network) need dl and dh, the
// conv2 coordinates dA2 (the dense1 input gradient, hd·flat multiply-adds),
// the conv1 coordinates 16·npos2·f2 more; the conv2 backward pass that
// dominates Gradient (2·npos2·16·f1·f2 multiply-adds) is never run.
//
// Bit-identity: every quantity above is computed from the same forward
// pass with the same operations in the same order as Gradient: dh and dA2
// by the same loops, each sum over positions, taps or pixels element-wise
// by the one-element forms of the kernels Gradient calls for it
// (kernels_elem.go: the same groups of four, the same FMA roundings on the
// assembly build, the same expressions on the portable one), and every
// value that Gradient accumulates from +0 starts from +0 here. Each
// element of a vector kernel's output depends on that element's inputs
// only, so the one element equals the vector's.
//
// Where the compiler may fuse multiply-adds (noFMAFusion false: GOAMD64=v3,
// arm64, ...), the one-element forms cannot follow its choices, and
// GradientCoordinate computes the full Gradient instead (exact, no saving).
//
// Certification: Gradient's output has a NaN or infinite coordinate only
// if some operand or partial sum of the backward pass is non-finite. Every
// coordinate is a sum of at most N = npos1 + npos2 + 8 terms, each a
// product of an input-side factor (an entry of x, p1, p2 or h: at most A
// in magnitude) and an output-side factor (an entry of dl, dh, dA2 or dA1:
// at most D). dl, dh and dA2 are computed here and scanned; the dA1
// entries are sums of at most 4 pooled routes of dP1 entries times
// |1 - p1²| <= 1 (tanh) or 1 (ReLU), each dP1 entry a sum of at most
// 16 dot products of length f2 of conv2 weights (at most W2) with dA2
// entries, so |dA1| <= 4·16·f2·W2·max|dA2|·(1+2^-40). If every scanned
// value is finite and N·A·D < 2^1000, every partial sum of the backward
// pass is below 2^1001 (N terms, rounding error far below a factor 2), so
// finite, and no NaN can arise (NaN needs a non-finite operand or 0·Inf or
// Inf−Inf). Then certified is true; otherwise false (the caller falls back
// to Gradient).
func (w *cnnWorker) GradientCoordinate(x []float64, label, j int) (gj, loss float64, certified bool) {
	m := w.m
	if j < 0 || j >= m.n {
		panic("model: GradientCoordinate: coordinate out of range")
	}
	if !noFMAFusion {
		return w.gradientCoordinateFull(x, label, j)
	}
	c := m.cfg
	p := m.params
	f1, f2, hd, k := c.Filters1, c.Filters2, c.Hidden, c.Classes
	tanh := c.Activation == Tanh
	w.forward(x, j < m.b1)                                // conv1's per-tap lists for its weight coordinates only
	loss = softmaxCrossEntropy(w.logits, label, w.logits) // logits := dL/dlogits
	dl := w.logits

	// dh and dA2 exactly as Gradient computes them.
	wd2 := p[m.wd2:m.bd2]
	for r, v := range w.h {
		switch {
		case tanh:
			w.dh[r] = dot(wd2[r*k:(r+1)*k], dl) * (1 - v*v)
		case v > 0:
			w.dh[r] = dot(wd2[r*k:(r+1)*k], dl)
		default:
			w.dh[r] = 0
		}
	}
	wd1 := p[m.wd1:m.bd1]
	zero(w.dA2)
	if tanh {
		// Eight rows at a time (independent sums, so the CPU overlaps
		// them), each summed in axpyDotDot's order; added in row order.
		i := 0
		var s [8]float64
		for ; i+8 <= len(w.p2); i += 8 {
			axpyDotDot8(&s, wd1[i*hd:(i+8)*hd], w.dh)
			for q, sq := range s {
				v := w.p2[i+q]
				w.dA2[w.arg2[i+q]] += sq * (1 - v*v)
			}
		}
		for ; i < len(w.p2); i++ {
			v := w.p2[i]
			w.dA2[w.arg2[i]] += axpyDotDot(wd1[i*hd:(i+1)*hd], w.dh) * (1 - v*v)
		}
	} else {
		for i, v := range w.p2 {
			if v > 0 {
				w.dA2[w.arg2[i]] += dot(wd1[i*hd:(i+1)*hd], w.dh)
			}
		}
	}
	if !w.certifyFinite() {
		return 0, loss, false
	}

	switch {
	case j >= m.bd2: // copy(grad[bd2:], dl)
		return dl[j-m.bd2], loss, true
	case j >= m.wd2: // axpy(gwd2 row r, h[r], dl) from +0 (ReLU: only h[r] > 0)
		r, o := (j-m.wd2)/k, (j-m.wd2)%k
		if v := w.h[r]; tanh || v > 0 {
			return axpyElem(0, v, dl[o]), loss, true
		}
		return 0, loss, true
	case j >= m.bd1: // copy(grad[bd1:wd2], dh)
		return w.dh[j-m.bd1], loss, true
	case j >= m.wd1: // tanh: axpyDot(gwd1 row i, ·, p2[i], dh); ReLU: axpy if p2[i] > 0
		i, o := (j-m.wd1)/hd, (j-m.wd1)%hd
		v := w.p2[i]
		if tanh {
			return axpyDotGradElem(0, v, w.dh[o]), loss, true
		}
		if v > 0 {
			return axpyElem(0, v, w.dh[o]), loss, true
		}
		return 0, loss, true
	case j >= m.b2: // axpy(gb2, 1, dA2[pos]) for every position
		o := j - m.b2
		var s float64
		for pos := range m.o2h * m.o2w {
			s = axpyElem(s, 1, w.dA2[pos*f2+o])
		}
		return s, loss, true
	case j >= m.w2:
		tap, o := (j-m.w2)/f2, (j-m.w2)%f2
		return w.conv2WeightCoordinate(tap, o), loss, true
	}
	// conv1: channel o of dA1 first.
	o := (j - m.w1) % f1
	w.dA1Channel(o)
	if j >= m.b1 { // axpy(gb1, 1, dA1[pos]) for every position
		var s float64
		for off := 0; off < len(w.dA1); off += f1 {
			s = axpyElem(s, 1, w.dA1[off+o])
		}
		return s, loss, true
	}
	// axpy4 over the tap's recorded pixels (padded to fours with zeros).
	tap := (j - m.w1) / f1
	ts1 := m.o1h*m.o1w + 3
	l := padRefs(w.tapL[tap*ts1 : tap*ts1+w.tapCnt[tap] : (tap+1)*ts1])
	var s float64
	for len(l) >= 4 {
		s = axpy4Elem(s, l[0].v, l[1].v, l[2].v, l[3].v,
			w.dA1[int(l[0].o)+o], w.dA1[int(l[1].o)+o], w.dA1[int(l[2].o)+o], w.dA1[int(l[3].o)+o])
		l = l[4:]
	}
	for _, e := range l {
		s = axpyElem(s, e.v, w.dA1[int(e.o)+o])
	}
	return s, loss, true
}

// gradientCoordinateFull is GradientCoordinate through the full Gradient,
// for builds where the compiler may fuse multiply-adds (noFMAFusion false):
// exact by construction, certified when every coordinate is finite, with
// no saving.
func (w *cnnWorker) gradientCoordinateFull(x []float64, label, j int) (gj, loss float64, certified bool) {
	if w.full == nil {
		w.full = make([]float64, w.m.n)
	}
	loss = w.Gradient(x, label, w.full)
	return w.full[j], loss, maxAbs(w.full) <= math.MaxFloat64
}

// conv2WeightCoordinate returns element o of conv2's weight-gradient row
// for kernel tap tap (= (ky*4+kx)*Filters1 + ci), accumulated as Gradient
// accumulates it: over the positions in fours (tanh: every position,
// conv2BackwardDense; ReLU: the recorded non-zero inputs, padded with
// zero entries), from +0.
func (w *cnnWorker) conv2WeightCoordinate(tap, o int) float64 {
	m := w.m
	f1, f2 := m.cfg.Filters1, m.cfg.Filters2
	dA2 := w.dA2
	var s float64
	if m.cfg.Activation == Tanh {
		ci, kk := tap%f1, tap/f1
		off := int32((kk/cnnKernel2*m.p1w+kk%cnnKernel2)*f1 + ci)
		pb, p1 := w.pos2Base, w.p1
		npos := len(pb)
		pos := 0
		for ; pos+4 <= npos; pos += 4 {
			s = axpyDot4GradElem(s, p1[pb[pos]+off], p1[pb[pos+1]+off], p1[pb[pos+2]+off], p1[pb[pos+3]+off],
				dA2[pos*f2+o], dA2[(pos+1)*f2+o], dA2[(pos+2)*f2+o], dA2[(pos+3)*f2+o])
		}
		for ; pos < npos; pos++ {
			s = axpyDotGradElem(s, p1[pb[pos]+off], dA2[pos*f2+o])
		}
		return s
	}
	l := w.tap2List(tap)
	for len(l) >= 4 {
		s = axpyDot4GradElem(s, l[0].v, l[1].v, l[2].v, l[3].v,
			dA2[int(l[0].g)+o], dA2[int(l[1].g)+o], dA2[int(l[2].g)+o], dA2[int(l[3].g)+o])
		l = l[4:]
	}
	for _, e := range l {
		s = axpyDotGradElem(s, e.v, dA2[int(e.g)+o])
	}
	return s
}

// tap2List returns conv2's recorded inputs for kernel tap tap (ReLU path),
// padded to a multiple of four with entries adding nothing into the sink
// of dP1, as Gradient pads them.
func (w *cnnWorker) tap2List(tap int) []tapRef2 {
	ts2 := w.m.o2h*w.m.o2w + 3
	lo := tap * ts2
	l := w.tap2L[lo : lo+w.tap2Cnt[tap] : lo+ts2]
	sink := int32(len(w.dP1) - 1)
	for len(l)%4 != 0 {
		l = append(l, tapRef2{0, 0, sink})
	}
	return l
}

// dA1Channel computes channel o of w.dA1 (the other channels are zero) as
// Gradient computes it: channel o of the conv2 input gradient dP1 from the
// taps with input channel o in Gradient's order of taps and positions,
// then the pool1 and activation backward pass.
func (w *cnnWorker) dA1Channel(o int) {
	m := w.m
	f1, f2 := m.cfg.Filters1, m.cfg.Filters2
	w2 := m.params[m.w2:m.b2]
	dP1, dA2 := w.dP1, w.dA2
	zero(dP1)
	tanh := m.cfg.Activation == Tanh
	for kk := range cnnKernel2 * cnnKernel2 {
		tap := kk*f1 + o
		wRow := w2[tap*f2 : (tap+1)*f2]
		if tanh {
			pb := w.pos2Base
			off := int32((kk/cnnKernel2*m.p1w+kk%cnnKernel2)*f1 + o)
			npos := len(pb)
			pos := 0
			for ; pos+4 <= npos; pos += 4 {
				for q := range 4 {
					dP1[pb[pos+q]+off] += axpyDot4DotElem(wRow, dA2[(pos+q)*f2:])
				}
			}
			for ; pos < npos; pos++ {
				dP1[pb[pos]+off] += axpyDotDot(wRow, dA2[pos*f2:])
			}
			continue
		}
		l := w.tap2List(tap)
		for len(l) >= 4 {
			for q := range 4 {
				dP1[l[q].b] += axpyDot4DotElem(wRow, dA2[l[q].g:])
			}
			l = l[4:]
		}
		for _, e := range l {
			dP1[e.b] += axpyDotDot(wRow, dA2[e.g:])
		}
	}
	zero(w.dA1)
	for i := o; i < len(w.p1); i += f1 {
		v := w.p1[i]
		if tanh {
			w.dA1[w.arg1[i]] += dP1[i] * (1 - v*v)
		} else if v > 0 {
			w.dA1[w.arg1[i]] += dP1[i]
		}
	}
}

// certifyFinite reports whether every coordinate of the gradient Gradient
// would write is provably finite, given the forward pass, dl (in
// w.logits), w.dh and w.dA2 (see GradientCoordinate for the bound).
func (w *cnnWorker) certifyFinite() bool {
	m := w.m
	a := max(maxAbs(w.h), maxAbs(w.p2), maxAbs(w.p1), maxAbs(w.nzVal), 1)
	d2 := maxAbs(w.dA2)
	w2 := maxAbs(m.params[m.w2:m.b2])
	da1 := 4 * float64(cnnKernel2*cnnKernel2*m.cfg.Filters2) * w2 * d2 * (1 + 0x1p-40)
	d := max(maxAbs(w.logits), maxAbs(w.dh), d2, da1)
	n := float64(m.o1h*m.o1w + m.o2h*m.o2w + 8)
	// NaN (from maxAbs of a NaN) or Inf fails the comparison.
	return n*a*d < 0x1p1000
}

// maxAbs returns max |v_i| (0 for an empty v), or NaN if some v_i is NaN.
// It compares the IEEE-754 bits without the sign as integers, which order
// like the magnitudes (NaNs above +Inf).
func maxAbs(v []float64) float64 {
	mx := maxAbsBits(v)
	if mx > 0x7ff0000000000000 {
		return math.NaN()
	}
	return math.Float64frombits(mx)
}

// maxAbsBitsGeneric is maxAbsBits in Go: four running maxima.
func maxAbsBitsGeneric(v []float64) uint64 {
	const absMask = 1<<63 - 1
	var m0, m1, m2, m3 uint64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		m0 = max(m0, math.Float64bits(v[i])&absMask)
		m1 = max(m1, math.Float64bits(v[i+1])&absMask)
		m2 = max(m2, math.Float64bits(v[i+2])&absMask)
		m3 = max(m3, math.Float64bits(v[i+3])&absMask)
	}
	for ; i < len(v); i++ {
		m0 = max(m0, math.Float64bits(v[i])&absMask)
	}
	return max(max(m0, m1), max(m2, m3))
}
