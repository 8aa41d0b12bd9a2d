package model

import "math"

// The tanh network (AuthorsCNN) has dense activations: tanh is zero only
// where its input is, and an exact zero still passes gradient (tanh'(0) = 1).
// Its conv2 therefore reads every input in both passes, and needs no lists
// of non-zero inputs: the input of kernel tap (ky, kx, ci) at output
// position (oy, ox) is p1[pos2Base[oy*o2w+ox] + (ky*p1w + kx)*Filters1 + ci].

// maxPoolTanh computes out = maxpool_{2x2, stride 1}(tanh(a)) for an HWC
// tensor a of h x w x ch as tanh(maxpool(a)) (tanh is increasing, so the two
// agree, and this evaluates tanh once per output instead of once per
// input), recording in arg the index into a of each window's maximum (the
// first on ties). The maxima are taken in the total order of orderKey
// (integer keys of the floats, no branches; four lanes at a time with AVX2)
// and tanh is tanhSlice (math.Tanh bit for bit). Only output rows < rows
// and columns < cols are computed, the ones the next layer reads; the
// others are left untouched (zero, as allocated).
func maxPoolTanh(a, out []float64, arg []int64, h, w, ch, rows, cols int, bad []uint8) {
	ow := w - 1
	n := cols * ch
	for y := range rows {
		o := y * ow * ch
		dst := out[o : o+n]
		maxPoolRow(a, dst, arg[o:o+n], y*w*ch, ch, w*ch)
		tanhSlice(dst, bad)
	}
}

// maxPoolRowGeneric is maxPoolRow in Go: for e < len(out), out[e] is the
// largest (in orderKey's order, the first on ties) of a[base+e],
// a[base+e+ch], a[base+e+rowStride], a[base+e+rowStride+ch], and arg[e]
// its index into a.
func maxPoolRowGeneric(a, out []float64, arg []int64, base, ch, rowStride int) {
	for e := range out {
		i00 := base + e
		i01, i10 := i00+ch, i00+rowStride
		i11 := i10 + ch
		best, bi := orderKey(a[i00]), i00
		if v := orderKey(a[i01]); v > best {
			best, bi = v, i01
		}
		if v := orderKey(a[i10]); v > best {
			best, bi = v, i10
		}
		if v := orderKey(a[i11]); v > best {
			best, bi = v, i11
		}
		out[e] = a[bi]
		arg[e] = int64(bi)
	}
}

// orderKey maps a float64 to an int64 that orders like the float (for
// non-NaN values; −0 sorts just below +0): negative floats have all bits
// but the sign flipped, so larger magnitude gives a smaller key.
func orderKey(v float64) int64 {
	b := int64(math.Float64bits(v))
	return b ^ int64(uint64(b>>63)>>1)
}

// conv2Dense computes conv2 from the pool1 output w.p1 into w.a2 reading
// every input. For one output position and kernel row ky, the 4 taps kx times
// Filters1 input channels are contiguous both in p1 (HWC) and in the kernel
// ([ky][kx][in][out]), so each row is a vector-matrix product of 4·Filters1
// inputs, four weight rows per pass over the output (axpy4).
func (w *cnnWorker) conv2Dense() {
	m := w.m
	c := m.cfg
	p := m.params
	f1, f2 := c.Filters1, c.Filters2
	rowLen := cnnKernel2 * f1
	b2 := p[m.b2:m.wd1]
	w2 := p[m.w2:m.b2]
	for oy := range m.o2h {
		for ox := range m.o2w {
			pos := oy*m.o2w + ox
			out := w.a2[pos*f2 : (pos+1)*f2]
			copy(out, b2)
			for ky := range cnnKernel2 {
				base := int(w.pos2Base[pos]) + ky*m.p1w*f1
				in := w.p1[base : base+rowLen]
				tap0 := ky * rowLen
				wr := w2[tap0*f2 : (tap0+rowLen)*f2]
				j := len(in) &^ 3
				axpy4Rows(out, in[:j], wr, f2) // the groups of four, in order
				for ; j < len(in); j++ {
					axpy(out, in[j], wr[j*f2:(j+1)*f2])
				}
			}
		}
	}
}

// conv2BackwardDense adds conv2's weight gradient into gw2 and its input
// gradient into w.dP1, from the output gradient w.dA2: per kernel tap, four
// positions per pass over the tap's weight row (axpyDot4).
func (w *cnnWorker) conv2BackwardDense(gw2, w2 []float64) {
	m := w.m
	f1, f2 := m.cfg.Filters1, m.cfg.Filters2
	npos := len(w.pos2Base)
	pb, p1, dP1, dA2 := w.pos2Base, w.p1, w.dP1, w.dA2
	for ky := range cnnKernel2 {
		for kx := range cnnKernel2 {
			for ci := range f1 {
				tap := (ky*cnnKernel2+kx)*f1 + ci
				off := int32((ky*m.p1w+kx)*f1 + ci)
				gwRow, wRow := gw2[tap*f2:(tap+1)*f2], w2[tap*f2:(tap+1)*f2]
				pos := 0
				for ; pos+4 <= npos; pos += 4 {
					i0, i1, i2, i3 := pb[pos]+off, pb[pos+1]+off, pb[pos+2]+off, pb[pos+3]+off
					s0, s1, s2, s3 := axpyDot4(gwRow, wRow, p1[i0], p1[i1], p1[i2], p1[i3],
						dA2[pos*f2:], dA2[(pos+1)*f2:], dA2[(pos+2)*f2:], dA2[(pos+3)*f2:])
					dP1[i0] += s0
					dP1[i1] += s1
					dP1[i2] += s2
					dP1[i3] += s3
				}
				for ; pos < npos; pos++ {
					i := pb[pos] + off
					dP1[i] += axpyDot(gwRow, wRow, p1[i], dA2[pos*f2:])
				}
			}
		}
	}
}
