package server

import (
	"fmt"
	"math"
)

// Optimizer names accepted by Optimizer.Name.
const (
	// OptimizerSGD is Algorithm 1, line 10: theta <- theta - eta g.
	OptimizerSGD = "sgd"
	// OptimizerMomentum is heavy-ball momentum (Polyak 1964, in the form
	// of PyTorch's SGD): v <- mu v + g; theta <- theta - eta v.
	OptimizerMomentum = "momentum"
	// OptimizerNesterov is Nesterov momentum in the same form (Sutskever
	// et al. 2013, eq. (3)–(4) rewritten for the current iterate):
	// v <- mu v + g; theta <- theta - eta (g + mu v).
	OptimizerNesterov = "nesterov"
	// OptimizerAdam is Adam (Kingma and Ba, ICLR 2015, Algorithm 1):
	// m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2;
	// theta <- theta - eta (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps),
	// t the number of steps taken, counting this one.
	OptimizerAdam = "adam"
)

// Optimizers lists the optimizer names.
func Optimizers() []string {
	return []string{OptimizerSGD, OptimizerMomentum, OptimizerNesterov, OptimizerAdam}
}

// Optimizer says how the server turns the released average g (the unbiased
// estimate of the mean clipped gradient) into a step. It is
// post-processing of the released batch: whatever it does, the privacy
// guarantee of the run (which is a guarantee about the batches the shuffler
// releases) is unchanged, and so is the accounting.
//
// The zero value is plain SGD, Algorithm 1, line 10.
type Optimizer struct {
	// Name is one of Optimizers(); "" means OptimizerSGD.
	Name string
	// Momentum is mu of OptimizerMomentum and OptimizerNesterov, in
	// [0, 1).
	Momentum float64
	// Beta1, Beta2 and Epsilon are Adam's b1, b2 in [0, 1) and eps > 0.
	Beta1, Beta2, Epsilon float64
}

// Kind returns the optimizer's name, OptimizerSGD for "".
func (o Optimizer) Kind() string {
	if o.Name == "" {
		return OptimizerSGD
	}
	return o.Name
}

// Validate checks the optimizer's parameters; errors name the flag
// (optimizer, momentum, adam-betas, adam-eps).
func (o Optimizer) Validate() error {
	unit := func(x float64) bool { return x >= 0 && x < 1 }
	switch o.Kind() {
	case OptimizerSGD:
	case OptimizerMomentum, OptimizerNesterov:
		if !unit(o.Momentum) {
			return fmt.Errorf("momentum must be in [0, 1), got %g", o.Momentum)
		}
	case OptimizerAdam:
		if !unit(o.Beta1) || !unit(o.Beta2) {
			return fmt.Errorf("adam-betas must both be in [0, 1), got %g,%g", o.Beta1, o.Beta2)
		}
		if !(o.Epsilon > 0) || math.IsInf(o.Epsilon, 0) {
			return fmt.Errorf("adam-eps must be positive and finite, got %g", o.Epsilon)
		}
	default:
		return fmt.Errorf("optimizer must be one of sgd, momentum, nesterov, adam, got %q", o.Name)
	}
	return nil
}

// String formats the optimizer with its parameters, e.g. "adam(0.9,0.999,1e-08)".
func (o Optimizer) String() string {
	switch o.Kind() {
	case OptimizerMomentum, OptimizerNesterov:
		return fmt.Sprintf("%s(%g)", o.Kind(), o.Momentum)
	case OptimizerAdam:
		return fmt.Sprintf("adam(%g,%g,%g)", o.Beta1, o.Beta2, o.Epsilon)
	}
	return o.Kind()
}

// optimizerState is the optimizer's state: the velocity of the momentum
// methods, Adam's first and second moment estimates.
type optimizerState struct {
	velocity []float64
	m1, m2   []float64
}

func newOptimizerState(o Optimizer, d int) optimizerState {
	switch o.Kind() {
	case OptimizerMomentum, OptimizerNesterov:
		return optimizerState{velocity: make([]float64, d)}
	case OptimizerAdam:
		return optimizerState{m1: make([]float64, d), m2: make([]float64, d)}
	}
	return optimizerState{}
}

// apply takes one step of o on params with learning rate lr from sum, the
// sum of m reports (g = sum/m); step is the number of steps taken,
// counting this one (Adam's t).
func (o Optimizer) apply(st *optimizerState, params, sum []float64, m int, lr float64, step int64) {
	switch o.Kind() {
	case OptimizerSGD:
		// Bit for bit the step of every earlier build (golden digests):
		// the learning rate is divided by m, not the sum.
		scale := lr / float64(m)
		for i, g := range sum {
			params[i] -= scale * g
		}
	case OptimizerMomentum:
		mf, mu, v := float64(m), o.Momentum, st.velocity
		for i, s := range sum {
			v[i] = mu*v[i] + s/mf
			params[i] -= lr * v[i]
		}
	case OptimizerNesterov:
		mf, mu, v := float64(m), o.Momentum, st.velocity
		for i, s := range sum {
			g := s / mf
			v[i] = mu*v[i] + g
			params[i] -= lr * (g + mu*v[i])
		}
	case OptimizerAdam:
		mf, b1, b2 := float64(m), o.Beta1, o.Beta2
		c1 := 1 - math.Pow(b1, float64(step))
		c2 := 1 - math.Pow(b2, float64(step))
		for i, s := range sum {
			g := s / mf
			st.m1[i] = b1*st.m1[i] + (1-b1)*g
			st.m2[i] = b2*st.m2[i] + (1-b2)*g*g
			params[i] -= lr * (st.m1[i] / c1) / (math.Sqrt(st.m2[i]/c2) + o.Epsilon)
		}
	}
}
