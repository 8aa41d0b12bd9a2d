package pld

import (
	"math"
	"testing"
)

// TestPropertiesClone: pessimistic >= optimistic, epsilon non-decreasing
// in the number of rounds and non-increasing in n (at fixed k, the
// sampling rate falls), Delta non-increasing in eps.
func TestPropertiesClone(t *testing.T) {
	const delta = 1e-6
	for _, c := range []struct {
		n, k int64
		eps0 float64
	}{{1000, 50, 1}, {100, 100, 2}, {5000, 10, 4}} {
		h := 2e-4
		prev := 0.0
		for _, T := range []int{1, 2, 5, 20} {
			comp, err := CloneShuffle(c.n, c.k, c.eps0, T, Options{Grid: h})
			if err != nil {
				t.Fatal(err)
			}
			iv, err := comp.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			if iv.Lower > iv.Upper {
				t.Errorf("%+v T=%d: lower %v > upper %v", c, T, iv.Lower, iv.Upper)
			}
			if iv.Upper < prev {
				t.Errorf("%+v T=%d: upper %v below the value at fewer rounds %v", c, T, iv.Upper, prev)
			}
			prev = iv.Upper
			last := math.Inf(1)
			for _, eps := range []float64{0, 0.01, 0.1, 0.3, 1, 3} {
				d, err := comp.Delta(eps)
				if err != nil {
					t.Fatal(err)
				}
				if d.Lower > d.Upper || d.Upper > last {
					t.Errorf("%+v T=%d eps=%v: delta %v not decreasing (previous %v) or inverted", c, T, eps, d, last)
				}
				last = d.Upper
			}
		}
		// Larger n, same k: a smaller sampling rate.
		a, err := CloneShuffle(c.n, c.k, c.eps0, 4, Options{Grid: h})
		if err != nil {
			t.Fatal(err)
		}
		b, err := CloneShuffle(2*c.n, c.k, c.eps0, 4, Options{Grid: h})
		if err != nil {
			t.Fatal(err)
		}
		ea, _ := a.Epsilon(delta)
		eb, _ := b.Epsilon(delta)
		if eb.Upper > ea.Upper {
			t.Errorf("%+v: n doubled raised epsilon %v -> %v", c, ea.Upper, eb.Upper)
		}
	}
}

// TestPropertiesSampledGaussian: both orders bracketed; epsilon grows with
// the number of steps and with the sampling rate.
func TestPropertiesSampledGaussian(t *testing.T) {
	const delta = 1e-5
	prev := 0.0
	for _, T := range []int{1, 10, 100} {
		c, err := SampledGaussian(1, 0.05, T, Options{Grid: 2e-3})
		if err != nil {
			t.Fatal(err)
		}
		iv, err := c.Epsilon(delta)
		if err != nil {
			t.Fatal(err)
		}
		if iv.Lower > iv.Upper || iv.Upper < prev {
			t.Errorf("T=%d: %v (previous upper %v)", T, iv, prev)
		}
		prev = iv.Upper
	}
	lo, err := SampledGaussian(1, 0.02, 10, Options{Grid: 2e-3})
	if err != nil {
		t.Fatal(err)
	}
	hi, err := SampledGaussian(1, 0.08, 10, Options{Grid: 2e-3})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := lo.Epsilon(delta)
	b, _ := hi.Epsilon(delta)
	if a.Upper > b.Upper {
		t.Errorf("rate 0.02 gives %v above rate 0.08's %v", a, b)
	}
}

// TestErrorsNameParameter: invalid input is refused with the parameter's
// name.
func TestErrorsNameParameter(t *testing.T) {
	var a Accountant
	for _, c := range []struct {
		err  error
		name string
	}{
		{a.AddClone(0, 1, 1, 1), "n ="},
		{a.AddClone(10, 11, 1, 1), "k ="},
		{a.AddClone(10, 5, -1, 1), "eps0 ="},
		{a.AddClone(10, 5, math.NaN(), 1), "eps0 ="},
		{a.AddClone(10, 5, 1, 0), "steps ="},
		{a.AddSampledGaussian(0, 0.1, 1), "sigma ="},
		{a.AddSampledGaussian(1, 0, 1), "rate ="},
		{a.AddSampledGaussian(1, 1.5, 1), "rate ="},
		{a.AddGaussian(math.Inf(1), 1), "sigma ="},
	} {
		if c.err == nil || !contains2(c.err.Error(), c.name) {
			t.Errorf("error %v, want one naming %q", c.err, c.name)
		}
	}
	if _, err := (&Accountant{}).Epsilon(0.5); err == nil {
		t.Error("no events: want an error")
	}
	var b Accountant
	if err := b.AddClone(10, 5, 1, 1); err != nil {
		t.Fatal(err)
	}
	for _, d := range []float64{0, 1, -1, math.NaN()} {
		if _, err := b.Epsilon(d); err == nil || !contains2(err.Error(), "delta =") {
			t.Errorf("delta %v: error %v", d, err)
		}
	}
}

func contains2(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
