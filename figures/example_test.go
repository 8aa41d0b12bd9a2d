package figures_test

import (
	"fmt"

	"github.com/shuffledp/shuffledp/figures"
)

// The settings of NeurIPS'21 Fig. 2a and the x values a 6-point sweep uses.
func ExampleLookup() {
	f, err := figures.Lookup("fig2a")
	if err != nil {
		panic(err)
	}
	xs, _ := f.XValues(6)
	s := f.SettingAt(xs[len(xs)-1])
	fmt.Println(f.Name, xs)
	fmt.Printf("n=%d k=%d eps0=%g T=%d delta=%g\n", s.N, s.K, s.Eps0, s.Steps, s.Delta)
	// Output:
	// neurips21-fig2a [1 10 100 1000 10000 100000]
	// n=1000000 k=1000 eps0=2 T=100000 delta=1e-08
}

// The approximate-DP baseline at two points of Fig. 2a; Compute adds the
// pointwise minimum over upper bounds as series "best".
func ExampleCompute() {
	f, _ := figures.Lookup("fig2a")
	d, err := figures.Compute(f, []int64{1, 100000}, []figures.Bound{figures.NewFMT20KOV15()})
	if err != nil {
		panic(err)
	}
	for i, x := range d.X {
		fmt.Printf("T=%d %s=%.4f\n", x, d.Series[0].Label, d.Series[0].Y[i])
	}
	fmt.Println(d.Series[len(d.Series)-1].Label)
	// Output:
	// T=1 fmt20+kov15=0.0006
	// T=100000 fmt20+kov15=2.5219
	// best
}
