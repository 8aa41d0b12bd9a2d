package randomizer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sync"
	"testing"
)

// The reference DJW paths below are the straightforward implementation of
// commit f040905 (a fresh normal vector per report, the bounds-checked
// encode, a check that tests every coordinate and then a second decoding
// pass to add), kept verbatim as the oracle of the faster paths: a report
// or a decoded sum that differs from theirs in one bit fails the tests, as
// does a different consumption of the random stream.

func djwRandomizeReference(r *DJW, x []float64, src Source) (Report, error) {
	if err := checkDomain(x, r.d, NormL2, r.a); err != nil {
		return nil, err
	}
	rng := mrand.New(src)
	g := make([]float64, r.d)
	var dot, sq float64
	for i, xi := range x {
		gi := rng.NormFloat64()
		g[i] = gi
		dot += gi * xi
		sq += gi * gi
	}
	s := 1 / math.Sqrt(sq)
	if nx := l2Norm(x); nx > 0 {
		t, sure := r.plusCoin(nx)
		plus := sure || Bernoulli(src, t)
		toward := Bernoulli(src, r.t)
		if ((dot > 0) == plus) != toward {
			s = -s
		}
	}
	rep := make(Report, r.ReportSize())
	rep[0] = header(kindDJW)
	for i, gi := range g {
		binary.LittleEndian.PutUint32(rep[1+4*i:], math.Float32bits(float32(gi*s)))
	}
	return rep, nil
}

func djwCheckReference(r *DJW, rep Report) error {
	if len(rep) != r.ReportSize() {
		return fmt.Errorf("%w: length %d, want %d", ErrMalformed, len(rep), r.ReportSize())
	}
	if err := checkHeader(rep, kindDJW); err != nil {
		return err
	}
	var sq float64
	for i := range r.d {
		vi := float64(math.Float32frombits(binary.LittleEndian.Uint32(rep[1+4*i:])))
		if math.IsNaN(vi) || math.IsInf(vi, 0) {
			return fmt.Errorf("%w: coordinate %d is not finite", ErrMalformed, i)
		}
		sq += vi * vi
	}
	if n := math.Sqrt(sq); math.Abs(n-1) > 1e-6 {
		return fmt.Errorf("%w: direction has norm %g, want 1 (not on DJW's output sphere)", ErrMalformed, n)
	}
	return nil
}

func djwAddDecodedReference(r *DJW, rep Report, scale float64, sum []float64) error {
	if len(sum) != r.d {
		return fmt.Errorf("sum has length %d, want dim %d", len(sum), r.d)
	}
	if err := djwCheckReference(r, rep); err != nil {
		return err
	}
	f := scale * r.m
	for i := range sum {
		sum[i] += f * float64(math.Float32frombits(binary.LittleEndian.Uint32(rep[1+4*i:])))
	}
	return nil
}

// wrappedSource hides a Source's concrete type, as a caller's own Source
// type does.
type wrappedSource struct{ s Source }

func (w wrappedSource) Uint64() uint64 { return w.s.Uint64() }

// djwInputs returns the inputs of the bitwise tests for radius a in
// dimension d: zero, tiny, small, interior, on the ball (clipped, and
// a·e_1 of norm exactly a) and a negative one, each different per seed.
func djwInputs(d int, a float64, seed uint64) map[string][]float64 {
	rng := mrand.New(mrand.NewPCG(seed, 99))
	random := func(norm float64) []float64 {
		x := make([]float64, d)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		f := norm / l2Norm(x)
		for i := range x {
			x[i] *= f
		}
		return x
	}
	axis := make([]float64, d)
	axis[int(seed)%d] = a
	neg := random(0.7 * a)
	for i := range neg {
		neg[i] = -math.Abs(neg[i])
	}
	clipped := random(3 * a)
	Clip(NormL2, clipped, a)
	return map[string][]float64{
		"zero":     make([]float64, d),
		"tiny":     random(1e-12 * a),
		"small":    random(1e-3 * a),
		"interior": random(0.5 * a),
		"clipped":  clipped,
		"axis":     axis,
		"negative": neg,
	}
}

// TestDJWBitwiseReference: Randomize and AddDecoded give, for the same
// source stream, byte-identical reports and bit-identical decoded sums to
// the reference implementation, and leave the stream at the same word,
// for several seeds, dimensions (up to cnn-tanh's 13,706), radii,
// inputs and source types (PCG, a bare ChaCha8, a wrapped ChaCha8).
func TestDJWBitwiseReference(t *testing.T) {
	sources := map[string]func(seed uint64) Source{
		"pcg":     func(seed uint64) Source { return NewSeededSource(seed) },
		"chacha8": func(seed uint64) Source { return mrand.NewChaCha8(djwTestKey(seed)) },
		"wrapped": func(seed uint64) Source { return wrappedSource{mrand.NewChaCha8(djwTestKey(seed))} },
	}
	for _, d := range []int{1, 2, 3, 100, 13706} {
		for _, c := range []struct{ eps0, a float64 }{{2, 0.005}, {0.5, 1}} {
			r, err := NewDJW(c.eps0, d, c.a)
			if err != nil {
				t.Fatal(err)
			}
			seeds := []uint64{1, 2, 3, 4, 5}
			if d == 13706 && testing.Short() {
				seeds = seeds[:2]
			}
			for srcName, newSrc := range sources {
				sumRef, sum := make([]float64, d), make([]float64, d)
				for _, seed := range seeds {
					for name, x := range djwInputs(d, c.a, seed) {
						ref, got := newSrc(seed), newSrc(seed)
						for rep := range 3 {
							want, werr := djwRandomizeReference(r, x, ref)
							have, herr := r.Randomize(x, got)
							if werr != nil || herr != nil {
								t.Fatalf("d=%d %s seed %d %s: errors %v, %v", d, srcName, seed, name, werr, herr)
							}
							if !bytes.Equal(have, want) {
								t.Fatalf("d=%d eps0=%g a=%g %s seed %d %s report %d: differs from the reference", d, c.eps0, c.a, srcName, seed, name, rep)
							}
							for _, scale := range []float64{1, 1.0 / 3} {
								werr := djwAddDecodedReference(r, want, scale, sumRef)
								herr := r.AddDecoded(have, scale, sum)
								if werr != nil || herr != nil {
									t.Fatalf("d=%d %s seed %d %s: decode errors %v, %v", d, srcName, seed, name, werr, herr)
								}
							}
						}
						if a, b := ref.Uint64(), got.Uint64(); a != b {
							t.Fatalf("d=%d %s seed %d %s: the stream continues at %#x, the reference's at %#x", d, srcName, seed, name, b, a)
						}
					}
				}
				for i := range sum {
					if math.Float64bits(sum[i]) != math.Float64bits(sumRef[i]) {
						t.Fatalf("d=%d eps0=%g %s: decoded sum[%d] = %v, reference %v", d, c.eps0, srcName, i, sum[i], sumRef[i])
					}
				}
			}
		}
	}
}

func djwTestKey(seed uint64) [32]byte {
	var k [32]byte
	binary.LittleEndian.PutUint64(k[:], seed)
	copy(k[8:], "djw-bitwise-test")
	return k
}

// TestDJWCheckMatchesReference: AddDecoded accepts exactly the reports the
// reference accepts, with the same error, and leaves the sum untouched on
// an error: reports scaled to norms on both sides of the 1 ± 1e-6
// acceptance boundary, non-finite coordinates (first, middle, last, and
// two of them), wrong length and header.
func TestDJWCheckMatchesReference(t *testing.T) {
	for _, d := range []int{1, 2, 100, 13706} {
		r, err := NewDJW(2, d, 0.005)
		if err != nil {
			t.Fatal(err)
		}
		x := djwInputs(d, 0.005, 1)["interior"]
		good, err := r.Randomize(x, NewSeededSource(uint64(d)))
		if err != nil {
			t.Fatal(err)
		}
		var bad []Report
		scaled := func(f float64) Report {
			rep := bytes.Clone(good)
			for i := range d {
				o := 1 + 4*i
				v := math.Float32frombits(binary.LittleEndian.Uint32(rep[o:]))
				binary.LittleEndian.PutUint32(rep[o:], math.Float32bits(float32(float64(v)*f)))
			}
			return rep
		}
		for _, f := range []float64{1 - 2e-6, 1 - 1.2e-6, 1 - 1e-6, 1 - 0.9e-6, 1 - 1e-7, 1 + 1e-7, 1 + 0.9e-6, 1 + 1e-6, 1 + 1.2e-6, 1 + 2e-6, 0, 2, 1e30} {
			bad = append(bad, scaled(f))
		}
		// Single-ulp nudges of the largest coordinate walk the norm across
		// the boundary as finely as float32 allows.
		big := 0
		for i := range d {
			o := 1 + 4*i
			if math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(good[o:])))) >
				math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(good[1+4*big:])))) {
				big = i
			}
		}
		for _, f := range []float64{1 + 1e-6, 1 - 1e-6} {
			base := scaled(f)
			o := 1 + 4*big
			u := binary.LittleEndian.Uint32(base[o:])
			for delta := -40; delta <= 40; delta += 4 {
				rep := bytes.Clone(base)
				binary.LittleEndian.PutUint32(rep[o:], uint32(int64(u)+int64(delta)))
				bad = append(bad, rep)
			}
		}
		for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
			for _, i := range []int{0, d / 2, d - 1} {
				rep := bytes.Clone(good)
				binary.LittleEndian.PutUint32(rep[1+4*i:], math.Float32bits(v))
				bad = append(bad, rep)
				if i > 0 {
					two := bytes.Clone(rep)
					binary.LittleEndian.PutUint32(two[1:], math.Float32bits(float32(math.Inf(1))))
					bad = append(bad, two)
				}
			}
		}
		hdr := bytes.Clone(good)
		hdr[0] = header(kindPrivUnit)
		bad = append(bad, good[:len(good)-1], append(bytes.Clone(good), 0), hdr, good)
		accepted := 0
		for j, rep := range bad {
			sum := make([]float64, d)
			sum[0] = 7
			sumRef := bytes.Clone(float64Bytes(sum))
			werr := djwCheckReference(r, rep)
			herr := r.AddDecoded(rep, 1, sum)
			switch {
			case (werr == nil) != (herr == nil):
				t.Errorf("d=%d case %d: error %v, reference %v", d, j, herr, werr)
			case werr != nil && werr.Error() != herr.Error():
				t.Errorf("d=%d case %d: error %q, reference %q", d, j, herr, werr)
			case werr != nil && !bytes.Equal(float64Bytes(sum), sumRef):
				t.Errorf("d=%d case %d: a refused report changed the sum", d, j)
			case werr == nil:
				accepted++
			}
		}
		if accepted < 3 || accepted == len(bad) {
			t.Errorf("d=%d: %d of %d cases accepted; the cases do not straddle the boundary", d, accepted, len(bad))
		}
	}
}

func float64Bytes(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// TestDJWConcurrentRandomize: goroutines sharing one DJW (and its pooled
// scratch), each with its own source, get the reference's reports.
func TestDJWConcurrentRandomize(t *testing.T) {
	const d = 1000
	r, err := NewDJW(2, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := djwInputs(d, 1, 2)["interior"]
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for w := range errs {
		wg.Go(func() {
			ref, got := NewSeededSource(uint64(w)), NewSeededSource(uint64(w))
			for range 50 {
				want, _ := djwRandomizeReference(r, x, ref)
				have, err := r.Randomize(x, got)
				if err != nil || !bytes.Equal(have, want) {
					errs[w] = fmt.Errorf("goroutine %d: report differs from the reference (err %v)", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestDJWCheckAtTheBoundary walks reports' squared norms across the
// acceptance boundaries (1 ± 1e-6)² in steps of about 1e-15, finer than
// the bracket within which check leaves its four-lane sum for the exact
// index-order one: AddDecoded accepts exactly what the reference accepts,
// and both of check's paths are exercised on both sides of each boundary.
func TestDJWCheckAtTheBoundary(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	var fastAccept, slowAccept, slowReject int
	for _, d := range []int{5, 9, 33, 1000} {
		r, err := NewDJW(2, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
			target := 1 + 1e-6
			if trial%2 == 1 {
				target = 1 - 1e-6
			}
			target *= target
			// d−1 coordinates of squared norm about target − 1e-8, then a
			// last one c near √(target − their sum) ≈ 1e-4, whose ulp
			// steps move the squared norm by about 1.5e-15.
			rep := make(Report, r.ReportSize())
			rep[0] = header(kindDJW)
			x := make([]float64, d-1)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			f := math.Sqrt(target-1e-8) / math.Sqrt(sumSq(x))
			var rest float64
			for i, xi := range x {
				v := float32(xi * f)
				binary.LittleEndian.PutUint32(rep[1+4*i:], math.Float32bits(v))
				rest += float64(v) * float64(v)
			}
			c := math.Float32bits(float32(math.Sqrt(target - rest)))
			last := rep[1+4*(d-1):]
			for step := -60; step <= 60; step++ {
				binary.LittleEndian.PutUint32(last, uint32(int64(c)+int64(step)))
				werr := djwCheckReference(r, rep)
				sum := make([]float64, d)
				herr := r.AddDecoded(rep, 1, sum)
				if (werr == nil) != (herr == nil) || (werr != nil && werr.Error() != herr.Error()) {
					t.Fatalf("d=%d trial %d step %d: error %v, reference %v", d, trial, step, herr, werr)
				}
				sq4 := sumSquares4(rep[1:])
				e := 4 * float64(d) * 0x1p-53 * sq4
				switch fast := unitNorm(sq4-e) && unitNorm(sq4+e); {
				case fast:
					fastAccept++
				case werr == nil:
					slowAccept++
				default:
					slowReject++
				}
			}
		}
	}
	if fastAccept == 0 || slowAccept == 0 || slowReject == 0 {
		t.Errorf("paths exercised: %d fast accepts, %d exact accepts, %d exact rejects; want all three", fastAccept, slowAccept, slowReject)
	}
	t.Logf("%d fast accepts, %d exact accepts, %d exact rejects", fastAccept, slowAccept, slowReject)
}

func sumSq(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}
