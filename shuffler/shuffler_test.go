package shuffler

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/shuffledp/shuffledp/randomizer"
	"gonum.org/v1/gonum/stat/distuv"
)

func reportsOf(n int) [][]byte {
	r := make([][]byte, n)
	for i := range r {
		r[i] = []byte{byte(i), byte(i >> 8)}
	}
	return r
}

func permKey(out [][]byte) string {
	var b bytes.Buffer
	for _, r := range out {
		b.WriteByte(r[0])
	}
	return b.String()
}

// TestAllPermutationsUniform shuffles 4 reports 240,000 times and runs a
// chi-square test over all 24 orders at alpha = 1e-6 (seeded, so
// deterministic), and a smaller crypto/rand run over 3 reports (random
// each run; false-alarm probability 1e-6).
func TestAllPermutationsUniform(t *testing.T) {
	for name, tc := range map[string]struct {
		n, trials, perms int
		opts             []Option
	}{
		"seeded": {4, 240000, 24, []Option{WithSource(randomizer.NewSeededSource(17))}},
		"crypto": {3, 60000, 6, nil},
	} {
		s, err := New(1, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		in := reportsOf(tc.n)
		counts := map[string]float64{}
		for range tc.trials {
			out, err := s.Shuffle(in)
			if err != nil {
				t.Fatal(err)
			}
			counts[permKey(out)]++
		}
		if len(counts) != tc.perms {
			t.Fatalf("%s: saw %d distinct orders, want %d", name, len(counts), tc.perms)
		}
		e := float64(tc.trials) / float64(tc.perms)
		var chi2 float64
		for _, c := range counts {
			chi2 += (c - e) * (c - e) / e
		}
		crit := distuv.ChiSquared{K: float64(tc.perms - 1)}.Quantile(1 - 1e-6)
		if chi2 > crit {
			t.Errorf("%s: chi2 %.1f > %.1f over %d orders", name, chi2, crit, tc.perms)
		}
	}
}

// TestPositionsUniform: for n = 50, every report is equally likely to land
// in every position (chi-square on each report's position histogram,
// alpha = 1e-6 per report, seeded).
func TestPositionsUniform(t *testing.T) {
	const n, trials = 50, 20000
	s, _ := New(n, WithSource(randomizer.NewSeededSource(4)))
	in := reportsOf(n)
	pos := make([][]float64, n)
	for i := range pos {
		pos[i] = make([]float64, n)
	}
	for range trials {
		out, _ := s.Shuffle(in)
		for p, r := range out {
			pos[r[0]][p]++
		}
	}
	crit := distuv.ChiSquared{K: n - 1}.Quantile(1 - 1e-6)
	e := float64(trials) / n
	for i := range pos {
		var chi2 float64
		for _, c := range pos[i] {
			chi2 += (c - e) * (c - e) / e
		}
		if chi2 > crit {
			t.Errorf("report %d: chi2 %.1f > %.1f", i, chi2, crit)
		}
	}
}

func TestShuffleIsPermutationOfCopies(t *testing.T) {
	s, _ := New(3)
	in := reportsOf(1000)
	orig := make([][]byte, len(in))
	for i := range in {
		orig[i] = append([]byte(nil), in[i]...)
	}
	out, err := s.Shuffle(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if !bytes.Equal(in[i], orig[i]) {
			t.Fatal("Shuffle modified its input")
		}
	}
	got := make([]string, len(out))
	want := make([]string, len(in))
	for i := range out {
		got[i], want[i] = string(out[i]), string(in[i])
		out[i][0] ^= 0xff // outputs must not alias inputs
	}
	sort.Strings(got)
	sort.Strings(want)
	for i := range got {
		if got[i] != want[i] {
			t.Fatal("output is not a permutation of the input")
		}
	}
	for i := range in {
		if !bytes.Equal(in[i], orig[i]) {
			t.Fatal("output aliases input")
		}
	}
}

func TestRefusals(t *testing.T) {
	if _, err := New(0); err == nil {
		t.Error("New(0) accepted")
	}
	s, _ := New(10)
	if _, err := s.Shuffle(reportsOf(9)); !errors.Is(err, ErrBatchTooSmall) {
		t.Errorf("9 < 10 reports: err = %v", err)
	}
	if _, err := s.Shuffle(nil); !errors.Is(err, ErrBatchTooSmall) {
		t.Errorf("empty batch: err = %v", err)
	}
	bad := reportsOf(12)
	bad[5] = []byte{1, 2, 3}
	if _, err := s.Shuffle(bad); !errors.Is(err, ErrReportLength) {
		t.Errorf("unequal lengths: err = %v", err)
	}
	if _, err := s.ShuffleBatches(reportsOf(100), 9); err == nil {
		t.Error("batch size below minimum accepted")
	}
	if _, err := s.ShuffleBatches(reportsOf(11), 12); !errors.Is(err, ErrBatchTooSmall) {
		t.Errorf("too few for one batch: err = %v", err)
	}
}

func TestShuffleBatchesSizes(t *testing.T) {
	s, _ := New(10)
	for _, tc := range []struct{ n, size, nb, lo, hi int }{
		{100, 10, 10, 10, 10}, {109, 10, 10, 10, 11}, {25, 12, 2, 12, 13}, {10, 10, 1, 10, 10},
	} {
		b, err := s.ShuffleBatches(reportsOf(tc.n), tc.size)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, batch := range b {
			if len(batch) < tc.lo || len(batch) > tc.hi {
				t.Errorf("n=%d size=%d: batch of %d", tc.n, tc.size, len(batch))
			}
			total += len(batch)
		}
		if len(b) != tc.nb || total != tc.n {
			t.Errorf("n=%d size=%d: %d batches, %d reports", tc.n, tc.size, len(b), total)
		}
	}
}

func TestCollector(t *testing.T) {
	s, _ := New(100)
	c := NewCollector(s)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				if err := c.Submit([]byte{byte(g), byte(i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if err := c.Submit([]byte{1}); !errors.Is(err, ErrReportLength) {
		t.Errorf("short report: err = %v", err)
	}
	out, err := c.Release()
	if err != nil || len(out) != 120 || c.Pending() != 0 {
		t.Fatalf("Release: %d reports, err %v, pending %d", len(out), err, c.Pending())
	}
	for i := range 99 {
		c.Submit([]byte{0, byte(i), 7})
	}
	if _, err := c.Release(); !errors.Is(err, ErrBatchTooSmall) || c.Pending() != 99 {
		t.Errorf("99 < 100: err %v, pending %d", err, c.Pending())
	}
}

func ExampleShuffler_Shuffle() {
	s, err := New(3, WithSource(randomizer.NewSeededSource(1))) // simulation only
	if err != nil {
		panic(err)
	}
	out, err := s.Shuffle([][]byte{{0x13, 1}, {0x13, 2}, {0x13, 3}, {0x13, 4}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", out)
	_, err = s.Shuffle([][]byte{{0x13, 1}})
	fmt.Println(err)
	// Output:
	// [1301 1303 1304 1302]
	// batch below the minimum size: 1 reports, minimum 3
}

// BenchmarkShuffle shuffles k = 10,000 three-byte reports (R_inf at
// d = 26,010) with crypto/rand, including the copies.
func BenchmarkShuffle(b *testing.B) {
	s, _ := New(1)
	in := make([][]byte, 10000)
	for i := range in {
		in[i] = []byte{0x13, byte(i), byte(i >> 8)}
	}
	for b.Loop() {
		if _, err := s.Shuffle(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "reports/s")
}
