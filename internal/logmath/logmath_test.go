package logmath

import (
	"math"
	"testing"
)

func TestLogAddSubExp(t *testing.T) {
	cases := []struct{ a, b float64 }{{0, 0}, {1000, 999}, {-1000, -1001}, {3, -40}}
	for _, c := range cases {
		s := LogAddExp(c.a, c.b)
		if c.a != c.b {
			back := LogSubExp(s, c.b)
			if math.Abs(back-c.a) > 1e-12*math.Max(1, math.Abs(c.a)) {
				t.Errorf("LogSubExp(LogAddExp(%g,%g)) = %g", c.a, c.b, back)
			}
		}
		want := math.Max(c.a, c.b) + math.Log1p(math.Exp(-math.Abs(c.a-c.b)))
		if math.Abs(s-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("LogAddExp(%g,%g) = %g, want %g", c.a, c.b, s, want)
		}
	}
	if got := LogAddExp(math.Inf(-1), 2); got != 2 {
		t.Errorf("LogAddExp(-Inf,2) = %g", got)
	}
	if !math.IsNaN(LogSubExp(1, 2)) {
		t.Error("LogSubExp(1,2) should be NaN")
	}
}

func TestLogSumExp(t *testing.T) {
	got := LogSumExp([]float64{1000, 1000, 1000})
	if want := 1000 + math.Log(3); math.Abs(got-want) > 1e-12 {
		t.Errorf("LogSumExp = %g, want %g", got, want)
	}
	if !math.IsInf(LogSumExp(nil), -1) {
		t.Error("empty LogSumExp should be -Inf")
	}
}

func TestLog1mExpLog1pExp(t *testing.T) {
	for _, x := range []float64{-1e-20, -1e-5, -0.5, -1, -50, -800} {
		want := math.Log(-math.Expm1(x))
		if got := Log1mExp(x); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("Log1mExp(%g) = %g, want %g", x, got, want)
		}
	}
	for _, x := range []float64{-800, -40, 0, 20, 40, 800} {
		var want float64
		if x > 30 {
			want = x + math.Log1p(math.Exp(-x))
		} else {
			want = math.Log1p(math.Exp(x))
		}
		if got := Log1pExp(x); math.Abs(got-want) > 1e-12*math.Max(1e-300, math.Abs(want)) {
			t.Errorf("Log1pExp(%g) = %g, want %g", x, got, want)
		}
	}
}

func TestLogBinom(t *testing.T) {
	if got, want := LogBinom(10, 3), math.Log(120); math.Abs(got-want) > 1e-12 {
		t.Errorf("LogBinom(10,3) = %g, want %g", got, want)
	}
	if !math.IsInf(LogBinom(3, 4), -1) {
		t.Error("LogBinom(3,4) should be -Inf")
	}
	// C(1e9, 2) = 1e9(1e9-1)/2
	want := math.Log(1e9) + math.Log(1e9-1) - math.Log(2)
	if got := LogBinom(1e9, 2); math.Abs(got-want) > 1e-9 {
		t.Errorf("LogBinom(1e9,2) = %.15g, want %.15g", got, want)
	}
}

// TestLogBinomOracle compares with values from mpmath (50 digits):
// mpmath.log(mpmath.binomial(n, k)).
func TestLogBinomOracle(t *testing.T) {
	cases := []struct{ n, k, want float64 }{
		{1e9, 2, 40.753384492332877},
		{1e9, 5000, 66025.173178334462},
		{1e6, 500000, 693140.04701306368},
		{4096, 2048, 2834.7461161023759},
		{12.5, 3.25, 5.7775955573182834},
		{30, 1, 3.4011973816621554},
	}
	for _, c := range cases {
		got := LogBinom(c.n, c.k)
		if math.Abs(got-c.want) > 4e-15*math.Max(1, math.Abs(c.want)) {
			t.Errorf("LogBinom(%g,%g) = %.17g, want %.17g", c.n, c.k, got, c.want)
		}
	}
}

func TestAccumulatorMatchesLogSumExp(t *testing.T) {
	for _, xs := range [][]float64{
		nil,
		{math.Inf(-1)},
		{0},
		{-1000, 1000, 3, math.Inf(-1), 999.5},
		{-745, -746, -800},
		{700, 700, 700},
	} {
		a := NewAccumulator()
		for _, x := range xs {
			a.Add(x)
		}
		want := LogSumExp(xs)
		got := a.Value()
		if !(got == want || math.Abs(got-want) <= 1e-14*math.Max(1, math.Abs(want))) {
			t.Errorf("%v: Accumulator %v, LogSumExp %v", xs, got, want)
		}
	}
}

// TestLogSubnormal: Log is right where math.Log on amd64 is not (values
// from mpmath: log(2.384e-309), log(1e-310), log(5e-324)).
func TestLogSubnormal(t *testing.T) {
	for _, tc := range []struct{ x, want float64 }{
		{2.384e-309, -710.6300139859569},
		{1e-310, -713.801378828154},
		{5e-324, -744.4400719213812},
		{0x1p-1022, -708.3964185322641},
		{1, 0},
		{math.E, 1},
	} {
		if got := Log(tc.x); math.Abs(got-tc.want) > 1e-12*math.Abs(tc.want)+1e-15 {
			t.Errorf("Log(%g) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if !math.IsInf(Log(0), -1) || !math.IsNaN(Log(-1)) {
		t.Error("Log(0) or Log(-1) wrong")
	}
}
