package training

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/randomizer"
)

// mechanism is the client-side local randomizer R_p of Algorithm 1 (line 7)
// together with the server-side decoding (line 10). A nil *mechanism means
// the non-private baseline (--randomizer none).
type mechanism struct {
	r randomizer.Randomizer
}

// newMechanism builds the randomizer named by cfg.Randomizer on the ball of
// radius cfg.Clip in R^d; it returns nil for "none".
func newMechanism(cfg Config, d int) (*mechanism, error) {
	if cfg.Randomizer == RandomizerNone {
		return nil, nil
	}
	r, err := randomizer.New(cfg.Randomizer, randomizer.Config{Eps0: cfg.Eps0, Dim: d, Radius: cfg.Clip})
	if err != nil {
		return nil, fmt.Errorf("randomizer %s: %w", cfg.Randomizer, err)
	}
	return &mechanism{r: r}, nil
}

// Randomize returns the eps0-LDP report of the clipped gradient g.
func (m *mechanism) Randomize(g []float64, src randomizer.Source) (randomizer.Report, error) {
	return m.r.Randomize(g, src)
}

// clipInPlace applies Algorithm 1, line 6, g <- g / max(1, ||g||_p / C), so
// that g lies in the ball of radius C in the l_p norm (p = 1, 2, inf): the
// input domain of R_p. For l_inf this scales the whole vector (the rule of
// Algorithm 1), unlike randomizer.ClipLinf, which clamps each coordinate.
// A gradient with a NaN or infinite entry is zeroed (it carries no usable
// direction and zero lies in every ball).
func clipInPlace(g []float64, norm string, c float64) {
	switch norm {
	case NormL1:
		randomizer.ClipL1(g, c)
	case NormL2:
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
	case NormLInf:
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

// clientSource is the randomness of one client in one round in simulation:
// a ChaCha8 stream keyed by (seed, round key, slot), so a client's noise is
// the same whichever worker computes it. With crypto set it draws from
// crypto/rand instead (deployment-grade noise; runs are then not
// reproducible).
//
// SIMULATION ONLY unless crypto is set: the noise is predictable from the
// seed.
type clientSource struct {
	ch     *rand.ChaCha8
	crypto randomizer.Source
}

func (s *clientSource) reset(seed, roundKey, slot uint64) {
	if s.crypto != nil {
		return
	}
	s.ch = rand.NewChaCha8(clientKey(seed, roundKey, slot))
}

// Uint64 implements randomizer.Source.
func (s *clientSource) Uint64() uint64 {
	if s.crypto != nil {
		return s.crypto.Uint64()
	}
	return s.ch.Uint64()
}
