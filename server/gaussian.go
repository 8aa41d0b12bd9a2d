package server

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/shuffledp/shuffledp/protocol"
	"github.com/shuffledp/shuffledp/randomizer"
)

// AddGaussianNoise adds independent N(0, std^2) draws to every coordinate
// of v, from src (math/rand/v2's ziggurat over src's 64-bit words). A
// deployment passes crypto/rand (randomizer.NewCryptoSource); a simulation
// a seeded stream (SIMULATION ONLY: seeded noise can be recomputed and
// subtracted by anyone who knows the seed).
func AddGaussianNoise(v []float64, std float64, src randomizer.Source) {
	r := rand.New(src)
	for i := range v {
		v[i] += std * r.NormFloat64()
	}
}

// SumDigest is the SHA-256 of the little-endian float64 bytes of v: what a
// ledger entry of a released noisy sum is keyed by.
func SumDigest(v []float64) [32]byte {
	h := sha256.New()
	var b [8 * 512]byte
	for len(v) > 0 {
		n := min(len(v), 512)
		for i, x := range v[:n] {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
		h.Write(b[:8*n])
		v = v[n:]
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// PrepareCentralGaussian is the first half of the server's step of
// central DP-SGD, the Poisson-subsampled Gaussian mechanism (Abadi et al.
// 2016; accounted by Mironov, Talwar and Zhang 2019, package sampledgauss):
// sum is the sum of the clipped gradients of the clients sampled in the
// round, which the server receives IN THE CLEAR — the central trust model,
// where the server is trusted with raw clipped gradients and is the only
// party that adds noise; no shuffler is involved. The server adds one
// N(0, std^2 I_d) vector (std = C sigma) drawn from Config.Noise
// (crypto/rand when nil) and returns the
// SHA-256 of the noisy sum (SumDigest), which the caller debits to the
// privacy ledger before it calls ApplyCentralGaussian: the noisy sum is the
// release. A second Prepare replaces an unapplied one (its noise is
// discarded).
//
// The run's randomizer (RunConfig.Randomizer) must be
// protocol.RandomizerNone: the roles of a central run send clear clipped
// gradients.
func (s *Server) PrepareCentralGaussian(sum []float64, std float64) ([32]byte, error) {
	if s.rand != nil {
		return [32]byte{}, fmt.Errorf("server: randomizer %s: clear sums are refused (central Gaussian runs send clipped gradients, randomizer none)", s.cfg.Run.Randomizer)
	}
	if len(sum) != s.cfg.Run.Dim {
		return [32]byte{}, fmt.Errorf("server: sum of length %d, want %d", len(sum), s.cfg.Run.Dim)
	}
	if !(std >= 0) || math.IsInf(std, 0) {
		return [32]byte{}, fmt.Errorf("sigma: noise standard deviation must be >= 0 and finite, got %g", std)
	}
	if s.cfg.Noise == nil {
		s.cfg.Noise = randomizer.NewCryptoSource()
	}
	copy(s.sum, sum)
	AddGaussianNoise(s.sum, std, s.cfg.Noise)
	s.centralPending = true
	return SumDigest(s.sum), nil
}

// ApplyCentralGaussian steps on the noisy sum of PrepareCentralGaussian
// divided by divisor, the expected batch size q n: it does not depend on
// the data (the realized batch size does, through who was sampled, and
// would need its own analysis). reports is the realized batch size, for
// the Step only.
func (s *Server) ApplyCentralGaussian(divisor float64, reports int) (Step, error) {
	if !s.centralPending {
		return Step{}, errors.New("server: no prepared central Gaussian sum to apply")
	}
	if !(divisor > 0) || math.IsInf(divisor, 0) || reports < 0 {
		return Step{}, fmt.Errorf("server: divisor must be positive and finite (got %g) and reports >= 0 (got %d)", divisor, reports)
	}
	s.centralPending = false
	return s.stepMean(divisor, reports), nil
}

// ApplyNoisySum steps on sum, the sum of the reports Gaussian reports of a
// released batch, formed by a simulation that adds the clients' summed
// noise at once instead of one vector per report (training's noise-sum
// option; SIMULATION ONLY — the sum has the distribution of the sum of
// the shuffled reports, and the server only ever uses that sum, but no
// report exists). The run's randomizer must be protocol.RandomizerGaussian;
// the caller debits the release before it calls.
func (s *Server) ApplyNoisySum(sum []float64, reports int) (Step, error) {
	if s.cfg.Run.Randomizer != protocol.RandomizerGaussian {
		return Step{}, fmt.Errorf("server: a noisy sum is a release of Gaussian reports, not of randomizer %s", s.cfg.Run.Randomizer)
	}
	if len(sum) != s.cfg.Run.Dim || reports < 1 {
		return Step{}, fmt.Errorf("server: sum of length %d over %d reports (want length %d, >= 1 report)", len(sum), reports, s.cfg.Run.Dim)
	}
	copy(s.sum, sum)
	return s.step(reports), nil
}

// stepMean steps on s.sum / divisor (a real divisor: the expected batch
// size) and reports the batch's realized size.
func (s *Server) stepMean(divisor float64, reports int) Step {
	for i := range s.sum {
		s.sum[i] /= divisor
	}
	st := s.step(1)
	st.Reports = reports
	return st
}
