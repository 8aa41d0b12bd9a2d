package randomizer

import (
	"math"
	"testing"
)

// TestFWHTMatchesDefinition compares FWHT with the O(n²) product by
// H_{ij} = (−1)^popcount(i AND j), and hadamardRow with each entry.
func TestFWHTMatchesDefinition(t *testing.T) {
	src := NewSeededSource(3)
	for _, n := range []int{1, 2, 4, 8, 32, 128} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(int64(src.Uint64()%2001) - 1000)
		}
		got := append([]float64(nil), x...)
		FWHT(got)
		for j := range n {
			var want float64
			for i := range n {
				want += hadamardSign(j, i) * x[i]
			}
			if got[j] != want || hadamardRow(x, j) != want {
				t.Fatalf("n=%d j=%d: FWHT %g, row %g, want %g", n, j, got[j], hadamardRow(x, j), want)
			}
		}
		// H·H = n·I.
		FWHT(got)
		for i := range got {
			if got[i] != float64(n)*x[i] {
				t.Fatalf("n=%d: H·H·x ≠ n·x at %d", n, i)
			}
		}
	}
}

// TestR1BatchEqualsSequential checks AddDecodedBatch (one FWHT) against
// one AddDecoded per report.
func TestR1BatchEqualsSequential(t *testing.T) {
	r, _ := NewR1(2, 100, 1.5)
	src := NewSeededSource(11)
	x := make([]float64, 100)
	x[3], x[50] = 0.7, -0.6
	reps := make([]Report, 500)
	for i := range reps {
		var err error
		if reps[i], err = r.Randomize(x, src); err != nil {
			t.Fatal(err)
		}
	}
	a := make([]float64, 100)
	b := make([]float64, 100)
	for _, rep := range reps {
		if err := r.AddDecoded(rep, 0.25, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddDecodedAll(r, reps, 0.25, b); err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Abs(a[i])+1e-9 {
			t.Fatalf("coordinate %d: sequential %g, batch %g", i, a[i], b[i])
		}
	}
	reps[7] = Report{0x13, 0}
	if err := AddDecodedAll(r, reps, 1, b); err == nil {
		t.Fatal("batch accepted a malformed report")
	}
}
