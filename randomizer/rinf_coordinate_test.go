package randomizer

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRInfCoordinateMatchesRandomize: DrawIndex then RandomizeCoordinate
// with x[j] gives the same report as Randomize(x), and leaves the source
// in the same state, for inputs on and inside the box (clamped gradients
// included), several dimensions and eps0, many seeds.
func TestRInfCoordinateMatchesRandomize(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tc := range []struct {
		d    int
		eps0 float64
		a    float64
	}{{1, 1, 1}, {7, 0.5, 0.3}, {13706, 1.5, 0.01}, {1 << 10, 4, 2}, {1000003, 1.5, 0.01}} {
		t.Run(fmt.Sprintf("d=%d,eps0=%g", tc.d, tc.eps0), func(t *testing.T) {
			r, err := NewRInf(tc.eps0, tc.d, tc.a)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, tc.d)
			trials := 200
			if tc.d > 100000 {
				trials = 8
			}
			for trial := range trials {
				for i := range x {
					switch trial % 4 {
					case 0: // a gradient clamped into the box
						x[i] = max(-tc.a, min(tc.a, 3*tc.a*rng.NormFloat64()))
					case 1:
						x[i] = tc.a * (2*rng.Float64() - 1)
					case 2:
						x[i] = []float64{-tc.a, tc.a, 0, math.Copysign(0, -1)}[rng.IntN(4)]
					default:
						x[i] = tc.a * 1e-300 * rng.NormFloat64()
					}
				}
				seed := rng.Uint64()
				src1, src2 := NewSeededSource(seed), NewSeededSource(seed)
				want, err := r.Randomize(x, src1)
				if err != nil {
					t.Fatal(err)
				}
				j := r.DrawIndex(src2)
				got, err := r.RandomizeCoordinate(j, x[j], src2)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("trial %d: RandomizeCoordinate %x, Randomize %x", trial, got, want)
				}
				if a, b := src1.Uint64(), src2.Uint64(); a != b {
					t.Fatalf("trial %d: sources differ after the report (%#x vs %#x)", trial, a, b)
				}
			}
		})
	}
}

// TestRInfCoordinateRefusesOutsideDomain: the coordinate's checks match
// the domain's.
func TestRInfCoordinateRefusesOutsideDomain(t *testing.T) {
	r, err := NewRInf(1.5, 10, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	src := NewSeededSource(1)
	for _, tc := range []struct {
		j    int
		xj   float64
		want error
	}{
		{0, math.NaN(), ErrDomain},
		{3, math.Inf(-1), ErrDomain},
		{9, 0.0100001, ErrDomain},
		{9, -0.02, ErrDomain},
		{-1, 0, nil},
		{10, 0, nil},
	} {
		_, err := r.RandomizeCoordinate(tc.j, tc.xj, src)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("RandomizeCoordinate(%d, %g) = %v, want an error (%v)", tc.j, tc.xj, err, tc.want)
		}
	}
	for _, xj := range []float64{0.01, -0.01, 0.01 * (1 + 1e-10), 0} {
		if _, err := r.RandomizeCoordinate(4, xj, src); err != nil {
			t.Errorf("RandomizeCoordinate(4, %g): %v", xj, err)
		}
	}
}
