package server

import (
	"fmt"
	"math"
)

// Update is a server step done by the caller (the Python API's server
// function, docs/python-federated.md): given the current parameters theta
// and the round's mean — the unbiased estimate of the mean of the sampled
// clients' clipped updates that the server decoded from the released
// batch (randomizer.AddDecodedAll, divided by the reports used) — it writes
// the next parameters into next (of theta's length). It sees neither a
// report nor a client: only theta and the mean, functions of the released
// batch, so whatever it does is post-processing and the run's privacy
// guarantee is unchanged. It must not keep the slices.
type Update func(theta, mean, next []float64) error

// stepExternal is step with Config.Update in place of the optimizer: the
// sum of m reports is divided by m into the mean, Update writes the next
// parameters, which must be finite (a NaN or an infinity is refused naming
// its index, and nothing changes), then the projection and the EMA apply
// as after any step. Its Step has LR 0 (the caller's step has no schedule
// here).
func (s *Server) stepExternal(m int) (Step, error) {
	done := s.steps * int64(s.cfg.Run.PerRound)
	epoch := int(done / int64(s.cfg.Run.Population))
	for i := range s.sum {
		s.sum[i] /= float64(m)
	}
	params := s.model.Params()
	if len(s.next) != len(params) {
		s.next = make([]float64, len(params))
	}
	copy(s.next, params)
	if err := s.cfg.Update(params, s.sum, s.next); err != nil {
		return Step{}, fmt.Errorf("the server update function: %w", err)
	}
	for i, x := range s.next {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Step{}, fmt.Errorf("the server update function returned %g at index %d of the next parameters (they must be finite)", x, i)
		}
	}
	copy(params, s.next)
	if s.cfg.ProjectRadius > 0 {
		projectL2(params, s.cfg.ProjectRadius)
	}
	s.steps++
	if s.avg != nil {
		s.avg.update(params)
	}
	return Step{Step: s.steps, Epoch: epoch, Reports: m}, nil
}
