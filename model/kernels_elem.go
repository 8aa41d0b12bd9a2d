package model

import "math"

// One-element forms of the vector kernels (kernels.go, kernels_amd64.s):
// each returns, for a single index i, exactly the value the kernel stores
// or returns, with the same operations in the same order and the same
// roundings, on the kernel set this build dispatches to (useAVX2). They let
// GradientCoordinate reproduce one coordinate of Gradient bit for bit.
//
// The AVX2 kernels round every multiply-add of their FMA steps once
// (math.FMA here) and add the partial products in the order of the
// assembly; the portable kernels are plain Go, and the forms below repeat
// their expressions verbatim. They are used only where the compiler fuses
// no multiply-add (noFMAFusion: amd64 below GOAMD64=v3), so that Go code
// rounds as written; TestGradientCoordinateMatchesGradient checks the bits
// on every build.

// axpyElem returns element i of dst after axpy(dst, alpha, x), given
// dst = dst[i] and x = x[i] before the call.
func axpyElem(dst, alpha, x float64) float64 {
	if useAVX2 {
		return math.FMA(alpha, x, dst) // VFMADD231PD/SD
	}
	dst += alpha * x // axpyGeneric
	return dst
}

// axpy4Elem returns element i of dst after axpy4(dst, a0..a3, x0..x3),
// given dst[i] and x0[i]..x3[i].
func axpy4Elem(dst, a0, a1, a2, a3, x0, x1, x2, x3 float64) float64 {
	if useAVX2 {
		t0 := x0 * a0             // VMULPD
		t1 := x1 * a1             // VMULPD
		t0 = math.FMA(a2, x2, t0) // VFMADD231PD
		t1 = math.FMA(a3, x3, t1) // VFMADD231PD
		return (t0 + t1) + dst    // VADDPD, VADDPD
	}
	dst += a0*x0 + a1*x1 + a2*x2 + a3*x3 // axpy4Generic
	return dst
}

// axpyDot4GradElem returns element i of gw after axpyDot4(gw, w, v0..v3,
// g0..g3), given gw[i] and g0[i]..g3[i].
func axpyDot4GradElem(gw, v0, v1, v2, v3, a, b, c, d float64) float64 {
	if useAVX2 {
		t0 := a * v0
		t1 := b * v1
		t0 = math.FMA(v2, c, t0)
		t1 = math.FMA(v3, d, t1)
		return (t0 + t1) + gw
	}
	gw += v0*a + v1*b + v2*c + v3*d // axpyDot4Generic
	return gw
}

// axpyDot4DotElem returns the one of axpyDot4's four dot products <w, g>
// that has g as its vector, over len(w) elements.
func axpyDot4DotElem(w, g []float64) float64 {
	n := len(w)
	g = g[:n]
	if useAVX2 {
		// Four lanes of FMA accumulators over blocks of four, the lanes
		// added as (l0+l2)+(l1+l3) (VEXTRACTF128, VADDPD, VHADDPD), then
		// the tail FMA'd into the sum.
		var l0, l1, l2, l3 float64
		i := 0
		for ; i+4 <= n; i += 4 {
			l0 = math.FMA(w[i], g[i], l0)
			l1 = math.FMA(w[i+1], g[i+1], l1)
			l2 = math.FMA(w[i+2], g[i+2], l2)
			l3 = math.FMA(w[i+3], g[i+3], l3)
		}
		s := (l0 + l2) + (l1 + l3)
		for ; i < n; i++ {
			s = math.FMA(w[i], g[i], s)
		}
		return s
	}
	var s float64
	for i := range w { // axpyDot4Generic's s0 += wi * a
		wi := w[i]
		s += wi * g[i]
	}
	return s
}

// axpyDotGradElem returns element i of gw after axpyDot(gw, w, v, g), given
// gw[i] and g[i] (axpyDot is plain Go on every build).
func axpyDotGradElem(gw, v, gi float64) float64 {
	gw += v * gi
	return gw
}

// axpyDotDot returns the dot product axpyDot(gw, w, v, g) returns: <w, g>
// summed in order over len(w) elements.
func axpyDotDot(w, g []float64) (s float64) {
	n := len(w)
	g = g[:n]
	for i := range w {
		gi := g[i]
		s += w[i] * gi
	}
	return
}

// axpyDotDot8 sets s[q] = axpyDotDot(w[q*n:(q+1)*n], g), n = len(g), for
// eight consecutive rows of w, each summed in the same order with the same
// operations as axpyDotDot, interleaved so that the eight dependency chains
// overlap.
func axpyDotDot8(s *[8]float64, w, g []float64) {
	n := len(g)
	w0, w1, w2, w3 := w[:n], w[n:2*n], w[2*n:3*n], w[3*n:4*n]
	w4, w5, w6, w7 := w[4*n:5*n], w[5*n:6*n], w[6*n:7*n], w[7*n:8*n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for k, gk := range g {
		s0 += w0[k] * gk
		s1 += w1[k] * gk
		s2 += w2[k] * gk
		s3 += w3[k] * gk
		s4 += w4[k] * gk
		s5 += w5[k] * gk
		s6 += w6[k] * gk
		s7 += w7[k] * gk
	}
	*s = [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
}
