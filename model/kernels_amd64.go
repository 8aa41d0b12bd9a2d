//go:build !purego

package model

import (
	"math"
	"math/bits"

	"golang.org/x/sys/cpu"
)

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

//go:noescape
func axpy4RefsAVX2(dst *float64, w *float64, refs *tapRef, groups int)

//go:noescape
func axpy4RowsAVX2(dst *float64, in *float64, groups int, w *float64, stride int)

// axpy4Refs is axpy4Generic's loop over a list of inputs: for every group
// of four entries of refs, in order, axpy4(dst, their values, the rows of w
// at their offsets), len(refs) a multiple of 4 and every row at least
// len(dst) long. With AVX2 and len(dst) a multiple of 16 it keeps each
// 16-wide stripe of dst in registers for the whole list, adding every group
// exactly as axpy4 does (the same roundings in the same order).
func axpy4Refs(dst, w []float64, refs []tapRef) {
	if !useAVX2 || len(dst)%16 != 0 || len(refs) < 4 {
		axpy4RefsGeneric(dst, w, refs)
		return
	}
	for s := 0; s < len(dst); s += 16 {
		axpy4RefsAVX2(&dst[s], &w[s], &refs[0], len(refs)/4)
	}
}

// axpy4Rows is axpy4Refs for contiguous inputs in (len(in) a multiple of
// 4) and rows w[i*stride:] (at least len(dst) long).
func axpy4Rows(dst, in, w []float64, stride int) {
	if !useAVX2 || len(dst)%16 != 0 || len(in) < 4 {
		axpy4RowsGeneric(dst, in, w, stride)
		return
	}
	_ = w[(len(in)-1)*stride+len(dst)-1]
	for s := 0; s < len(dst); s += 16 {
		axpy4RowsAVX2(&dst[s], &in[0], len(in)/4, &w[s], stride)
	}
}

//go:noescape
func maxAbsBitsAVX2(v []float64, lanes *[4]uint64)

// maxAbsBits returns the largest bit pattern of |v_i| (sign cleared) as
// an unsigned integer: 0 for an empty v, above 0x7ff0000000000000 iff some
// v_i is NaN. Integers order like the magnitudes.
func maxAbsBits(v []float64) uint64 {
	const absMask = 1<<63 - 1
	var m uint64
	k := 0
	if useAVX2 && len(v) >= 4 {
		var lanes [4]uint64
		maxAbsBitsAVX2(v, &lanes)
		m = max(max(lanes[0], lanes[1]), max(lanes[2], lanes[3]))
		k = len(v) &^ 3
	}
	for _, x := range v[k:] {
		m = max(m, math.Float64bits(x)&absMask)
	}
	return m
}

//go:noescape
func maxPoolRowAVX2(a *float64, out []float64, arg *int64, idx *[4]int64, ch, rowStride int)

// maxPoolRow is maxPoolRowGeneric, four outputs at a time with AVX2.
func maxPoolRow(a, out []float64, arg []int64, base, ch, rowStride int) {
	k := 0
	if useAVX2 {
		k = len(out) &^ 3
		if k > 0 {
			_ = a[base+rowStride+ch+k-1] // bounds of the last window
			_ = arg[k-1]
			b := int64(base)
			maxPoolRowAVX2(&a[base], out[:k], &arg[0], &[4]int64{b, b + 1, b + 2, b + 3}, ch, rowStride)
		}
	}
	maxPoolRowGeneric(a, out[k:], arg[k:], base+k, ch, rowStride)
}

//go:noescape
func tanhAVX2(x []float64, bad []uint8, c *[23][4]float64)

// tanhConsts are tanhAVX2's constants, each four times: math.Tanh's
// (Go's src/math/tanh.go, Cephes' coefficients) tanhP, tanhQ, the bounds
// 0.625 and MAXLOG/2; then math.Exp's amd64 assembly's (src/math/
// exp_amd64.s): LOG2E, LN2U, LN2L, 1/16, the Taylor coefficients 1/8!
// down to 1/3!, 0.5, 1, 2; the sign mask; the exponent bias.
var tanhConsts = func() (c [23][4]float64) {
	const maxLog = 8.8029691931113054295988e+01 // math.tanh's MAXLOG, log(2**127)
	vals := [23]float64{
		-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3,
		1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3,
		0.625, 0.5 * maxLog,
		1.4426950408889634073599246810018920,                  // LOG2E
		0.69314718055966295651160180568695068359375,           // LN2U
		0.28235290563031577122588448175013436025525412068e-12, // LN2L
		0.0625,
		2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
		8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1,
		0.5, 1.0, 2.0,
		math.Float64frombits(1 << 63), // sign mask
		math.Float64frombits(0x3ff),   // exponent bias, as an int64 lane
	}
	for i, v := range vals {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()

// tanhSlice sets x[i] = math.Tanh(x[i]) for every i, bit for bit. With
// AVX2 it evaluates math.Tanh's two computed branches four lanes at a time
// with the same operations in the same order (tanhAVX2: plain IEEE
// multiplies, adds and divisions, as the Go compiler emits them for
// math.tanh without FMA fusion, and math.Exp's FMA assembly path; off
// where noFMAFusion is false), and calls math.Tanh for the other lanes
// (zero, |x| > MAXLOG/2, NaN). bad is scratch of at least len(x)/4 bytes.
func tanhSlice(x []float64, bad []uint8) {
	n := 0
	if useAVX2 && noFMAFusion {
		n = len(x) &^ 3
		if n > 0 {
			tanhAVX2(x[:n], bad[:n/4], &tanhConsts)
			for b, m := range bad[:n/4] {
				for m != 0 {
					i := 4*b + bits.TrailingZeros8(m)
					x[i] = math.Tanh(x[i])
					m &= m - 1
				}
			}
		}
	}
	for i := n; i < len(x); i++ {
		x[i] = math.Tanh(x[i])
	}
}

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
