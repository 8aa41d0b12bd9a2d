//go:build !amd64 || purego

package model

import "math"

const useAVX2 = false

func axpy(dst []float64, alpha float64, x []float64) { axpyGeneric(dst, alpha, x) }

func axpy4(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 []float64) {
	axpy4Generic(dst, a0, a1, a2, a3, x0, x1, x2, x3)
}

func axpyDot4(gw, w []float64, v0, v1, v2, v3 float64, g0, g1, g2, g3 []float64) (s0, s1, s2, s3 float64) {
	return axpyDot4Generic(gw, w, v0, v1, v2, v3, g0, g1, g2, g3)
}

// tanhSlice sets x[i] = math.Tanh(x[i]) for every i; bad is unused here.
func tanhSlice(x []float64, bad []uint8) {
	for i, v := range x {
		x[i] = math.Tanh(v)
	}
}

func maxPoolRow(a, out []float64, arg []int64, base, ch, rowStride int) {
	maxPoolRowGeneric(a, out, arg, base, ch, rowStride)
}

func axpy4Refs(dst, w []float64, refs []tapRef) { axpy4RefsGeneric(dst, w, refs) }

func axpy4Rows(dst, in, w []float64, stride int) { axpy4RowsGeneric(dst, in, w, stride) }

// maxAbsBits returns the largest bit pattern of |v_i| (sign cleared).
func maxAbsBits(v []float64) uint64 { return maxAbsBitsGeneric(v) }
