package randomizer

import "testing"

// BenchmarkDJWRandomize measures one DJW report at the neurips21-fig6
// setting (d = 13,706, cnn-tanh; eps0 = 2, a = 0.005) from a ChaCha8
// stream, as training's clients draw it.
func BenchmarkDJWRandomize(b *testing.B) {
	r, err := NewDJW(2, 13706, 0.005)
	if err != nil {
		b.Fatal(err)
	}
	x := djwInputs(r.Dim(), 0.005, 1)["interior"]
	src := NewSeededSource(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Randomize(x, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
}

// BenchmarkDJWAddDecoded measures the server's decode of DJW reports at
// the neurips21-fig6 setting: k = 500 distinct reports (27 MB, more than
// the caches hold, as a round's batch is) added into one sum.
func BenchmarkDJWAddDecoded(b *testing.B) {
	const k = 500
	r, err := NewDJW(2, 13706, 0.005)
	if err != nil {
		b.Fatal(err)
	}
	x := djwInputs(r.Dim(), 0.005, 1)["interior"]
	src := NewSeededSource(2)
	reps := make([]Report, k)
	for i := range reps {
		if reps[i], err = r.Randomize(x, src); err != nil {
			b.Fatal(err)
		}
	}
	sum := make([]float64, r.Dim())
	b.ResetTimer()
	for b.Loop() {
		for _, rep := range reps {
			if err := r.AddDecoded(rep, 1.0/k, sum); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)*k/b.Elapsed().Seconds(), "reports/s")
}
