package model

import "math"

// The tanh network (AuthorsCNN) has dense activations: tanh is zero only
// where its input is, and an exact zero still passes gradient (tanh'(0) = 1).
// Its conv2 therefore reads every input, and records every (input, tap,
// position) triple for the backward pass, which is shared with ReLU.

// maxPoolTanh computes out = maxpool_{2x2, stride 1}(tanh(a)) for an HWC
// tensor a of h x w x ch as tanh(maxpool(a)) (tanh is increasing, so the two
// agree, and this evaluates tanh once per output instead of once per
// input), recording in arg the index into a of each window's maximum (the
// first on ties).
func maxPoolTanh(a, out []float64, arg []int32, h, w, ch int) {
	ow := w - 1
	for y := range h - 1 {
		for x := range ow {
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
				best, bi := r00[c], i00+c
				if v := r01[c]; v > best {
					best, bi = v, i01+c
				}
				if v := r10[c]; v > best {
					best, bi = v, i10+c
				}
				if v := r11[c]; v > best {
					best, bi = v, i11+c
				}
				dst[c] = math.Tanh(best)
				dArg[c] = int32(bi)
			}
		}
	}
}

// conv2Dense computes conv2 from the pool1 output w.p1 into w.a2 reading
// every input, and records every input per kernel tap for the backward
// pass. For one output position and kernel row ky, the 4 taps kx times
// Filters1 input channels are contiguous both in p1 (HWC) and in the kernel
// ([ky][kx][in][out]), so each row is a vector-matrix product of 4·Filters1
// inputs, four weight rows per pass over the output (axpy4).
func (w *cnnWorker) conv2Dense() {
	m := w.m
	c := m.cfg
	p := m.params
	f1, f2 := c.Filters1, c.Filters2
	npos2 := m.o2h * m.o2w
	ts2 := npos2 + 3
	rowLen := cnnKernel2 * f1
	b2 := p[m.b2:m.wd1]
	w2 := p[m.w2:m.b2]
	for tap := range w.tap2Cnt {
		w.tap2Cnt[tap] = npos2
	}
	for oy := range m.o2h {
		for ox := range m.o2w {
			pos := oy*m.o2w + ox
			out := w.a2[pos*f2 : (pos+1)*f2]
			copy(out, b2)
			g := int32(pos * f2)
			for ky := range cnnKernel2 {
				base := ((cnnStride2*oy+ky)*m.p1w + cnnStride2*ox) * f1
				in := w.p1[base : base+rowLen]
				tap0 := ky * rowLen
				wr := w2[tap0*f2 : (tap0+rowLen)*f2]
				j := 0
				for ; j+4 <= len(in); j += 4 {
					axpy4(out, in[j], in[j+1], in[j+2], in[j+3],
						wr[j*f2:], wr[(j+1)*f2:], wr[(j+2)*f2:], wr[(j+3)*f2:])
				}
				for ; j < len(in); j++ {
					axpy(out, in[j], wr[j*f2:(j+1)*f2])
				}
				for j, v := range in {
					w.tap2L[(tap0+j)*ts2+pos] = tapRef2{v, g, int32(base + j)}
				}
			}
		}
	}
}
