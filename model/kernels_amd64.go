//go:build !purego

package model

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2+FMA assembly kernels (kernels_amd64.s) when the
// CPU has them. They are plain Go assembly (no cgo, no C library); build
// with -tags purego to use only the portable Go kernels.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func axpy4AVX2(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 *float64)

//go:noescape
func axpyDot4AVX2(gw []float64, w *float64, v *[4]float64, g0, g1, g2, g3 *float64, s *[4]float64)

//go:noescape
func axpyAVX2(dst []float64, a float64, x *float64)

// axpy computes dst += alpha*x over len(x) elements (dst must be at least
// as long).
func axpy(dst []float64, alpha float64, x []float64) {
	if useAVX2 && len(x) > 0 {
		axpyAVX2(dst[:len(x)], alpha, &x[0])
		return
	}
	axpyGeneric(dst, alpha, x)
}

// axpy4 computes dst += a0*x0 + a1*x1 + a2*x2 + a3*x3 over len(dst)
// elements (each x at least as long).
func axpy4(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	n := len(dst)
	if useAVX2 && n > 0 {
		_, _, _, _ = x0[n-1], x1[n-1], x2[n-1], x3[n-1]
		axpy4AVX2(dst, a0, a1, a2, a3, &x0[0], &x1[0], &x2[0], &x3[0])
		return
	}
	axpy4Generic(dst, a0, a1, a2, a3, x0, x1, x2, x3)
}

// axpyDot4 adds v0*g0 + ... + v3*g3 to gw and returns <w, g0>, ...,
// <w, g3>, over len(gw) elements (w and each g at least as long).
func axpyDot4(gw, w []float64, v0, v1, v2, v3 float64, g0, g1, g2, g3 []float64) (s0, s1, s2, s3 float64) {
	n := len(gw)
	if useAVX2 && n > 0 {
		_, _, _, _, _ = w[n-1], g0[n-1], g1[n-1], g2[n-1], g3[n-1]
		v := [4]float64{v0, v1, v2, v3}
		var s [4]float64
		axpyDot4AVX2(gw, &w[0], &v, &g0[0], &g1[0], &g2[0], &g3[0], &s)
		return s[0], s[1], s[2], s[3]
	}
	return axpyDot4Generic(gw, w, v0, v1, v2, v3, g0, g1, g2, g3)
}
