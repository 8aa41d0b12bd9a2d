package client

import (
	"math"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Clip applies Algorithm 1, line 6, g <- g / max(1, ||g||_p / C), so that g
// lies in the ball of radius C in the l_p norm (p = 1, 2, inf, norm one of
// protocol.NormL1, NormL2, NormLInf): the input domain of R_p. For l_inf
// this scales the whole vector (the rule of Algorithm 1); with clamp set
// (l_inf only) it clamps every coordinate into [-C, C] instead
// (randomizer.ClipLinf, the Euclidean projection onto the l_inf ball).
// Either puts g in R_inf's input domain. A gradient with a NaN or infinite
// entry is zeroed (it carries no usable direction and zero lies in every
// ball).
func Clip(g []float64, norm string, c float64, clamp bool) {
	if clamp {
		randomizer.ClipLinf(g, c)
		return
	}
	switch norm {
	case protocol.NormL1:
		randomizer.ClipL1(g, c)
	case protocol.NormL2:
		// Fast path: the plain sum of squares, unrolled into four
		// accumulators. randomizer.ClipL2 scales as it sums (LAPACK
		// dnrm2), which is safe against overflow but five times slower;
		// fall back to it only when the plain sum over- or underflows.
		var s0, s1, s2, s3 float64
		i := 0
		for ; i+4 <= len(g); i += 4 {
			s0 += g[i] * g[i]
			s1 += g[i+1] * g[i+1]
			s2 += g[i+2] * g[i+2]
			s3 += g[i+3] * g[i+3]
		}
		for ; i < len(g); i++ {
			s0 += g[i] * g[i]
		}
		s := (s0 + s1) + (s2 + s3)
		if !(s > 1e-280 && s < 1e280) { // NaN, Inf, zero or extreme: careful path
			randomizer.ClipL2(g, c)
			return
		}
		if n := math.Sqrt(s); n > c {
			f := c / n
			for i := range g {
				g[i] *= f
			}
		}
	case protocol.NormLInf:
		// max |g_i| over the IEEE-754 bit patterns with the sign cleared:
		// for non-negative floats the integer order is the numeric order,
		// and NaN and ±Inf have the largest patterns (exponent all ones),
		// so one branch-free integer max also detects non-finite entries.
		var m0, m1, m2, m3 uint64
		const abs = 1<<63 - 1
		i := 0
		for ; i+4 <= len(g); i += 4 {
			m0 = max(m0, math.Float64bits(g[i])&abs)
			m1 = max(m1, math.Float64bits(g[i+1])&abs)
			m2 = max(m2, math.Float64bits(g[i+2])&abs)
			m3 = max(m3, math.Float64bits(g[i+3])&abs)
		}
		for ; i < len(g); i++ {
			m0 = max(m0, math.Float64bits(g[i])&abs)
		}
		mb := max(max(m0, m1), max(m2, m3))
		if mb >= math.Float64bits(math.Inf(1)) {
			clear(g)
			return
		}
		n := math.Float64frombits(mb)
		if n > c {
			s := c / n
			for i := range g {
				g[i] *= s
			}
		}
	}
}
