package randomizer

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// privUnitReference is PrivUnit's Randomize as first written: the
// construction transcribed directly (u stored, a fresh normal vector,
// separate passes). Randomize must return the same bytes for the same x
// and the same words from the source.
func privUnitReference(r *PrivUnit, x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return nil, err
	}
	rng := normals(src)
	u := make([]float64, r.d)
	nx := l2Norm(x)
	if nx > 0 {
		s := 1 / nx
		if !Bernoulli(src, fracThreshold((1+math.Min(nx/r.a, 1))/2)) {
			s = -s
		}
		for i, xi := range x {
			u[i] = xi * s
		}
	} else {
		for i := range u {
			u[i] = rng.NormFloat64()
		}
		n := l2Norm(u)
		for i := range u {
			u[i] /= n
		}
	}
	var t float64
	if Bernoulli(src, r.t) {
		w := mathext.InvRegIncBeta(r.alpha, r.alpha, rng.Float64()*r.q)
		t = math.Max(1-2*w, r.gamma)
	} else {
		x := mathext.InvRegIncBeta(r.alpha, r.alpha, rng.Float64()*(1-r.q))
		t = 2*x - 1
		if t >= r.gamma {
			t = math.Nextafter(r.gamma, -1)
		}
	}
	t = math.Max(-1, math.Min(1, t))
	g := make([]float64, r.d)
	var gu float64
	for i := range g {
		g[i] = rng.NormFloat64()
		gu += g[i] * u[i]
	}
	for i := range g {
		g[i] -= gu * u[i]
	}
	gn := l2Norm(g)
	st := math.Sqrt(math.Max(0, 1-t*t))
	scale := r.a / r.m
	rep := make(Report, r.ReportSize())
	rep[0] = header(kindPrivUnit)
	for i := range g {
		v := (t*u[i] + st*g[i]/gn) * scale
		binary.LittleEndian.PutUint64(rep[1+8*i:], math.Float64bits(v))
	}
	return rep, nil
}

// TestPrivUnitMatchesReference: Randomize and the direct transcription
// return identical bytes for identical sources, over dimensions, eps0,
// radii and inputs inside, on and at the centre of the ball (x = 0 takes
// the random-direction branch), with the seeded PCG and with ChaCha8 (the
// trainer's per-client stream). Equal bytes for equal randomness means
// equal output distributions: the eps0-LDP and unbiasedness tests of the
// construction carry over unchanged.
func TestPrivUnitMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		d    int
		eps0 float64
		a    float64
	}{{2, 1, 1}, {3, 4, 0.5}, {17, 2, 1}, {1000, 0.5, 2}, {3250, 2, 0.5}, {3250, 3, 1}} {
		r, err := NewPrivUnit(tc.eps0, tc.d, tc.a)
		if err != nil {
			t.Fatal(err)
		}
		gen := rand.New(rand.NewPCG(uint64(tc.d), 9))
		for trial := range 40 {
			x := make([]float64, tc.d)
			switch trial % 4 {
			case 0: // the centre
			case 1: // one coordinate on the sphere
				x[gen.IntN(tc.d)] = tc.a
			default: // random, scaled into the ball
				for i := range x {
					x[i] = gen.NormFloat64()
				}
				ClipL2(x, tc.a*gen.Float64())
			}
			var s1, s2 Source
			if trial%2 == 0 {
				s1, s2 = NewSeededSource(uint64(trial)), NewSeededSource(uint64(trial))
			} else {
				var key [32]byte
				key[0] = byte(trial)
				s1, s2 = rand.NewChaCha8(key), rand.NewChaCha8(key)
			}
			got, err := r.Randomize(x, s1)
			if err != nil {
				t.Fatal(err)
			}
			want, err := privUnitReference(r, x, s2)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("d=%d eps0=%g a=%g trial %d: report differs from the reference", tc.d, tc.eps0, tc.a, trial)
			}
			if s1.Uint64() != s2.Uint64() {
				t.Fatalf("d=%d trial %d: Randomize consumed a different number of words", tc.d, trial)
			}
		}
	}
}
