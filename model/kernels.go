package model

// dot returns sum_i a[i]*b[i] over len(a) elements (b must be at least as
// long), with four accumulators to shorten the dependency chain.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	for len(a) >= 4 && len(b) >= 4 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		a, b = a[4:], b[4:]
	}
	for i, v := range a {
		s0 += v * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpyGeneric computes dst += alpha*x over len(x) elements (dst must be at
// least as long).
func axpyGeneric(dst []float64, alpha float64, x []float64) {
	dst = dst[:len(x)]
	for len(x) >= 4 {
		dst[0] += alpha * x[0]
		dst[1] += alpha * x[1]
		dst[2] += alpha * x[2]
		dst[3] += alpha * x[3]
		dst, x = dst[4:], x[4:]
	}
	for i, v := range x {
		dst[i] += alpha * v
	}
}

// allZero reports whether every element of v is zero.
func allZero(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// axpy4Generic computes dst += a0*x0 + a1*x1 + a2*x2 + a3*x3 over len(dst)
// elements: four multiply-adds per load and store of dst, about twice the
// throughput of four axpy calls.
func axpy4Generic(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	n := len(dst)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for i := range dst {
		dst[i] += a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i]
	}
}

// axpyDot4Generic is the fused backward kernel of a layer y = W^T x with four
// inputs v0..v3 sharing one weight row w (len n) and having output
// gradients g0..g3: it adds v0*g0 + ... + v3*g3 to the weight gradient gw
// and returns the four input gradients <w, g0>, ..., <w, g3>.
func axpyDot4Generic(gw, w []float64, v0, v1, v2, v3 float64, g0, g1, g2, g3 []float64) (s0, s1, s2, s3 float64) {
	n := len(gw)
	w, g0, g1, g2, g3 = w[:n], g0[:n], g1[:n], g2[:n], g3[:n]
	for i := range gw {
		a, b, c, d := g0[i], g1[i], g2[i], g3[i]
		gw[i] += v0*a + v1*b + v2*c + v3*d
		wi := w[i]
		s0 += wi * a
		s1 += wi * b
		s2 += wi * c
		s3 += wi * d
	}
	return
}

// axpyDot is the one-input form of axpyDot4Generic: gw += v*g, returns <w, g>.
func axpyDot(gw, w []float64, v float64, g []float64) (s float64) {
	n := len(gw)
	w, g = w[:n], g[:n]
	for i := range gw {
		gi := g[i]
		gw[i] += v * gi
		s += w[i] * gi
	}
	return
}

func zeroInt(v []int) {
	for i := range v {
		v[i] = 0
	}
}

// axpy4RefsGeneric calls axpy4 for every group of four entries of refs (len
// a multiple of 4), in order: dst += the entries' values times the rows of
// w at their offsets.
func axpy4RefsGeneric(dst, w []float64, refs []tapRef) {
	for l := refs; len(l) >= 4; l = l[4:] {
		axpy4(dst, l[0].v, l[1].v, l[2].v, l[3].v, w[l[0].o:], w[l[1].o:], w[l[2].o:], w[l[3].o:])
	}
}

// axpy4RowsGeneric calls axpy4 for every group of four inputs in (len a
// multiple of 4), in order, with the rows w[i*stride:].
func axpy4RowsGeneric(dst, in, w []float64, stride int) {
	for j := 0; j+4 <= len(in); j += 4 {
		axpy4(dst, in[j], in[j+1], in[j+2], in[j+3], w[j*stride:], w[(j+1)*stride:], w[(j+2)*stride:], w[(j+3)*stride:])
	}
}
