//go:build !purego

#include "textflag.h"

// func axpy4AVX2(dst []float64, a0, a1, a2, a3 float64, x0, x1, x2, x3 *float64)
// dst[i] += a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i], i < len(dst).
TEXT ·axpy4AVX2(SB), NOSPLIT, $0-88
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	VBROADCASTSD a0+24(FP), Y0
	VBROADCASTSD a1+32(FP), Y1
	VBROADCASTSD a2+40(FP), Y2
	VBROADCASTSD a3+48(FP), Y3
	MOVQ         x0+56(FP), R8
	MOVQ         x1+64(FP), R9
	MOVQ         x2+72(FP), R10
	MOVQ         x3+80(FP), R11
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX // DX = len rounded down to a multiple of 8

loop8:
	CMPQ        AX, DX
	JGE         loop1
	VMULPD      (R8)(AX*8), Y0, Y4
	VMULPD      32(R8)(AX*8), Y0, Y5
	VMULPD      (R9)(AX*8), Y1, Y6
	VMULPD      32(R9)(AX*8), Y1, Y7
	VFMADD231PD (R10)(AX*8), Y2, Y4
	VFMADD231PD 32(R10)(AX*8), Y2, Y5
	VFMADD231PD (R11)(AX*8), Y3, Y6
	VFMADD231PD 32(R11)(AX*8), Y3, Y7
	VADDPD      Y6, Y4, Y4
	VADDPD      Y7, Y5, Y5
	VADDPD      (DI)(AX*8), Y4, Y4
	VADDPD      32(DI)(AX*8), Y5, Y5
	VMOVUPD     Y4, (DI)(AX*8)
	VMOVUPD     Y5, 32(DI)(AX*8)
	ADDQ        $8, AX
	JMP         loop8

loop1:
	CMPQ        AX, CX
	JGE         done
	VMULSD      (R8)(AX*8), X0, X4
	VMULSD      (R9)(AX*8), X1, X6
	VFMADD231SD (R10)(AX*8), X2, X4
	VFMADD231SD (R11)(AX*8), X3, X6
	VADDSD      X6, X4, X4
	VADDSD      (DI)(AX*8), X4, X4
	VMOVSD      X4, (DI)(AX*8)
	INCQ        AX
	JMP         loop1

done:
	VZEROUPPER
	RET

// func axpyDot4AVX2(gw []float64, w *float64, v *[4]float64, g0, g1, g2, g3 *float64, s *[4]float64)
// gw[i] += v[0]*g0[i] + ... + v[3]*g3[i]; s[j] = sum_i w[i]*gj[i], i < len(gw).
TEXT ·axpyDot4AVX2(SB), NOSPLIT, $0-80
	MOVQ         gw_base+0(FP), DI
	MOVQ         gw_len+8(FP), CX
	MOVQ         w+24(FP), SI
	MOVQ         v+32(FP), BX
	VBROADCASTSD (BX), Y0
	VBROADCASTSD 8(BX), Y1
	VBROADCASTSD 16(BX), Y2
	VBROADCASTSD 24(BX), Y3
	MOVQ         g0+40(FP), R8
	MOVQ         g1+48(FP), R9
	MOVQ         g2+56(FP), R10
	MOVQ         g3+64(FP), R11
	VXORPD       Y8, Y8, Y8 // dot accumulators
	VXORPD       Y9, Y9, Y9
	VXORPD       Y10, Y10, Y10
	VXORPD       Y11, Y11, Y11
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-4, DX

loop4:
	CMPQ        AX, DX
	JGE         reduce
	VMOVUPD     (R8)(AX*8), Y4
	VMOVUPD     (R9)(AX*8), Y5
	VMOVUPD     (R10)(AX*8), Y6
	VMOVUPD     (R11)(AX*8), Y7
	VMOVUPD     (SI)(AX*8), Y12
	VFMADD231PD Y4, Y12, Y8
	VFMADD231PD Y5, Y12, Y9
	VFMADD231PD Y6, Y12, Y10
	VFMADD231PD Y7, Y12, Y11
	VMULPD      Y4, Y0, Y13
	VMULPD      Y5, Y1, Y14
	VFMADD231PD Y6, Y2, Y13
	VFMADD231PD Y7, Y3, Y14
	VADDPD      Y14, Y13, Y13
	VADDPD      (DI)(AX*8), Y13, Y13
	VMOVUPD     Y13, (DI)(AX*8)
	ADDQ        $4, AX
	JMP         loop4

reduce:
	// Horizontal sums into the low lanes of X8..X11.
	VEXTRACTF128 $1, Y8, X4
	VADDPD       X4, X8, X8
	VHADDPD      X8, X8, X8
	VEXTRACTF128 $1, Y9, X4
	VADDPD       X4, X9, X9
	VHADDPD      X9, X9, X9
	VEXTRACTF128 $1, Y10, X4
	VADDPD       X4, X10, X10
	VHADDPD      X10, X10, X10
	VEXTRACTF128 $1, Y11, X4
	VADDPD       X4, X11, X11
	VHADDPD      X11, X11, X11

loop1:
	CMPQ        AX, CX
	JGE         store
	VMOVSD      (R8)(AX*8), X4
	VMOVSD      (R9)(AX*8), X5
	VMOVSD      (R10)(AX*8), X6
	VMOVSD      (R11)(AX*8), X7
	VMOVSD      (SI)(AX*8), X12
	VFMADD231SD X4, X12, X8
	VFMADD231SD X5, X12, X9
	VFMADD231SD X6, X12, X10
	VFMADD231SD X7, X12, X11
	VMULSD      X4, X0, X13
	VMULSD      X5, X1, X14
	VFMADD231SD X6, X2, X13
	VFMADD231SD X7, X3, X14
	VADDSD      X14, X13, X13
	VADDSD      (DI)(AX*8), X13, X13
	VMOVSD      X13, (DI)(AX*8)
	INCQ        AX
	JMP         loop1

store:
	MOVQ   s+72(FP), BX
	VMOVSD X8, (BX)
	VMOVSD X9, 8(BX)
	VMOVSD X10, 16(BX)
	VMOVSD X11, 24(BX)
	VZEROUPPER
	RET

// func axpyAVX2(dst []float64, a float64, x *float64)
// dst[i] += a*x[i], i < len(dst).
TEXT ·axpyAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	VBROADCASTSD a+24(FP), Y0
	MOVQ         x+32(FP), SI
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX

loop8:
	CMPQ        AX, DX
	JGE         loop1
	VMOVUPD     (DI)(AX*8), Y4
	VMOVUPD     32(DI)(AX*8), Y5
	VFMADD231PD (SI)(AX*8), Y0, Y4
	VFMADD231PD 32(SI)(AX*8), Y0, Y5
	VMOVUPD     Y4, (DI)(AX*8)
	VMOVUPD     Y5, 32(DI)(AX*8)
	ADDQ        $8, AX
	JMP         loop8

loop1:
	CMPQ        AX, CX
	JGE         done
	VMOVSD      (DI)(AX*8), X4
	VFMADD231SD (SI)(AX*8), X0, X4
	VMOVSD      X4, (DI)(AX*8)
	INCQ        AX
	JMP         loop1

done:
	VZEROUPPER
	RET

// func tanhAVX2(x []float64, bad []uint8, c *[23][4]float64)
// For every block of four x[4b:4b+4] (len(x) a multiple of 4) it sets the
// lanes where math.Tanh takes one of its two computed branches to
// math.Tanh's value, with the same operations in the same order (so bit
// for bit the same): for 0 < |x| < 0.625 the rational approximation
// x + x*s*P(s)/Q(s), s = x*x; for 0.625 <= |x| <= MAXLOG/2,
// ±(1 - 2/(e+1)) with e = exp(2|x|) evaluated as math.Exp's amd64 assembly
// does on a CPU with FMA (range reduction by k*ln2 in two FMA parts, a
// degree-7 polynomial at r/16 by FMA, four squarings of the form
// y = y*(y+2), the last fused with +1, and the scale 2^k), where k is
// in [2, 127], so none of math.Exp's special cases applies. The other
// lanes (zero, |x| > MAXLOG/2, NaN) keep x, and bad[b] gets their lane
// bits. c holds each constant four times (see tanhConsts).
TEXT ·tanhAVX2(SB), NOSPLIT, $0-56
	MOVQ x_base+0(FP), DI
	MOVQ x_len+8(FP), CX
	MOVQ bad_base+24(FP), SI
	MOVQ c+48(FP), BX
	VXORPD Y15, Y15, Y15 // 0
	XORQ AX, AX
	XORQ DX, DX // block index

tloop:
	CMPQ AX, CX
	JGE  tdone
	VMOVUPD (DI)(AX*8), Y0 // x
	// rational branch -> Y4
	VMULPD  Y0, Y0, Y1       // s = x*x
	VMULPD  0(BX), Y1, Y2    // P0*s
	VADDPD  32(BX), Y2, Y2   // + P1
	VMULPD  Y1, Y2, Y2       // * s
	VADDPD  64(BX), Y2, Y2   // + P2
	VADDPD  96(BX), Y1, Y3   // s + Q0
	VMULPD  Y1, Y3, Y3       // * s
	VADDPD  128(BX), Y3, Y3  // + Q1
	VMULPD  Y1, Y3, Y3       // * s
	VADDPD  160(BX), Y3, Y3  // + Q2
	VMULPD  Y1, Y0, Y4       // x*s
	VMULPD  Y2, Y4, Y4       // * P
	VDIVPD  Y3, Y4, Y4       // / Q
	VADDPD  Y4, Y0, Y4       // x + ...
	// z = |x| = max(-x, x) (NaN lanes: x)
	VSUBPD  Y0, Y15, Y5
	VMAXPD  Y0, Y5, Y5
	VMOVUPD 192(BX), Y14               // 0.625
	VCMPPD  $0x11, Y14, Y5, Y6         // z < 0.625 (ordered)
	VCMPPD  $0x1e, Y15, Y5, Y7         // z > 0
	VANDPD  Y7, Y6, Y6                 // rational lanes
	VCMPPD  $0x1d, Y14, Y5, Y7         // z >= 0.625
	VCMPPD  $0x12, 224(BX), Y5, Y8     // z <= MAXLOG/2
	VANDPD  Y8, Y7, Y7                 // exponential lanes
	VMOVMSKPD Y7, R9
	TESTQ   R9, R9
	JNZ     texp
	VBLENDVPD Y6, Y4, Y0, Y9           // no exponential lane: rational ? Y4 : x
	JMP     tstore

texp:
	// exponential branch -> Y8: e = exp(t), t = 2z
	VADDPD       Y5, Y5, Y8            // t = 2*z (exact)
	VMULPD       256(BX), Y8, Y9       // LOG2E*t
	VCVTPD2DQY   Y9, X10               // k (round to nearest)
	VCVTDQ2PD    X10, Y9               // float64(k)
	VFNMADD231PD 288(BX), Y9, Y8       // t - k*LN2U
	VFNMADD231PD 320(BX), Y9, Y8       // - k*LN2L
	VMULPD       352(BX), Y8, Y8       // * 0.0625
	VMOVUPD      384(BX), Y11          // c64
	VFMADD213PD  416(BX), Y8, Y11      // *r + c56
	VFMADD213PD  448(BX), Y8, Y11      // *r + c48
	VFMADD213PD  480(BX), Y8, Y11      // *r + c40
	VFMADD213PD  512(BX), Y8, Y11      // *r + c32
	VFMADD213PD  544(BX), Y8, Y11      // *r + c24
	VFMADD213PD  576(BX), Y8, Y11      // *r + 0.5
	VFMADD213PD  608(BX), Y8, Y11      // *r + 1
	VMULPD       Y11, Y8, Y8           // r * poly
	VADDPD       640(BX), Y8, Y11      // y + 2
	VMULPD       Y11, Y8, Y8           // y*(y+2)
	VADDPD       640(BX), Y8, Y11
	VMULPD       Y11, Y8, Y8
	VADDPD       640(BX), Y8, Y11
	VMULPD       Y11, Y8, Y8
	VADDPD       640(BX), Y8, Y11
	VFMADD213PD  608(BX), Y11, Y8      // y*(y+2) + 1
	VPMOVSXDQ    X10, Y12              // k as int64
	VPADDQ       704(BX), Y12, Y12     // + 0x3ff
	VPSLLQ       $52, Y12, Y12         // 2^k
	VMULPD       Y12, Y8, Y8           // e
	// tanh = ±(1 - 2/(e+1))
	VADDPD       608(BX), Y8, Y8       // e + 1
	VMOVUPD      640(BX), Y12          // 2
	VDIVPD       Y8, Y12, Y12          // 2/(e+1)
	VMOVUPD      608(BX), Y13          // 1
	VSUBPD       Y12, Y13, Y8          // 1 - 2/(e+1)
	VANDPD       672(BX), Y0, Y13      // sign of x
	VXORPD       Y13, Y8, Y8
	// blend: rational ? Y4 : (exponential ? Y8 : x)
	VBLENDVPD    Y7, Y8, Y0, Y9
	VBLENDVPD    Y6, Y4, Y9, Y9

tstore:
	VMOVUPD      Y9, (DI)(AX*8)
	VORPD        Y7, Y6, Y6
	VMOVMSKPD    Y6, R8
	XORQ         $15, R8
	MOVB         R8, (SI)(DX*1)
	ADDQ         $4, AX
	INCQ         DX
	JMP          tloop

tdone:
	VZEROUPPER
	RET

// func maxPoolRowAVX2(a *float64, out []float64, arg *int64, idx *[4]int64, ch, rowStride int)
// For e < len(out) (a multiple of 4): out[e] = the maximum of the window
// a[e+{0, ch, rowStride, rowStride+ch}] in the total order of orderKey
// (the first on ties, in that order) and arg[e] = idx[0]+e+(its offset)
// (idx = {b, b+1, b+2, b+3}). Keys: k = bits ^ ((0 > bits) >>> 1),
// compared as signed 64-bit integers.
TEXT ·maxPoolRowAVX2(SB), NOSPLIT, $0-64
	MOVQ         a+0(FP), SI
	MOVQ         out_base+8(FP), DI
	MOVQ         out_len+16(FP), CX
	MOVQ         arg+32(FP), R9
	MOVQ         idx+40(FP), BX
	MOVQ         ch+48(FP), R10
	MOVQ         rowStride+56(FP), R11
	LEAQ         (SI)(R10*8), R12 // &a[ch]
	LEAQ         (SI)(R11*8), R13 // &a[rowStride]
	LEAQ         (R13)(R10*8), DX // &a[rowStride+ch]
	VPXOR        Y15, Y15, Y15    // 0
	VMOVDQU      (BX), Y12        // indices of the first four window origins
	MOVQ         $4, AX
	MOVQ         AX, X13
	VPBROADCASTQ X13, Y13         // 4
	MOVQ         R10, X10
	VPBROADCASTQ X10, Y10         // ch
	MOVQ         R11, X11
	VPBROADCASTQ X11, Y11         // rowStride
	XORQ         AX, AX

ploop:
	CMPQ      AX, CX
	JGE       pdone
	// window element 00: best key Y4, its index Y5
	VMOVDQU   (SI)(AX*8), Y0
	VPCMPGTQ  Y0, Y15, Y1 // 0 > bits
	VPSRLQ    $1, Y1, Y1
	VPXOR     Y1, Y0, Y4
	VMOVDQU   Y12, Y5
	// 01
	VMOVDQU   (R12)(AX*8), Y0
	VPCMPGTQ  Y0, Y15, Y1
	VPSRLQ    $1, Y1, Y1
	VPXOR     Y1, Y0, Y0
	VPADDQ    Y10, Y12, Y6
	VPCMPGTQ  Y4, Y0, Y1 // key > best
	VBLENDVPD Y1, Y0, Y4, Y4
	VBLENDVPD Y1, Y6, Y5, Y5
	// 10
	VMOVDQU   (R13)(AX*8), Y0
	VPCMPGTQ  Y0, Y15, Y1
	VPSRLQ    $1, Y1, Y1
	VPXOR     Y1, Y0, Y0
	VPADDQ    Y11, Y12, Y7
	VPCMPGTQ  Y4, Y0, Y1
	VBLENDVPD Y1, Y0, Y4, Y4
	VBLENDVPD Y1, Y7, Y5, Y5
	// 11
	VMOVDQU   (DX)(AX*8), Y0
	VPCMPGTQ  Y0, Y15, Y1
	VPSRLQ    $1, Y1, Y1
	VPXOR     Y1, Y0, Y0
	VPADDQ    Y10, Y7, Y7
	VPCMPGTQ  Y4, Y0, Y1
	VBLENDVPD Y1, Y0, Y4, Y4
	VBLENDVPD Y1, Y7, Y5, Y5
	// the value from its key (the map is an involution)
	VPCMPGTQ  Y4, Y15, Y1
	VPSRLQ    $1, Y1, Y1
	VPXOR     Y1, Y4, Y4
	VMOVDQU   Y4, (DI)(AX*8)
	VMOVDQU   Y5, (R9)(AX*8)
	VPADDQ    Y13, Y12, Y12
	ADDQ      $4, AX
	JMP       ploop

pdone:
	VZEROUPPER
	RET

// One group of four inputs into the 16 accumulators Y0..Y3, exactly as
// axpy4AVX2 adds it to memory: t0 = a0*x0, t1 = a1*x1, t0 += a2*x2 (FMA),
// t1 += a3*x3 (FMA), acc += t0 + t1. a0..a3 in Y4..Y7, rows x0..x3 at
// R8..R11.
#define GROUP16 \
	VMULPD      (R8), Y4, Y8; \
	VMULPD      (R9), Y5, Y9; \
	VFMADD231PD (R10), Y6, Y8; \
	VFMADD231PD (R11), Y7, Y9; \
	VADDPD      Y9, Y8, Y8; \
	VADDPD      Y8, Y0, Y0; \
	VMULPD      32(R8), Y4, Y8; \
	VMULPD      32(R9), Y5, Y9; \
	VFMADD231PD 32(R10), Y6, Y8; \
	VFMADD231PD 32(R11), Y7, Y9; \
	VADDPD      Y9, Y8, Y8; \
	VADDPD      Y8, Y1, Y1; \
	VMULPD      64(R8), Y4, Y8; \
	VMULPD      64(R9), Y5, Y9; \
	VFMADD231PD 64(R10), Y6, Y8; \
	VFMADD231PD 64(R11), Y7, Y9; \
	VADDPD      Y9, Y8, Y8; \
	VADDPD      Y8, Y2, Y2; \
	VMULPD      96(R8), Y4, Y8; \
	VMULPD      96(R9), Y5, Y9; \
	VFMADD231PD 96(R10), Y6, Y8; \
	VFMADD231PD 96(R11), Y7, Y9; \
	VADDPD      Y9, Y8, Y8; \
	VADDPD      Y8, Y3, Y3

// func axpy4RefsAVX2(dst *[16]float64, w *float64, refs *tapRef, groups int)
// For g < groups, in order: axpy4(dst[:16], refs[4g..4g+3].v, the rows of
// w at float64 offsets refs[4g..4g+3].o), with dst kept in registers.
TEXT ·axpy4RefsAVX2(SB), NOSPLIT, $0-32
	MOVQ    dst+0(FP), DI
	MOVQ    w+8(FP), SI
	MOVQ    refs+16(FP), BX
	MOVQ    groups+24(FP), CX
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3

rgroup:
	TESTQ        CX, CX
	JZ           rdone
	VBROADCASTSD (BX), Y4
	VBROADCASTSD 16(BX), Y5
	VBROADCASTSD 32(BX), Y6
	VBROADCASTSD 48(BX), Y7
	MOVLQSX      8(BX), R8
	MOVLQSX      24(BX), R9
	MOVLQSX      40(BX), R10
	MOVLQSX      56(BX), R11
	LEAQ         (SI)(R8*8), R8
	LEAQ         (SI)(R9*8), R9
	LEAQ         (SI)(R10*8), R10
	LEAQ         (SI)(R11*8), R11
	GROUP16
	ADDQ         $64, BX
	DECQ         CX
	JMP          rgroup

rdone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func axpy4RowsAVX2(dst *[16]float64, in *float64, groups int, w *float64, stride int)
// For g < groups, in order: axpy4(dst[:16], in[4g..4g+3], the rows
// w[(4g+k)*stride:] for k < 4), with dst kept in registers.
TEXT ·axpy4RowsAVX2(SB), NOSPLIT, $0-40
	MOVQ    dst+0(FP), DI
	MOVQ    in+8(FP), BX
	MOVQ    groups+16(FP), CX
	MOVQ    w+24(FP), R8
	MOVQ    stride+32(FP), DX
	SHLQ    $3, DX // row stride in bytes
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3

wgroup:
	TESTQ        CX, CX
	JZ           wdone
	VBROADCASTSD (BX), Y4
	VBROADCASTSD 8(BX), Y5
	VBROADCASTSD 16(BX), Y6
	VBROADCASTSD 24(BX), Y7
	LEAQ         (R8)(DX*1), R9
	LEAQ         (R9)(DX*1), R10
	LEAQ         (R10)(DX*1), R11
	GROUP16
	LEAQ         (R11)(DX*1), R8
	ADDQ         $32, BX
	DECQ         CX
	JMP          wgroup

wdone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func maxAbsBitsAVX2(v []float64, lanes *[4]uint64)
// lanes[l] = the maximum over i ≡ l (mod 4), i < len(v) &^ 3, of the bits of
// v[i] without the sign (compared as signed 64-bit integers, which they
// are: the top bit is clear). The caller reduces the lanes and the tail.
TEXT ·maxAbsBitsAVX2(SB), NOSPLIT, $0-32
	MOVQ         v_base+0(FP), SI
	MOVQ         v_len+8(FP), CX
	MOVQ         lanes+24(FP), DI
	ANDQ         $-4, CX
	MOVQ         $0x7fffffffffffffff, AX
	MOVQ         AX, X7
	VPBROADCASTQ X7, Y7
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-8, DX

mloop8:
	CMPQ      AX, DX
	JGE       mloop4
	VPAND     (SI)(AX*8), Y7, Y2
	VPAND     32(SI)(AX*8), Y7, Y3
	VPCMPGTQ  Y0, Y2, Y4
	VPCMPGTQ  Y1, Y3, Y5
	VBLENDVPD Y4, Y2, Y0, Y0
	VBLENDVPD Y5, Y3, Y1, Y1
	ADDQ      $8, AX
	JMP       mloop8

mloop4:
	CMPQ      AX, CX
	JGE       mdone
	VPAND     (SI)(AX*8), Y7, Y2
	VPCMPGTQ  Y0, Y2, Y4
	VBLENDVPD Y4, Y2, Y0, Y0
	ADDQ      $4, AX
	JMP       mloop4

mdone:
	VPCMPGTQ  Y0, Y1, Y4
	VBLENDVPD Y4, Y1, Y0, Y0
	VMOVDQU   Y0, (DI)
	VZEROUPPER
	RET
