package data

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// digestRange is the SHA-256 of examples (float64 bits) and labels of a
// data set, in order.
func digestRange(d *Dataset) string {
	h := sha256.New()
	var b [8]byte
	for i := range d.N {
		for _, v := range d.Example(i) {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
		binary.LittleEndian.PutUint64(b[:], uint64(d.Y[i]))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestSyntheticPerIndex: example i of the synthetic set depends only on
// (seed, i). A range, a set of any size, the on-demand source (from
// several goroutines, in reverse order) and SyntheticExample all give the
// same example for the same index; another seed or index gives another.
func TestSyntheticPerIndex(t *testing.T) {
	const seed = 42
	whole := Synthetic(300, seed)
	if err := whole.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := Synthetic(120, seed); digestRange(got) != digestRange(first(whole, 120)) {
		t.Error("Synthetic(120) is not the first 120 examples of Synthetic(300)")
	}
	for _, r := range [][2]int{{0, 0}, {0, 1}, {7, 8}, {100, 300}, {299, 300}, {13, 257}} {
		part := SyntheticRange(r[0], r[1], seed)
		if part.N != r[1]-r[0] {
			t.Fatalf("range %v has %d examples", r, part.N)
		}
		for j := range part.N {
			if !same(part.Example(j), whole.Example(r[0]+j)) || part.Y[j] != whole.Y[r[0]+j] {
				t.Fatalf("range %v: example %d differs from example %d of the whole set", r, j, r[0]+j)
			}
		}
	}
	src := SyntheticSource{N: 300, Seed: seed}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float64, 784)
			for i := 299 - w; i >= 0; i -= 4 { // reverse order, interleaved
				x, y := src.At(i, buf)
				if !same(x, whole.Example(i)) || y != whole.Y[i] {
					errs <- fmt.Errorf("SyntheticSource.At(%d) differs from the whole set's example", i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	x := make([]float64, 784)
	for i := range x {
		x[i] = math.NaN() // overwritten, whatever it held
	}
	if y := SyntheticExample(seed, 150, x); !same(x, whole.Example(150)) || y != whole.Y[150] {
		t.Error("SyntheticExample(150) differs from the whole set's example 150")
	}
	if x, _ := src.At(3, nil); !same(x, whole.Example(3)) {
		t.Error("At with a nil buffer differs")
	}
	other := Synthetic(300, seed+1)
	for i := range 300 {
		if same(other.Example(i), whole.Example(i)) {
			t.Fatalf("seeds %d and %d give the same example %d", seed, seed+1, i)
		}
		if i > 0 && same(whole.Example(i), whole.Example(i-1)) {
			t.Fatalf("examples %d and %d are equal", i-1, i)
		}
	}
}

// TestSyntheticLooksLikeMNIST: the generator's distribution as documented
// (labels uniform on 0..9, a pixel non-zero with probability 1/5 and then
// uniform on [0, 1)), within 5 standard deviations over 2,000 examples.
func TestSyntheticLooksLikeMNIST(t *testing.T) {
	const n = 2000
	d := Synthetic(n, 9)
	var nonzero, sum float64
	counts := make([]int, 10)
	for _, v := range d.X {
		if v < 0 || v >= 1 {
			t.Fatalf("pixel %v outside [0, 1)", v)
		}
		if v != 0 {
			nonzero++
			sum += v
		}
	}
	for _, y := range d.Y {
		counts[y]++
	}
	pixels := float64(len(d.X))
	if p, sd := nonzero/pixels, math.Sqrt(0.2*0.8/pixels); math.Abs(p-0.2) > 5*sd {
		t.Errorf("non-zero pixel fraction %.4f, want 0.2 +- %.4f", p, 5*sd)
	}
	if m, sd := sum/nonzero, math.Sqrt(1.0/12/nonzero); math.Abs(m-0.5) > 5*sd {
		t.Errorf("mean non-zero pixel %.4f, want 0.5 +- %.4f", m, 5*sd)
	}
	for c, k := range counts {
		if sd := math.Sqrt(n * 0.1 * 0.9); math.Abs(float64(k)-n*0.1) > 5*sd {
			t.Errorf("label %d: %d of %d, want %d +- %.0f", c, k, n, n/10, 5*sd)
		}
	}
}

// syntheticChildEnv names the range a child process of
// TestSyntheticAcrossProcesses generates ("seed:lo:hi").
const syntheticChildEnv = "SHUFFLEDP_TEST_SYNTHETIC_RANGE"

// TestSyntheticAcrossProcesses: two other processes (this test binary run
// again) each generate one half of a range as a client process generates
// its own clients' examples; their digests are those of the same examples
// cut out of the set this process generated whole.
func TestSyntheticAcrossProcesses(t *testing.T) {
	if spec := os.Getenv(syntheticChildEnv); spec != "" {
		return // the child's work is done by TestMain
	}
	const seed = 5
	whole := Synthetic(400, seed)
	for _, r := range [][2]int{{0, 150}, {150, 400}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSyntheticAcrossProcesses$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d:%d:%d", syntheticChildEnv, seed, r[0], r[1]))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("child for %v: %v", r, err)
		}
		got := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		if want := digestRange(slice(whole, r[0], r[1])); got != want {
			t.Errorf("range %v generated in another process: digest %s, want %s", r, got, want)
		}
	}
}

// TestMain runs a child of TestSyntheticAcrossProcesses: it prints the
// digest of the range it was given and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv(syntheticChildEnv); spec != "" {
		f := strings.Split(spec, ":")
		seed, _ := strconv.ParseUint(f[0], 10, 64)
		lo, _ := strconv.Atoi(f[1])
		hi, _ := strconv.Atoi(f[2])
		fmt.Println(digestRange(SyntheticRange(lo, hi, seed)))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSyntheticSourceBounds: an index outside the source panics rather
// than inventing an example for a client the run does not have.
func TestSyntheticSourceBounds(t *testing.T) {
	src := SyntheticSource{N: 10, Seed: 1}
	if n := src.Len(); n != 10 {
		t.Fatalf("Len %d", n)
	}
	if dim, classes := src.Shape(); dim != 784 || classes != 10 {
		t.Fatalf("Shape %d, %d", dim, classes)
	}
	for _, i := range []int{-1, 10} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("At(%d) of 10 did not panic", i)
				}
			}()
			src.At(i, nil)
		}()
	}
}

// TestLoadTestOnly: a test-only load generates no training set and the
// same evaluation set as a full load; with a validation split it is
// refused, naming the flag.
func TestLoadTestOnly(t *testing.T) {
	spec := Spec{Name: "synthetic", Clients: 1_000_000_000, TestSize: 50, Seed: 3, TestOnly: true}
	train, test, err := Load(spec) // a billion clients: generated, this would not fit
	if err != nil {
		t.Fatal(err)
	}
	if train != nil {
		t.Fatalf("a test-only load returned a training set of %d", train.N)
	}
	spec.Clients, spec.TestOnly = 30, false
	_, full, err := Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	if test.N != 50 || digestRange(test) != digestRange(full) {
		t.Fatalf("test-only evaluation set (%d examples) differs from the full load's (%d)", test.N, full.N)
	}
	spec.TestOnly, spec.Validation = true, 10
	if _, _, err := Load(spec); err == nil || !strings.HasPrefix(err.Error(), "validation:") {
		t.Fatalf("test-only with validation: %v", err)
	}
}

func first(d *Dataset, n int) *Dataset { return slice(d, 0, n) }

func slice(d *Dataset, lo, hi int) *Dataset {
	out := *d
	out.N, out.X, out.Y = hi-lo, d.X[lo*d.Dim:hi*d.Dim], d.Y[lo:hi]
	return &out
}

func same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// BenchmarkSyntheticExample: the CPU a client process spends generating
// one example on demand (SyntheticSource.At).
func BenchmarkSyntheticExample(b *testing.B) {
	src := SyntheticSource{N: 1_000_000, Seed: 1}
	buf := make([]float64, 784)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		src.At(i%src.N, buf)
	}
}
