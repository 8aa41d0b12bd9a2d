package client

import (
	"math"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// Clip applies Algorithm 1, line 6, g <- g / max(1, ||g||_p / C), so that g
// lies in the ball of radius C in the l_p norm (p = 1, 2, inf, norm one of
// protocol.NormL1, NormL2, NormLInf): the input domain of R_p. For l_inf
// this scales the whole vector (the rule of Algorithm 1,
// randomizer.ScaleLinf); with clamp set
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
		// The plain sum of squares, unrolled into four accumulators, with
		// randomizer.ClipL2 (dnrm2's scaled sum) when it leaves
		// (1e-280, 1e280). randomizer.ClipL2 has the same fast path and
		// speed but leaves it outside (2^-900, 2^900): for norms within
		// (1e-140, 3.4e-136] or [2.9e135, 1e140) the two differ in the
		// last bits, so this copy is kept for bit-identical training.
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
		randomizer.ScaleLinf(g, c)
	}
}
