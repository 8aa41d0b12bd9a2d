package model

import "math"

// naiveCNNGradient is the straightforward baseline: direct (non-im2col,
// dense, no sparsity) convolution loops with explicit TF 'same' padding,
// activation (ReLU or tanh, as Keras orders them: before the pool) and
// max-pool as separate passes, written independently of the optimized
// worker. It returns the loss and writes the gradient in the same
// parameter layout. Used to cross-check the optimized worker and as the
// "straightforward Go" row of the benchmarks.
func naiveCNNGradient(m *CNN, x []float64, label int, grad []float64) float64 {
	c := m.cfg
	p := m.params
	H, W := c.Height, c.Width
	f1, f2, hd, K := c.Filters1, c.Filters2, c.Hidden, c.Classes
	k1, k2 := cnnKernel1, cnnKernel2
	w1 := func(ky, kx, o int) int { return m.w1 + (ky*k1+kx)*f1 + o }
	w2 := func(ky, kx, i, o int) int { return m.w2 + ((ky*k2+kx)*f1+i)*f2 + o }
	// act is the activation; dact its derivative at the pre-activation z.
	act := func(z float64) float64 { return max(z, 0) }
	dact := func(z float64) float64 {
		if z > 0 {
			return 1
		}
		return 0
	}
	if c.Activation == Tanh {
		act = math.Tanh
		dact = func(z float64) float64 { t := math.Tanh(z); return 1 - t*t }
	}

	// conv1 'same'
	o1h, o1w := (H+1)/2, (W+1)/2
	padT := max((o1h-1)*2+k1-H, 0) / 2
	padL := max((o1w-1)*2+k1-W, 0) / 2
	pix := func(y, x2 int) float64 {
		if y < 0 || y >= H || x2 < 0 || x2 >= W {
			return 0
		}
		return x[y*W+x2]
	}
	z1 := make([]float64, o1h*o1w*f1)
	for oy := 0; oy < o1h; oy++ {
		for ox := 0; ox < o1w; ox++ {
			for o := 0; o < f1; o++ {
				s := p[m.b1+o]
				for ky := 0; ky < k1; ky++ {
					for kx := 0; kx < k1; kx++ {
						s += pix(2*oy+ky-padT, 2*ox+kx-padL) * p[w1(ky, kx, o)]
					}
				}
				z1[(oy*o1w+ox)*f1+o] = s
			}
		}
	}
	r1 := make([]float64, len(z1))
	for i, v := range z1 {
		r1[i] = act(v)
	}
	pool := func(in []float64, h, w, ch int) (out []float64, arg []int) {
		out = make([]float64, (h-1)*(w-1)*ch)
		arg = make([]int, len(out))
		for y := 0; y < h-1; y++ {
			for x2 := 0; x2 < w-1; x2++ {
				for o := 0; o < ch; o++ {
					bi := (y*w+x2)*ch + o
					for _, d := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
						i := ((y+d[0])*w+x2+d[1])*ch + o
						if in[i] > in[bi] {
							bi = i
						}
					}
					out[(y*(w-1)+x2)*ch+o] = in[bi]
					arg[(y*(w-1)+x2)*ch+o] = bi
				}
			}
		}
		return
	}
	q1, arg1 := pool(r1, o1h, o1w, f1)
	p1h, p1w := o1h-1, o1w-1
	// conv2 'valid'
	o2h, o2w := (p1h-k2)/2+1, (p1w-k2)/2+1
	z2 := make([]float64, o2h*o2w*f2)
	for oy := 0; oy < o2h; oy++ {
		for ox := 0; ox < o2w; ox++ {
			for o := 0; o < f2; o++ {
				s := p[m.b2+o]
				for ky := 0; ky < k2; ky++ {
					for kx := 0; kx < k2; kx++ {
						for i := 0; i < f1; i++ {
							s += q1[((2*oy+ky)*p1w+2*ox+kx)*f1+i] * p[w2(ky, kx, i, o)]
						}
					}
				}
				z2[(oy*o2w+ox)*f2+o] = s
			}
		}
	}
	r2 := make([]float64, len(z2))
	for i, v := range z2 {
		r2[i] = act(v)
	}
	q2, arg2 := pool(r2, o2h, o2w, f2)
	flat := len(q2)
	// dense layers
	z3 := make([]float64, hd)
	for j := 0; j < hd; j++ {
		s := p[m.bd1+j]
		for i := 0; i < flat; i++ {
			s += q2[i] * p[m.wd1+i*hd+j]
		}
		z3[j] = s
	}
	h := make([]float64, hd)
	for j, v := range z3 {
		h[j] = act(v)
	}
	logits := make([]float64, K)
	for o := 0; o < K; o++ {
		s := p[m.bd2+o]
		for j := 0; j < hd; j++ {
			s += h[j] * p[m.wd2+j*K+o]
		}
		logits[o] = s
	}
	dl := make([]float64, K)
	loss := softmaxCrossEntropy(logits, label, dl)

	for i := range grad {
		grad[i] = 0
	}
	dh := make([]float64, hd)
	for o := 0; o < K; o++ {
		grad[m.bd2+o] = dl[o]
		for j := 0; j < hd; j++ {
			grad[m.wd2+j*K+o] = h[j] * dl[o]
			dh[j] += p[m.wd2+j*K+o] * dl[o]
		}
	}
	dq2 := make([]float64, flat)
	for j := 0; j < hd; j++ {
		dh[j] *= dact(z3[j])
		if dh[j] == 0 {
			continue
		}
		grad[m.bd1+j] = dh[j]
		for i := 0; i < flat; i++ {
			grad[m.wd1+i*hd+j] = q2[i] * dh[j]
			dq2[i] += p[m.wd1+i*hd+j] * dh[j]
		}
	}
	dz2 := make([]float64, len(z2))
	for i, g := range dq2 {
		dz2[arg2[i]] += g * dact(z2[arg2[i]])
	}
	dq1 := make([]float64, len(q1))
	for oy := 0; oy < o2h; oy++ {
		for ox := 0; ox < o2w; ox++ {
			for o := 0; o < f2; o++ {
				g := dz2[(oy*o2w+ox)*f2+o]
				grad[m.b2+o] += g
				for ky := 0; ky < k2; ky++ {
					for kx := 0; kx < k2; kx++ {
						for i := 0; i < f1; i++ {
							qi := ((2*oy+ky)*p1w+2*ox+kx)*f1 + i
							grad[w2(ky, kx, i, o)] += q1[qi] * g
							dq1[qi] += p[w2(ky, kx, i, o)] * g
						}
					}
				}
			}
		}
	}
	dz1 := make([]float64, len(z1))
	for i, g := range dq1 {
		dz1[arg1[i]] += g * dact(z1[arg1[i]])
	}
	for oy := 0; oy < o1h; oy++ {
		for ox := 0; ox < o1w; ox++ {
			for o := 0; o < f1; o++ {
				g := dz1[(oy*o1w+ox)*f1+o]
				grad[m.b1+o] += g
				for ky := 0; ky < k1; ky++ {
					for kx := 0; kx < k1; kx++ {
						grad[w1(ky, kx, o)] += pix(2*oy+ky-padT, 2*ox+kx-padL) * g
					}
				}
			}
		}
	}
	return loss
}
