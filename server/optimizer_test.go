package server

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/shuffledp/shuffledp/model"
	"github.com/shuffledp/shuffledp/protocol"
)

// newPlainServer returns a non-private server (clear sums) over a 3x2
// logistic regression (8 parameters), n = 20, k = 5, with the given
// optimizer, EMA and schedule.
func newPlainServer(t *testing.T, opt Optimizer, ema float64, lr Schedule) (*Server, *model.LogReg) {
	t.Helper()
	m, err := model.NewLogReg(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	cfg := protocol.RunConfig{Run: "run", Model: "logreg", Dim: m.NumParams(), Randomizer: protocol.RandomizerNone,
		ClipNorm: protocol.NormL2, Clip: 1, Population: 20, PerRound: 5, MinBatch: 5}
	s, err := New(Config{Run: cfg, LR: lr, Optimizer: opt, EMA: ema}, m)
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

// sign is (-1)^i: every coordinate runs the same scalar problem, mirrored
// on odd coordinates (all four optimizers are odd in g).
func sign(i int) float64 { return float64(1 - 2*(i%2)) }

// TestOptimizerSteps: two steps of every optimizer from theta_0 = 1 at lr
// 0.5 on the averages g_1 = 1, g_2 = 1/2 (sums 2 and 1 of m = 2 reports),
// against values worked out by hand.
func TestOptimizerSteps(t *testing.T) {
	for _, tc := range []struct {
		opt    Optimizer
		x1, x2 float64
	}{
		// x1 = 1 - 0.5*1; x2 = 0.5 - 0.5*0.5.
		{Optimizer{}, 0.5, 0.25},
		{Optimizer{Name: OptimizerSGD}, 0.5, 0.25},
		// v1 = 1, x1 = 0.5; v2 = 0.5*1 + 0.5 = 1, x2 = 0.5 - 0.5*1.
		{Optimizer{Name: OptimizerMomentum, Momentum: 0.5}, 0.5, 0},
		// mu = 0 is SGD.
		{Optimizer{Name: OptimizerMomentum, Momentum: 0}, 0.5, 0.25},
		// v1 = 1, x1 = 1 - 0.5*(1 + 0.5*1) = 0.25;
		// v2 = 0.5 + 0.5 = 1, x2 = 0.25 - 0.5*(0.5 + 0.5*1) = -0.25.
		{Optimizer{Name: OptimizerNesterov, Momentum: 0.5}, 0.25, -0.25},
		// b1 = 0.5, b2 = 0.75, eps = 0.5. Step 1: m = 0.5, v = 0.25,
		// m^ = 1, v^ = 1, x1 = 1 - 0.5*1/(1 + 0.5) = 2/3. Step 2 (g = 0.5):
		// m = 0.25 + 0.25 = 0.5, v = 0.1875 + 0.0625 = 0.25,
		// m^ = 0.5/0.75 = 2/3, v^ = 0.25/0.4375 = 4/7,
		// x2 = 2/3 - 0.5*(2/3)/(sqrt(4/7) + 0.5).
		{Optimizer{Name: OptimizerAdam, Beta1: 0.5, Beta2: 0.75, Epsilon: 0.5}, 2.0 / 3, 2.0/3 - (1.0/3)/(math.Sqrt(4.0/7)+0.5)},
	} {
		t.Run(tc.opt.String(), func(t *testing.T) {
			s, m := newPlainServer(t, tc.opt, 0, constLR(0.5))
			d := m.NumParams()
			x0 := make([]float64, d)
			for i := range x0 {
				x0[i] = sign(i)
			}
			st := s.State()
			st.Params = x0
			if err := s.Restore(st); err != nil {
				t.Fatal(err)
			}
			for step, want := range []float64{tc.x1, tc.x2} {
				sum := make([]float64, d)
				for i := range sum {
					sum[i] = sign(i) * float64(2-step) // g = sum/2 = 1, then 1/2
				}
				if _, err := s.ApplySum(sum, 2); err != nil {
					t.Fatal(err)
				}
				for i, x := range m.Params() {
					if math.Abs(x-sign(i)*want) > 1e-15 {
						t.Fatalf("step %d, coordinate %d: %.17g, want %.17g", step+1, i, x, sign(i)*want)
					}
				}
			}
		})
	}
}

func TestOptimizerValidate(t *testing.T) {
	for _, tc := range []struct {
		opt  Optimizer
		want string // "" = valid
	}{
		{Optimizer{}, ""},
		{Optimizer{Name: "momentum", Momentum: 0.9}, ""},
		{Optimizer{Name: "nesterov", Momentum: 1}, "momentum"},
		{Optimizer{Name: "momentum", Momentum: -0.1}, "momentum"},
		{Optimizer{Name: "momentum", Momentum: math.NaN()}, "momentum"},
		{Optimizer{Name: "adam", Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}, ""},
		{Optimizer{Name: "adam", Beta1: 0.9, Beta2: 1, Epsilon: 1e-8}, "adam-betas"},
		{Optimizer{Name: "adam", Beta1: 0.9, Beta2: 0.999}, "adam-eps"},
		{Optimizer{Name: "rmsprop"}, "optimizer"},
	} {
		err := tc.opt.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: error %v, want one naming %q", tc.opt, err, tc.want)
		}
	}
	for _, ema := range []float64{-0.1, 1, math.NaN()} {
		if err := validateEMA(ema); err == nil || !strings.Contains(err.Error(), "ema") {
			t.Errorf("ema %g: error %v", ema, err)
		}
	}
}

// recordingLR records the epochs it is asked for.
type recordingLR struct{ got []float64 }

func (r *recordingLR) Rate(e float64) float64 { r.got = append(r.got, e); return 0.1 }

// TestScheduleProgress: the schedule is asked at s*k/n, the epochs
// completed before each step (n/k = 4 steps an epoch).
func TestScheduleProgress(t *testing.T) {
	lr := &recordingLR{}
	s, m := newPlainServer(t, Optimizer{}, 0, lr)
	var epochs []int
	for range 6 {
		st, err := s.ApplySum(make([]float64, m.NumParams()), 5)
		if err != nil {
			t.Fatal(err)
		}
		epochs = append(epochs, st.Epoch)
	}
	if want := []float64{0, 0.25, 0.5, 0.75, 1, 1.25}; !slices.Equal(lr.got, want) {
		t.Errorf("schedule asked at %v, want %v", lr.got, want)
	}
	if want := []int{0, 0, 0, 0, 1, 1}; !slices.Equal(epochs, want) {
		t.Errorf("step epochs %v, want %v", epochs, want)
	}
}

// TestEMA: the debiased average of the SGD iterates of TestOptimizerSteps
// (theta = 1, 0.5, 0.25) with beta = 0.5: theta_0 before any step, then
// 0.5, then (0.5*0.5 + 1*0.25)/1.5 = 1/3; it never changes the model.
func TestEMA(t *testing.T) {
	s, m := newPlainServer(t, Optimizer{}, 0.5, constLR(0.5))
	plain, pm := newPlainServer(t, Optimizer{}, 0, constLR(0.5))
	d := m.NumParams()
	x0 := make([]float64, d)
	for i := range x0 {
		x0[i] = sign(i)
	}
	st := s.State()
	st.Params = x0
	if err := s.Restore(st); err != nil {
		t.Fatal(err)
	}
	if err := plain.Restore(State{Params: x0}); err != nil {
		t.Fatal(err)
	}
	avg := make([]float64, d)
	if plain.Averaged(avg) {
		t.Fatal("a server without EMA returned an average")
	}
	for step, want := range []float64{1, 0.5, 1.0 / 3} {
		if step > 0 {
			sum := make([]float64, d)
			for i := range sum {
				sum[i] = sign(i) * float64(3-step) // g = 1, then 1/2
			}
			for _, srv := range []*Server{s, plain} {
				if _, err := srv.ApplySum(sum, 2); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !s.Averaged(avg) {
			t.Fatal("no average")
		}
		for i, x := range avg {
			if math.Abs(x-sign(i)*want) > 1e-15 {
				t.Fatalf("after %d steps, coordinate %d: average %.17g, want %.17g", step, i, x, sign(i)*want)
			}
		}
		if !slices.Equal(m.Params(), pm.Params()) {
			t.Fatalf("after %d steps EMA changed the model: %v vs %v", step, m.Params(), pm.Params())
		}
	}
}

// TestStateRestore: a server restored from another's state continues bit
// for bit, for every optimizer with and without EMA; a state that does not
// fit the server's optimizer is refused and changes nothing.
func TestStateRestore(t *testing.T) {
	opts := []Optimizer{{}, {Name: OptimizerMomentum, Momentum: 0.9}, {Name: OptimizerNesterov, Momentum: 0.8},
		{Name: OptimizerAdam, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}}
	sumAt := func(step, d int) []float64 {
		sum := make([]float64, d)
		for i := range sum {
			sum[i] = math.Sin(float64(7*step + i))
		}
		return sum
	}
	for _, opt := range opts {
		for _, ema := range []float64{0, 0.9} {
			t.Run(opt.String(), func(t *testing.T) {
				a, am := newPlainServer(t, opt, ema, constLR(0.3))
				d := am.NumParams()
				for i := range 3 {
					a.ApplySum(sumAt(i, d), 5)
				}
				st := a.State()
				cp := State{Steps: st.Steps, Params: slices.Clone(st.Params), Velocity: slices.Clone(st.Velocity),
					Moment1: slices.Clone(st.Moment1), Moment2: slices.Clone(st.Moment2), Average: slices.Clone(st.Average)}
				b, bm := newPlainServer(t, opt, ema, constLR(0.3))
				if err := b.Restore(cp); err != nil {
					t.Fatal(err)
				}
				for i := 3; i < 6; i++ {
					a.ApplySum(sumAt(i, d), 5)
					b.ApplySum(sumAt(i, d), 5)
				}
				if !slices.Equal(am.Params(), bm.Params()) || a.Steps() != b.Steps() {
					t.Fatal("restored server diverged")
				}
				va, vb := make([]float64, d), make([]float64, d)
				if a.Averaged(va) != b.Averaged(vb) || !slices.Equal(va, vb) {
					t.Fatal("restored EMA diverged")
				}
				// A state without the optimizer's vectors, or with another's.
				for _, other := range opts {
					if other.Kind() == opt.Kind() || (other.Momentum > 0 && opt.Momentum > 0) {
						continue // momentum and Nesterov keep the same state (the checkpoint names the optimizer)
					}
					o, _ := newPlainServer(t, other, 0, constLR(0.3))
					bad := o.State()
					bad.Steps = 2
					before := slices.Clone(bm.Params())
					if err := b.Restore(bad); err == nil {
						t.Errorf("state of %s accepted by a %s server (ema %g)", other, opt, ema)
					} else if !slices.Equal(before, bm.Params()) || b.Steps() != 6 {
						t.Errorf("refused state changed the server")
					}
				}
			})
		}
	}
}
